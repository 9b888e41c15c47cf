"""Progress on stderr: a live line on a terminal, a periodic line in CI logs.

    golden-gate: 120/1000 items · 3 errors (2 from the assistant) · assistant 32/32 in flight
    · judge 8/8 in flight · 98 judge calls made · 3 cache hits · 104/117 runs passed · 4.1 s,
    about 30 s left

(one line; the time left is the pace so far carried over the items not finished). "in flight"
is calls sent and not answered yet, against the limit: a side at its limit while the other is
not is where the run waits. Judge calls are counted once made
(answered or failed), never while they wait for a slot.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
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
        self._printed: str | None = None  # the counts of the last line written
        self.done = 0
        self.errors = 0  # runs the judge could not judge
        self.assistant_errors = 0  # runs the assistant did not answer
        self.judge_calls = 0  # made: answered or failed
        self.judge_in_flight = 0  # sent and not answered yet (not those waiting for a slot)
        self.cache_hits = 0
        self.passes = 0  # counted runs that passed, of the items finished
        self.runs = 0  # counted runs of the items finished
        # The limits, and where the assistant's requests in flight are read (`watch`).
        self.assistant_slots: int | None = None
        self.judge_slots: int | None = None
        self._assistant_in_flight: Callable[[], int] = lambda: 0

    def watch(
        self,
        *,
        assistant_in_flight: Callable[[], int],
        assistant_slots: int,
        judge_slots: int | None,
    ) -> None:
        """Show requests in flight against both limits; `judge_slots` None: nothing is judged."""
        self._assistant_in_flight = assistant_in_flight
        self.assistant_slots = assistant_slots
        self.judge_slots = judge_slots

    def counts(self) -> str:
        """The line without its clock: two lines with the same counts say nothing new."""
        return self.line().rpartition(" · ")[0]

    def line(self, *, done: bool = False) -> str:
        elapsed = time.monotonic() - self.started
        flights = ""
        if self.assistant_slots is not None:
            flights += (
                f"assistant {self._assistant_in_flight()}/{self.assistant_slots} in flight · "
            )
        if self.judge_slots is not None:
            flights += f"judge {self.judge_in_flight}/{self.judge_slots} in flight · "
        passing = f" · {self.passes}/{self.runs} runs passed" if self.runs else ""
        left = ""
        if not done and 0 < self.done < self.total:
            left = f", about {_duration(elapsed / self.done * (self.total - self.done))} left"
        return (
            f"golden-gate: {'done: ' if done else ''}{self.done}/{self.total} items · "
            f"{self._errors()} · {flights}"
            f"{self.judge_calls} judge calls made · {self.cache_hits} cache hits{passing} · "
            f"{elapsed:.1f} s{left}"
        )

    def _errors(self) -> str:
        total = self.errors + self.assistant_errors
        if not self.assistant_errors:
            return f"{total} errors"
        return f"{total} errors ({self.assistant_errors} from the assistant)"

    def update(self, *, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last < self.interval_s:
            return
        if not self.tty and not force and self.counts() == self._printed:
            return  # a log line a period that repeats the last one is noise; the heartbeat isn't
        self._last = now
        self._printed = self.counts()
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
        """The last line, said as such: never a copy of the periodic line before it."""
        if not self.enabled:
            return
        if self.tty:
            self.stream.write("\r" + self.line(done=True) + "\x1b[K\n")
        else:
            self.stream.write(self.line(done=True) + "\n")
        self.stream.flush()


def _duration(seconds: float) -> str:
    """A time left, as precise as it is worth: seconds, then minutes, then hours."""
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 5400:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"
