"""A terminal that reads: `golden-gate demo` in a real terminal (tmux), coloured or not."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from golden_gate.core import retrieval
from golden_gate.core.gate import evaluate_gate
from golden_gate.core.report import Report, RunStats
from golden_gate.core.verdict import GateSettings
from golden_gate.rendering import terminal
from tests.helpers import item

TMUX = shutil.which("tmux")
REGRESSED = {
    "backups-restore": 'judge: missing key point: "unseal the server again with the original',
    "trouble-sealed-503": "check citations: missing citation: docs/troubleshooting.md",
    "upgrade-versions": 'judge: missing key point: "only from the previous minor version"',
}


def _in_tmux(tmp_path: Path, command: list[str], env: dict[str, str]) -> str:
    """Run `command` in a 150-column tmux pane of a server of its own; the pane's text with
    its escape codes, once the command has ended."""
    socket = f"gg-{uuid.uuid4().hex[:12]}"
    done = tmp_path / f"{socket}.done"
    shell = f"{shlex.join(command)} 2>/dev/null; touch {shlex.quote(str(done))}; sleep 600"
    clean = {k: v for k, v in os.environ.items() if k not in ("CI", "GITHUB_ACTIONS", "NO_COLOR")}
    clean.update(env, TERM="xterm-256color")
    tmux = [TMUX or "tmux", "-L", socket, "-f", os.devnull]
    subprocess.run(
        [*tmux, "new-session", "-d", "-x", "150", "-y", "80", "-c", str(tmp_path), shell],
        env=clean,
        check=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not done.exists():
            assert time.monotonic() < deadline, "the command did not end in the pane"
            time.sleep(0.1)
        captured = subprocess.run(
            [*tmux, "capture-pane", "-p", "-e", "-J", "-t", "0"],
            capture_output=True,
            text=True,
            check=True,
        )
        return captured.stdout
    finally:
        subprocess.run([*tmux, "kill-server"], check=False, capture_output=True)


def _demo(tmp_path: Path) -> list[str]:
    return [sys.executable, "-m", "golden_gate", "demo", "--out", str(tmp_path / "out")]


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed")
def test_the_demo_in_a_terminal_shows_the_verdict_figures_and_reasons_in_colour(tmp_path):
    pane = _in_tmux(tmp_path, _demo(tmp_path), {})
    assert "\x1b[" in pane  # coloured
    plain = re.sub(r"\x1b\[[0-9;]*m", "", pane)  # the same text, its colours taken out
    assert "\x1b" not in plain  # colours only: no other escape sequence
    assert "FAILED  golden-gate: below the floor" in plain
    assert "pass rate 8/14 (57.1%)" in " ".join(plain.split())
    assert "vs baseline 6 regressed, 0 improved of 14 shared" in " ".join(plain.split())
    assert "Regressed items (6)" in plain
    table = plain.split("Regressed items (6)", 1)[1]  # (the retrieval row names ids too)
    for item_id, why in REGRESSED.items():
        line = next(line for line in table.splitlines() if item_id in line)
        assert why[:40] in line
    assert f"page: {tmp_path / 'out' / 'report.html'}" in plain
    assert "<!-- golden-gate:report" not in pane  # the Markdown stays in comment.md


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed")
def test_no_color_keeps_the_summary_and_drops_every_escape_code(tmp_path):
    pane = _in_tmux(tmp_path, _demo(tmp_path), {"NO_COLOR": "1"})
    assert "\x1b" not in pane
    assert "FAILED  golden-gate: below the floor" in pane
    assert all(item_id in pane for item_id in REGRESSED)
    # The demo measures retrieval (sources-path) and prices the assistant's tokens.
    flat = " ".join(pane.split())
    assert re.search(r"retrieval hit@5 69\.2%, MRR 0\.\d{3} over 13 items \(baseline hit@5", flat)
    fell = flat.split("retrieval fell ", 1)[1].split(" cost ", 1)[0]
    assert "trouble-sealed-503 (rank 1 → not returned)" in fell
    assert "install-ports (rank 1 → 6)" in fell
    assert re.search(r"cost assistant \$0\.\d+", flat)
    assert "judge requests" not in flat  # the demo's judge needed no retry


def test_a_pipe_or_ci_gets_the_plain_lines():
    class Tty:
        def isatty(self) -> bool:
            return True

    assert terminal.wanted(Tty(), {})
    assert not terminal.wanted(Tty(), {"CI": "true"})
    assert not terminal.wanted(Tty(), {"GITHUB_ACTIONS": "true"})
    assert not terminal.wanted(Tty(), {"TERM": "dumb"})
    assert not terminal.wanted(open(os.devnull, "w"), {})  # noqa: SIM115
    assert terminal.colour({}) and not terminal.colour({"NO_COLOR": "1"})


def test_an_items_id_and_reason_cannot_drive_the_terminal_or_rich_markup():
    hostile_id = "\x1b]0;owned\x07[bold red]id[/bold red]"
    reason = "\x1b[2J\x1b[31mred\u202e [link=https://evil.example]x[/link]"
    base = Report(judge="j", results=[item(hostile_id, True)])
    cand = Report(judge="j", results=[item(hostile_id, False, why=reason)])
    gate = evaluate_gate(cand, base, GateSettings(floor=0))
    text = terminal.summary(gate, cand, colours=True, width=200)
    without_ours = text.replace("\x1b[", "")
    assert "\x1b" not in without_ours and "\x07" not in text and "\u202e" not in text
    assert "[bold red]id[/bold red]" in text and "[link=https://evil.example]x[/link]" in text
    assert "]8;" not in text  # no hyperlink escape


def _retrieval_report(ids: list[str], rank: int | None, stats: RunStats) -> Report:
    pages = ["https://docs.example/a"]
    runs = [["https://docs.example/a"] if rank == 1 else ["https://docs.example/b"]]
    record = retrieval.record([(i, [], pages, runs) for i in ids], k=1)
    return Report(judge="j", results=[item(i, True) for i in ids], retrieval=record, stats=stats)


def test_retrieval_cost_and_judge_retries_show_when_there_is_something_to_say():
    hostile = "\x1b[2Jfell\u202e[bold]x[/bold]"
    ids = ["steady", hostile]
    base = _retrieval_report(ids, 1, RunStats())
    cand = _retrieval_report(
        ids,
        None,
        RunStats(judge_calls=10, judge_attempts=13, cost_usd=0.125, assistant_cost_usd=0.00004),
    )
    gate = evaluate_gate(cand, base, GateSettings(floor=0))
    text = terminal.summary(gate, cand, colours=False, width=200)
    flat = " ".join(text.split())
    assert "retrieval hit@5 0.0%, MRR 0.000 over 2 items (baseline hit@5 100.0%, MRR 1.000)" in flat
    # The id as text: its escape and bidi characters out, rich's markup not parsed.
    assert "retrieval fell [2Jfell[bold]x[/bold] (rank 1 → not returned), steady (rank 1" in flat
    assert "\x1b" not in text and "\u202e" not in text
    assert "cost judge $0.12 + assistant $0.000040" in flat
    assert "judge requests 13 for 10 calls (3 retries)" in flat
    # Nothing to say: no retrieval, no prices, every call answered on its first try.
    plain = Report(
        judge="j", results=[item("a", True)], stats=RunStats(judge_calls=4, judge_attempts=4)
    )
    quiet = terminal.summary(
        evaluate_gate(plain, None, GateSettings(floor=0)), plain, colours=False
    )
    assert "retrieval" not in quiet and "cost" not in quiet and "judge requests" not in quiet


def test_without_a_baseline_the_failed_items_are_listed_with_their_reasons():
    cand = Report(
        judge="j",
        results=[item("ok", True), item("bad", False, why="missing key point: ports")],
    )
    gate = evaluate_gate(cand, None, GateSettings(floor=0.9))
    text = terminal.summary(gate, cand, files={"report": "r.json"}, colours=False, width=120)
    assert "\x1b" not in text and text.startswith(" FAILED  golden-gate: below the floor")
    assert "Failed items (1)" in text and "Regressed" not in text
    line = next(line for line in text.splitlines() if "bad" in line)
    assert "judge: missing key point: ports" in line
    assert "ok" not in text.split("Failed items", 1)[1].split("report:", 1)[0]
    assert text.rstrip().endswith("report: r.json")


def test_format_chooses_the_output_explicitly(tmp_path):
    from golden_gate.demo import baseline_path
    from tests.helpers import golden_gate

    assert golden_gate("demo", "--out", tmp_path).returncode == 0
    report = tmp_path / "report.json"
    as_json = golden_gate("gate", report, baseline_path(), "--format", "json")
    assert as_json.returncode == 1
    data = json.loads(as_json.stdout)
    assert data["verdict"] == "failed" and len(data["comparison"]["regressions"]) == 6
    as_md = golden_gate("gate", report, baseline_path(), "--format", "md")
    assert as_md.returncode == 1
    assert as_md.stdout.startswith("<!-- golden-gate:report id=default -->")
    assert "### Regressed items (6)" in as_md.stdout
    as_text = golden_gate("gate", report, baseline_path(), "--format", "text")
    assert as_text.stdout.startswith("golden-gate: failed: below the floor")  # a pipe: plain
    assert "  regressed: backups-restore\n" in as_text.stdout


def _feature_answers(n: int) -> dict[str, str]:
    """Answers to write_feature_golden's questions: the even ones whole, the odd ones missing a
    key point (the offline judge fails them)."""
    return {
        f"How do I configure feature {i}?": f"Set option {i}, then restart the server."
        if i % 2 == 0
        else f"Set option {i}."
        for i in range(n)
    }


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed")
def test_eval_in_a_terminal_shows_the_pass_rate_bound_failing_items_and_files(tmp_path):
    from tests.fakes.assistant_server import AssistantServer
    from tests.helpers import write_feature_golden

    golden = write_feature_golden(tmp_path / "golden.jsonl", n=4, sources=False)
    with AssistantServer(_feature_answers(4)) as assistant:
        command = [
            sys.executable, "-m", "golden_gate", "eval", str(golden), "--assistant-url",
            assistant.url, "--judge-model", "keypoints", "--html-report", "page.html",
        ]  # fmt: skip
        pane = _in_tmux(tmp_path, command, {})
        plain_pane = _in_tmux(tmp_path, command, {"NO_COLOR": "1"})
    assert "\x1b[" in pane and "\x1b" not in plain_pane
    plain = re.sub(r"\x1b\[[0-9;]*m", "", pane)
    assert "EVALUATED  golden-gate: 2/4 items passed" in plain
    flat = " ".join(plain.split())
    assert "pass rate 2/4 (50.0%)" in flat and "lower bound" in flat
    assert "Failed items (2)" in plain
    for item_id in ("q1", "q3"):
        line = next(line for line in plain.splitlines() if line.strip().startswith(item_id))
        assert "restart the server" in line  # the judge's reason: the key point missed
    assert not any(line.strip().startswith(("q0 ", "q2 ")) for line in plain.splitlines())
    assert "report: report.json" in plain and "page: page.html" in plain
    assert "EVALUATED  golden-gate: 2/4 items passed" in plain_pane


def test_eval_format_json_and_md_and_plain_lines_in_a_pipe(tmp_path):
    from tests.fakes.assistant_server import AssistantServer
    from tests.helpers import golden_gate, write_feature_golden

    golden = write_feature_golden(tmp_path / "golden.jsonl", n=4, sources=False)
    with AssistantServer(_feature_answers(4)) as assistant:
        common = (golden, "--assistant-url", assistant.url, "--judge-model", "keypoints")
        as_json = golden_gate("eval", *common, "--format", "json", "-o", tmp_path / "a.json")
        as_md = golden_gate("eval", *common, "--format", "md", "-o", tmp_path / "b.json")
        as_text = golden_gate("eval", *common, "-o", tmp_path / "c.json")
    assert as_json.returncode == as_md.returncode == as_text.returncode == 0
    data = json.loads(as_json.stdout)
    assert data["n"] == 4 and data["comparison"] is None
    assert as_md.stdout.startswith("<!-- golden-gate:report id=default -->")
    assert as_text.stdout == f"golden-gate: 2/4 items passed; report: {tmp_path / 'c.json'}\n"


def _labels(tmp_path: Path) -> tuple[Path, Path]:
    from tests.helpers import write_feature_golden

    golden = write_feature_golden(tmp_path / "golden.jsonl", n=4, sources=False)
    answers = list(_feature_answers(4).values())
    labels = tmp_path / "labels.jsonl"
    # q1's answer misses a key point but the person passed it: the one disagreement.
    human = ["pass", "pass", "pass", "fail"]
    labels.write_text(
        "".join(
            json.dumps({"id": f"q{i}", "answer": answers[i], "label": human[i]}) + "\n"
            for i in range(4)
        )
    )
    return golden, labels


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed")
def test_calibrate_in_a_terminal_shows_the_agreement_and_the_disagreements(tmp_path):
    golden, labels = _labels(tmp_path)
    command = [
        sys.executable, "-m", "golden_gate", "calibrate", str(golden), "--labels", str(labels),
        "--judge-model", "keypoints", "--min-kappa", "0",
    ]  # fmt: skip
    pane = _in_tmux(tmp_path, command, {})
    assert "\x1b[" in pane
    plain = re.sub(r"\x1b\[[0-9;]*m", "", pane)
    flat = " ".join(plain.split())
    assert "PASSED golden-gate: judge calibrated: kappa κ = 0.50 [-0.23, 1.00] on 4 labels" in flat
    assert "evaluator keypoints" in flat and "labels 4 judged of 4 labelled" in flat
    assert "agreement 75.0%" in flat
    assert "human pass judge pass 2, judge fail 1" in flat
    assert "human fail judge pass 0, judge fail 1" in flat
    assert "Disagreements (1)" in plain
    line = next(line for line in plain.splitlines() if line.strip().startswith("q1"))
    assert "pass" in line and "fail" in line and "restart the server" in line
    assert "calibration: calibration.json" in plain
    no_colour = _in_tmux(tmp_path, command, {"NO_COLOR": "1"})
    assert "\x1b" not in no_colour and "Disagreements (1)" in no_colour


def test_calibrate_format_json_md_and_plain_lines(tmp_path):
    from tests.helpers import golden_gate

    golden, labels = _labels(tmp_path)
    common = (golden, "--labels", labels, "--judge-model", "keypoints", "--min-kappa", "0",
              "--calibration-path", tmp_path / "calibration.json")  # fmt: skip
    as_json = golden_gate("calibrate", *common, "--format", "json")
    assert as_json.returncode == 0, as_json.stderr
    data = json.loads(as_json.stdout)
    assert data["n"] == 4 and [d["id"] for d in data["disagreements"]] == ["q1"]
    as_md = golden_gate("calibrate", *common, "--format", "md")
    assert "q1" in as_md.stdout and "|" in as_md.stdout
    as_text = golden_gate("calibrate", *common)
    assert as_text.stdout.startswith("golden-gate: judge calibrated: kappa")
    assert "  disagree: q1: human pass, judge fail\n" in as_text.stdout
