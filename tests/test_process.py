"""process.start: what both front doors do first."""

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
print(process.child_environment().get("OPENBLAS_NUM_THREADS", "unset"))
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
