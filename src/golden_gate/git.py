"""git, run the way every caller needs it: on a workspace another uid owns, never hanging."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path


def git(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        # The workspace belongs to another uid inside the container: "dubious ownership".
        ["git", "-c", "safe.directory=*", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def blob_sha(data: bytes) -> str:
    """The id git (and GitHub, as a file's `sha`) gives a blob with these bytes."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


class _Absent:
    """git resolved the ref and it has no such path."""


ABSENT = _Absent()


class _NoRef:
    """A complete clone (not shallow) resolves neither `origin/<ref>` nor `<ref>`."""


NO_REF = _NoRef()


def show_at_ref(path: str, ref: str, *, cwd: Path) -> str | _Absent | _NoRef | None:
    """The file at `ref`; ABSENT when git knows the ref and it has no such path; NO_REF when a
    complete clone does not know the ref; None when git cannot tell (not a repository, or a
    shallow checkout, which may just not have fetched the ref)."""
    try:
        for candidate in (f"origin/{ref}", ref):
            if git(
                "rev-parse", "--verify", "--quiet", f"{candidate}^{{commit}}", cwd=cwd
            ).returncode:
                continue
            done = git("show", f"{candidate}:{path}", cwd=cwd)
            if done.returncode == 0:
                return done.stdout
            if git("cat-file", "-e", f"{candidate}:{path}", cwd=cwd).returncode:
                return ABSENT
            return None  # there, yet unreadable
        shallow = git("rev-parse", "--is-shallow-repository", cwd=cwd)
        if shallow.returncode == 0 and shallow.stdout.strip() == "false":
            return NO_REF
    except (OSError, subprocess.SubprocessError):
        return None
    return None
