"""Progress on stderr: a live line on a terminal, a periodic line in CI logs."""

from __future__ import annotations

import asyncio
import sys
import time
from typing import TextIO


class Progress:
    def __init__(
        self,
        total: int,
        *,
        stream: TextIO | None = None,
        interval_s: float | None = None,
        heartbeat_s: float = 20.0,
        enabled: bool = True,
    ) -> None:
        self.total = total
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        # A terminal gets a redrawn line; a log gets a line every 10 s so it stays readable.
        self.interval_s = interval_s if interval_s is not None else (0.2 if self.tty else 10.0)
        # With nothing finishing (slow judge calls), a line anyway: the run is alive.
        self.heartbeat_s = heartbeat_s
        self.enabled = enabled
        self.started = time.monotonic()
        self._last = self.started
        self.done = 0
        self.errors = 0
        self.judge_calls = 0  # made: answered or failed
        self.judge_in_flight = 0  # sent and not answered yet (not those waiting for a slot)
        self.cache_hits = 0

    def line(self) -> str:
        elapsed = time.monotonic() - self.started
        return (
            f"golden-gate: {self.done}/{self.total} items · {self.errors} errors · "
            f"{self.judge_calls} judge calls made · {self.judge_in_flight} in flight · "
            f"{self.cache_hits} cache hits · {elapsed:.1f} s"
        )

    def update(self, *, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last < self.interval_s:
            return
        self._last = now
        if self.tty:
            self.stream.write("\r" + self.line() + "\x1b[K")
        else:
            self.stream.write(self.line() + "\n")
        self.stream.flush()

    async def heartbeat(self) -> None:
        """Print a line whenever `heartbeat_s` passed without one; cancel it to stop."""
        while self.enabled:
            await asyncio.sleep(max(self._last + self.heartbeat_s - time.monotonic(), 0.01))
            if time.monotonic() - self._last >= self.heartbeat_s:
                self.update(force=True)

    def finish(self) -> None:
        if not self.enabled:
            return
        if self.tty:
            self.stream.write("\r" + self.line() + "\x1b[K\n")
        else:
            self.stream.write(self.line() + "\n")
        self.stream.flush()
