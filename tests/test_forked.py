"""Work handed to a forked copy (golden_gate/forked.py): its result, or nothing, never a hang.

A copy is made only with no other thread running, and pytest's workers run some: each case
runs in a fresh interpreter.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap


def _run(script: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_copy_does_the_work_and_hands_back_its_result():
    out = _run("""
        import os
        from golden_gate import forked
        parent = os.getpid()
        with forked.Copy(lambda: (os.getpid(), list(range(100_000)))) as copy:
            mine = sum(range(1000))
            pid, numbers = copy.result()
        assert pid != parent and numbers == list(range(100_000)) and mine == 499500
        print("ok")
    """)
    assert out == "ok\n"


def test_a_copy_that_fails_dies_or_cannot_hand_back_gives_nothing():
    out = _run("""
        import os, signal
        from golden_gate import forked
        def fails():
            raise ValueError("no")
        def dies():
            os.kill(os.getpid(), signal.SIGKILL)
        for work in (fails, dies, lambda: (lambda: 1), lambda: os._exit(0)):
            with forked.Copy(work) as copy:
                assert copy.result() is None, work
        print("ok")
    """)
    assert out == "ok\n"


def test_with_another_thread_running_no_copy_is_made():
    out = _run("""
        import threading
        from golden_gate import forked
        stop = threading.Event()
        thread = threading.Thread(target=stop.wait)
        thread.start()
        try:
            assert not forked.can_fork()
            with forked.Copy(lambda: 1) as copy:
                assert copy.result() is None
        finally:
            stop.set()
            thread.join()
        assert forked.can_fork()
        print("ok")
    """)
    assert out == "ok\n"


def test_leaving_the_block_by_an_exception_kills_the_copy_and_waits_for_it():
    out = _run("""
        import os, time
        from golden_gate import forked
        try:
            with forked.Copy(lambda: time.sleep(60)) as copy:
                pid = copy._pid
                raise KeyboardInterrupt
        except KeyboardInterrupt:
            pass
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            print("gone")
    """)
    assert out == "gone\n"


def test_the_copy_leaves_this_processs_buffered_output_alone():
    # What this process had printed but not flushed is printed once, by this process.
    out = _run("""
        import sys
        from golden_gate import forked
        sys.stdout.write("before ")
        with forked.Copy(lambda: 2) as copy:
            assert copy.result() == 2
        print("after")
    """)
    assert out == "before after\n"


def test_when_no_process_can_be_made_the_caller_does_the_work():
    out = _run("""
        import os
        from golden_gate import forked
        def refused():
            raise BlockingIOError(11, "Resource temporarily unavailable")
        os.fork = refused  # as under a cgroup's pids limit
        with forked.Copy(lambda: 1) as copy:
            assert copy.result() is None
        print("ok")
    """)
    assert out == "ok\n"
