"""Work done by a forked copy of this process, on another core, its result handed back.

A copy is made only where forking is safe (POSIX, no other thread: a thread's locks would be
copied held); elsewhere nothing runs and the caller does the work itself. The copy leaves its
result, pickled, in an unnamed file and exits at once (no cleanup, no flushing of what this
process had buffered); a copy that fails, dies or is killed hands back nothing, and the caller
does the work itself then too.
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import signal
import tempfile
import threading
from collections.abc import Callable
from types import TracebackType
from typing import IO, Generic, TypeVar

T = TypeVar("T")


def can_fork() -> bool:
    return hasattr(os, "fork") and threading.active_count() == 1


class Copy(Generic[T]):
    """`work()` run by a forked copy while this process goes on; `result()` waits for it.

    Use it as a context manager: leaving the block by an exception kills the copy.
    """

    def __init__(self, work: Callable[[], T]) -> None:
        self._pid = 0
        self._file: IO[bytes] | None = None
        if not can_fork():
            return
        self._file = _unnamed_file()
        try:
            self._pid = os.fork()
        except OSError:  # no process to spare (a cgroup's pids limit): the caller does it
            self._file.close()
            self._file = None
            return
        if self._pid == 0:
            self._run(work, self._file)

    @staticmethod
    def _run(work: Callable[[], T], file: IO[bytes]) -> None:
        code = 1
        try:
            # What it makes lives until it leaves: nothing for the collector to find.
            gc.disable()
            pickle.dump(work(), file, protocol=pickle.HIGHEST_PROTOCOL)
            file.flush()
            code = 0
        finally:  # whatever happened (a signal included), the copy goes now
            os._exit(code)

    def result(self) -> T | None:
        """What `work()` returned, or None: no copy was made, or it failed, died or was
        killed (the caller does the work then)."""
        if not self._pid or self._file is None:
            return None
        _, status = os.waitpid(self._pid, 0)
        self._pid = 0
        file, self._file = self._file, None
        with file:
            if os.waitstatus_to_exitcode(status) != 0:
                return None
            file.seek(0)
            try:
                value: T = pickle.load(file)
            except Exception:  # an unreadable hand-over is no hand-over
                return None
            return value

    def cancel(self) -> None:
        if self._pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._pid, signal.SIGKILL)
            os.waitpid(self._pid, 0)
            self._pid = 0
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> Copy[T]:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.cancel()  # after result(), nothing is left to cancel


def _unnamed_file() -> IO[bytes]:
    """A file in memory with no name (Linux), else an unnamed temporary file. Both processes
    share its offset: the reader seeks to the start once the copy is gone."""
    if hasattr(os, "memfd_create"):
        with contextlib.suppress(OSError):
            return os.fdopen(os.memfd_create("golden-gate-copy", os.MFD_CLOEXEC), "w+b")
    return tempfile.TemporaryFile()
