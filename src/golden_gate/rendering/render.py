"""Render a gate result as the PR comment and the job summary (Jinja templates in `templates/`).

All text that comes from questions, answers, judge comments or ids is escaped here, before it
reaches a template, so a user's own template cannot forget to; every registered secret is
scrubbed from what is rendered (see redaction.py).

The context a template sees is built here, once for the comment and the summary; the tables'
rows are rendering/sections.py, the Jinja environment rendering/environment.py.
"""

from __future__ import annotations

import contextlib
import functools
from collections import Counter
from collections.abc import Callable, Iterable
from itertools import chain
from pathlib import Path
from typing import Any

import jinja2

from golden_gate import redaction
from golden_gate.core import slim, trajectory
from golden_gate.core.cost import cost_terms, money, performance_line
from golden_gate.core.report import Report
from golden_gate.core.slim import SlimReport
from golden_gate.core.verdict import GateResult
from golden_gate.errors import InputError
from golden_gate.rendering import charts, sections
from golden_gate.rendering.charts import TrendPoint
from golden_gate.rendering.environment import load_template
from golden_gate.rendering.escape import code_span, inline, legacy_marker_id, marker_id
from golden_gate.rendering.sections import DROPPED_WHY, Row, Section

MANY_ROWS = 500  # from this many rows, their records are read before the first render

COMMENT_LIMIT = 60_000  # GitHub rejects comment bodies over 65,536 characters
SUMMARY_LIMIT = 1_000_000  # bytes: the runner rejects step summaries over 1 MiB (1,048,576)
MARKER_PREFIX = "<!-- golden-gate:report id="


def marker(comment_id: str) -> str:
    """The hidden first line by which the sticky comment is found again."""
    return f"{MARKER_PREFIX}{marker_id(comment_id)} -->"


def legacy_marker(comment_id: str) -> str | None:
    """The first line an older release wrote for this id, when it differs: such a comment is
    still found (and rewritten with the new marker) for one release."""
    old = f"{MARKER_PREFIX}{legacy_marker_id(comment_id)} -->"
    return None if old == marker(comment_id) else old


def characters(text: str) -> int:
    return len(text)


def utf8_bytes(text: str) -> int:
    """What the runner counts: a CJK character is 3 bytes, an emoji 4."""
    return len(text.encode("utf-8", "surrogatepass"))


def _cost_line(header: Report, items: int) -> str | None:
    """What this run cost and, measured on it, the formula for the next: only when the run
    recorded a cost or the assistant's tokens."""
    stats = header.stats
    if stats is None or (stats.cost_usd is None and stats.assistant_tokens is None):
        return None
    runs = header.run_settings.runs if header.run_settings is not None else 1
    spent = [
        f"judge {money(stats.cost_usd)}" if stats.cost_usd is not None else None,
        f"assistant {money(stats.assistant_cost_usd)}"
        if stats.assistant_cost_usd is not None
        else None,
    ]
    now = " + ".join(part for part in spent if part)
    terms = cost_terms(items=items, runs=runs, measured=header)
    text = (f"this run {now} · " if now else "") + "a run of this size: " + terms.formula()
    return text.replace("$", "\\$")  # a pair of dollars is math in GitHub's Markdown


