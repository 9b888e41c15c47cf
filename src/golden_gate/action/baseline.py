"""Finding the baseline report: at a git ref through the contents API, from git, or on disk;
and its committed versions for the trend, through the API, else from git.

A baseline that is not there (the API answers 404 for the path, or git resolves the ref and has
no such path) is not an error: the floor alone applies, and the comment says so. A baseline that
could not be read (the API failing, a shallow checkout without the ref) is not "no baseline": that
would quietly drop the comparison, so it is `BaselineUnavailable` (exit 3). A ref that does not
exist (GitHub's 404 "No commit found for the ref", or a complete clone that cannot resolve it)
is bad input, `RefNotFound`, never "no baseline". A file that is there but is not a report is
bad input.

A run reads each version once: the baseline's text is kept (`Baseline.text`), and a later read
of the same blob (the trend's newest version, a drift issue's history) reuses it (`known_texts`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from golden_gate.core.item_result import RunResult, tally_runs
from golden_gate.core.report import DETERMINISTIC, Report
from golden_gate.core.report_file import parse_report
from golden_gate.errors import IncompleteError
from golden_gate.files import read_text
from golden_gate.git import ABSENT, NO_REF, blob_sha, show_at_ref
from golden_gate.history import TREND_BYTES, TREND_VERSIONS, Version, from_git, trend
from golden_gate.rendering.charts import TrendPoint

if TYPE_CHECKING:
    from golden_gate.action.github import GitHub


class Baseline(BaseModel):
    report: Report | None
    source: str  # where it came from, or why there is none, for the comment and the log
    text: str | None = None  # what `report` was parsed from


class UnreadableAtRef(IncompleteError):
    """A file at a ref may exist but could not be read: what depends on it cannot be done."""


class BaselineUnavailable(UnreadableAtRef):
    """The baseline may exist but could not be read: the comparison cannot be made."""


def read_at_ref(
    path: str,
    ref: str,
    *,
    github: GitHub | None,
    workspace: Path,
    what: str,
    unavailable: type[UnreadableAtRef] = UnreadableAtRef,
) -> tuple[str | None, str]:
    """`path` at `ref` (contents API, then `git show`) and where it came from; None when it
    does not exist there. Raises `unavailable` when neither can say whether it exists, and
    `RefNotFound` (bad input) when the ref itself does not exist."""
    from golden_gate.action.github.client import GitHubError, RefNotFound

    where = f"{path} at {ref}"
    api_failure = "no GitHub token to read it with"
    if github is not None:
        try:
            text = github.read_file(path, ref)
        except GitHubError as exc:
            api_failure = f"the contents API failed: {exc}"
        else:
            return text, where  # None: a 404, GitHub says there is no such file at that ref
    shown = show_at_ref(path, ref, cwd=workspace)
    if shown is ABSENT:
        return None, where
    if shown is NO_REF:
        raise RefNotFound(
            ref, "the checkout", "a complete clone, and git rev-parse finds no commit"
        )
    if not isinstance(shown, str):
        raise unavailable(
            f"the {what} {where} could not be read ({api_failure}; git cannot read "
            f"{ref} either: fetch it, e.g. actions/checkout with fetch-depth: 0)"
        )
    return shown, f"{where} (from git)"


def find_baseline(
    path: str, *, ref: str | None, github: GitHub | None, workspace: Path
) -> Baseline:
    """The baseline at `ref` (contents API, then `git show`), or the file in the workspace.

    Raises `BaselineUnavailable` when neither can say whether the file exists at `ref`."""
    if not path:
        return Baseline(report=None, source="no baseline is configured")
    if ref:
        text, where = read_at_ref(
            path,
            ref,
            github=github,
            workspace=workspace,
            what="baseline",
            unavailable=BaselineUnavailable,
        )
        if text is None:
            return Baseline(report=None, source=f"no baseline: {path} does not exist at {ref}")
        return Baseline(report=parse_report(text, source=where), source=where, text=text)
    local = workspace / path
    if not local.is_file():
        return Baseline(report=None, source=f"no baseline: {path} does not exist")
    text = read_text(local, what="baseline")  # not UTF-8: one sentence, exit 2
    return Baseline(report=parse_report(text, source=path), source=path, text=text)


def known_texts(*texts: str | None) -> dict[str, str]:
    """`texts` by the blob sha of their bytes, for `GitHub.read_file(known=...)`: a blob is
    reused only when its bytes are these (a checkout's CRLF or a stray byte is no match)."""
    return {blob_sha(t.encode("utf-8", "surrogatepass")): t for t in texts if t is not None}


def _checks_only(run: RunResult) -> RunResult:
    if run.status == "error" and (run.error_side == "assistant" or not run.checks):
        return run  # no answer to check (an unanswered run stays a failed run)
    passed = all(check.passed for check in run.checks)
    return run.model_copy(
        update={"status": "pass" if passed else "fail", "verdict": None, "error_side": None}
    )


def deterministic_view(report: Report) -> Report:
    """The baseline as the deterministic tier would have scored it: checks only, no judge.

    Items without per-run details (a minimal baseline) cannot be re-scored and are left out.
    """
    results = []
    for item in report.results:
        if not item.run_results:
            continue
        runs = [_checks_only(r) for r in item.run_results]
        results.append(item.model_copy(update={"run_results": runs, **tally_runs(runs)}))
    return report.model_copy(
        update={"results": results, "tier": DETERMINISTIC, "judge": DETERMINISTIC}
    )


def from_github(
    github: GitHub,
    path: str,
    *,
    ref: str,
    limit: int,
    known: Mapping[str, str] | None = None,
) -> list[Version]:
    """The newest `limit` versions of `path` reachable from `ref`, newest first (1 + limit
    requests, and a blob download for each large one not in `known`). Raises `GitHubError`."""
    versions: list[Version] = []
    read = 0
    for found in github.file_history(path, ref=ref, limit=limit):
        if read > TREND_BYTES:
            break
        text = github.read_file(path, found.sha, known=known)
        read += len(text or "")
        versions.append(
            Version(
                sha=found.sha,
                date=found.date.strftime("%Y-%m-%d"),
                message=found.message.splitlines()[0] if found.message else "",
                text=text,
            )
        )
    return versions


def baseline_trend(
    path: str,
    *,
    ref: str,
    github: GitHub | None,
    workspace: Path,
    confidence: float,
    limit: int = TREND_VERSIONS,
    known: Mapping[str, str] | None = None,
) -> tuple[list[TrendPoint], str]:
    """For the Action: the baseline's versions at `ref` through the API (reusing `known`
    texts), else from git, as trend points; and where they came from, or why there are none,
    for the log."""
    from golden_gate.action.github.client import GitHubError

    api_failure = "no GitHub token"
    if github is not None:
        try:
            versions = from_github(github, path, ref=ref, limit=limit, known=known)
        except GitHubError as exc:
            api_failure = f"the API failed: {exc}"
        else:
            points = trend(versions, path=path, confidence=confidence)
            return points, f"{len(points)} versions of {path} at {ref} (GitHub API)"
    for candidate in (f"origin/{ref}", ref):
        versions_from_git = from_git(path, ref=candidate, cwd=workspace, limit=limit)
        if versions_from_git:
            points = trend(versions_from_git, path=path, confidence=confidence)
            return points, f"{len(points)} versions of {path} at {candidate} (git)"
    return [], f"no history of {path} at {ref} ({api_failure}; git has none: a shallow checkout)"
