"""A slim view of a report: what the gate reads of each item, as columns
(docs/architecture.md#data-contracts).

The gate needs of an item its id, tags, counts, cluster, origin and hash; the comment needs
the full record of the few items it shows. A 100,000-item report is 170 MB of JSON, nearly all
of it runs (answers, checks, verdicts), and 1 GB as pydantic models. `load` reads a large
report in chunks, cuts each item's `run_results` out of the text before parsing (golden-gate
writes reports indented, so a run's lines are the ones indented deeper than its item's keys),
parses the rest with pydantic's JSON parser, checks each column holds exactly the types the full
model keeps as they are, and keeps columns, not an object an item.
A row's item is read again from the file, and validated in full, when a template shows it.

A report under 1 MiB, one not written indented, or one this path finds anything wrong with is
parsed in full (report.py), so a bad report gets the same sentence as ever. What the fast path
does not read it does not check: a malformed run of an item no row shows goes unnoticed.

About 570 lines, one module: it is one parser; the fast path and the columns it fills change
together, and the full parse it falls back to is report.py's.
"""

from __future__ import annotations

import codecs
import contextlib
import gc
import marshal
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain, repeat
from operator import add, attrgetter, gt
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, get_args

from pydantic_core import from_json

from golden_gate import forked, jsontext, surrogates
from golden_gate.core.report import (
    ItemResult,
    Report,
    load_report,
    parse_report,
    too_deep_item_field,
)
from golden_gate.errors import InputError

if TYPE_CHECKING:
    from golden_gate.core.agreement import Agreement, EvaluatorRate

LARGE_REPORT_BYTES = 1 << 20  # below: parsed in full, as it costs little
CHUNK_BYTES = 8 << 20
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

    def extend(self, items: Iterable[ItemResult]) -> None:
        """Append the full records' counts."""
        items = list(items)
        self.extend_columns({name: list(map(attrgetter(name), items)) for name in _FIELDS})

    def extend_columns(self, columns: dict[str, list[Any]]) -> None:
        """Append items given a list a field (ItemResult's names)."""
        ids = columns["id"]
        self.ids += ids
        self.tags += columns["tags"]
        self.passes += columns["passes"]
        self.runs += columns["runs"]
        self.errors += columns["errors"]
        self.unanswered += columns["unanswered"]
        self.hashes += columns["item_hash"]
        self.codes = None
        if any(columns["cluster"]):  # rare: most reports have neither clusters nor own items
            pairs = zip(ids, columns["cluster"], strict=True)
            self.clusters.update((i, c) for i, c in pairs if c is not None)
        if PULL_REQUEST in columns["origin"]:
            pairs = zip(ids, columns["origin"], strict=True)
            self.own.update(i for i, o in pairs if o == PULL_REQUEST)

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

    # Handed from the copy that read a report to the process that gates it (load_pair): the
    # tags as codes (each distinct list goes once, and comes back shared: no one changes a
    # column), every column in one marshal blob (plain lists of str and int; several times
    # faster to write than a pickle, and read by the same interpreter that wrote it).
    def __getstate__(self) -> bytes:
        lists, codes = self.tag_codes()
        columns = (self.ids, self.passes, self.runs, self.errors, self.unanswered, self.hashes)
        return marshal.dumps((columns, lists, codes, self.clusters, self.own))

    def __setstate__(self, state: bytes) -> None:
        columns, lists, codes, self.clusters, self.own = marshal.loads(state)
        self.ids, self.passes, self.runs, self.errors, self.unanswered, self.hashes = columns
        self.tags = list(map(lists.__getitem__, codes))
        self.codes = (lists, codes)


class NeedsFullParse(Exception):
    """A record only the full parse can give, where the full parse is not to be done."""


class SlimReport:
    """A report's top-level fields (`header`, a Report without results) and its items as
    columns; `record` gives one item in full."""

    # False in a forked copy making rows (render.py): a record that needs the whole report
    # parsed (a GB for a large one) raises NeedsFullParse there, and the process that made
    # the copy, which may parse it, makes that row itself.
    parse_in_full = True

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
            self._records[item_id] = self._record(item_id)
        return self._records[item_id]

    def _record(self, item_id: str) -> ItemResult | None:
        return self._by_id.get(item_id)

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
    items = ItemColumns()
    items.extend(report.results)
    header = report.model_construct(
        **{name: getattr(report, name) for name in type(report).model_fields if name != "results"},
        results=[],
    )
    return SlimReport(header, items, source=report)


