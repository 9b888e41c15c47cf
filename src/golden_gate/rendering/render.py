"""Render a gate result as the PR comment and the job summary (Jinja templates in `templates/`).

All text that comes from questions, answers, judge comments or ids is escaped here, before it
reaches a template, so a user's own template cannot forget to; every registered secret is
scrubbed from what is rendered (see redaction.py).

About 520 lines, one module: the comment and the summary share every row, table, chart and
escape, and a template sees one context built here.
"""

from __future__ import annotations

import contextlib
import functools
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from functools import cached_property
from itertools import chain, compress
from pathlib import Path

import jinja2
from pydantic import BaseModel

from golden_gate import redaction
from golden_gate.core import slim, trajectory
from golden_gate.core.cost import cost_terms, money, performance_line
from golden_gate.core.item_result import ItemResult
from golden_gate.core.report import Report, RuleChanges
from golden_gate.core.retrieval import RankChange, RetrievalGate, rank_text
from golden_gate.core.slices import SliceVerdict
from golden_gate.core.slim import SlimReport
from golden_gate.core.tally import Tally
from golden_gate.core.verdict import GateResult
from golden_gate.errors import InputError
from golden_gate.rendering import charts
from golden_gate.rendering.charts import TrendPoint
from golden_gate.rendering.escape import code_span, inline, legacy_marker_id, marker_id

MANY_ROWS = 500  # from this many rows, their records are read before the first render
UNTAGGED = ["(untagged)"]

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


def templates_dir() -> Path:
    """Templates ship inside the package when installed, beside `src/` in a checkout."""
    package = Path(__file__).resolve().parents[1]
    for candidate in (package / "templates", package.parents[1] / "templates"):
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
    # A sliced tag's (gate.slices): its floor, its bound and its verdict; empty otherwise.
    floor: str = ""
    bound: str = ""
    verdict: str = ""


class Section:
    """One table's rows, already escaped, and how many items it has in all.

    `rows` are escaped when a template first lists them: a section the template never shows
    (e.g. the failed items when there is a baseline) costs nothing however large it is.
    `read` is told when a template reads what depends on the number of rows shown.
    """

    def __init__(
        self,
        ids: list[str],
        total: int,
        row: Callable[[str], Row],
        read: Callable[[], object] | None = None,
        before: Callable[[str], str] | None = None,
        calls: Callable[[str], str] | None = None,
    ) -> None:
        self.total = total
        self._ids = ids
        self._row = row
        self._read = read
        self._before = before  # an item's answer in the baseline, escaped
        self._calls = calls  # an item's expected and actual tool calls as a row, escaped

    @cached_property
    def rows(self) -> list[Row]:
        if self._read is not None:
            self._read()
        return [self._row(i) for i in self._ids]

    @property
    def omitted(self) -> int:
        if self._read is not None:
            self._read()
        return self.total - len(self._ids)

    @cached_property
    def lines(self) -> str:
        """The rows as the built-in table lists them, a line each: joined here, as a loop in
        the template costs a large summary's many attempts a few µs a row and yield."""
        return "".join(
            f"| {r.id} | {r.question} | {r.answer} | {r.why} | {r.runs} |\n" for r in self.rows
        )

    @cached_property
    def tool_calls(self) -> str:
        """The rows' expected tool calls beside the actual ones, `| id | expected | actual |`
        a line, for items that have either; empty when none does."""
        if self._calls is None:
            return ""
        return "".join(self._calls(item_id) for item_id in self._ids)

    @cached_property
    def before_after(self) -> str:
        """With a baseline, the rows' answers as a second table's lines: `| id | the
        baseline's answer | this run's answer |`; empty without one."""
        if self._before is None:
            return ""
        return "".join(
            f"| {r.id} | {self._before(item_id)} | {r.answer} |\n"
            for item_id, r in zip(self._ids, self.rows, strict=True)
        )


