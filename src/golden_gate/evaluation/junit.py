"""A JUnit XML results file (Maven Surefire, Gradle, pytest's `--junitxml`, jest, Playwright)
as a report.

A team whose golden set already runs as a test suite (a Spring AI `GoldenSetTest`, a pytest
file) gets the gate without porting its harness. An item is one test: its class (or file) and
its name. Its id is the name, or `class::name` where the same name is a test of several classes
in the file (pytest's `test_add` in a dozen classes are a dozen items). Runs of one item are
the cases with the same class and name, and the repeats reporters number: JUnit 5's
`repetition i of N`, Surefire's `method()[n]` (no parameters: a repeat), pytest-repeat's
`[i-N]` (a complete series), `(retry #n)`, and Surefire's `<flakyFailure>`/`<rerunFailure>`
(the attempts a rerun made). Parameterised cases whose parameters differ (`test[param]`,
`method(String)[n]`, `[1] arg`) are items of their own. Two tests that would get one id are an
error naming both: never a silent merge.

A `<failure>` is a failed run, an `<error>` a run that gave no verdict (counted apart, bounded
by max-error-rate), a `<skipped>` case no run at all. The report has the minimal shape
(`judge`, `results` with `id`, `tags`, `passes`, `runs`), so it gates, pairs and is promoted as
a baseline like any.

The file comes from a pull request's build: untrusted. It is read by expat in chunks, keeping
only the test case being read: memory is bounded by the cases and text it keeps (limits.py),
never by the file's size; a file with more ends as an incomplete report. A DOCTYPE (the only
way to declare an entity, internal or external) is refused, so there is no entity expansion
("billion laughs") and no external fetch (XXE). Names and messages are kept as text; the
renderers escape them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Literal, NoReturn
from xml.parsers import expat

from golden_gate.core.item_result import CheckOutcome, ItemResult, RunResult, tally_runs
from golden_gate.core.report import DatasetInfo, Report, RunSettings, new_report, selection_digest
from golden_gate.errors import InputError
from golden_gate.limits import MAX_JUNIT_CASES, MAX_JUNIT_TEXT_CHARS, MAX_JUNIT_TOKEN_BYTES
from golden_gate.surrogates import repair
from golden_gate.text import cut

JUDGE = "junit"  # the report's judge: the suite's own assertions decided every run
CHECK = "test"  # the one check of an imported run: the test case's outcome
MESSAGE_CHARS = 500
NAME_CHARS = 500
CHUNK_BYTES = 1 << 20
SEPARATOR = "::"  # between class and name, where a name alone is ambiguous

# What a test case's children say: the outcome, and the earlier attempts Surefire's rerun kept.
FINAL = {"failure": "fail", "error": "error", "skipped": "skip"}
ATTEMPTS = {
    "flakyFailure": "fail",
    "flakyError": "error",
    "rerunFailure": "fail",
    "rerunError": "error",
}

Status = Literal["pass", "fail", "error"]
RANK = {"pass": 0, "skip": 1, "fail": 2, "error": 3}


@dataclass(slots=True)
class _Run:
    status: Status
    reason: str
    latency_ms: float | None


@dataclass(slots=True)
class _Test:
    """One (class, name) as the file has it, with its runs in file order."""

    group: str
    name: str
    line: int
    runs: list[_Run] = field(default_factory=list)
    skipped: int = 0
    cases: int = 0
    again: int = 0  # the line it was read on a second time, if it was


@dataclass(frozen=True)
class Mapped:
    """How one item was made: its id, the class, the names read and what made them one."""

    id: str
    group: str
    names: tuple[str, ...]
    runs: int
    skipped: int
    how: str
    qualified: bool = False  # the id carries the class: the name is several classes' test


@dataclass
class JUnitImport:
    report: Report
    mapping: list[Mapped]


class _Refused(Exception):
    pass


class _Capped(Exception):
    pass


def _refuse(*_: Any) -> NoReturn:
    raise _Refused


def _text(value: str | None, limit: int = MESSAGE_CHARS) -> str:
    return cut(" ".join(repair(value or "")[0].split()), limit)


def _latency(value: str | None) -> float | None:
    try:
        seconds = float(value or "")
    except ValueError:
        return None
    return round(seconds * 1000, 1) if 0 <= seconds < 1e9 else None


class _Reader:
    """expat's events for one file, kept down to the test cases (bounded text, bounded count)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.tests: dict[tuple[str, str], _Test] = {}
        self.cases = 0
        self.kept_chars = 0  # of names and messages kept: what a case costs beyond its count
        self.capped = False
        self.root_seen = False
        self.suites: list[str] = []
        self.depth = 0
        self.case: dict[str, Any] | None = None  # the test case being read
        self.case_depth = 0
        self.child: list[Any] | None = None  # [tag, type, message, text parts, chars]
        self.parser = expat.ParserCreate()
        p = self.parser
        p.StartElementHandler = self._start
        p.EndElementHandler = self._end
        p.CharacterDataHandler = self._data
        p.StartDoctypeDeclHandler = _refuse
        p.EntityDeclHandler = _refuse
        p.ExternalEntityRefHandler = _refuse
        p.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
        self.last_event = 0

    def where(self) -> str:
        return f"{self.source}:{self.parser.CurrentLineNumber}"

    def _start(self, tag: str, attrs: dict[str, str]) -> None:
        self.last_event = self.parser.CurrentByteIndex
        self.depth += 1
        if not self.root_seen:
            self.root_seen = True
            if tag not in ("testsuites", "testsuite"):
                raise InputError(
                    f"{self.where()}: not a JUnit XML file: the root element is "
                    f"<{_text(tag, 60)}>, expected <testsuites> or <testsuite>"
                )
        if tag == "testsuite" and self.case is None:
            self.suites.append(attrs.get("name", ""))
        elif tag == "testcase" and self.case is None:
            if self.cases >= MAX_JUNIT_CASES or self.kept_chars >= MAX_JUNIT_TEXT_CHARS:
                self.capped = True
                raise _Capped
            self.case = {
                "name": attrs.get("name"),
                "group": attrs.get("classname") or attrs.get("file") or "",
                "time": attrs.get("time"),
                "line": self.parser.CurrentLineNumber,
                "outcomes": [],
            }
            self.case_depth = self.depth
        elif (
            self.case is not None
            and self.depth == self.case_depth + 1
            and (tag in FINAL or tag in ATTEMPTS)
        ):
            self.child = [tag, attrs.get("type"), attrs.get("message"), [], 0]

    def _data(self, text: str) -> None:
        self.last_event = self.parser.CurrentByteIndex  # long text is no long tag
        child = self.child
        if child is not None and child[4] < 2 * MESSAGE_CHARS:
            child[3].append(text)
            child[4] += len(text)

    def _end(self, tag: str) -> None:
        self.last_event = self.parser.CurrentByteIndex
        case = self.case
        if case is not None and self.child is not None and self.depth == self.case_depth + 1:
            kind, type_, message, parts, _ = self.child
            if tag == kind:
                case["outcomes"].append((kind, type_, message, "".join(parts)))
                self.child = None
        elif case is not None and tag == "testcase" and self.depth == self.case_depth:
            self._case_done(case)
            self.case = None
        elif tag == "testsuite" and case is None and self.suites:
            self.suites.pop()
        self.depth -= 1

    def _case_done(self, case: dict[str, Any]) -> None:
        name = repair(case["name"] or "")[0]
        if not name.strip():
            raise InputError(
                f"{self.source}:{case['line']}: a <testcase> has no name: the name is the item's id"
            )
        group = repair(case["group"] or next((s for s in reversed(self.suites) if s), ""))[0]
        test = self.tests.get((group, name))
        if test is None:
            test = self.tests[(group, name)] = _Test(group=group, name=name, line=case["line"])
            self.kept_chars += min(len(name), 2 * NAME_CHARS) + min(len(group), 2 * NAME_CHARS)
        test.cases += 1
        if test.cases == 2:
            test.again = case["line"]
        latency = _latency(case["time"])
        final: Status | Literal["skip"] = "pass"
        reason = ""
        attempts: list[_Run] = []
        for kind, type_, message, body in case["outcomes"]:
            said = _reason(kind, type_, message, body)
            self.kept_chars += len(said)
            if kind in ATTEMPTS:
                attempts.append(_Run(ATTEMPTS[kind], said, None))  # type: ignore[arg-type]
            elif RANK[FINAL[kind]] > RANK[final]:  # an error over a failure over a skip
                final, reason = FINAL[kind], said  # type: ignore[assignment]
        if final == "skip":
            test.skipped += 1
        else:
            run = _Run(final, reason, latency)
            # A flaky test's earlier attempts came before its pass; a rerun's after its failure.
            test.runs.extend([*attempts, run] if final == "pass" else [run, *attempts])
        self.cases += 1

    def read(self, stream: BinaryIO) -> None:
        fed = 0
        try:
            while not self.capped:
                chunk = stream.read(CHUNK_BYTES)
                fed += len(chunk)
                self.parser.Parse(chunk, not chunk)
                if not chunk:
                    break
                if fed - self.last_event > MAX_JUNIT_TOKEN_BYTES:
                    raise InputError(
                        f"{self.where()}: one tag or attribute runs past "
                        f"{MAX_JUNIT_TOKEN_BYTES // (1 << 20)} MiB: not a results file "
                        "golden-gate reads"
                    )
        except _Capped:
            return
        except _Refused:
            raise InputError(
                f"{self.source}: a JUnit file with a document type (DOCTYPE) or entity "
                "declaration is refused: results files have none, and entities can expand or "
                "fetch files"
            ) from None
        except expat.ExpatError as exc:
            raise InputError(
                f"{self.source}:{exc.lineno}: not a JUnit XML file: "
                f"{expat.ErrorString(exc.code)} at line {exc.lineno}, column {exc.offset}"
            ) from None


