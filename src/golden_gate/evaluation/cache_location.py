"""Where judge verdicts may be read from: never from files a pull request can write.

A verdict cache key needs only public data (judge identity, question, answer, reference), so a
pull request that commits `<cache-dir>/<xx>/<key>.json` files saying "passed" would pass with
no judge call. The Action therefore keeps its cache outside the checkout (under `RUNNER_TEMP`),
and a cache directory inside the checkout is used only when git proves it holds no tracked
file: when git tracks anything under it (or a symlink or submodule on the way to it), or when
that cannot be checked (no git, no repository, an error), it is not used.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

DEFAULT_NAME = "golden-gate-judge-cache"
_LS_FILES = ("git", "-c", "safe.directory=*", "--literal-pathspecs", "ls-files", "-z", "--")


def default_cache_dir(env: Mapping[str, str]) -> Path:
    """The Action's cache directory: in the runner's temporary directory, not the checkout."""
    return Path(env.get("RUNNER_TEMP") or tempfile.gettempdir()) / DEFAULT_NAME


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def untrusted_reason(directory: Path, *, workspace: Path, require_git: bool = True) -> str | None:
    """Why `directory` must not be read as a verdict cache, or None when it may be.

    `require_git=False` (a developer's own machine) accepts a directory git cannot vouch for
    because there is no repository; in a workflow the checkout may come without `.git`.
    """
    workspace = Path(workspace).absolute()
    lexical = Path(directory).absolute()
    resolved = lexical.resolve()
    root = workspace.resolve()
    # The resolved path catches a symlink into the checkout, the lexical one a symlink out of it.
    inside = [
        rel
        for path, base in ((resolved, root), (lexical, workspace))
        if _inside(path, base)
        for rel in [path.relative_to(base).as_posix()]
    ]
    if not inside:
        return None
    tracked = _tracked(root, sorted(set(inside)))
    if isinstance(tracked, str):
        if not require_git and "not a git repository" in tracked:
            return None
        return f"it is inside the checkout and git cannot tell whether it is tracked ({tracked})"
    if tracked:
        return (
            f"git tracks {tracked[0]!r} there: a pull request could commit verdicts into the "
            "checkout"
        )
    return None


def _tracked(root: Path, relatives: list[str]) -> list[str] | str:
    """Tracked paths at, under or above (a symlink, a submodule) `relatives`; a str on failure."""
    if "." in relatives:
        return ["."]  # the whole checkout: every tracked file is under it
    above = {p for rel in relatives for p in map(str, Path(rel).parents)} - {"."}
    try:
        done = subprocess.run(
            # The checkout belongs to another uid inside the container: "dubious ownership".
            [*_LS_FILES, *relatives, *sorted(above)],
            cwd=root,
            capture_output=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"git: {exc.strerror if isinstance(exc, OSError) else type(exc).__name__}"
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return lines[-1] if lines else f"git exited with {done.returncode}"
    listed = [name for name in done.stdout.decode("utf-8", "replace").split("\0") if name]
    return [
        name
        for name in listed
        if name in above or any(name == rel or name.startswith(rel + "/") for rel in relatives)
    ]
