"""The verdict line prints on any terminal: a real pty that reports 0 columns (or a handful),
COLUMNS=0, no terminal at all, TERM=dumb, NO_COLOR. rich given a width of 0 printed nothing,
not even the verdict."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from golden_gate.core.report_file import report_json
from tests.helpers import ids, report


def _reports(tmp_path: Path) -> tuple[Path, Path]:
    names = ids(40)
    base = tmp_path / "base.json"
    base.write_text(report_json(report(dict.fromkeys(names, True))))
    lost = set(names[:8])
    cand = tmp_path / "cand.json"
    cand.write_text(report_json(report({i: i not in lost for i in names})))
    return cand, base


def _env(**extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("CI", "GITHUB_ACTIONS", "NO_COLOR", "COLUMNS", "LINES", "TERM")
    }
    env.update({"TERM": "xterm-256color", **extra})
    return env


def _in_pty(args: list[str], env: dict[str, str], columns: int) -> tuple[int, str]:
    """Run `golden-gate ARGS` with stdout and stderr on a pty whose window is `columns` wide;
    its exit code and everything it wrote."""
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    assert os.get_terminal_size(child).columns == columns  # the pty says what we set
    process = subprocess.Popen(
        [sys.executable, "-m", "golden_gate", *args],
        stdin=subprocess.DEVNULL,
        stdout=child,
        stderr=child,
        env=env,
        close_fds=True,
    )
    os.close(child)
    out = bytearray()
    try:
        while True:
            ready, _, _ = select.select([main], [], [], 60)
            assert ready, "golden-gate wrote nothing for 60 s"
            try:
                data = os.read(main, 65536)
            except OSError:  # EIO: the child side closed
                break
            if not data:
                break
            out += data
    finally:
        os.close(main)
    return process.wait(timeout=60), out.decode("utf-8", "replace")


@pytest.mark.parametrize("columns", [0, 1, 5])
def test_a_pty_reporting_no_width_still_shows_the_verdict(tmp_path, columns):
    cand, base = _reports(tmp_path)
    code, out = _in_pty(["gate", str(cand), str(base)], _env(), columns)
    assert code == 1, out
    assert "FAILED" in out and "golden-gate:" in out  # the summary's head, on one line
    assert "q0000" in out  # the regressed items too


@pytest.mark.parametrize(
    "env",
    [{"COLUMNS": "0"}, {"TERM": "dumb"}, {"NO_COLOR": "1"}, {"COLUMNS": "0", "NO_COLOR": "1"}],
    ids=["COLUMNS=0", "TERM=dumb", "NO_COLOR", "COLUMNS=0+NO_COLOR"],
)
def test_every_terminal_setting_shows_the_verdict(tmp_path, env):
    cand, base = _reports(tmp_path)
    code, out = _in_pty(["gate", str(cand), str(base)], _env(**env), 0)
    assert code == 1, out
    assert "golden-gate:" in out and "FAILED" in out.upper()
    if "NO_COLOR" in env or env.get("TERM") == "dumb":
        assert "\x1b[" not in out  # no colour codes


def test_no_terminal_shows_the_verdict_line(tmp_path):
    cand, base = _reports(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "golden_gate", "gate", str(cand), str(base)],
        capture_output=True,
        text=True,
        env=_env(COLUMNS="0"),
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("golden-gate: failed"), done.stdout


def _unicode_reports(tmp_path: Path) -> tuple[Path, Path]:
    names = [f"配置-{n:02d}…" for n in range(40)]
    base = tmp_path / "base.json"
    base.write_text(report_json(report(dict.fromkeys(names, True))))
    cand = tmp_path / "cand.json"
    cand.write_text(report_json(report({i: i not in names[:8] for i in names})))
    return cand, base


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_a_terminal_that_cannot_encode_the_summary_still_shows_the_verdict(tmp_path, encoding):
    # Was: an UnicodeEncodeError (the summary's box lines), nothing printed, exit 3.
    cand, base = _unicode_reports(tmp_path)
    code, out = _in_pty(["gate", str(cand), str(base)], _env(PYTHONIOENCODING=encoding), 100)
    assert code == 1, out
    assert "FAILED" in out and "golden-gate:" in out
    assert "UnicodeEncodeError" not in out


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_a_pipe_that_cannot_encode_an_item_id_still_gets_every_line(tmp_path, encoding):
    cand, base = _unicode_reports(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "golden_gate", "gate", str(cand), str(base)],
        capture_output=True,
        env=_env(PYTHONIOENCODING=encoding),
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    out = done.stdout.decode(encoding)
    assert out.startswith("golden-gate: failed")
    assert out.count("regressed: ") == 8  # every regressed item listed, its id as "?"s
