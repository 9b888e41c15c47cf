"""How a golden-gate process starts, for both front doors (the command line and the Action)."""

from __future__ import annotations

import os
import signal


def start() -> None:
    """SIGTERM becomes KeyboardInterrupt, so `finally` blocks (compose down) still run: the
    runner cancels a step with SIGINT then SIGTERM, `docker stop` and `kill` send SIGTERM.

    And numpy's OpenBLAS gets one thread unless the user says otherwise: it starts a thread a
    core when numpy is imported (by scipy.special, for the gate's p-values) and keeps them
    spinning for a while, about 0.15 s of CPU a gate on 2 cores. Nothing here does linear
    algebra.
    """
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)
