"""Before and after in the comment: each regressed item's answer in the baseline beside this
run's, collapsed, escaped as the comment escapes everything else."""

from __future__ import annotations

from golden_gate.core.gate import evaluate_gate
from golden_gate.core.report import Report
from golden_gate.core.report_file import load_report, save_report
from golden_gate.core.verdict import GateSettings
from golden_gate.demo import baseline_path
from golden_gate.rendering.escape import inline
from golden_gate.rendering.render import render_comment
from tests.helpers import golden_gate, item

SUMMARY = "<details><summary>Before and after: the baseline's answer beside this run's</summary>"


def _pairs(comment: str) -> str:
    assert comment.count(SUMMARY) == 1
    return comment.split(SUMMARY, 1)[1].split("</details>", 1)[0]


def test_the_demo_comment_shows_each_regressed_items_answer_before_and_after(tmp_path):
    done = golden_gate("demo", "--out", tmp_path)
    assert done.returncode == 0, done.stderr
    comment = (tmp_path / "comment.md").read_text(encoding="utf-8")
    pairs = _pairs(comment)
    baseline, report = load_report(baseline_path()).by_id(), load_report(tmp_path / "report.json")
    gate = evaluate_gate(report, load_report(baseline_path()), GateSettings())
    assert gate.comparison is not None and len(gate.comparison.regressions) == 6
    candidate = report.by_id()
    for item_id in gate.comparison.regressions:
        before = inline(baseline[item_id].answer, limit=240)
        after = inline(candidate[item_id].answer, limit=240)
        assert f"| <code>{item_id}</code> | {before} | {after} |\n" in pairs
    assert "`report.html` in this run's artifact" in pairs
    assert "Before and after" in (tmp_path / "summary.md").read_text(encoding="utf-8")


HOSTILE = "<img src=x onerror=alert(1)> @octocat #1 https://evil.example/ | [x](javascript:1)"


def test_a_hostile_baseline_answer_is_escaped_and_no_baseline_shows_none():
    base = Report(judge="j", results=[item("a", True, answer=HOSTILE), item("b", True)])
    cand = Report(judge="j", results=[item("a", False), item("b", True)])
    comment = render_comment(cand, evaluate_gate(cand, base, GateSettings()), baseline=base)
    pairs = _pairs(comment)
    assert f"| <code>a</code> | {inline(HOSTILE, limit=240)} | an answer |" in pairs
    assert "<img" not in comment and "@octocat" not in comment and "https://" not in comment
    alone = render_comment(cand, evaluate_gate(cand, None, GateSettings()))
    assert SUMMARY not in alone


def test_a_large_baseline_read_the_slim_way_still_gives_its_answers(tmp_path):
    # Over 1 MiB: `gate` reads both files the slim way, a chunk at a time.
    many = {f"q{i:05d}": True for i in range(3000)}
    answer = "the baseline's own words " * 12
    base = Report(judge="j", results=[item(i, p, answer=f"{answer}{i}") for i, p in many.items()])
    cand = Report(judge="j", results=[item(i, i != "q01234") for i in many])
    save_report(base, tmp_path / "baseline.json")
    save_report(cand, tmp_path / "report.json")
    assert (tmp_path / "baseline.json").stat().st_size > 1 << 20
    done = golden_gate(
        "gate", tmp_path / "report.json", tmp_path / "baseline.json",
        "--floor", "0", "--comment-file", tmp_path / "comment.md",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    pairs = _pairs((tmp_path / "comment.md").read_text(encoding="utf-8"))
    assert f"| <code>q01234</code> | {inline(answer + 'q01234', limit=240)} | an answer |" in pairs
