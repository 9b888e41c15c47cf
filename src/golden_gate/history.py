"""The baseline's history: its committed versions on a branch and what each one's pass rate was.

The comment and summary chart them as a trend; the CLI reads the versions from git here, the
Action through the GitHub API first (`action.baseline.baseline_trend`). Reading the history is
an extra: any failure is a reason to show no trend, never a failed gate.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from pydantic import BaseModel

from golden_gate.core import slim
from golden_gate.core.report_file import parse_report
from golden_gate.core.stats import wilson_lower_bound
from golden_gate.core.tally import Tally
from golden_gate.errors import GateError
from golden_gate.git import git
from golden_gate.rendering.charts import TrendPoint

TREND_VERSIONS = 8  # versions of the baseline on the trend, besides this run
TREND_BYTES = 32 * 1024 * 1024  # stop reading versions past this much text: a trend is an extra


class Version(BaseModel):
    """One committed version of a file: None as text when the commit deleted it."""

    sha: str
    date: str  # YYYY-MM-DD, the committer's
    message: str
    text: str | None


def from_git(path: str, *, ref: str, cwd: Path, limit: int) -> list[Version] | None:
    """The same from the local repository; None when git cannot say (not a repository, the
    ref not fetched: a shallow checkout has no history to show)."""
    try:
        listed = git("log", f"-n{limit}", "--format=%H%x09%cs%x09%s", ref, "--", path, cwd=cwd)
        if listed.returncode:
            return None
        versions = []
        read = 0
        for line in listed.stdout.splitlines():
            if read > TREND_BYTES:
                break
            sha, date, message = [*line.split("\t", 2), "", ""][:3]
            shown = git("show", f"{sha}:{path}", cwd=cwd)
            text = shown.stdout if shown.returncode == 0 else None
            read += len(text or "")
            versions.append(Version(sha=sha, date=date, message=message, text=text))
    except (OSError, subprocess.SubprocessError):
        return None
    return versions


def _point(text: str, *, source: str, label: str, confidence: float) -> TrendPoint | None:
    """A version's pass rate and bound; a large one is read as a slim view (its counts only),
    so a 100,000-item baseline's history costs what the gate's own read does."""
    if len(text) < slim.LARGE_REPORT_BYTES:
        items = slim.of(parse_report(text, source=source)).items
    else:
        with tempfile.TemporaryDirectory(prefix="golden-gate-version-") as folder:
            path = Path(folder) / "report.json"
            path.write_text(text, encoding="utf-8")
            items = slim.load(path).items
    tally = Tally(items)  # counted as the gate counts them
    if not tally.n:
        return None
    return TrendPoint(
        label=label,
        pass_rate=tally.score,
        lower_bound=wilson_lower_bound(tally.score_sum, tally.n, confidence=confidence),
    )


def trend(versions: list[Version], *, path: str, confidence: float) -> list[TrendPoint]:
    """Oldest first: a point for each version that is a report with counted items."""
    points = []
    for version in reversed(versions):
        if version.text is None:
            continue
        try:
            point = _point(
                version.text,
                source=f"{path} at {version.sha[:12]}",
                label=f"{version.date[5:]} {version.sha[:6]}",
                confidence=confidence,
            )
        except (GateError, OSError):
            # A version that is not a report, or one that could not be read (a full disk for
            # the large one's temporary file): no point on the trend, never a failed gate.
            continue
        if point is not None:
            points.append(point)
    return points


def git_trend(path: Path, *, confidence: float, limit: int = TREND_VERSIONS) -> list[TrendPoint]:
    """For the CLI: the committed versions of a baseline file on disk (at HEAD); none when the
    file is not in a git repository."""
    folder = path.resolve().parent
    try:
        top = git("rev-parse", "--show-toplevel", cwd=folder) if folder.is_dir() else None
        if top is None or top.returncode:
            return []
        relative = path.resolve().relative_to(Path(top.stdout.strip()).resolve()).as_posix()
    except (OSError, subprocess.SubprocessError, ValueError):
        return []
    versions = from_git(relative, ref="HEAD", cwd=folder, limit=limit)
    if not versions:
        return []
    return trend(versions, path=relative, confidence=confidence)
