"""A JUnit XML results file (Maven Surefire, Gradle, pytest's `--junitxml`) as a report.

A team whose golden set already runs as a test suite (a Spring AI `GoldenSetTest`, a pytest
file) gets the gate without porting its harness: a test case's name is the item's id, its
class name the item's tag, each case with the same name is one run; a `<failure>` is a failed
run, an `<error>` a run that gave no verdict (counted apart, bounded by max-error-rate), a
`<skipped>` case no run at all. The report has the minimal shape (`judge`, `results` with
`id`, `tags`, `passes`, `runs`), so it gates, pairs and is promoted as a baseline like any.

The file comes from a pull request's build: untrusted. It is read with expat directly, with
no document type at all: a DOCTYPE (the only way to declare an entity, internal or external)
is refused, so there is no entity expansion ("billion laughs") and no external fetch (XXE).
Names and messages are kept as text; the renderers escape them where they are shown.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn
from xml.parsers import expat

from golden_gate.core.item_result import CheckOutcome, ItemResult, RunResult, tally_runs
from golden_gate.core.report import DatasetInfo, Report, RunSettings, new_report, selection_digest
from golden_gate.errors import InputError
from golden_gate.limits import MAX_JUNIT_BYTES
from golden_gate.surrogates import repair
from golden_gate.text import cut

JUDGE = "junit"  # the report's judge: the suite's own assertions decided every run
CHECK = "test"  # the one check of an imported run: the test case's outcome
MESSAGE_CHARS = 2000


class _Refused(Exception):
    pass


def _refuse(*_: Any) -> NoReturn:
    raise _Refused


def parse_xml(data: bytes, *, source: str) -> ET.Element:
    """The document's root, built by expat with no DTD: a DOCTYPE or entity is refused."""
    parser = expat.ParserCreate()
    builder = ET.TreeBuilder()
    parser.StartElementHandler = builder.start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.data
    parser.StartDoctypeDeclHandler = _refuse
    parser.EntityDeclHandler = _refuse
    parser.ExternalEntityRefHandler = _refuse
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    try:
        parser.Parse(data, True)
    except _Refused:
        raise InputError(
            f"{source}: a JUnit file with a document type (DOCTYPE) or entity declaration is "
            "refused: results files have none, and entities can expand or fetch files"
        ) from None
    except expat.ExpatError as exc:
        raise InputError(
            f"{source}: not a JUnit XML file: {expat.ErrorString(exc.code)} at line "
            f"{exc.lineno}, column {exc.offset}"
        ) from None
    return builder.close()


@dataclass
class _Item:
    tags: list[str] = field(default_factory=list)
    runs: list[RunResult] = field(default_factory=list)


def _text(value: str | None, limit: int = MESSAGE_CHARS) -> str:
    return cut(" ".join(repair(value or "")[0].split()), limit)


def _seconds(case: ET.Element) -> float | None:
    try:
        seconds = float(case.get("time") or "")
    except ValueError:
        return None
    return round(seconds * 1000, 1) if 0 <= seconds < 1e9 else None


def _run(case: ET.Element) -> RunResult | None:
    """One run from one test case; None for a skipped case (no run at all)."""
    children = {child.tag: child for child in case}
    latency = _seconds(case)
    for tag in ("error", "failure"):
        if tag in children:
            node = children[tag]
            kind = _text(node.get("type"), 200)
            message = _text(node.get("message") or node.text) or f"the test case has <{tag}>"
            reason = f"{kind}: {message}" if kind else message
            if tag == "error":  # the test could not decide: no verdict, counted apart
                return RunResult(status="error", error=reason, latency_ms=latency)
            check = CheckOutcome(name=CHECK, passed=False, reason=reason)
            return RunResult(status="fail", checks=[check], latency_ms=latency)
    if "skipped" in children:
        return None
    return RunResult(
        status="pass", checks=[CheckOutcome(name=CHECK, passed=True)], latency_ms=latency
    )


def report_from_junit(path: Path, *, max_error_rate: float = 0.10) -> Report:
    """The report of a JUnit XML file; InputError naming the file when it is not one."""
    source = str(path)
    try:
        size = path.stat().st_size
        if size > MAX_JUNIT_BYTES:
            raise InputError(
                f"{source}: JUnit file of {size:,} bytes is larger than the "
                f"{MAX_JUNIT_BYTES:,} bytes golden-gate reads"
            )
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{source}: JUnit results file not found") from None
    except (IsADirectoryError, PermissionError, OSError) as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(f"{source}: cannot read the JUnit results file ({exc})") from None
    root = parse_xml(data, source=source)
    if root.tag not in ("testsuites", "testsuite"):
        raise InputError(
            f"{source}: not a JUnit XML file: the root element is <{_text(root.tag, 60)}>, "
            "expected <testsuites> or <testsuite>"
        )
    items: dict[str, _Item] = {}
    skipped = 0
    for case in root.iter("testcase"):
        name = _text(case.get("name"), 500)
        if not name:
            raise InputError(f"{source}: a <testcase> has no name: the name is the item's id")
        item = items.setdefault(name, _Item())
        tag = _text(case.get("classname"), 200)
        if tag and tag not in item.tags:
            item.tags.append(tag)
        run = _run(case)
        if run is None:
            skipped += 1
        else:
            item.runs.append(run)
    results = [
        ItemResult(id=name, tags=item.tags, run_results=item.runs, **tally_runs(item.runs))
        for name, item in items.items()
        if item.runs
    ]
    if not results:
        raise InputError(f"{source}: no test case ran (none, or every one skipped): no results")
    only_skipped = sorted(name for name, item in items.items() if not item.runs)
    warnings = []
    if skipped:
        warnings.append(
            f"{skipped} skipped test case(s) are not runs"
            + (f"; {len(only_skipped)} item(s) only skipped are left out" if only_skipped else "")
        )
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
    if errors / total > max_error_rate:
        report.complete = False
        report.incomplete_reason = (
            f"{errors} of {total} test runs ended in an <error> ({errors / total:.0%}, above "
            f"max-error-rate {max_error_rate:.0%}): they decided nothing"
        )
    return report
