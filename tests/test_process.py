"""process.start and process.exit: what both front doors do first and last."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

CODE = """
import os, signal
from golden_gate import process
process.start()
print(os.environ.get("OPENBLAS_NUM_THREADS"))
# Passed by name (compose-env), the user's own value goes to a child; the one start set never.
print(process.child_environment(["OPENBLAS_NUM_THREADS"]).get("OPENBLAS_NUM_THREADS", "unset"))
try:
    os.kill(os.getpid(), signal.SIGTERM)
    signal.pause()
except KeyboardInterrupt:
    print("interrupted")
"""


@pytest.mark.parametrize(("given", "expected", "children"), [(None, "1", "unset"), ("4", "4", "4")])
def test_one_blas_thread_unless_the_user_says_otherwise_and_sigterm_interrupts(
    given, expected, children
):
    before = signal.getsignal(signal.SIGTERM)
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    done = subprocess.run(
        [sys.executable, "-c", CODE], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [expected, children, "interrupted"]
    assert signal.getsignal(signal.SIGTERM) == before  # this process is untouched


EXIT = """
import atexit, sys, threading, time
from golden_gate import process

class Module:
    def __del__(self):
        sys.stderr.write("torn down\\n")

sys.modules["held"] = Module()  # as a module of the judge stack: torn down at a normal exit
atexit.register(lambda: sys.stderr.write("atexit ran\\n"))
if sys.argv[1] == "thread":
    def late():
        time.sleep(0.2)
        print("the thread ended", end="")
    threading.Thread(target=late).start()
print("no newline, still buffered", end="")
process.exit(int(sys.argv[2]))
"""


@pytest.mark.parametrize("code", [0, 3])
def test_exit_flushes_runs_atexit_and_skips_the_tear_down(code: int) -> None:
    done = subprocess.run(
        [sys.executable, "-c", EXIT, "alone", str(code)], capture_output=True, text=True
    )
    assert done.returncode == code
    assert done.stdout == "no newline, still buffered"
    assert done.stderr == "atexit ran\n"  # and no "torn down": the interpreter did not tear down


def test_exit_waits_for_a_thread_still_running_as_a_normal_exit_does() -> None:
    done = subprocess.run(
        [sys.executable, "-c", EXIT, "thread", "1"], capture_output=True, text=True
    )
    assert done.returncode == 1
    assert done.stdout == "no newline, still bufferedthe thread ended"
    assert "atexit ran\n" in done.stderr and "torn down" in done.stderr


def test_the_command_ends_through_process_exit() -> None:
    """`golden-gate` and `python -m golden_gate` both end through process.exit."""
    from importlib import metadata

    scripts = {e.name: e.value for e in metadata.entry_points(group="console_scripts")}
    assert scripts["golden-gate"] == "golden_gate.cli:run"
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; sys.argv[1:] = ['--version']; import golden_gate.__main__",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0 and done.stdout.strip()


def test_run_hands_back_the_result_without_writing_it_out() -> None:
    """asyncio.run's runner formats its SIGINT handler, naming the main task and its result:
    a large report written out by `repr`, twice, after the last verdict."""
    from golden_gate import process

    class Report:
        written_out = 0

        def __repr__(self) -> str:
            Report.written_out += 1
            return "Report(...)"

    async def evaluation() -> Report:
        return Report()

    assert isinstance(process.run(evaluation()), Report)
    assert Report.written_out == 0
