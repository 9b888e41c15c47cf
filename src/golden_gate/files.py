"""Reading a user's files with one clear sentence on failure, and writing ours atomically."""

from __future__ import annotations

import contextlib
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
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # ValueError: a NUL in the name
        raise InputError(f"{path}: cannot read the {what} ({exc})") from None


def inside(path: str | Path, root: str | Path, *, what: str) -> None:
    """Refuse a file whose resolved path leaves `root` (the workspace): a pull request's
    symlink to /proc/self/environ or ../../secrets is read as nothing, said in one sentence."""
    try:
        resolved, base = Path(path).resolve(), Path(root).resolve()
    except (OSError, RuntimeError, ValueError) as exc:  # a symlink loop, a NUL in the name
        raise InputError(f"{path!r}: cannot resolve the {what} ({exc})") from None
    if not resolved.is_relative_to(base):
        raise InputError(
            f"{path}: the {what} resolves to {resolved}, outside the workspace {base}; "
            "refusing to read it"
        )


def _umask() -> int:
    # Read once, while the process has one thread: os.umask can only be read by setting it.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# What an ordinary new file gets (0666 less the umask: 0644 under 022). mkstemp makes 0600,
# and later steps of the job (upload-artifact, test reporters) run as another uid.
FILE_MODE = 0o666 & ~_umask()


def mkstemp_readable(directory: Path, prefix: str, suffix: str = ".tmp") -> tuple[int, str]:
    """`tempfile.mkstemp` with an ordinary new file's mode instead of 0600."""
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=prefix, suffix=suffix)
    # A file system without modes (some mounts): the file stays as it was made.
    with contextlib.suppress(OSError):
        os.fchmod(fd, FILE_MODE)
    return fd, tmp


def write_atomic(path: str | Path, text: str) -> None:
    """Write through a temporary file and rename, so readers never see half a file; the file
    gets an ordinary new file's mode (0644 under the usual umask), directories 0755."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = mkstemp_readable(path.parent, prefix=f".{path.name}.")
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
