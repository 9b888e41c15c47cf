"""A slim view of a report: what the gate reads of each item, as columns
(docs/architecture.md#data-contracts).

The gate needs of an item its id, tags, counts, cluster, origin and hash; the comment needs
the full record of the few items it shows. A 100,000-item report is 170 MB of JSON, nearly all
of it runs (answers, checks, verdicts), and 1 GB as pydantic models. `load` decodes a large
report with typed msgspec structs that name only what the gate reads: the runs are skipped as
raw JSON text, never made into objects, whatever the report's whitespace or key order. The
items are kept as columns, not as an object an item; a row's item is decoded again, and
validated in full by the model, when a template shows it.

A report under 1 MiB, or one the structs refuse (a value of another type than the model keeps
as it is, an unknown field, half an emoji), is parsed in full (report.py), so a bad report gets
the full parse's sentence. What this path does not read it does not check: a malformed run of
an item no row shows goes unnoticed.
"""

from __future__ import annotations

import codecs
import json
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import repeat
from operator import add, attrgetter, gt
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import msgspec

from golden_gate import jsontext, surrogates
from golden_gate.core.item_result import ItemResult
from golden_gate.core.report import Report
from golden_gate.core.report_file import load_report, parse_report, too_deep_item_field
from golden_gate.errors import InputError

if TYPE_CHECKING:
    from golden_gate.core.agreement import Agreement, EvaluatorRate

LARGE_REPORT_BYTES = 1 << 20  # below: parsed in full, as it costs little
PULL_REQUEST = "pull-request"


@dataclass(slots=True)
class ItemColumns:
    """Each item's id and counts, one list a field, in the report's order."""

    ids: list[str] = field(default_factory=list)
    tags: list[Sequence[str]] = field(default_factory=list)
    passes: list[int] = field(default_factory=list)
    runs: list[int] = field(default_factory=list)
    errors: list[int] = field(default_factory=list)
    unanswered: list[int] = field(default_factory=list)
    hashes: list[str | None] = field(default_factory=list)
    clusters: dict[str, str] = field(default_factory=dict)  # only the items that have one
    own: set[str] = field(default_factory=set)  # items the pull request defined (rules.py)
    # tag_codes(), once asked: derived from `tags`, so not compared
    codes: tuple[dict[int, Sequence[str]], list[int]] | None = field(
        default=None, compare=False, repr=False
    )

    @classmethod
    def of(cls, items: Sequence[Any]) -> ItemColumns:
        """The columns of records with ItemResult's attribute names (models or structs)."""
        ids = list(map(attrgetter("id"), items))
        columns = cls(
            ids=ids,
            tags=list(map(attrgetter("tags"), items)),
            passes=list(map(attrgetter("passes"), items)),
            runs=list(map(attrgetter("runs"), items)),
            errors=list(map(attrgetter("errors"), items)),
            unanswered=list(map(attrgetter("unanswered"), items)),
            hashes=list(map(attrgetter("item_hash"), items)),
        )
        clusters = list(map(attrgetter("cluster"), items))
        if any(clusters):  # rare: most reports have neither clusters nor own items
            columns.clusters = {i: c for i, c in zip(ids, clusters, strict=True) if c is not None}
        origins = list(map(attrgetter("origin"), items))
        if PULL_REQUEST in origins:
            columns.own = {i for i, o in zip(ids, origins, strict=True) if o == PULL_REQUEST}
        return columns

    def extend(self, other: ItemColumns) -> None:
        """Append another's items (read a batch at a time)."""
        self.ids += other.ids
        self.tags += other.tags
        self.passes += other.passes
        self.runs += other.runs
        self.errors += other.errors
        self.unanswered += other.unanswered
        self.hashes += other.hashes
        self.clusters.update(other.clusters)
        self.own |= other.own
        self.codes = None

    def with_errors_counted(self) -> ItemColumns:
        """The same items with every run the judge could not judge counted as a failed run."""
        return ItemColumns(
            ids=self.ids,
            tags=self.tags,
            passes=self.passes,
            runs=list(map(add, self.runs, self.errors)),
            errors=list(repeat(0, len(self.ids))),
            unanswered=self.unanswered,
            hashes=self.hashes,
            clusters=self.clusters,
            own=self.own,
            codes=self.codes,
        )

    def __len__(self) -> int:
        return len(self.ids)

    def tag_codes(self) -> tuple[dict[int, Sequence[str]], list[int]]:
        """Tags dictionary-encoded: each item's code (the index of the first item with the same
        tags) and each code's tags. Items share a few tag lists, so counting by tag costs a
        lookup an item, not a hash a tag; computed once, when first asked."""
        if self.codes is None:
            first: dict[tuple[str, ...], int] = {}
            codes = list(map(first.setdefault, map(tuple, self.tags), range(len(self.tags))))
            lists = {code: self.tags[code] for code in first.values()}
            self.codes = (lists, codes)
        return self.codes