class _Context:
    """The template's context for a number of rows a section.

    What does not depend on that number is computed and escaped once, in one pass over the
    report, not again at each attempt; an item's row is escaped when a template first lists it.
    """

    def __init__(
        self,
        report: Report | SlimReport,
        gate: GateResult,
        *,
        baseline: Report | SlimReport | None,
        comment_id: str,
        extra_notes: list[str],
        baseline_path: str | None = None,
        extra: dict[str, object] | None = None,
        unverified: bool = False,
        history: list[TrendPoint] | None = None,
    ) -> None:
        view = slim.of(report)
        header = view.header
        comparison = gate.comparison
        regressed_ids = comparison.regressions if comparison else []
        improved_ids = comparison.improvements if comparison else []
        self.report = view
        self._rows: dict[str, Row] = view.memo.setdefault("rows", {})  # shared by templates
        self._baseline = slim.of(baseline) if baseline is not None else None
        self._befores: dict[str, str] = {}
        tally = sections.tag_tally(report)
        regressed = Counter(
            chain.from_iterable(tally.tags_of(i) for i in regressed_ids if i in tally.position)
        )
        self.sections = {
            "regressed": regressed_ids,
            "improved": improved_ids,
            "failed": tally.counts.failed,
            "unstable": gate.unstable,
            "errors": gate.errored,
        }
        self._tags = sections.with_slices(
            sections.tag_rows(tally.tagged, tally.passes, regressed), gate.slices
        )
        complete = gate.run_verdict(header.complete) != "incomplete"
        improved = Counter(
            chain.from_iterable(tally.tags_of(i) for i in improved_ids if i in tally.position)
        )
        bars = sections.tag_bars(
            tally, regressed, improved, sections.tag_tally(baseline) if baseline else None
        )
        tag_chart = charts.tag_chart(bars)
        trend_chart = None
        if history and gate.pass_rate is not None and gate.lower_bound is not None:
            now = TrendPoint(
                label="this run", pass_rate=gate.pass_rate, lower_bound=gate.lower_bound
            )
            trend_chart = charts.trend_chart(
                [*history, now],
                floor=gate.settings.floor,
                title="Pass rate: the baseline over time, then this run",
            )
        self._fixed = {
            "marker": marker(comment_id),
            "comment_id": inline(comment_id, limit=80) or "default",
            "gate": gate,
            "verdict": gate.verdict if complete else "incomplete",
            # An incomplete run has no verdict: never a pass count or a regression headline.
            "headline": inline(
                gate.headline if complete else "no gate result: the reason is below", limit=600
            ),
            "settings": gate.settings,
            "comparison": comparison,
            "has_baseline": baseline is not None,
            "judge": code_span(header.judge, limit=80),
            "offline_judge": header.judge == "keypoints",
            "tier": header.tier,
            "stats": header.stats,
            "complete": complete,
            "incomplete_reason": inline(header.incomplete_reason or gate.inconclusive, limit=800),
            "assistant": header.assistant,
            "baseline_path": code_span(baseline_path, limit=200) if baseline_path else None,
            "rules": sections.rule_parts(header.rule_changes),
            "proposed": sections.rule_files(header.rule_changes, "not_used")
            + [inline(text, limit=300) for text in sections.settings_not_used(header.rule_changes)],
            "own_rule_files": sections.rule_files(header.rule_changes, "own_rule_files"),
            "approvers": sections.approvers(header.rule_changes),
            "evaluator_rates": sections.evaluators_text(view),
            "judge_agreement": sections.agreement_text(view),
            # a fork's report: its numbers are a claim, shown without the trusted check marks
            "unverified": unverified,
            "trend_chart": trend_chart,
            "tag_chart": tag_chart[0] if tag_chart else None,
            "tag_chart_left_out": tag_chart[1] if tag_chart else 0,
            "retrieval": sections.retrieval(gate.retrieval),
            "cost_line": _cost_line(header, len(view.items)),
            "performance": performance_line(
                header.stats, self._baseline.header.stats if self._baseline else None
            ),
        }
        changes = header.rule_changes
        self._dropped = set(changes.dropped) if changes is not None else set()
        self._extra = dict(extra or {})  # a template's own context, escaped by the caller
        self._reasons = [inline(r.message, limit=400) for r in gate.reasons]
        self._warnings = [inline(w, limit=400) for w in gate.warnings]
        self._notes = [inline(n, limit=600) for n in [*gate.notes, *extra_notes]]

    def row(self, item_id: str) -> Row:
        row = self._rows.get(item_id)
        if row is None:
            record = self.report.record(item_id)
            row = sections.row(record, item_id)
            if record is None and item_id in self._dropped:
                row = row.model_copy(update={"why": DROPPED_WHY})
            self._rows[item_id] = row
        return row

    def before(self, item_id: str) -> str:
        """The item's answer in the baseline, escaped as a row's answer is."""
        text = self._befores.get(item_id)
        if text is None:
            assert self._baseline is not None
            record = self._baseline.record(item_id)
            text = inline(record.answer if record is not None else None, limit=240)
            self._befores[item_id] = text
        return text

    def calls(self, item_id: str) -> str:
        """The item's expected beside its actual tool calls as a table line, escaped; empty
        for an item without either."""
        record = self.report.record(item_id)
        if record is None or (record.expected_tools is None and record.tool_calls is None):
            return ""
        expected = "; ".join(record.expected_tools) if record.expected_tools else "—"
        failing = next((r for r in record.run_results if r.status == "fail"), None)
        turn = f" (turn {failing.failed_turn})" if failing and failing.failed_turn else ""
        actual = trajectory.sequence(record.tool_calls) + turn
        return (
            f"| {code_span(record.id)} | {inline(expected, limit=400)} "
            f"| {inline(actual, limit=400)} |\n"
        )

    def make_rows(self, sections: Iterable[str]) -> None:
        """Have the records of these sections' rows at hand: a report read the slim way reads
        its file once for all of them, not once a row."""
        wanted = dict.fromkeys(chain.from_iterable(self.sections[name] for name in sections))
        self.report.prefetch(i for i in wanted if i not in self._rows)
        if self._baseline is not None and "regressed" in sections:
            self._baseline.prefetch(i for i in self.sections["regressed"] if i not in self._befores)

    def shown(self, max_rows: int) -> dict[str, int]:
        """How many rows each section shows at `max_rows`."""
        return {name: min(max_rows, len(ids)) for name, ids in self.sections.items()}

    def __call__(
        self, max_rows: int, read: Callable[[str], object] | None = None
    ) -> dict[str, object]:
        """The template's context; `read(name)` is told when the template reads a section's
        rows (or how many it omits)."""
        return {
            **self._fixed,
            # Fresh lists each time: a template can never see what an earlier attempt did.
            "reasons": list(self._reasons),
            "warnings": list(self._warnings),
            "notes": list(self._notes),
            "tags": list(self._tags),
            **{
                name: Section(
                    ids[:max_rows],
                    len(ids),
                    self.row,
                    None if read is None else functools.partial(read, name),
                    before=self.before
                    if name == "regressed" and self._baseline is not None
                    else None,
                    calls=self.calls if name in ("regressed", "failed") else None,
                )
                for name, ids in self.sections.items()
            },
            **self._extra,
        }


