"""Finding the baseline report: at a git ref through the contents API, from git, or on disk.

A missing baseline is not an error (the floor alone applies, and the comment says so); a file
that is there but is not a report is bad input.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from golden_gate.report import DETERMINISTIC, Report, RunResult, parse_report

if TYPE_CHECKING:
    from golden_gate.github import GitHub


class Baseline(BaseModel):
    report: Report | None
    source: str  # where it came from, or why there is none, for the comment and the log


def _git_show(path: str, ref: str, *, cwd: Path) -> str | None:
    for candidate in (f"origin/{ref}", ref):
        done = subprocess.run(
            ["git", "-c", "safe.directory=*", "show", f"{candidate}:{path}"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if done.returncode == 0:
            return done.stdout
    return None


def find_baseline(
    path: str, *, ref: str | None, github: GitHub | None, workspace: Path
) -> Baseline:
    """The baseline at `ref` (contents API, then `git show`), or the file in the workspace."""
    from golden_gate.github import GitHubError

    if not path:
        return Baseline(report=None, source="no baseline is configured")
    if ref:
        text = None
        where = f"{path} at {ref}"
        if github is not None:
            try:
                text = github.read_file(path, ref)
            except GitHubError as exc:
                text = None
                where += f" (contents API failed: {exc}; tried git)"
        if text is None:
            text = _git_show(path, ref, cwd=workspace)
        if text is None:
            return Baseline(report=None, source=f"no baseline: {path} does not exist at {ref}")
        return Baseline(report=parse_report(text, source=where), source=where)
    local = workspace / path
    if not local.is_file():
        return Baseline(report=None, source=f"no baseline: {path} does not exist")
    return Baseline(
        report=parse_report(local.read_text(encoding="utf-8"), source=path), source=path
    )


def _checks_only(run: RunResult) -> RunResult:
    if run.status == "error":
        return run
    passed = all(check.passed for check in run.checks)
    return run.model_copy(update={"status": "pass" if passed else "fail", "verdict": None})


def deterministic_view(report: Report) -> Report:
    """The baseline as the deterministic tier would have scored it: checks only, no judge.

    Items without per-run details (a minimal baseline) cannot be re-scored and are left out.
    """
    results = []
    for item in report.results:
        if not item.run_results:
            continue
        runs = [_checks_only(r) for r in item.run_results]
        results.append(
            item.model_copy(
                update={
                    "run_results": runs,
                    "passes": sum(r.status == "pass" for r in runs),
                    "runs": sum(r.status != "error" for r in runs),
                    "errors": sum(r.status == "error" for r in runs),
                }
            )
        )
    return report.model_copy(
        update={"results": results, "tier": DETERMINISTIC, "judge": DETERMINISTIC}
    )