def _reason(kind: str, type_: str | None, message: str | None, body: str) -> str:
    shown = _text(type_, 200)
    said = _text(message or body) or f"the test case has <{kind}>"
    return f"{shown}: {said}" if shown else said


# The repeat suffixes reporters write, each giving (the name without it, index, total or None).
_REPETITION = re.compile(r"^(?P<base>.*?)[\s:\-–(\[]*repetition (?P<i>\d+) of (?P<n>\d+)[)\]]?$")
_EMPTY_ARGS_INDEX = re.compile(r"^(?P<base>[^\s()\[\]]+)\(\)\[(?P<i>\d+)\]$")
_RETRY = re.compile(r"^(?P<base>.*?)\s*[(\[]?\s*retry #(?P<i>\d+)\s*[)\]]?$", re.IGNORECASE)
_PYTEST_REPEAT = re.compile(r"^(?P<base>.*?)(?P<sep>\[|-)(?P<i>\d+)-(?P<n>\d+)\]$")


_PARAMETER_INDEX = re.compile(r"^\[\d+\]( |$)")  # JUnit 5's default `[1] arguments`


@dataclass(slots=True)
class _Group:
    """The tests one item is made of."""

    group: str
    base: str
    how: str
    tests: list[_Test] = field(default_factory=list)
    indices: list[tuple[int, int]] = field(default_factory=list)