DROPPED_WHY = "dropped: not evaluated as the base branch defines it, counted as failed"


def _row(item: ItemResult | None, item_id: str) -> Row:
    if item is None:
        return Row(id=code_span(item_id), question="", answer="", why="", runs="")
    return Row(
        id=code_span(item.id),
        question=inline(item.question, limit=160),
        answer=inline(item.answer, limit=240),
        why=inline(item.why, limit=200),
        runs=_runs_text(item),
    )


def _runs_text(item: ItemResult) -> str:
    """Passed of counted runs, then what did not count or could not be answered."""
    text = f"{item.passes}/{item.runs}"
    if item.unanswered:
        text += f" ({item.unanswered} unanswered)"
    if item.errors:
        text += f" ({item.errors} not judged)"
    return text


def _rule_parts(changes: RuleChanges | None, limit: int = 20) -> list[str]:
    """What a pull request changed in the gate's own rules, one escaped phrase a kind."""
    if changes is None:
        return []
    kinds = [
        ("items removed", changes.removed),
        ("untagged", changes.untagged),
        ("reworded", changes.reworded),
        ("added", changes.added),
        ("rule files changed", changes.files),
        ("dropped (counted as failed)", changes.dropped),
    ]
    parts = []
    for label, names in kinds:
        if names:
            shown = ", ".join(code_span(n, limit=80) for n in names[:limit])
            more = f" and {len(names) - limit} more" if len(names) > limit else ""
            parts.append(f"{label}: {shown}{more}")
    return parts


def _rule_files(changes: RuleChanges | None, kind: str) -> list[str]:
    """Rule files of one kind (`not_used`, `own_rule_files`), each its input and escaped path."""
    if changes is None:
        return []
    return [
        f"{inline(f.input, limit=40)} {code_span(f.path, limit=200)}"
        for f in getattr(changes, kind)
    ]


def _approvers(changes: RuleChanges | None) -> str | None:
    """Who must approve the rule change (CODEOWNERS at the base), one escaped sentence; None
    when no rule file changed. Owners are shown in code spans: named, not pinged."""
    if changes is None or not (changes.approvers or changes.unowned):
        return None
    where = code_span(changes.codeowners, limit=200) if changes.codeowners else None
    parts = []
    if changes.approvers:
        owners = ", ".join(code_span(o, limit=100) for o in changes.approvers[:20])
        more = f" and {len(changes.approvers) - 20} more" if len(changes.approvers) > 20 else ""
        said = "**Code owners who must approve this rule change**"
        parts.append(f"{said} ({where}): {owners}{more}.")
    if changes.unowned:
        paths = ", ".join(code_span(p, limit=200) for p in changes.unowned[:10])
        source = f"in {where}" if where else "(no CODEOWNERS at the base branch)"
        them = "it" if len(changes.unowned) == 1 else "them"
        parts.append(
            f"**No code owner covers** {paths} {source}: anyone with write access can approve "
            f"{them} (`golden-gate init --owners` writes a CODEOWNERS stanza for the gate's rules)."
        )
    return " ".join(parts)


def _settings_not_used(changes: RuleChanges | None) -> list[str]:
    return list(changes.settings_not_used) if changes is not None else []


def _tag_rows(items: Counter[str], passes: Counter[str], regressed: Counter[str]) -> list[TagRow]:
    return [
        TagRow(
            tag=code_span(tag, limit=60),
            passed=passes[tag],
            items=n,
            rate=f"{passes[tag] / n:.1%}",
            regressions=regressed[tag],
        )
        for tag, n in sorted(items.items())
    ]


_SLICE_MARKS = {"passed": "✅ passed", "failed": "❌ failed"}


