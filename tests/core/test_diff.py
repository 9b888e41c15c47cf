"""`golden-gate diff A B`: what changed between two reports, item by item."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from golden_gate.core.diff import diff_reports
from golden_gate.core.gate import evaluate_gate
from golden_gate.core.item_result import ItemResult, RunResult
from golden_gate.core.report import Report
from golden_gate.core.report_file import load_report, save_report
from golden_gate.core.verdict import GateSettings
from golden_gate.demo import baseline_path
from golden_gate.rendering.escape import terminal
from tests.helpers import golden_gate


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    done = golden_gate("demo", "--out", out)
    assert done.returncode == 0, done.stderr
    return out / "report.json"


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_demo_diff_lists_the_six_regressed_items_with_both_answers(demo):
    done = golden_gate("diff", baseline_path(), demo)
    assert done.returncode == 0, done.stderr
    baseline, candidate = load_report(baseline_path()), load_report(demo)
    gate = evaluate_gate(candidate, baseline, GateSettings())
    assert gate.comparison is not None
    regressed = gate.comparison.regressions
    assert len(regressed) == 6
    text = done.stdout
    assert "6 regressed" in text.splitlines()[1]
    section = text.split("regressed (6):\n", 1)[1].split("\n\n", 1)[0]
    listed = [line.split(":")[0].strip() for line in section.splitlines() if line[2] != " "]
    assert listed == regressed
    flat = _flat(section)
    for item_id in regressed:
        before, after = baseline.by_id()[item_id], candidate.by_id()[item_id]
        assert before.answer and after.answer
        block = _flat(section.split(f"  {item_id}: ", 1)[1].split("\n  ", 1)[0])
        assert block.startswith("pass 1/1 -> fail 0/1 (flipped")
        assert _flat(terminal(before.answer, limit=600)) in flat
        assert _flat(terminal(after.answer, limit=600)) in flat
        assert _flat(terminal(after.why)) in flat


def test_demo_diff_as_json_and_markdown(demo):
    done = golden_gate("diff", baseline_path(), demo, "--format", "json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["counts"]["regressed"] == 6 and data["counts"]["improved"] == 0
    regressed = [c for c in data["changes"] if c["change"] == "regressed"]
    candidate = load_report(demo).by_id()
    for change in regressed:
        assert change["flipped"] and change["score_delta"] == -1.0
        assert change["candidate"]["answer"] == candidate[change["id"]].answer
        assert change["baseline"]["answer"]
    md = golden_gate("diff", baseline_path(), demo, "--format", "md").stdout
    assert "### Regressed (6)" in md
    assert md.count("<details><summary><code>") == len(data["changes"])


def _item(item_id: str, outcomes: str, answer: str = "same answer") -> ItemResult:
    runs = [RunResult(status="pass" if o == "p" else "fail", answer=answer) for o in outcomes]
    return ItemResult(id=item_id, passes=outcomes.count("p"), runs=len(outcomes), run_results=runs)


def test_score_moves_without_a_flip_and_answer_changes_without_a_score_change():
    base = Report(
        judge="j",
        results=[_item("a", "ppp"), _item("b", "fff"), _item("c", "p"), _item("gone", "p")],
    )
    cand = Report(
        judge="j",
        results=[
            _item("a", "ppf"),  # 3/3 to 2/3: regressed, still a pass
            _item("b", "ffp"),  # 0/3 to 1/3: improved, still a failure
            _item("c", "p", answer="a new   answer"),  # same outcome, other words
            _item("new", "f"),
        ],
    )
    diff = diff_reports(base, cand)
    kinds = {c.id: (c.change, c.flipped, c.answer_changed) for c in diff.changes}
    assert kinds == {
        "a": ("regressed", False, False),
        "b": ("improved", False, False),
        "c": ("answer-changed", False, True),
        "new": ("only-candidate", False, False),
        "gone": ("only-baseline", False, False),
    }
    assert diff.shared == 3 and diff.unchanged == 0
    # Whitespace alone is no change.
    cand.results[2] = _item("c", "p", answer=" same\n answer ")
    assert "c" not in {c.id for c in diff_reports(base, cand).changes}


HOSTILE = (
    "\x1b[2J\x1b]8;;https://evil.example\x07click\x1b]8;;\x07 \u202egnp.exe <script>x</script>"
)


def test_hostile_answers_reach_no_terminal_and_no_markdown(tmp_path):
    base = Report(judge="j", results=[_item("\x1b[31mred", "p")])
    cand = Report(judge="j", results=[_item("\x1b[31mred", "f", answer=HOSTILE)])
    cand.results[0].run_results[0].error = None
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    save_report(base, a)
    save_report(cand, b)
    text = golden_gate("diff", a, b).stdout
    assert "regressed (1):" in text
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert "click" in text and "gnp.exe" in text
    md = golden_gate("diff", a, b, "--format", "md").stdout
    assert "<script>" not in md and "&lt;script&gt;" in md and "\x1b" not in md
    assert "https://" not in md  # no autolink survives


def test_a_missing_report_is_bad_input(tmp_path):
    done = golden_gate("diff", tmp_path / "nope.json", baseline_path())
    assert done.returncode == 2 and "nope.json" in done.stderr