def render(
    report: Report | SlimReport,
    gate: GateResult,
    *,
    baseline: Report | SlimReport | None = None,
    comment_id: str = "default",
    template: str = "comment.md.j2",
    user_template: Path | None = None,
    limit: int = COMMENT_LIMIT,
    measure: Callable[[str], int] = characters,
    extra_notes: list[str] | None = None,
    baseline_path: str | None = None,
    extra: dict[str, object] | None = None,
    unverified: bool = False,
    history: list[TrendPoint] | None = None,
) -> str:
    """Render within `limit` (as `measure` counts), listing fewer rows if needed.

    Rows are dropped whole: a table is never cut mid-row, whatever the characters cost.
    `history`: the baseline's earlier pass rates (oldest first), charted with this run's.
    `unverified`: the report is another run's claim (a fork's), never shown as a verdict.
    """
    name = user_template.name if user_template is not None else template
    tmpl = load_template(name, user_template)
    context = _Context(
        report,
        gate,
        baseline=baseline,
        comment_id=comment_id,
        extra_notes=extra_notes or [],
        baseline_path=baseline_path,
        extra=extra,
        unverified=unverified,
        history=history,
    )
    # Each attempt's text, with how many rows it showed of each section it read: an attempt
    # that would show as many of each of those renders the same text (nothing else in the
    # context depends on the number), so it is not rendered again.
    rendered: list[tuple[dict[str, int], str]] = []

    def attempt(max_rows: int) -> str:
        shown = context.shown(max_rows)
        for read, text in rendered:
            if all(shown[section] == count for section, count in read.items()):
                return text
        names: set[str] = set()
        try:
            text = redaction.scrub(tmpl.render(**context(max_rows, names.add)))
        except (jinja2.TemplateError, UnicodeDecodeError, OSError) as exc:  # an include's too
            raise InputError(f"{user_template or name}: the template failed ({exc})") from None
        rendered.append(({section: shown[section] for section in names}, text))
        return text

    most = max(len(context.report.items), 1)
    if sum(map(len, context.sections.values())) >= MANY_ROWS:
        # The sections the template lists rows of, from an attempt with none (one that fails
        # here is left to the attempts below, which say so if they fail too).
        with contextlib.suppress(InputError):
            attempt(0)
            context.make_rows(rendered[-1][0])
    body = attempt(most)
    if measure(body) <= limit:
        return body
    low, high = 0, most  # invariant: attempt(high) is too long
    best = attempt(0)
    if measure(best) > limit:
        unit = "bytes" if measure is utf8_bytes else "characters"
        raise InputError(f"the rendered {name} exceeds {limit} {unit} even with no rows")
    while high - low > 1:
        mid = (low + high) // 2
        text = attempt(mid)
        if measure(text) <= limit:
            low, best = mid, text
        else:
            high = mid
    return best


def render_comment(report: Report | SlimReport, gate: GateResult, **kwargs: Any) -> str:
    return render(report, gate, template="comment.md.j2", limit=COMMENT_LIMIT, **kwargs)


def render_summary(report: Report | SlimReport, gate: GateResult, **kwargs: Any) -> str:
    kwargs.pop("user_template", None)
    return render(
        report, gate, template="summary.md.j2", limit=SUMMARY_LIMIT, measure=utf8_bytes, **kwargs
    )