def _with_slices(rows: list[TagRow], slices: Sequence[SliceVerdict]) -> list[TagRow]:
    """The tag table with each sliced tag's floor, bound and verdict (and a row for a sliced
    tag no item of this run carries: it says so, never nothing)."""
    if not slices:
        return rows
    shown = {code_span(s.tag, limit=60): s for s in slices}
    for row in rows:
        verdict = shown.pop(row.tag, None)
        if verdict is not None:
            row.floor, row.bound, row.verdict = _slice_cells(verdict)
    for tag, verdict in shown.items():
        floor, bound, said = _slice_cells(verdict)
        rows.append(TagRow(tag=tag, passed=0, items=0, rate="n/a", regressions=0,
                           floor=floor, bound=bound, verdict=said))  # fmt: skip
    return rows


def _slice_cells(verdict: SliceVerdict) -> tuple[str, str, str]:
    floor = f"{verdict.floor:.2f}" if verdict.floor is not None else ""
    if verdict.critical:
        floor = f"{floor} (critical)" if floor else "critical"
    bound = f"{verdict.lower_bound:.3f}" if verdict.lower_bound is not None else "—"
    said = _SLICE_MARKS.get(verdict.verdict, verdict.verdict)
    if verdict.p_holm is not None:
        said += f" (Holm p = {verdict.p_holm:.3f})"
    if verdict.why and verdict.verdict != "passed":
        said += f": {inline(verdict.why, limit=120)}"
    return floor, bound, said


def _tag_bars(
    tally: _TagTally,
    regressed: Counter[str],
    improved: Counter[str],
    base: _TagTally | None,
) -> list[charts.TagBar]:
    return [
        charts.TagBar(
            tag=tag,
            rate=tally.passes[tag] / n,
            base_rate=base.passes[tag] / base.tagged[tag] if base and base.tagged[tag] else None,
            regressed=regressed[tag],
            improved=improved[tag],
        )
        for tag, n in tally.tagged.items()
    ]


def _evaluators_text(report: SlimReport) -> str | None:
    """`correctness 12/14 (85.7%) · groundedness 10/14 (71.4%)`, escaped; None with one."""
    rates = report.evaluator_rates()
    if not rates:
        return None
    parts = [
        f"{code_span(r.evaluator, limit=60)} {r.passed}/{r.judged} "
        + (f"({r.passed / r.judged:.1%})" if r.judged else "(n/a)")
        for r in rates
    ]
    if len(rates) < 2:
        return " · ".join(parts)
    # The rule is the label's last "(…)", appended only when there are several evaluators.
    settings = report.header.run_settings
    rule = (settings.evaluators or "") if settings else ""
    how = rule.rpartition("(")[2].rstrip(")") if rule.endswith(")") else "all"
    how = how if how in ("all", "any", "majority") else "all"
    return " · ".join(parts) + f" (a run passes when {how} pass)"


def _agreement_text(report: SlimReport, limit: int = 20) -> str | None:
    """The panel's agreement line, escaped; None without a panel."""
    found = report.agreement()
    if found is None:
        return None
    kappa = "undefined" if found.kappa is None else f"{found.kappa:.2f}"
    names = " and ".join(code_span(j, limit=60) for j in found.judges)
    text = f"{found.method} = {kappa} between {names} over {found.verdicts} verdicts"
    ids = found.disagreements
    if ids:
        shown = ", ".join(code_span(i, limit=80) for i in ids[:limit])
        more = f" and {len(ids) - limit} more" if len(ids) > limit else ""
        text += f" · judges disagree on {len(ids)} item(s): {shown}{more}"
    else:
        text += " · no disagreement"
    return text


RETRIEVAL_ROWS = 30  # items whose hit@k changed, listed in the comment


