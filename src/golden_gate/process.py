"""How a golden-gate process starts, for both front doors (the command line and the Action)."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import gc
import os
import signal
import sys
import threading
from collections.abc import Coroutine, Iterable
from typing import Any, NoReturn, TypeVar

T = TypeVar("T")

_SET: set[str] = set()  # variables `start` set for this process only

# The process's one policy for the cyclic collector: a young collection every 100,000 new
# objects, not 700, and an old one rarely. What golden-gate makes in bulk lives till it exits
# (a large report's records, the judge SDKs' modules) and is seldom cyclic garbage; at the
# default thresholds the collector walks it again and again (a 100,000-item report's full parse:
# 12.2 s of CPU, 5.8 s at these; BENCHMARKS.md, step 24).
COLLECTOR_THRESHOLDS = (100_000, 100, 100)


def start() -> None:
    """SIGTERM becomes KeyboardInterrupt, so `finally` blocks (compose down) still run: the
    runner cancels a step with SIGINT then SIGTERM, `docker stop` and `kill` send SIGTERM.

    And numpy's OpenBLAS gets one thread unless the user says otherwise: it starts a thread a
    core when numpy is imported (by scipy.special, for the gate's p-values) and keeps them
    spinning for a while, about 0.15 s of CPU a gate on 2 cores. Nothing here does linear
    algebra.

    And the collector runs at COLLECTOR_THRESHOLDS.

    And output never fails on a character the terminal's encoding lacks (a terminal in
    Latin-1 or ASCII): it is written as "?", where the verdict would have been an
    UnicodeEncodeError and nothing at all.
    """
    gc.set_threshold(*COLLECTOR_THRESHOLDS)
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and getattr(stream, "errors", "") == "strict":
            reconfigure(errors="replace")
    if "OPENBLAS_NUM_THREADS" not in os.environ:
        os.environ["OPENBLAS_NUM_THREADS"] = "1"
        _SET.add("OPENBLAS_NUM_THREADS")

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)


def child_environment(passed: Iterable[str] = ()) -> dict[str, str]:
    """The environment for what we start (docker compose and the assistant it builds): what
    secret_env allows of ours, and the names the rules pass (`passed`), without what `start`
    set for this process alone."""
    from golden_gate import secret_env

    ours = {k: v for k, v in os.environ.items() if k not in _SET}
    return secret_env.child_environment(ours, passed)


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(coroutine)`, its result handed back outside the loop's main task.

    Closing, Python 3.11's runner compares the SIGINT handler and, to do so, formats the one it
    installed, which names the main task and so the task's result: a report of N items was
    written out by `repr` twice, O(N) for nothing (a tenth of a second at 1,000 items, after
    the last verdict).
    """
    box: list[T] = []

    async def main() -> None:
        box.append(await coroutine)

    asyncio.run(main())
    return box[0]


def exit(code: int | None) -> NoReturn:
    """End the process with `code`, without the interpreter's tear-down when nothing needs it.

    Tearing down the judge stack's modules and objects (openai, LangChain, pydantic: thousands
    of modules, a large heap) takes 0.5–1 s after the last line is written, for nothing: the
    process ends anyway. So when every thread left is a daemon, the `atexit` handlers run (as
    at a normal exit), the standard streams are flushed, and the process ends at once. With
    another thread still running, the normal exit waits for it as ever.
    """
    main = threading.main_thread()
    if any(t is not main and not t.daemon and t.is_alive() for t in threading.enumerate()):
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a reader gone, a stream closed
            stream.flush()
    os._exit(code or 0)
