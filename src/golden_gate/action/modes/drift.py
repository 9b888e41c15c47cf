"""Drift alerts: a scheduled run on the default branch that fails against the committed baseline
opens (or updates, never duplicates) one issue, closed again by the next passing run.

The issue also shows how often the baseline was rewritten and what the pass rate did across
those rewrites, so a slow slide hidden by repeated promotions is visible.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel

from golden_gate.core.gate import GateResult
from golden_gate.core.report import Report, parse_report
from golden_gate.rendering.escape import code_span, inline
from golden_gate.rendering.render import COMMENT_LIMIT, render

if TYPE_CHECKING:
    from golden_gate.action.github import GitHub

LABEL = "golden-gate-drift"


class Rewrite(BaseModel):
    """One version of the baseline file: when it was committed and its pass rate."""

    sha: str
    date: str
    message: str
    pass_rate: str


def baseline_history(github: GitHub, path: str, *, ref: str, limit: int = 10) -> list[Rewrite]:
    """The baseline's versions, newest first; a version that is not a report says so."""
    from golden_gate.errors import InputError
    from golden_gate.history import from_github

    rows = []
    for version in from_github(github, path, ref=ref, limit=limit):
        try:
            text = version.text
            rate = parse_report(text, source=path).pass_rate_text() if text else "deleted"
        except InputError:
            rate = "not a report"
        rows.append(
            Rewrite(
                sha=version.sha[:12],
                date=version.date,
                message=version.message,
                pass_rate=rate,
            )
        )
    return rows


def issue_title(gate: GateResult, branch: str) -> str:
    rate = f"{gate.k}/{gate.n}" if gate.n else "no results"
    return f"golden-gate: quality drift on {branch} ({rate})"


def issue_body(
    report: Report,
    gate: GateResult,
    *,
    baseline: Report | None,
    baseline_path: str | None,
    history: list[Rewrite],
    run_url: str | None,
) -> str:
    rows = [
        {
            "sha": code_span(r.sha, limit=12),
            "date": inline(r.date, limit=10),
            "message": inline(r.message, limit=100),
            "pass_rate": inline(r.pass_rate, limit=40),
        }
        for r in history
    ]
    return render(
        report,
        gate,
        baseline=baseline,
        template="drift.md.j2",
        limit=COMMENT_LIMIT,
        baseline_path=baseline_path,
        extra={"history": rows, "run_url": inline(run_url, limit=300) if run_url else None},
    )
