"""Judge calibration as text: the one-line summary and the Markdown report."""

from __future__ import annotations

from pydantic import BaseModel

from golden_gate.core.agreement import Kappa, landis_koch
from golden_gate.core.calibration import CalibrationReport
from golden_gate.rendering.escape import code_span, inline


def _num(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def kappa_text(kappa: Kappa) -> str:
    """`0.82 [0.71, 0.93]`, or `undefined`."""
    if kappa.value is None:
        return "undefined"
    return f"{_num(kappa.value)} [{_num(kappa.ci_low)}, {_num(kappa.ci_high)}]"


def calibration_line(
    report: CalibrationReport,
    *,
    judge: str | None = None,
    judge_prompt_hash: str | None = None,
) -> str:
    """The one line a gate's comment shows, as plain text (the caller escapes it: render's
    `extra_notes` do). Pass the gate report's `judge` and `judge_prompt_hash` to flag a
    calibration of a different judge or prompt."""
    labels = f"on {report.n} labels"
    if not report.complete:
        head = f"judge calibration incomplete: kappa κ = {kappa_text(report.kappa)} {labels}"
    elif report.kappa.value is None:
        head = f"judge calibration inconclusive: kappa κ undefined {labels}"
    elif report.passed:
        head = f"judge calibrated: kappa κ = {kappa_text(report.kappa)} {labels}"
    else:
        head = (
            f"judge calibration below min-kappa {report.min_kappa:.2f}: "
            f"kappa κ = {kappa_text(report.kappa)} {labels}"
        )
    line = f"{head} ({report.date})"
    if judge is not None and judge != report.judge:
        line += f"; calibrated for a different judge ({report.judge})"
    elif judge_prompt_hash is not None and judge_prompt_hash != report.judge_prompt_hash:
        line += "; calibrated with a different judge prompt"
    return line


class _Row(BaseModel):
    """A disagreement as a table row; every field is already escaped."""

    id: str
    human: str
    judge: str
    comment: str
    answer: str
    note: str


def _context(report: CalibrationReport, max_rows: int) -> dict[str, object]:
    kappa = report.kappa
    rows = [
        _Row(
            id=code_span(d.id, limit=80),
            human=d.human,
            judge=d.judge,
            comment=inline(d.comment, limit=200),
            answer=inline(d.answer, limit=200),
            note=inline(d.note, limit=120),
        )
        for d in report.disagreements[:max_rows]
    ]
    errors = [
        (code_span(e.id, limit=80), inline(e.error, limit=200)) for e in report.errors[:max_rows]
    ]
    c = report.confusion
    return {
        "verdict": report.verdict,
        "judge": code_span(report.judge, limit=80),
        "prompt_hash": code_span(report.judge_prompt_hash[:12]) if report.judge_prompt_hash else "",
        "offline_judge": report.judge == "keypoints",
        "labels": report.labels,
        "n": report.n,
        "agreeing": c.agreeing,
        "agreement": "n/a" if report.agreement is None else f"{report.agreement:.1%}",
        "kappa": kappa_text(kappa),
        "kappa_defined": kappa.value is not None,
        "confidence": f"{kappa.confidence:.0%}",
        "reading": landis_koch(kappa.value),
        "reason": inline(kappa.reason, limit=300),
        "note": inline(kappa.note, limit=300),
        "min_kappa": f"{report.min_kappa:.2f}",
        "confusion": c,
        "rows": rows,
        "omitted": len(report.disagreements) - len(rows),
        "disagreement_count": len(report.disagreements),
        "error_count": len(report.errors),
        "errors": errors,
        "errors_omitted": len(report.errors) - len(errors),
        "complete": report.complete,
        "incomplete_reason": inline(report.incomplete_reason, limit=300),
        "warnings": [inline(w, limit=300) for w in report.warnings],
        "judge_calls": report.judge_calls,
        "cache_hits": report.cache_hits,
        "created_at": inline(report.created_at, limit=40),
    }


def render_calibration(
    report: CalibrationReport, *, max_rows: int = 50, limit: int | None = None
) -> str:
    """The calibration as Markdown (`templates/calibration.md.j2`), within `limit` characters
    (default: a PR comment's), listing fewer rows rather than cutting a table."""
    import jinja2

    from golden_gate.rendering.environment import templates_dir
    from golden_gate.rendering.render import COMMENT_LIMIT

    limit = COMMENT_LIMIT if limit is None else limit
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        autoescape=False,  # Markdown, not HTML: the data is escaped in `_context`
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    template = env.get_template("calibration.md.j2")
    rows = max(max_rows, 0)
    text = template.render(**_context(report, rows))
    while len(text) > limit and rows > 0:
        rows //= 2
        text = template.render(**_context(report, rows))
    return text
