"""Whose file `junit-results` is: on a pull request, only one the job wrote is gated.

A results file the pull request committed is a verdict it wrote itself, and would pass its own
gate. So on every event but a trusted one (a push, a manual or scheduled run: a branch's own
commits) the file is refused when git tracks it in the checkout, or tracks a symlink on the way
to it (the pull request chose where that points), or when it lies in a git directory. git
decides, asked in the directory the file is in (a checkout under `path:` or a submodule is its
own repository); where no git repository holds the file nothing can be proven, and it is
refused too. On every event the file must lie inside the workspace.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from golden_gate.errors import InputError
from golden_gate.git import git

TRUSTED_EVENTS = frozenset({"push", "workflow_dispatch", "schedule", ""})  # "": not on a runner
MAX_LINKS = 40  # what Linux follows before ELOOP


def check_junit_source(path: Path, *, workspace: Path, event_name: str, shown: str) -> None:
    """Refuse (InputError naming `junit-results` and `shown`) a results file outside the
    workspace, and on an untrusted event one a pull request could have committed; a missing
    file is left to the reader to say."""
    where = f"input 'junit-results' ({shown})"
    base = workspace.resolve()
    final, links = _walk(path, workspace, base, where=where)
    if not final.is_relative_to(base):
        raise InputError(
            f"{where} resolves to {final}, outside the workspace {base}; refusing to read it"
        )
    if event_name in TRUSTED_EVENTS or not final.is_file():
        return
    must = f"{where}: on a {event_name} event the results file must be one this job wrote"
    inside_repo = final.relative_to(base).parts
    if any(part.casefold() == ".git" for part in inside_repo):
        raise InputError(f"{must}, and it resolves into the git directory ({final})")
    for link in links:
        if link.is_relative_to(base) and _tracked(link, must=must):
            raise InputError(
                f"{must}, and the path goes through {link.relative_to(base)}, a symlink "
                "committed in the checkout (the pull request chose where it points)"
            )
    if _tracked(final, must=must):
        committed = final.relative_to(base)
        link_note = " (reached through a symlink)" if links else ""
        raise InputError(
            f"{must}, and {committed} is committed in the checkout{link_note}: a committed "
            "results file is a verdict the pull request wrote itself; have the job write it"
        )


def _walk(path: Path, workspace: Path, base: Path, *, where: str) -> tuple[Path, list[Path]]:
    """The file `path` names, found as the kernel finds it (component by component, `..`
    after the symlinks before it), and every symlink met on the way, each where it lies."""
    try:
        rest = path.relative_to(workspace)
        current = base
    except ValueError:  # an absolute input elsewhere: from the root
        rest, current = path.relative_to(path.anchor), Path(path.anchor)
    pending = list(rest.parts)
    links: list[Path] = []
    while pending:
        part = pending.pop(0)
        if part == "..":
            current = current.parent
            continue
        here = current / part
        if not here.is_symlink():
            current = here
            continue
        links.append(here)
        if len(links) > MAX_LINKS:
            raise InputError(f"{where}: more than {MAX_LINKS} symlinks on the way (a loop?)")
        try:
            target = Path(os.readlink(here))
        except OSError as exc:
            raise InputError(f"{where}: cannot read the symlink {here} ({exc})") from None
        if target.is_absolute():
            current = Path(target.anchor)
            target = target.relative_to(target.anchor)
        pending[:0] = [p for p in target.parts if p != "."]
    return current, links


def _tracked(file: Path, *, must: str) -> bool:
    """Whether git tracks `file` (not followed: a symlink is itself) in the repository that
    holds it. Case-insensitively, then by identity, so a case-insensitive file system cannot
    hide a tracked `Results.xml` behind `results.xml`."""
    try:
        top_text = _git_or_refuse(file.parent, "rev-parse", "--show-toplevel", must=must)
        top = Path(top_text.strip()).resolve()
        name = file.parent.resolve().relative_to(top) / file.name
        listed = _git_or_refuse(
            top, "ls-files", "-z", "--", f":(literal,icase){name.as_posix()}", must=must
        )
    except ValueError:  # git's top is not above the file: it cannot speak for it
        raise InputError(f"{must}, and git cannot tell whether it is committed") from None
    for entry in filter(None, listed.split("\0")):
        if entry == name.as_posix() or _same(top / entry, file):
            return True
    return False


def _git_or_refuse(cwd: Path, *args: str, must: str) -> str:
    try:
        done = git(*args, cwd=cwd)
    except (OSError, subprocess.SubprocessError) as exc:
        raise InputError(f"{must}, and git cannot run to tell ({exc})") from None
    if done.returncode != 0:
        raise InputError(
            f"{must}, and git cannot tell whether it is committed: {cwd} is not in a git "
            "checkout (check the repository out with actions/checkout, git on the runner, "
            "before this step)"
        )
    return done.stdout


def _same(a: Path, b: Path) -> bool:
    try:
        sa, sb = a.lstat(), b.lstat()
    except OSError:
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)