def _retrieval(found: RetrievalGate | None) -> dict[str, object] | None:
    """The Retrieval section's context, every untrusted string escaped (ids, URLs, tags)."""
    if found is None:
        return None

    def pct(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.1%}"

    def num(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.3f}"

    def row(change: RankChange) -> dict[str, str]:
        expected = ", ".join(code_span(u, limit=120) for u in change.expected[:3])
        return {
            "id": code_span(change.id, limit=80),
            "expected": expected + (" …" if len(change.expected) > 3 else ""),
            "before": rank_text(change.before),
            "after": rank_text(change.after),
            "hit": f"{change.hit_before:.0%} → {change.hit_after:.0%}",
        }

    now, base, compared = found.overall, found.baseline, found.comparison
    return {
        "k": found.k,
        "measured": found.measured,
        "hit": pct(now.hit_rate if now else None),
        "mrr": num(now.mrr if now else None),
        "recall": pct(now.recall if now else None),
        "count": now.items if now else 0,
        "base_hit": pct(base.hit_rate if base else None),
        "base_mrr": num(base.mrr if base else None),
        "base_recall": pct(base.recall if base else None),
        "base_count": base.items if base else 0,
        "lower_bound": num(found.lower_bound),
        "floor": f"{found.floor:.2f}" if found.floor > 0 else None,
        "below_floor": found.below_floor,
        "comparison": compared,
        "p_value": num(compared.p_value) if compared else None,
        "fell": [row(c) for c in compared.fell[:RETRIEVAL_ROWS]] if compared else [],
        "fell_total": len(compared.fell) if compared else 0,
        "rose_total": len(compared.rose) if compared else 0,
        "notes": [inline(n, limit=400) for n in found.notes],
        "without_sources": [code_span(i, limit=80) for i in found.without_sources[:10]],
        "without_sources_total": len(found.without_sources),
        "tags": [
            {
                "tag": code_span(tag, limit=60),
                "count": f.items,
                "hit": pct(f.hit_rate),
                "mrr": num(f.mrr),
                "recall": pct(f.recall),
            }
            for tag, f in found.by_tag.items()
        ],
    }


def _environment(template_dir: Path, user_template: Path | None) -> jinja2.Environment:
    """The templates' environment; the built-in one is made (and its templates compiled)
    once a process, since the comment and the summary share it."""
    if user_template is None:
        return _builtin_environment(template_dir)
    return _new_environment(template_dir, user_template)


@functools.cache
def _builtin_environment(template_dir: Path) -> jinja2.Environment:
    return _new_environment(template_dir, None)


class _OwnDirectoryLoader(jinja2.FileSystemLoader):
    """A user's templates: each must resolve inside the user template's own directory, so a
    symlink (to /proc/self/environ, say) or an include cannot read anything else."""

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str, Callable[[], bool]]:
        source, filename, uptodate = super().get_source(environment, template)
        root = Path(self.searchpath[0]).resolve()
        resolved = Path(filename).resolve()
        if not resolved.is_relative_to(root):
            raise jinja2.TemplateError(
                f"'{template}' resolves to {resolved}, outside the template's directory {root}"
            )
        return source, filename, uptodate