def load(
    path: str | Path,
    *,
    rows: bool = True,
    large: int = LARGE_REPORT_BYTES,
    chunk: int = CHUNK_BYTES,
) -> SlimReport:
    """The slim view of a report file; InputError (one sentence, naming it) for a bad one.

    `rows`: its items may be shown as rows (the candidate's are; a baseline's answers are shown
    beside them, for the regressed items); without,
    a large report's records come from a full parse, when asked.
    `large`: from this many bytes on, the report is read the slim way, `chunk` bytes at a time.
    """
    path = Path(path)
    if _size(path) >= large:
        try:
            return _read_paused(path, rows=rows, chunk=chunk)
        except _Slow:
            pass  # the full parse says what is wrong, in today's words, or reads it after all
    return of(load_report(path))


def load_pair(
    report: str | Path,
    baseline: str | Path | None,
    *,
    large: int = LARGE_REPORT_BYTES,
    meanwhile: Callable[[], object] | None = None,
) -> tuple[SlimReport, SlimReport | None]:
    """A report and its baseline. Two large files are read at once: the report by a forked
    copy of this process (only when no other thread runs here: forking one is unsafe), the
    baseline here, then `meanwhile` runs (imports the caller will need) until the copy is done.
    """
    if (
        baseline is None
        or not forked.can_fork()
        or min(_size(Path(report)), _size(Path(baseline))) < large
    ):
        return load(report, large=large), (
            load(baseline, rows=True, large=large) if baseline is not None else None
        )
    # The collector waits till both are read: the baseline's objects, what `meanwhile`
    # imports and the view handed back are all kept; it would walk them again and again.
    with gc_paused(), forked.Copy(lambda: _read_paused(Path(report), rows=True)) as copy:
        base = load(baseline, rows=True, large=large)
        if meanwhile is not None:
            meanwhile()
        view = copy.result()
    # No copy (another thread runs), or it failed (a report the fast path cannot read: the
    # full parse says what is wrong) or died: the report is read here.
    return (view if view is not None else load(report, large=large)), base


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0  # load_report says what is wrong with it


