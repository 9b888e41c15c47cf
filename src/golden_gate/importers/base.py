"""What every importer gives: rows, each one foreign record as golden fields, with what it mapped
and what it dropped; `assemble` makes golden items of them (or lists why not)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from golden_gate.core.golden import GoldenItem
from golden_gate.errors import InputError
from golden_gate.surrogates import repair_json

# Tags an imported item carries until a person has looked at it: `run` leaves such items out
# (core/golden.py: UNREVIEWED_TAGS), `review --candidates` takes them to accepted items.
NEEDS_REVIEW = "needs-review"  # key points drawn from an expected answer (--key-points)
NEEDS_REFERENCE = "needs-reference"  # a question from traces: no reference yet
FROM_TRACES = "from-traces"
IMPORTED = "imported"


@dataclass
class Options:
    """How a file is read: a column map (plain CSV/JSONL), whether key points are drawn from an
    expected answer (marked for review), and whether items without a reference are written."""

    columns: dict[str, str] = field(default_factory=dict)
    key_points: bool = False
    without_reference: bool = False
    question_var: str | None = None


@dataclass
class Row:
    """One foreign record: where it is, the golden fields it maps to, and what was done."""

    where: str  # file:line
    question: str | None = None
    reference: str | None = None  # an expected answer: the reference the judge reads
    key_points: list[str] = field(default_factory=list)  # written by a person as criteria
    urls: list[str] = field(default_factory=list)
    must_include: list[str] = field(default_factory=list)
    must_not_include: list[str] = field(default_factory=list)
    json_schema: dict[str, Any] | None = None
    must_refuse: bool = False
    expected_tools: list[dict[str, Any]] | None = None
    tags: list[str] = field(default_factory=list)
    id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # fields of our own kept (traces)
    mapped: list[str] = field(default_factory=list)  # "ideal → reference"
    dropped: list[str] = field(default_factory=list)  # "assert javascript (no equivalent)"
    skip: str | None = None  # why this record is no item at all (archived, no question)


class Importer(Protocol):
    """One foreign format."""

    name: str
    summary: str  # one line for --help and the docs

    def sniff(self, path: Path, head: str) -> bool:
        """Whether the file (its name and first few KiB) looks like this format."""
        ...

    def rows(self, path: Path, options: Options) -> Iterator[Row]:
        """The file's records, in order; InputError (file and line) when one is malformed."""
        ...


@dataclass
class Outcome:
    """The items as the JSON lines to write (each validated by the golden set's own model, ids
    unique), not as records: a large file's items are kept in the memory their text takes."""

    lines: list[str]
    needs_review: bool
    listed: list[str]  # "file:line: why it was not written"
    dropped: dict[str, int]  # what was dropped, counted over the items
    mapped: dict[str, int]
    per_item: list[tuple[str, str, list[str]]]  # (file:line, id, what it dropped)


_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


def draw_key_points(reference: str) -> list[str]:
    """Key points drawn from an expected answer, one a sentence (marked for review)."""
    parts = [p.strip(" -•*\t") for line in reference.splitlines() for p in _SENTENCE.split(line)]
    return [p for p in parts if len(p) > 1]


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40].strip("-") or "item"


def _id(row: Row, fmt: str, taken: set[str]) -> str:
    if row.id:
        base = row.id.strip()
    else:  # stable: the same question gets the same id on every import
        digest = hashlib.sha256((row.question or "").encode("utf-8")).hexdigest()[:8]
        base = f"{fmt}-{slug(row.question or '')}-{digest}"
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base}-{n}", n + 1
    return candidate


def item_of(row: Row, fmt: str, taken: set[str], options: Options) -> GoldenItem | str:
    """The golden item of a row, or why there is none (a sentence for the list)."""
    if row.skip:
        return row.skip
    if not row.question or not row.question.strip():
        return "no question"
    data: dict[str, Any] = {"question": row.question.strip()}
    # A dataset's items are `imported`; candidates from traces carry their own marks.
    tags = list(dict.fromkeys(row.tags if FROM_TRACES in row.tags else [*row.tags, IMPORTED]))
    points = list(row.key_points)
    if row.reference and row.reference.strip():
        if options.key_points:
            drawn = draw_key_points(row.reference)
            points += drawn
            tags.append(NEEDS_REVIEW)
            row.mapped.append("expected answer → key points drawn by sentence (needs-review)")
        else:
            # The whole expected answer, as written, is the reference the judge reads.
            points.append(row.reference.strip())
    if points:
        data["reference_key_points"] = points
    for name in ("urls", "must_include", "must_not_include"):
        values = getattr(row, name)
        if values:
            data["reference_urls" if name == "urls" else name] = values
    if row.json_schema is not None:
        data["json_schema"] = row.json_schema
    if row.must_refuse:
        data["must_refuse"] = True
    if row.expected_tools is not None:
        data["expected_tools"] = row.expected_tools
    data.update(row.extra)
    data["tags"] = list(dict.fromkeys(tags))
    data["id"] = _id(row, fmt, taken)
    # YAML writes a character beyond U+FFFF as two escaped halves: joined; a lone half cannot
    # be written, so it becomes U+FFFD.
    data, _ = repair_json(_paired(data))
    try:
        item = GoldenItem.model_validate(data)
    except ValueError as exc:
        raise InputError(f"{row.where}: cannot be a golden item: {_first_error(exc)}") from None
    if not item.has_reference and not options.without_reference:
        return "nothing to judge an answer by (no expected answer, criteria or checks)"
    taken.add(item.id)
    item._where = row.where
    return item


def _paired(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return value.encode("utf-16", "surrogatepass").decode("utf-16")
        except UnicodeDecodeError:
            return value
    if isinstance(value, list):
        return [_paired(v) for v in value]
    if isinstance(value, dict):
        return {k: _paired(v) for k, v in value.items()}
    return value


def _first_error(exc: ValueError) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        first = errors()[0]
        place = ".".join(str(p) for p in first.get("loc", ()))
        return f"{place}: {first.get('msg')}" if place else str(first.get("msg"))
    return str(exc)


def assemble(rows: Iterable[Row], fmt: str, options: Options) -> Outcome:
    lines: list[str] = []
    needs_review = False
    listed: list[str] = []
    per_item: list[tuple[str, str, list[str]]] = []
    dropped: dict[str, int] = {}
    mapped: dict[str, int] = {}
    taken: set[str] = set()
    questions: set[str] = set()
    for row in rows:
        made = item_of(row, fmt, taken, options)
        if isinstance(made, str):
            listed.append(f"{row.where}: {made}")
            continue
        key = " ".join(made.question.casefold().split())
        if key in questions:
            listed.append(f"{row.where}: the same question as an item before it, left out")
            continue
        questions.add(key)
        lines.append(
            json.dumps(made.model_dump(mode="json", exclude_unset=True), ensure_ascii=False)
        )
        needs_review = needs_review or NEEDS_REVIEW in made.tags
        for what in row.mapped:
            mapped[what] = mapped.get(what, 0) + 1
        for what in row.dropped:
            dropped[what] = dropped.get(what, 0) + 1
        if row.dropped:
            per_item.append((row.where, made.id, list(row.dropped)))
    return Outcome(lines, needs_review, listed, dropped, mapped, per_item)
