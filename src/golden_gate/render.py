"""Render a gate result as the PR comment and the job summary (Jinja templates in `templates/`).

All text that comes from questions, answers, judge comments or ids is escaped here, before it
reaches a template, so a user's own template cannot forget to.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import jinja2
from pydantic import BaseModel

from golden_gate.errors import InputError
from golden_gate.escape import code_span, inline, marker_id
from golden_gate.gate import GateResult
from golden_gate.report import ItemResult, Report

COMMENT_LIMIT = 60_000  # GitHub rejects comment bodies over 65,536 characters
SUMMARY_LIMIT = 1_000_000  # the runner rejects step summaries over 1 MiB
MARKER_PREFIX = "<!-- golden-gate:report id="


def marker(comment_id: str) -> str:
    """The hidden first line by which the sticky comment is found again."""
    return f"{MARKER_PREFIX}{marker_id(comment_id)} -->"


def templates_dir() -> Path:
    """Templates ship inside the package when installed, beside `src/` in a checkout."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "templates", here.parents[1] / "templates"):
        if (candidate / "comment.md.j2").is_file():
            return candidate
    raise FileNotFoundError("golden-gate's templates are missing from the installation")


class Row(BaseModel):
    """One item as a table row; every field is already escaped."""

    id: str
    question: str
    answer: str
    why: str
    runs: str


class TagRow(BaseModel):
    tag: str
    passed: int
    items: int
    rate: str
    regressions: int


class Section(BaseModel):
    rows: list[Row]
    total: int

    @property
    def omitted(self) -> int:
        return self.total - len(self.rows)


def _row(item: ItemResult | None, item_id: str) -> Row:
    if item is None:
        return Row(id=code_span(item_id), question="", answer="", why="", runs="")
    return Row(
        id=code_span(item.id),
        question=inline(item.question, limit=160),
        answer=inline(item.answer, limit=240),
        why=inline(item.why, limit=200),
        runs=f"{item.passes}/{item.runs}" + (f" ({item.errors} errors)" if item.errors else ""),
    )


def _tag_rows(report: Report, regressions: set[str]) -> list[TagRow]:
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for item in report.counted:
        for tag in item.tags or ["(untagged)"]:
            entry = counts[tag]
            entry[0] += int(item.passed)
            entry[1] += 1
            entry[2] += int(item.id in regressions)
    return [
        TagRow(
            tag=code_span(tag, limit=60),
            passed=p,
            items=n,
            rate=f"{p / n:.1%}",
            regressions=r,
        )
        for tag, (p, n, r) in sorted(counts.items())
    ]


def _environment(template_dir: Path, user_template: Path | None) -> jinja2.Environment:
    loaders: list[jinja2.BaseLoader] = [jinja2.FileSystemLoader(str(template_dir))]
    if user_template is not None:
        loaders.insert(0, jinja2.FileSystemLoader(str(user_template.parent)))
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        autoescape=False,  # Markdown, not HTML: escaping is done on the data, see escape.py
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["pct"] = lambda v, d=1: "n/a" if v is None else f"{v * 100:.{d}f}%"
    env.filters["num"] = lambda v, d=3: "n/a" if v is None else f"{v:.{d}f}"
    return env


def _context(
    report: Report,
    gate: GateResult,
    *,
    baseline: Report | None,
    comment_id: str,
    max_rows: int,
    extra_notes: list[str],
) -> dict[str, object]:
    items = report.by_id()
    comparison = gate.comparison
    regressed_ids = comparison.regressions if comparison else []
    improved_ids = comparison.improvements if comparison else []
    failed_ids = sorted(r.id for r in report.counted if not r.passed)

    def section(ids: list[str]) -> Section:
        return Section(rows=[_row(items.get(i), i) for i in ids[:max_rows]], total=len(ids))

    stats = report.stats
    return {
        "marker": marker(comment_id),
        "comment_id": marker_id(comment_id),
        "gate": gate,
        "verdict": gate.verdict,
        "headline": inline(gate.headline, limit=600),
        "reasons": [inline(r.message, limit=400) for r in gate.reasons],
        "warnings": [inline(w, limit=400) for w in gate.warnings],
        "notes": [inline(n, limit=600) for n in [*gate.notes, *extra_notes]],
        "settings": gate.settings,
        "comparison": comparison,
        "has_baseline": baseline is not None,
        "judge": code_span(report.judge, limit=80),
        "offline_judge": report.judge == "keypoints",
        "tier": report.tier,
        "regressed": section(regressed_ids),
        "improved": section(improved_ids),
        "failed": section(failed_ids),
        "unstable": section(gate.unstable),
        "errors": section(gate.errored),
        "tags": _tag_rows(report, set(regressed_ids)),
        "stats": stats,
        "complete": report.complete,
        "incomplete_reason": inline(report.incomplete_reason, limit=300),
        "assistant": report.assistant,
    }


def render(
    report: Report,
    gate: GateResult,
    *,
    baseline: Report | None = None,
    comment_id: str = "default",
    template: str = "comment.md.j2",
    user_template: Path | None = None,
    limit: int = COMMENT_LIMIT,
    extra_notes: list[str] | None = None,
) -> str:
    """Render within `limit` characters, listing fewer rows (never cutting a table) if needed."""
    env = _environment(templates_dir(), user_template)
    name = user_template.name if user_template is not None else template
    try:
        tmpl = env.get_template(name)
    except jinja2.TemplateError as exc:
        raise InputError(f"{user_template or name}: cannot load the template ({exc})") from None

    def attempt(max_rows: int) -> str:
        context = _context(
            report,
            gate,
            baseline=baseline,
            comment_id=comment_id,
            max_rows=max_rows,
            extra_notes=extra_notes or [],
        )
        try:
            return tmpl.render(**context)
        except jinja2.TemplateError as exc:
            raise InputError(f"{user_template or name}: the template failed ({exc})") from None

    most = max(len(report.results), 1)
    body = attempt(most)
    if len(body) <= limit:
        return body
    low, high = 0, most  # invariant: attempt(high) is too long
    best = attempt(0)
    if len(best) > limit:
        raise InputError(f"the rendered {name} exceeds {limit} characters even with no rows")
    while high - low > 1:
        mid = (low + high) // 2
        text = attempt(mid)
        if len(text) <= limit:
            low, best = mid, text
        else:
            high = mid
    return best


def render_comment(report: Report, gate: GateResult, **kwargs: object) -> str:
    return render(report, gate, template="comment.md.j2", limit=COMMENT_LIMIT, **kwargs)  # type: ignore[arg-type]


def render_summary(report: Report, gate: GateResult, **kwargs: object) -> str:
    kwargs.pop("user_template", None)
    return render(report, gate, template="summary.md.j2", limit=SUMMARY_LIMIT, **kwargs)  # type: ignore[arg-type]
