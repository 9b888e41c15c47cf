"""Whether one gitignore-style pattern list provably selects more (or less) than another.

A pull request may only tighten the scope's lists: `paths` (an allow-list: stricter selects a
superset of the files) and `ignore-paths` (stricter ignores a subset). Comparing the lists as
sets is wrong: a `!pattern` takes files back, so adding one selects *less*, and patterns
overlap, so which one decides a file depends on order and on whether it matched the file itself
or a directory above it (gitignore's matchers, pathspec's included, rank the two differently).

What is proved here holds whichever of those rankings the matcher uses, and nothing more is
claimed (anything else is refused, one sentence naming the input): the matcher's state after
each pattern is ordered — (included, file match) > (included, directory match) > not included —
and every pattern acts monotonically on it. Hence:

- deleting a `!pattern` never selects less; deleting a positive never selects more where no
  `!pattern` follows it;
- in the run of same-polarity patterns at the end of a list, order and repetition do not change
  the outcome, and adding to the run moves it only one way.

For "selects at least as much" the given list must be the base's with some `!patterns`
deleted, positive patterns that are only followed by positives moved into the final run, and
positives added to that run. For "selects at most as much" it is the mirror image: `!patterns`
only followed by `!patterns` moved into the final run, `!patterns` added to it, and positives
deleted only where no `!pattern` follows them.
"""

from __future__ import annotations

from collections.abc import Sequence


def negated(pattern: str) -> bool:
    return pattern.startswith("!")


def selects_at_least(base: Sequence[str], given: Sequence[str]) -> bool:
    """`given` provably selects every file `base` selects (and perhaps more)."""
    return _provable(list(base), list(given), grow=True)


def selects_at_most(base: Sequence[str], given: Sequence[str]) -> bool:
    """`given` provably selects no file `base` does not (and perhaps fewer)."""
    return _provable(list(base), list(given), grow=False)


def _provable(base: list[str], given: list[str], *, grow: bool) -> bool:
    if given == base:
        return True

    def tail_kind(pattern: str) -> bool:  # the polarity that may be added at the end
        return not negated(pattern) if grow else negated(pattern)

    run = len(given)
    while run > 0 and tail_kind(given[run - 1]):
        run -= 1
    # Any split of the given list's final run into "kept from the base" and "added" may prove it.
    splits = range(run, len(given) + 1)
    return any(_aligned(base, given[:s], set(given[s:]), grow=grow) for s in splits)


def _aligned(base: list[str], prefix: list[str], tail: set[str], *, grow: bool) -> bool:
    """`prefix` is `base` with some patterns left out, each of them safely left out."""
    kept: list[int] = []
    i = 0
    for pattern in prefix:
        while i < len(base) and base[i] != pattern:
            i += 1
        if i == len(base):
            return False
        kept.append(i)
        i += 1
    kept_set = set(kept)
    for k, pattern in enumerate(base):
        if k in kept_set:
            continue
        later = [base[j] for j in kept if j > k]
        if grow:
            if negated(pattern):
                continue  # deleting a take-back never selects less
            # A positive may only move into the final run: nothing after it may take back.
            if pattern not in tail or any(negated(p) for p in later):
                return False
        else:
            if negated(pattern):
                # A take-back may only move into the final run of take-backs.
                if pattern not in tail or any(not negated(p) for p in later):
                    return False
            elif tail or any(negated(p) for p in later):
                # A positive may be deleted only where nothing after it is a take-back.
                return False
    return True