def _repeat_of(name: str) -> tuple[str, str, int, int] | None:
    """(base, how, index, total) when the name is a repeat of a test named `base`."""
    found = _REPETITION.match(name)
    if found:
        return found["base"], "repetition i of N", int(found["i"]), int(found["n"])
    found = _EMPTY_ARGS_INDEX.match(name)
    if found:
        return found["base"], "method()[n]: no parameters, so repeats", int(found["i"]), 0
    found = _RETRY.match(name)
    if found and found["base"]:
        return found["base"], "retry #n", int(found["i"]), 0
    return None


def _pytest_repeat(name: str) -> tuple[str, int, int] | None:
    found = _PYTEST_REPEAT.match(name)
    if not found:
        return None
    index, total = int(found["i"]), int(found["n"])
    if not 1 <= index <= total:
        return None
    base = found["base"] + ("]" if found["sep"] == "-" else "")
    return base, index, total


def _groups(tests: dict[tuple[str, str], _Test], source: str) -> list[_Group]:
    """The items: tests grouped by class and name without its repeat suffix."""
    groups: dict[tuple[str, str], _Group] = {}
    pending: dict[tuple[str, str], list[tuple[_Test, int, int]]] = {}
    for (group, name), test in tests.items():
        repeat = _repeat_of(name)
        if repeat is not None:
            base, how, index, total = repeat
            g = groups.setdefault((group, base), _Group(group, base, how))
            if g.how != how and g.tests:
                g.how = f"{g.how}; {how}"
            g.tests.append(test)
            g.indices.append((index, total))
            continue
        series = _pytest_repeat(name)
        if series is not None:
            pending.setdefault((group, series[0]), []).append((test, series[1], series[2]))
            continue
        g = groups.setdefault((group, name), _Group(group, name, "same class and name"))
        g.tests.append(test)
    # pytest-repeat's `[i-N]` only as a complete series (1..N, one each): `test[1-3]` alone
    # is a test of the parameters 1 and 3.
    for (group, base), members in pending.items():
        indices = sorted(i for _, i, _ in members)
        totals = {n for _, _, n in members}
        complete = totals == {len(members)} and indices == list(range(1, len(members) + 1))
        if len(members) > 1 and complete:
            g = groups.setdefault((group, base), _Group(group, base, "pytest-repeat [i-N]"))
            g.tests.extend(t for t, _, _ in members)
            g.indices.extend((i, n) for _, i, n in members)
        else:
            for test, _, _ in members:
                groups.setdefault(
                    (group, test.name), _Group(group, test.name, "same class and name")
                ).tests.append(test)
    for g in groups.values():
        counts: dict[int, list[_Test]] = {}
        for test, (index, _) in zip(g.tests, g.indices, strict=False):
            counts.setdefault(index, []).append(test)
        twice = next(([t[0].line, t[1].line] for t in counts.values() if len(t) > 1), None)
        again = next((t for t in g.tests if t.again), None)
        if twice is None and again is not None:
            twice = [again.line, again.again]
        if twice is None:
            continue
        name = g.tests[0].name
        where = (
            f"{source}:{twice[1]}: test '{_text(name, 200)}' of "
            f"'{_text(g.group, 200) or 'no class'}' at lines {twice[0]} and {twice[1]}"
        )
        # JUnit 5's default display names lack the method: seen twice in a class, they may be
        # two methods' tests, which must not be merged into one item's runs.
        if g.how.startswith("repetition") and not g.base.strip():
            raise InputError(
                f"{where} is one repetition of two tests that cannot be told apart (several "
                "@RepeatedTest methods with the default display name?): name them with "
                "@RepeatedTest(value = N, name = RepeatedTest.LONG_DISPLAY_NAME), or have "
                "Surefire's statelessTestsetReporter write method names (see golden-gate's "
                "docs, importing.md)"
            )
        if g.how == "same class and name" and _PARAMETER_INDEX.match(g.base):
            raise InputError(
                f"{where} is one parameter set of two tests that cannot be told apart (several "
                "@ParameterizedTest methods with the default display name?): name them, e.g. "
                '@ParameterizedTest(name = "{displayName} [{index}] {arguments}") (see '
                "golden-gate's docs, importing.md)"
            )
    return list(groups.values())