class SlimReport:
    """A report's top-level fields (`header`, a Report without results) and its items as
    columns; `record` gives one item in full."""

    def __init__(self, header: Report, items: ItemColumns, *, source: Report | None = None):
        self.header = header
        self.items = items
        self._source = source  # the full report, when there is one in memory
        self._records: dict[str, ItemResult | None] = {}
        # What renders of this report keep between them (rows escaped once for both the
        # comment and the summary); see render.py.
        self.memo: dict[object, Any] = {}

    def record(self, item_id: str) -> ItemResult | None:
        """The item with every run, for a row; None when the report has no such item."""
        if item_id not in self._records:
            self.prefetch([item_id])
        return self._records[item_id]

    def prefetch(self, item_ids: Iterable[str]) -> None:
        """Have these items' records at hand (a file is read once for all of them)."""
        for item_id in item_ids:
            if item_id not in self._records:
                self._records[item_id] = self._by_id.get(item_id)

    @cached_property
    def _by_id(self) -> dict[str, ItemResult]:
        return self.full().by_id()

    def may_have_evaluations(self) -> bool:
        """False when no run has evaluators' outcomes: the comment shows none then."""
        report = self.full()
        return any(run.evaluations for item in report.results for run in item.run_results)

    def full(self) -> Report:
        """The whole report, runs and all."""
        assert self._source is not None
        return self._source

    def evaluator_rates(self) -> list[EvaluatorRate]:
        if not self.may_have_evaluations():
            return []
        from golden_gate.core.agreement import evaluator_rates

        return evaluator_rates(self.full())

    def agreement(self) -> Agreement | None:
        if not self.may_have_evaluations():
            return None
        from golden_gate.core.agreement import agreement

        return agreement(self.full())


def of(report: Report | SlimReport) -> SlimReport:
    """The slim view of a report held in memory (a SlimReport is its own view)."""
    if isinstance(report, SlimReport):
        return report
    header = report.model_construct(
        **{name: getattr(report, name) for name in type(report).model_fields if name != "results"},
        results=[],
    )
    return SlimReport(header, ItemColumns.of(report.results), source=report)


