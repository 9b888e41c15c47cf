"""Reading a user's files with one clear sentence on failure, and writing ours atomically."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from golden_gate.errors import InputError, OutputError


def read_text(path: str | Path, *, what: str) -> str:
    """The file's text; a missing or unreadable file is an InputError naming it and `what`."""
    path = Path(path)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: {what} not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read the {what} ({exc})") from None


def write_atomic(path: str | Path, text: str) -> None:
    """Write through a temporary file and rename, so readers never see half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_result(path: str | Path, text: str, *, what: str) -> None:
    """`write_atomic`, with a failure as one sentence naming the file (exit 3, not 1)."""
    try:
        write_atomic(path, text)
    except OSError as exc:
        # mkdir says "File exists" when a parent is a file: say what that means.
        reason = "a parent is not a directory" if isinstance(exc, FileExistsError) else None
        reason = reason or exc.strerror or str(exc)
        raise OutputError(f"{path}: cannot write the {what} ({reason})") from None


class WriteFailures(list[str]):
    """Results that could not be written; the others are still written, then one error."""

    def attempt(self, write: Callable[[], object]) -> None:
        try:
            write()
        except OutputError as exc:
            self.append(str(exc))

    def raise_if_any(self) -> None:
        if self:
            raise OutputError("; ".join(self))