def _new_environment(template_dir: Path, user_template: Path | None) -> jinja2.Environment:
    loaders: list[jinja2.BaseLoader] = [jinja2.FileSystemLoader(str(template_dir))]
    kind: type[jinja2.Environment] = jinja2.Environment
    if user_template is not None:
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        loaders.insert(0, _OwnDirectoryLoader(str(user_template.parent)))
        # A user's template is a pull request's to write: no attribute internals (no route to
        # os.system or os.environ), no unsafe callables, no changing the context's lists.
        kind = ImmutableSandboxedEnvironment
    env = kind(
        loader=jinja2.ChoiceLoader(loaders),
        autoescape=False,  # Markdown, not HTML: escaping is done on the data, see escape.py
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["pct"] = lambda v, d=1: "n/a" if v is None else f"{v * 100:.{d}f}%"
    env.filters["num"] = lambda v, d=3: "n/a" if v is None else f"{v:.{d}f}"
    env.filters["count"] = lambda v: f"{v:,}"
    return env


class _TagTally:
    """Each counted item's tags (core's Tally counts the items), counted once, again for a
    pass: by tag list (the columns' codes, slim.ItemColumns.tag_codes), then by tag."""

    def __init__(self, items: slim.ItemColumns) -> None:
        self.counts = Tally(items)
        lists, codes = items.tag_codes()
        self._lists = {code: tags or UNTAGGED for code, tags in lists.items()}
        self._codes = list(compress(codes, items.runs))
        self.tagged = self._by_tag(Counter(self._codes))
        self.passes = self._by_tag(Counter(compress(self._codes, self.counts.majority)))

    def _by_tag(self, lists: Counter[int]) -> Counter[str]:
        """Items a tag list, as items a tag; tags in the order they first appear among the
        items (each list's first item comes before any other item with its tags)."""
        counts: Counter[str] = Counter()
        for code, n in lists.items():
            for tag in self._lists[code]:
                counts[tag] += n
        return counts

    def tags_of(self, item_id: str) -> Sequence[str]:
        """A counted item's tags (`(untagged)` for none)."""
        return self._lists[self._codes[self.position[item_id]]]

    @cached_property
    def position(self) -> dict[str, int]:
        """Each counted item's place among the counted items (only the report's is asked)."""
        ids = self.counts.counted_ids
        return dict(zip(ids, range(len(ids)), strict=True))


def _tally(report: Report | SlimReport) -> _TagTally:
    view = slim.of(report)
    tally = view.memo.get("tags")
    if tally is None:
        tally = view.memo["tags"] = _TagTally(view.items)
    return tally


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
        tally = _tally(report)
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
        self._tags = _with_slices(_tag_rows(tally.tagged, tally.passes, regressed), gate.slices)
        complete = header.complete and not gate.inconclusive
        improved = Counter(
            chain.from_iterable(tally.tags_of(i) for i in improved_ids if i in tally.position)
        )
        bars = _tag_bars(tally, regressed, improved, _tally(baseline) if baseline else None)
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
            "rules": _rule_parts(header.rule_changes),
            "proposed": _rule_files(header.rule_changes, "not_used")
            + [inline(text, limit=300) for text in _settings_not_used(header.rule_changes)],
            "own_rule_files": _rule_files(header.rule_changes, "own_rule_files"),
            "approvers": _approvers(header.rule_changes),
            "evaluator_rates": _evaluators_text(view),
            "judge_agreement": _agreement_text(view),
            # a fork's report: its numbers are a claim, shown without the trusted check marks
            "unverified": unverified,
            "trend_chart": trend_chart,
            "tag_chart": tag_chart[0] if tag_chart else None,
            "tag_chart_left_out": tag_chart[1] if tag_chart else 0,
            "retrieval": _retrieval(gate.retrieval),
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
            row = _row(record, item_id)
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
    tmpl = _load(name, user_template)
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


def _load(name: str, user_template: Path | None) -> jinja2.Template:
    try:
        return _environment(templates_dir(), user_template).get_template(name)
    except (jinja2.TemplateError, UnicodeDecodeError, OSError) as exc:  # not UTF-8, unreadable
        raise InputError(f"{user_template or name}: cannot load the template ({exc})") from None


def check_template(user_template: Path) -> None:
    """Load (parse) a user's template as `render` will: an error is said before it is needed.
    What it includes, and what it does with the data, can only fail when it renders."""
    _load(user_template.name, user_template)


def render_comment(report: Report | SlimReport, gate: GateResult, **kwargs: object) -> str:
    return render(report, gate, template="comment.md.j2", limit=COMMENT_LIMIT, **kwargs)  # type: ignore[arg-type]


def render_summary(report: Report | SlimReport, gate: GateResult, **kwargs: object) -> str:
    kwargs.pop("user_template", None)
    return render(
        report, gate, template="summary.md.j2", limit=SUMMARY_LIMIT, measure=utf8_bytes, **kwargs
    )  # type: ignore[arg-type]
