"""CODEOWNERS, read as GitHub reads it: who must approve a change to a path.

Each line is a pattern and its owners (`@user`, `@org/team`, an email); the **last** matching
line wins, and a matching line with no owners leaves the path unowned. Patterns follow
gitignore's rules, except that GitHub has no `!` negation and no `[...]` ranges (such lines are
skipped, as GitHub skips them with an error shown on the file).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pathspec

# Where GitHub looks, in order: the first that exists is the repository's CODEOWNERS.
LOCATIONS = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS")


@dataclass(frozen=True)
class Rule:
    pattern: str
    owners: tuple[str, ...]
    line: int


def parse(text: str) -> list[Rule]:
    """The rules of a CODEOWNERS file, in file order."""
    rules: list[Rule] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        words = line.replace("\\#", "\0").split()
        pattern = words[0].replace("\0", "\\#")  # gitignore escapes it too
        owners: list[str] = []
        for word in words[1:]:
            if word.startswith("#"):
                break  # an inline comment
            owners.append(word.replace("\0", "#"))
        if pattern.startswith("!") or "[" in pattern:
            continue
        rules.append(Rule(pattern=pattern, owners=tuple(owners), line=number))
    return rules


def _matcher(pattern: str) -> pathspec.GitIgnoreSpec:
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines([pattern])


def owners_of(rules: Sequence[Rule], path: str) -> tuple[str, ...] | None:
    """The owners of `path` (a repository path, no leading slash): the last matching rule's,
    `()` when that rule names none, None when no rule matches."""
    found: tuple[str, ...] | None = None
    for rule in rules:
        if _matcher(rule.pattern).match_file(path):
            found = rule.owners
    return found


def approvers(rules: Sequence[Rule], paths: Iterable[str]) -> tuple[list[str], list[str]]:
    """(every owner who must approve a change to `paths`, in first-seen order; the paths no
    owner covers)."""
    owners: dict[str, None] = {}
    unowned: list[str] = []
    for path in dict.fromkeys(p.lstrip("/") for p in paths):
        found = owners_of(rules, path)
        if not found:
            unowned.append(path)
            continue
        owners.update(dict.fromkeys(found))
    return list(owners), unowned


def stanza(paths: Sequence[str], owners: Sequence[str]) -> str:
    """The lines `init` writes: each of the gate's rule paths owned by `owners`."""
    width = max(len(p) for p in paths)
    lines = [
        "# golden-gate: the rules of the gate (golden set, config, judge prompts, calibration,",
        '# workflows). With branch protection\'s "Require review from Code Owners", a pull',
        "# request that changes them needs these owners' approval.",
        *(f"{p.ljust(width)} {' '.join(owners)}" for p in paths),
    ]
    return "\n".join(lines) + "\n"


MARKER = "# golden-gate: the rules of the gate"