def load(path: str | Path, *, large: int = LARGE_REPORT_BYTES) -> SlimReport:
    """The slim view of a report file; InputError (one sentence, naming it) for a bad one.
    From `large` bytes on, the report is decoded the slim way."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError:
        size = 0  # load_report says what is wrong with it
    if size >= large:
        try:
            return _FileReport.read(path)
        except _Slow:
            pass  # the full parse says what is wrong, in its words, or reads it after all
    return of(load_report(path))


class _Slow(Exception):
    """The slim path cannot vouch for this report: parse it in full."""


# What is kept of an item, with the full record's own types, limits and defaults (report.py's
# ItemResult; tests/core/test_reader.py checks them against the model). Strict: a value the model
# would coerce (a count written 1.0) or a field it would keep as an extra is left to it.
_Count = Annotated[int, msgspec.Meta(ge=0)]


class _Item(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    id: str
    passes: _Count
    runs: _Count
    tags: list[str] = []
    errors: _Count = 0
    unanswered: _Count = 0
    cluster: str | None = None
    origin: Literal["base", "pull-request"] | None = None
    question: str | None = None
    item_hash: str | None = None
    expected_tools: list[str] | None = None
    run_results: list[msgspec.Raw] = []  # never decoded here: a row decodes its item again


_TOP = msgspec.json.Decoder(dict[str, msgspec.Raw])
_ITEMS = msgspec.json.Decoder(list[_Item])
_RAW_ITEMS = msgspec.json.Decoder(list[msgspec.Raw])
_EVALUATIONS = b'"evaluations"'
_UTF8_CHUNK = 8 << 20
_BATCH = 500  # items decoded into structs at once: few transient objects


def _results(data: bytes) -> tuple[dict[str, msgspec.Raw], msgspec.Raw]:
    """The top-level fields, undecoded, and the results among them."""
    try:
        top = _TOP.decode(data)
    except msgspec.DecodeError:
        raise _Slow from None
    results = top.get("results")
    if results is None:
        raise _Slow
    return top, results


def _check_utf8(data: bytes) -> None:
    """The text is UTF-8 throughout (the skipped runs too, as the full parse requires)."""
    if data.isascii():
        return
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(data)
    try:
        for start in range(0, len(data), _UTF8_CHUNK):  # a chunk at a time: no 2nd copy
            decoder.decode(view[start : start + _UTF8_CHUNK])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        raise _Slow from None


class _FileReport(SlimReport):
    """A slim view read from a file; rows decode their item from its place in the file."""

    def __init__(self, header: Report, items: ItemColumns, *, path: Path) -> None:
        super().__init__(header, items)
        self.path = path
        self.evaluations = False  # the text names evaluators' outcomes somewhere
        self.starts = array("q")  # each item's offset in the file, and its length
        self.sizes = array("q")

    @classmethod
    def read(cls, path: Path) -> _FileReport:
        data = path.read_bytes()
        _check_utf8(data)
        top, results = _results(data)
        try:
            raws = _RAW_ITEMS.decode(results)
        except msgspec.DecodeError:
            raise _Slow from None
        items = ItemColumns()
        for at in range(0, len(raws), _BATCH):  # a batch at a time: few structs at once
            try:
                batch = _ITEMS.decode(b"[" + b",".join(raws[at : at + _BATCH]) + b"]")
            except msgspec.DecodeError:  # a value the model decides (ValidationError)
                raise _Slow from None
            items.extend(ItemColumns.of(batch))
        if len(set(items.ids)) != len(items) or any(map(gt, items.passes, items.runs)):
            raise _Slow  # what the model checks across fields: unique ids, passes within runs
        # Items share a few tag lists: one list each, not one an item.
        shared: dict[tuple[str, ...], Sequence[str]] = {}
        items.tags = [shared.setdefault(tuple(tags), tags) for tags in items.tags]
        report = cls(_header(top, path), items, path=path)
        report.evaluations = _EVALUATIONS in data
        report.sizes = array("q", map(len, raws))
        report.starts = _starts(data, raws[0] if raws else None, report.sizes)
        return report

    def prefetch(self, item_ids: Iterable[str]) -> None:
        item_ids = list(item_ids)
        index = self._index
        wanted = sorted(
            (index[item_id], item_id)
            for item_id in item_ids
            if item_id not in self._records and item_id in index
        )
        for item_id in item_ids:
            if item_id not in index:
                self._records[item_id] = None
        if not wanted:
            return
        try:
            with self.path.open("rb") as handle:
                texts = []
                for at, _ in wanted:
                    handle.seek(self.starts[at])
                    texts.append(handle.read(self.sizes[at]))
        except OSError:
            texts = [b""] * len(wanted)
        for (_, item_id), text in zip(wanted, texts, strict=True):
            item = _item(text)
            if item is None or item.id != item_id:
                # Something this path cannot vouch for (or the file changed): the full parse
                # says what, or reads it.
                item = self._by_id.get(item_id)
            self._records[item_id] = item

    @cached_property
    def _index(self) -> dict[str, int]:
        return dict(zip(self.items.ids, range(len(self.items)), strict=True))

    def may_have_evaluations(self) -> bool:
        return self.evaluations

    @cached_property
    def _full(self) -> Report:
        return load_report(self.path)  # a bad report: the full parse's sentence, raised here

    def full(self) -> Report:
        return self._full


def _starts(data: bytes, first: msgspec.Raw | None, sizes: array[int]) -> array[int]:
    """Each item's offset in `data`. The first item's text begins the results array (an item
    has quoted keys, so it cannot stand verbatim inside a string); between two items there is
    only whitespace and a comma (the decoder checked the syntax, and that each is an object).
    A row checks the id it reads there."""
    starts = array("q")
    if first is None:
        return starts
    at = data.find(bytes(first))
    if at < 0 or not data[:at].rstrip().endswith(b"["):
        raise _Slow
    find = data.index
    for size in sizes:
        at = find(b"{", at)
        starts.append(at)
        at += size
    return starts


def _header(top: dict[str, msgspec.Raw], path: Path) -> Report:
    """Every top-level field, parsed as the full parse parses it (a report with no results)."""
    text = b",".join(
        json.dumps(key).encode() + b":" + (b"[]" if key == "results" else bytes(value))
        for key, value in top.items()
    )
    try:
        return parse_report("{" + text.decode("utf-8") + "}", source=str(path))
    except (InputError, UnicodeDecodeError):
        raise _Slow from None


def _item(text: bytes) -> ItemResult | None:
    """The item validated as the whole report's parse validates it (report.py); None for one
    the full parse must judge."""
    try:
        # pydantic's own JSON parser: for a valid item the record `json.loads` and the
        # model give (a lone surrogate is not valid here: the slower way repairs it).
        item = ItemResult.model_validate_json(text)
    except ValueError:
        try:
            fragment = text.decode("utf-8")
            data = jsontext.loads(fragment, check_depth=False)
            if surrogates.may_hold_surrogates(fragment):
                data, _ = surrogates.repair_json(data)
            item = ItemResult.model_validate(data)
        except (ValueError, InputError):
            return None
    return None if too_deep_item_field(item) else item