@contextlib.contextmanager
def gc_paused(*, freeze: bool = False) -> Iterator[None]:
    """The cyclic collector off, while many objects that are all kept are made. `freeze`: and
    what exists then is frozen before it runs again, so it never walks it (for what is kept
    until the process ends)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if enabled:
            gc.enable()


def _read_paused(path: Path, *, rows: bool, chunk: int = CHUNK_BYTES) -> _FileReport:
    # A large report is a few hundred thousand objects, all kept: the cyclic collector would
    # walk them again and again while they are made (see report.parse_report).
    with gc_paused():
        return _FileReport.read(path, rows=rows, chunk=chunk)


class _Slow(Exception):
    """The fast path cannot read this report: parse it in full."""


# What is kept of an item, with the full record's own types, limits and defaults (report.py).
_FIELDS = ("id", "tags", "passes", "runs", "errors", "unanswered", "cluster", "origin", "item_hash")


_DEFAULTS: dict[str, Any] = {
    name: (None if info.is_required() else info.get_default(call_default_factory=True))
    for name, info in ItemResult.model_fields.items()
    if name in _FIELDS
}
_DEFAULTS["tags"] = ()  # shared by every item without tags: immutable
_KNOWN = frozenset((*_FIELDS, "question", "run_results"))
_NONE = type(None)
# The exact types (as JSON parses) each kept field may have for the full model (report.py's
# ItemResult) to keep its value as it is; tests/test_slim.py checks them against the model.
# Anything else (a count written 1.0, a null where a list belongs): the full parse decides.
_EXACT: dict[str, frozenset[type]] = {
    "id": frozenset({str}),
    "tags": frozenset({list, tuple}),  # tuple: the default, for an item without tags
    "passes": frozenset({int}),
    "runs": frozenset({int}),
    "errors": frozenset({int}),
    "unanswered": frozenset({int}),
    "cluster": frozenset({str, _NONE}),
    "origin": frozenset({str, _NONE}),
    "item_hash": frozenset({str, _NONE}),
    "question": frozenset({str, _NONE}),
}
_COUNTS = ("passes", "runs", "errors", "unanswered")  # ge=0
_ORIGINS = frozenset((None, *get_args(get_args(ItemResult.model_fields["origin"].annotation)[0])))
_NO_RUNS = ()  # `run_results` absent: not `[]`, which the text may hold


def _columns(items: list[Any]) -> dict[str, list[Any]]:
    """The parsed items as columns, each value checked to be what the full model would keep
    unchanged (a builtin over each column, not a validator an item); _Slow otherwise."""
    if not all(map(dict.__instancecheck__, items)):
        raise _Slow
    columns = {
        name: list(map(dict.get, items, repeat(name), repeat(_DEFAULTS.get(name))))
        for name in _EXACT
    }
    for name, kinds in _EXACT.items():
        if not kinds.issuperset(map(type, columns[name])):
            raise _Slow
    if any(min(columns[name], default=0) < 0 for name in _COUNTS):
        raise _Slow
    if not {str}.issuperset(map(type, chain.from_iterable(columns["tags"]))):
        raise _Slow
    if not _ORIGINS.issuperset(columns["origin"]):
        raise _Slow
    runs = list(map(dict.get, items, repeat("run_results"), repeat(_NO_RUNS)))
    if not {list, tuple}.issuperset(map(type, runs)) or any(runs):
        raise _Slow  # runs this path could not cut, or not a list: read by the full parse
    return columns


class _Layout:
    """The byte patterns of a report indented by `unit` spaces a level."""

    def __init__(self, unit: int) -> None:
        pad = b" " * unit
        self.results = b"\n" + pad + b'"results": [\n'
        self.item_end = b"\n" + pad * 2 + b"}"
        self.between = self.item_end + b",\n" + pad * 2 + b"{"
        self.last = self.item_end + b"\n" + pad + b"]"
        self.item_start = re.compile(re.escape(b"\n" + pad * 2 + b"{"))
        # An item's runs: every line indented deeper than its keys, up to the closing bracket.
        self.runs = re.compile(
            re.escape(b"\n" + pad * 3 + b'"run_results": [')
            + b"(?:\n"
            + re.escape(pad * 4)
            + b"[^\n]*+)++\n"
            + re.escape(pad * 3 + b"]")
        )
        self.no_runs = b"\n" + pad * 3 + b'"run_results": []'


_FIRST_KEY = re.compile(rb"\{\n( +)\"")
_EVALUATIONS = b'"evaluations"'


class _FileReport(SlimReport):
    """A slim view read from a file; rows read their item from the file again."""

    def __init__(self, header: Report, items: ItemColumns, *, path: Path) -> None:
        super().__init__(header, items)
        self.path = path
        self.starts: list[int] | None = None  # each item's offset in the file, with rows
        self.evaluations = False  # the text names evaluators' outcomes somewhere
        self.layout: _Layout | None = None

    @classmethod
    def read(cls, path: Path, *, rows: bool, chunk: int = CHUNK_BYTES) -> _FileReport:
        with path.open("rb") as handle:
            return _Reader(handle, path, rows=rows, chunk=chunk).read()

    def _record(self, item_id: str) -> ItemResult | None:
        index = self._index.get(item_id)
        if index is None:
            return None
        try:
            item = self._read_item(index)
        except (_Slow, InputError, OSError, ValueError):  # bad JSON, UTF-8, fields included
            item = None
        if item is None or item.id != item_id:
            # Something this path cannot vouch for: the full parse says what, or reads it.
            if not self.parse_in_full:
                raise NeedsFullParse(item_id)
            return self._by_id.get(item_id)
        return item

    @cached_property
    def _index(self) -> dict[str, int]:
        return dict(zip(self.items.ids, range(len(self.items)), strict=True))

    def _read_item(self, index: int) -> ItemResult | None:
        """The item parsed as the whole report's parse would parse it (report.py)."""
        if self.starts is None or self.layout is None:
            return None
        start = self.starts[index] + 1  # past the newline before the item's brace
        end = self.starts[index + 1] if index + 1 < len(self.starts) else self.path.stat().st_size
        fd = os.open(self.path, os.O_RDONLY)
        try:
            text = os.pread(fd, end - start, start)
        finally:
            os.close(fd)
        close = text.find(self.layout.item_end)
        if close < 0:
            return None
        raw = text[: close + len(self.layout.item_end)]
        try:
            # pydantic's own JSON parser: for a valid item the record `json.loads` and the
            # model give (a lone surrogate is not valid here: the slower way repairs it).
            item = ItemResult.model_validate_json(raw)
        except ValueError:
            fragment = raw.decode("utf-8")
            data = jsontext.loads(fragment, check_depth=False)
            if surrogates.may_hold_surrogates(fragment):
                data, _ = surrogates.repair_json(data)
            item = ItemResult.model_validate(data)
        return None if too_deep_item_field(item) else item

    def may_have_evaluations(self) -> bool:
        return self.evaluations

    @cached_property
    def _full(self) -> Report:
        return load_report(self.path)  # a bad report: today's sentence, raised here

    def full(self) -> Report:
        return self._full


