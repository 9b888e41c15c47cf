"""The report as JUnit XML: one test case per item, for CI systems that show per-test results.

Jenkins, GitLab, Azure DevOps and the GitHub test-report actions read this shape (the Jenkins
xUnit plugin's junit-10.xsd is the schema it is checked against). An item is a test case named
by its id, in a class named by its first tag (or the golden file when it has none): a passing
item passes; a failing one carries a <failure> with the reason and an answer excerpt (type
"regression" when it passed in the baseline); an item with no counted run carries an <error>;
a selected item an interrupted evaluation never asked is <skipped>. Items of the baseline
outside this run's selection are not cases of this run. The gate's figures are the suite's
properties.

Answers and questions are untrusted: XML escaping is ElementTree's, characters XML 1.0 cannot
hold are replaced, and registered secrets are masked.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from golden_gate import redaction
from golden_gate.core import slim
from golden_gate.core.item_result import ItemResult
from golden_gate.core.report import Report
from golden_gate.core.slim import SlimReport
from golden_gate.core.trajectory import sequence
from golden_gate.core.verdict import GateResult
from golden_gate.files import write_result
from golden_gate.text import cut

ANSWER_EXCERPT_CHARS = 1000
# XML 1.0 has no way to write these, escaped or not (https://www.w3.org/TR/xml/#charsets).
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _text(value: str) -> str:
    return _NOT_XML.sub("\ufffd", redaction.scrub(value))


def _seconds(ms: float) -> str:
    return f"{ms / 1000:.3f}"


def _classname(item: ItemResult, golden_name: str) -> str:
    return item.tags[0] if item.tags else golden_name


def _case(item: ItemResult, golden_name: str, regressions: set[str]) -> ET.Element:
    latency = sum(r.latency_ms or 0.0 for r in item.run_results)
    case = ET.Element(
        "testcase",
        name=_text(item.id),
        classname=_text(_classname(item, golden_name)),
        time=_seconds(latency),
    )
    if item.errored:
        error = ET.SubElement(
            case,
            "error",
            message=_text(item.why or "no run gave a verdict"),
            type=next((r.error_side or "error" for r in item.run_results if r.error_side), "error"),
        )
        error.text = _text(_detail(item))
    elif not item.passed:
        failure = ET.SubElement(
            case,
            "failure",
            message=_text(item.why or f"{item.passes} of {item.runs} runs passed"),
            type="regression" if item.id in regressions else "failed",
        )
        failure.text = _text(_detail(item))
    return case


def _detail(item: ItemResult) -> str:
    lines = [f"passes: {item.passes} of {item.runs} counted runs"]
    if item.errors or item.unanswered:
        lines.append(f"errors: {item.errors} judge, {item.unanswered} unanswered")
    if item.question:
        lines.append(f"question: {item.question}")
    if item.expected_tools is not None:
        lines.append(f"expected tool calls: {'; '.join(item.expected_tools) or 'none'}")
    if item.tool_calls is not None:
        lines.append(f"tool calls: {cut(redaction.scrub(sequence(item.tool_calls)), 2000)}")
    if item.answer is not None:
        # Scrubbed before it is cut: a secret cut in half would no longer be recognised.
        lines.append(f"answer: {cut(redaction.scrub(item.answer), ANSWER_EXCERPT_CHARS)}")
    return "\n".join(lines)


def _properties(
    report: Report, gate: GateResult, baseline: Report | SlimReport | None
) -> dict[str, str]:
    props = {
        "verdict": gate.run_verdict(report.complete),
        "judge": report.judge,
        "items": str(gate.n),
        "passed": str(gate.k),
        "pass_rate": "" if gate.pass_rate is None else f"{gate.pass_rate:.4f}",
        "lower_bound": "" if gate.lower_bound is None else f"{gate.lower_bound:.4f}",
        "floor": f"{gate.settings.floor:.4f}",
        "confidence": f"{gate.settings.confidence:.4f}",
        "alpha": f"{gate.settings.alpha:.4f}",
    }
    if gate.comparison is not None:
        props |= {
            "p_value": f"{gate.comparison.p_value:.4g}",
            "method": gate.comparison.method,
            "regressed": str(len(gate.comparison.regressions)),
            "improved": str(len(gate.comparison.improvements)),
            "net_drop": f"{gate.comparison.net_drop:.4f}",
        }
    if baseline is not None:
        # Its judge only: a full report's own field, not its columns rebuilt (slim.of).
        header = baseline.header if isinstance(baseline, slim.SlimReport) else baseline
        props["baseline_judge"] = header.judge
    for i, reason in enumerate(gate.reasons, 1):
        props[f"reason.{i}"] = reason.message
    if report.incomplete_reason:
        props["incomplete_reason"] = report.incomplete_reason
    return props


def junit_xml(
    report: Report,
    gate: GateResult,
    *,
    golden_name: str = "golden",
    baseline: Report | SlimReport | None = None,
) -> str:
    """The report as a JUnit XML document: its items, then the selected items an interrupted
    evaluation never asked, as skipped cases (their tags are not in the report: class `golden`)."""
    regressions = set(gate.comparison.regressions) if gate.comparison else set()
    cases = [_case(item, golden_name, regressions) for item in report.results]
    stopped = f"not asked: {report.incomplete_reason or 'the evaluation stopped first'}"
    for item_id in report.not_asked or []:
        case = ET.Element("testcase", name=_text(item_id), classname=_text(golden_name))
        case.set("time", "0.000")
        ET.SubElement(case, "skipped", message=_text(stopped))
        cases.append(case)

    failures = sum(1 for c in cases if c.find("failure") is not None)
    errors = sum(1 for c in cases if c.find("error") is not None)
    elapsed = report.stats.elapsed_s if report.stats and report.stats.elapsed_s else 0.0
    counts = {
        "tests": str(len(cases)),
        "failures": str(failures),
        "errors": str(errors),
        "time": f"{elapsed:.3f}",
    }
    root = ET.Element("testsuites", {"name": "golden-gate", **counts})
    suite = ET.SubElement(
        root,
        "testsuite",
        {
            "name": _text(f"golden-gate ({report.judge})"),
            "skipped": str(len(report.not_asked or [])),
            "timestamp": _text(report.created_at or ""),  # free text in a report read back
            **counts,
        },
    )
    properties = ET.SubElement(suite, "properties")
    for name, value in _properties(report, gate, baseline).items():
        ET.SubElement(properties, "property", name=name, value=_text(value))
    suite.extend(cases)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def golden_name(path: str | Path | None) -> str:
    """The class name of untagged items: the golden file's name without its suffixes."""
    if path is None:
        return "golden"
    name = Path(path).name
    return name.split(".", 1)[0] or name


def write_junit(
    path: str | Path,
    report: Report,
    gate: GateResult,
    *,
    baseline: Report | SlimReport | None = None,
    golden: str | Path | None = None,
) -> None:
    """Write `junit_xml` to `path` (atomically; a failure names the file)."""
    dataset = report.dataset
    golden_label = golden if golden is not None else (dataset.path if dataset else None)
    text = junit_xml(report, gate, golden_name=golden_name(golden_label), baseline=baseline)
    write_result(path, text, what="JUnit XML")
