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

from golden_gate.core.gate import GateSettings, evaluate_gate
from golden_gate.core.report import Report
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
    for item_id, why in REGRESSED.items():
        line = next(line for line in plain.splitlines() if item_id in line)
        assert why[:40] in line
    assert f"page: {tmp_path / 'out' / 'report.html'}" in plain
    assert "<!-- golden-gate:report" not in pane  # the Markdown stays in comment.md


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed")
def test_no_color_keeps_the_summary_and_drops_every_escape_code(tmp_path):
    pane = _in_tmux(tmp_path, _demo(tmp_path), {"NO_COLOR": "1"})
    assert "\x1b" not in pane
    assert "FAILED  golden-gate: below the floor" in pane
    assert all(item_id in pane for item_id in REGRESSED)


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