class _Reader:
    """Reads a report written indented, a chunk at a time, into a _FileReport.

    One buffer serves every chunk: a new one a chunk (a few hundred MB of allocations for a
    large report) costs the kernel's page faults more than the parse.
    """

    def __init__(self, handle: BinaryIO, path: Path, *, rows: bool, chunk: int) -> None:
        self.handle = handle
        self.path = path
        self.rows = rows
        self.chunk = chunk
        self.items = ItemColumns()
        self.starts: list[int] = []
        self.evaluations = False
        self._utf8 = codecs.getincrementaldecoder("utf-8")()
        self._ascii = True

    def _fill(self, buffer: bytearray, filled: int) -> int:
        """Read on into `buffer` after its first `filled` bytes (grown when full); checked to
        be UTF-8 (the runs are never parsed). How many bytes it holds now."""
        if filled == len(buffer):
            buffer.extend(bytes(self.chunk))  # an item (or the head) larger than the buffer
        got = self.handle.readinto(memoryview(buffer)[filled:]) or 0
        # Every byte before was ASCII while `_ascii` holds: the whole buffer tells of the new.
        if not (self._ascii and buffer.isascii()):
            self._ascii = False
            try:
                self._utf8.decode(memoryview(buffer)[filled : filled + got], final=not got)
            except UnicodeDecodeError:
                raise _Slow from None
        return filled + got

    def read(self) -> _FileReport:
        buffer = bytearray(2 * self.chunk)
        filled = self._fill(buffer, 0)
        first = _FIRST_KEY.match(buffer, 0, filled)
        if first is None:
            raise _Slow
        layout = _Layout(len(first.group(1)))
        opening = buffer.find(layout.results, 0, filled)
        while opening < 0:
            more = self._fill(buffer, filled)
            if more == filled:
                raise _Slow
            filled = more
            opening = buffer.find(layout.results, 0, filled)
        start = opening + len(layout.results) - 1  # the newline before the first item
        head = bytes(buffer[: start - 1])
        offset = 0  # the file's offset of buffer[0]
        while True:
            # Whole items only: up to the last one closed in this buffer, or the results' end.
            between = buffer.rfind(layout.between, start, filled)
            last = buffer.find(layout.last, max(between, start), filled)
            if last >= 0:
                self._items(buffer, start, last + len(layout.item_end), offset, layout)
                rest = self.handle.read()
                self._check_utf8(rest)
                tail = bytes(buffer[last + len(layout.last) : filled]) + rest
                break
            if between >= 0:
                done = between + len(layout.item_end)
                self._items(buffer, start, done, offset, layout)
                start = done + 1  # past the comma
            # What is left of this buffer's last item moves to its front; more is read after it.
            kept = filled - start
            buffer[:kept] = buffer[start:filled]
            offset, start = offset + start, 0
            more = self._fill(buffer, kept)
            if more == kept:
                raise _Slow  # the results never close
            filled = more
        self._check()
        report = _FileReport(self._header(head + b"[]" + tail), self.items, path=self.path)
        report.layout = layout
        # Not looked for without rows (a baseline): asked, the full parse answers.
        report.evaluations = self.evaluations or not self.rows
        if self.rows:
            if len(self.starts) != len(self.items):
                raise _Slow
            report.starts = self.starts
        return report

    def _check_utf8(self, rest: bytes) -> None:
        if not (self._ascii and rest.isascii()):
            try:
                self._utf8.decode(rest, final=True)
            except UnicodeDecodeError:
                raise _Slow from None

    def _items(self, buffer: bytearray, start: int, end: int, offset: int, layout: _Layout) -> None:
        """The items in buffer[start:end]: from one's opening newline to another's brace."""
        if self.rows:
            found = [m.start() for m in layout.item_start.finditer(buffer, start, end)]
            self.starts += map(offset.__add__, found)
            self.evaluations = self.evaluations or buffer.find(_EVALUATIONS, start, end) >= 0
        slim = layout.runs.sub(layout.no_runs, memoryview(buffer)[start:end])
        try:
            # pydantic's own JSON parser, as the full parse's (a lone surrogate is bad JSON to
            # both); the values' types are checked a column at a time (_columns). Keys are
            # cached: every item has the same few; values are not: ids and hashes are unique.
            items = from_json(b"[" + slim + b"]", cache_strings="keys")
        except ValueError:  # bad JSON
            raise _Slow from None
        columns = _columns(items)
        if not all(map(_KNOWN.issuperset, items)):  # unknown fields: rare
            for item in items:
                if _too_deep({k: v for k, v in item.items() if k not in _KNOWN}):
                    raise _Slow
        self.items.extend_columns(columns)

    def _header(self, text: bytes) -> Report:
        """Every top-level field, parsed as ever (a report with no results)."""
        try:
            return parse_report(text.decode("utf-8"), source=str(self.path))
        except (InputError, UnicodeDecodeError):
            raise _Slow from None

    def _check(self) -> None:
        """What the full model checks across fields: unique ids, passes within runs."""
        items = self.items
        if len(set(items.ids)) != len(items) or any(map(gt, items.passes, items.runs)):
            raise _Slow


def _too_deep(extra: dict[str, Any]) -> bool:
    return any(jsontext.nested_deeper(value, jsontext.MAX_DEPTH) for value in extra.values())
