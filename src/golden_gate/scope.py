"""Scope: can this change alter answers? Decided from the event and the pull request's files.

"Always run, decide inside": the step always runs (so a required check stays satisfiable) and
reports success without spending anything when no changed file matches `paths`.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, Field

PULL_REQUEST_EVENTS = {"pull_request", "pull_request_target"}
FILE_CAP = 3000  # GitHub lists at most 3,000 files of a pull request
DEFAULT_PATHS = ["prompts/**", "config/model*", "ingest/**", "evals/**", "src/**"]


class Scope(BaseModel):
    run: bool
    reason: str
    changed: int | None = None
    matched: list[str] = Field(default_factory=list)
    source: str | None = None  # "api" or "git": where the changed files came from


def matching(files: Sequence[str], patterns: Sequence[str]) -> list[str]:
    """Files matched by gitignore-style patterns (negations with `!` work as in .gitignore)."""
    import pathspec

    spec = pathspec.GitIgnoreSpec.from_lines(p for p in patterns if p.strip())
    return [f for f in files if spec.match_file(f)]


def git_changed_files(base: str, head: str, *, cwd: Path) -> list[str]:
    """`git diff --name-only base...head`; needs both commits fetched (fetch-depth: 0)."""
    done = subprocess.run(
        # The workspace belongs to another uid inside the container: "dubious ownership".
        [
            "git",
            "-c",
            "safe.directory=*",
            "diff",
            "--name-only",
            "--no-renames",
            f"{base}...{head}",
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(
            done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed"
        )
    return [line for line in done.stdout.splitlines() if line]


def decide(
    event_name: str,
    *,
    force: bool,
    patterns: Sequence[str],
    changed: Sequence[str] | None = None,
    capped: bool = False,
    source: str | None = None,
) -> Scope:
    """Only pull requests can be skipped; every other event runs."""
    if force:
        return Scope(run=True, reason="force is set")
    if event_name not in PULL_REQUEST_EVENTS:
        return Scope(run=True, reason=f"{event_name or 'a local run'} always runs")
    if changed is None:
        return Scope(run=True, reason="the changed files could not be listed, so the gate runs")
    if capped:
        return Scope(
            run=True,
            reason=f"the pull request has at least {FILE_CAP} changed files (GitHub's cap)",
            changed=len(changed),
            source=source,
        )
    matched = matching(changed, patterns)
    if matched:
        return Scope(
            run=True,
            reason=f"{len(matched)} of {len(changed)} changed files can change answers",
            changed=len(changed),
            matched=matched,
            source=source,
        )
    return Scope(
        run=False,
        reason=f"{len(changed)} files changed and none matches `paths`: answers cannot change",
        changed=len(changed),
        source=source,
    )
