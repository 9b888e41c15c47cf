"""The drift issue (`mode: drift`): its title, and its body listing the regressed items and the
baseline's rewrites with the pass rate of each."""

from __future__ import annotations

from pydantic import BaseModel

from golden_gate.core.report import Report
from golden_gate.core.verdict import GateResult
from golden_gate.rendering.escape import code_span, inline
from golden_gate.rendering.render import COMMENT_LIMIT, render


class Rewrite(BaseModel):
    """One version of the baseline file: when it was committed and its pass rate."""

    sha: str
    date: str
    message: str
    pass_rate: str


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
