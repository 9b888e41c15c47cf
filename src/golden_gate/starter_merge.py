"""`init` run again over a golden-gate.toml that exists: the user's file is kept as written (every
value, comment and order) and what the fresh starter sets that it does not is added, each with
the starter's comment above it: a key at the end of its table, a table the file lacks whole (its
commented hints too). A value the user set is never changed, even where the starter would now
write another one; `init` says what it would write instead (the floor)."""

from __future__ import annotations

import re
import tomllib
from typing import Any, NamedTuple

_HEADER = re.compile(r"^\s*\[\s*([A-Za-z0-9_-]+)\s*\]")
_ANY_HEADER = re.compile(r"^\s*\[")
_KEY = re.compile(r"""^\s*(["']?)([A-Za-z0-9_-]+)\1\s*=""")


class Merged(NamedTuple):
    text: str
    added: list[str]  # "[compose] file", "baseline-runs", ...


def _blocks(lines: list[str]) -> dict[str, tuple[int, int]]:
    """Table name ("" for the top) -> (first line, end line) of its block, header included."""
    starts = [(i, m.group(1)) for i, line in enumerate(lines) if (m := _HEADER.match(line))]
    others = [i for i, line in enumerate(lines) if _ANY_HEADER.match(line)]
    blocks = {"": (0, others[0] if others else len(lines))}
    for start, name in starts:
        end = next((i for i in others if i > start), len(lines))
        blocks.setdefault(name, (start, end))
    return blocks


def _comment_above(lines: list[str], index: int) -> list[str]:
    """The comment lines directly above line `index` (no blank line between)."""
    first = index
    while first > 0 and lines[first - 1].lstrip().startswith("#"):
        first -= 1
    return lines[first:index]


def _key_line(lines: list[str], block: tuple[int, int], key: str) -> int | None:
    for i in range(*block):
        match = _KEY.match(lines[i])
        if match and match.group(2) == key:
            return i
    return None


def _insert_at(lines: list[str], block: tuple[int, int], *, top: bool = False) -> int:
    """Where a key goes in a block: after its last line that is neither blank nor a comment
    (comments at a block's end are commented hints, or the next table's heading)."""
    start, end = block
    lowest = start if top else start + 1
    if top and not any(_KEY.match(line) for line in lines[start:end]):
        # No key above the first table: after the file's opening comment, before the table.
        while end > lowest and not lines[end - 1].strip():
            end -= 1
        return end
    while end > lowest and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
        end -= 1
    return end


def merge(existing: str, fresh: str, *, skip: frozenset[str] = frozenset()) -> Merged:
    """`existing` with what `fresh` sets and it does not (both valid TOML); `skip`: keys not to
    add, spelled as `added` lists them ("[scope] ignore-paths")."""
    have: dict[str, Any] = tomllib.loads(existing)
    new: dict[str, Any] = tomllib.loads(fresh)
    mine = existing.splitlines()
    theirs = fresh.splitlines()
    their_blocks = _blocks(theirs)
    added: list[str] = []
    # Top-level keys, then each table's: a key the user's file lacks, with its comment.
    for table, values in [("", new), *((t, v) for t, v in new.items() if isinstance(v, dict))]:
        if table and table not in have:
            start, end = their_blocks[table]
            block = theirs[start:end]
            while block and not block[-1].strip():
                block.pop()
            gap = [""] if mine and mine[-1].strip() else []
            mine += [*gap, *block]
            added.append(f"[{table}]")
            continue
        target = have.get(table, {}) if table else have
        if not isinstance(target, dict):
            continue
        for key, value in values.items():
            if isinstance(value, dict) and not table:
                continue  # a table: its turn comes
            if key in target or (f"[{table}] {key}" if table else key) in skip:
                continue
            at = _key_line(theirs, their_blocks[table], key)
            if at is None:
                continue
            text = [*_comment_above(theirs, at), theirs[at]]
            blocks = _blocks(mine)
            if table not in blocks:  # a table the file has only as a dotted key or inline
                continue
            where = _insert_at(mine, blocks[table], top=not table)
            mine[where:where] = text
            added.append(f"[{table}] {key}" if table else key)
    newline = "\r\n" if "\r\n" in existing else "\n"  # the file's own line endings
    merged = newline.join(mine) + newline
    _check(have, new, tomllib.loads(merged), added)
    return Merged(merged, added)


class MergeError(ValueError):
    """The merged text does not say what the two files say (a line that only looked like a
    table header or a key, inside a multi-line string): nothing is written."""


def _check(have: dict[str, Any], new: dict[str, Any], merged: dict[str, Any], added: list[str]):
    """Every value of the team's file is unchanged, and each added one reads as the starter's."""
    expected = {k: dict(v) if isinstance(v, dict) else v for k, v in have.items()}
    for name in added:
        table, _, key = name.partition("] ")
        if name.startswith("[") and key:
            expected[table[1:]][key] = new[table[1:]][key]
        elif name.startswith("["):
            expected[name[1:-1]] = new[name[1:-1]]
        else:
            expected[name] = new[name]
    if merged != expected:
        raise MergeError("a line the merge relies on is inside a multi-line value")