def _shown(name: str) -> str:
    """A name in an error, quoted with its whitespace and control characters visible."""
    return json.dumps(cut(name, 200), ensure_ascii=False) if name else "no class"


def _ids(groups: list[_Group], source: str) -> list[tuple[str, _Group, bool]]:
    """Each group's id: its name, or `class::name` where the name is several classes' test;
    two groups on one id are an error naming both."""
    classes: dict[str, set[str]] = {}
    for g in groups:
        classes.setdefault(_text(g.base, NAME_CHARS), set()).add(g.group)
    named: dict[str, _Group] = {}
    out = []
    for g in groups:
        short = _text(g.base, NAME_CHARS)
        qualified = len(classes[short]) > 1 and g.group and not short.startswith(g.group)
        item_id = _text(f"{g.group}{SEPARATOR}{g.base}", NAME_CHARS) if qualified else short
        if not item_id:
            item_id = _text(g.group, NAME_CHARS)
        other = named.get(item_id)
        if other is not None:
            a, b = other.tests[0], g.tests[0]
            raise InputError(
                f"{source}:{b.line}: tests {_shown(b.name)} of {_shown(b.group)} (line "
                f"{b.line}) and {_shown(a.name)} of {_shown(a.group)} (line {a.line}) would "
                f"both be item {_shown(item_id)}: rename one (golden-gate never merges two "
                "tests)"
            )
        named[item_id] = g
        out.append((item_id, g, bool(qualified)))
    return out


def _result(item_id: str, g: _Group) -> ItemResult:
    runs = []
    for test in g.tests:
        for run in test.runs:
            if run.status == "error":
                runs.append(RunResult(status="error", error=run.reason, latency_ms=run.latency_ms))
            else:
                check = CheckOutcome(name=CHECK, passed=run.status == "pass", reason=run.reason)
                runs.append(RunResult(status=run.status, checks=[check], latency_ms=run.latency_ms))
    tags = [_text(g.group, 200)] if g.group.strip() else []
    return ItemResult(id=item_id, tags=tags, run_results=runs, **tally_runs(runs))


def read_junit(path: Path, *, max_error_rate: float = 0.10) -> JUnitImport:
    """The report of a JUnit XML file and how its tests became items; InputError naming the
    file (and line) when it is not one."""
    source = str(path)
    reader = _Reader(source)
    try:
        with path.open("rb") as stream:
            reader.read(stream)
    except FileNotFoundError:
        raise InputError(f"{source}: JUnit results file not found") from None
    except (IsADirectoryError, PermissionError) as exc:
        raise InputError(f"{source}: cannot read the JUnit results file ({exc})") from None
    except OSError as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(f"{source}: cannot read the JUnit results file ({exc})") from None
    if not reader.root_seen:
        raise InputError(f"{source}: not a JUnit XML file: it has no element")
    groups = _groups(reader.tests, source)
    reader.tests = {}
    named = _ids(groups, source)
    results = [_result(item_id, g) for item_id, g, _ in named if any(t.runs for t in g.tests)]
    mapping = [
        Mapped(
            id=item_id,
            group=g.group,
            names=tuple(t.name for t in g.tests),
            runs=sum(len(t.runs) for t in g.tests),
            skipped=sum(t.skipped for t in g.tests),
            how=g.how,
            qualified=qualified,
        )
        for item_id, g, qualified in named
    ]
    if not results:
        raise InputError(f"{source}: no test case ran (none, or every one skipped): no results")
    warnings = list(_notes(mapping))
    report = new_report(
        judge=JUDGE,
        results=results,
        dataset=DatasetInfo(
            path=path.name,
            items=len(results),
            selected=selection_digest(r.id for r in results),
        ),
        run_settings=RunSettings(runs=max(r.runs + r.errors for r in results)),
        warnings=warnings or None,
    )
    total = sum(r.runs + r.errors for r in results)
    errors = sum(r.errors for r in results)
    if reader.capped:
        report.complete = False
        report.incomplete_reason = (
            f"the JUnit file holds more than golden-gate reads ({MAX_JUNIT_CASES:,} test cases, "
            f"or {MAX_JUNIT_TEXT_CHARS:,} characters of names and messages): the report holds "
            f"the first {reader.cases:,} test cases"
        )
    elif errors / total > max_error_rate:
        report.complete = False
        report.incomplete_reason = (
            f"{errors} of {total} test runs ended in an <error> ({errors / total:.0%}, above "
            f"max-error-rate {max_error_rate:.0%}): they decided nothing"
        )
    return JUnitImport(report=report, mapping=mapping)


def _notes(mapping: list[Mapped]) -> Iterator[str]:
    skipped = sum(m.skipped for m in mapping)
    only_skipped = sum(1 for m in mapping if not m.runs)
    if skipped:
        yield f"{skipped} skipped test case(s) are not runs" + (
            f"; {only_skipped} item(s) only skipped are left out" if only_skipped else ""
        )
    qualified = sum(1 for m in mapping if m.qualified)
    if qualified:
        yield (
            f"{qualified} item(s) share a test name with another class: their ids are "
            f"class{SEPARATOR}name"
        )
    repeats = sum(1 for m in mapping if m.how != "same class and name")
    if repeats:
        yield (
            f"{repeats} item(s) were numbered repeats (repetition i of N, method()[n], retry "
            "#n, [i-N]): each is one item with its runs (import-junit --explain lists them)"
        )


def report_from_junit(path: Path, *, max_error_rate: float = 0.10) -> Report:
    """The report of a JUnit XML file; InputError naming the file when it is not one."""
    return read_junit(path, max_error_rate=max_error_rate).report
