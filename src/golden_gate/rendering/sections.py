"""What the comment's and the summary's tables show: the item rows, the tag rows with their
slices, the rule changes, the evaluators, the judges' agreement and the retrieval layer, each
escaped before it reaches a template (rendering/render.py builds the context from them)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from functools import cached_property
from itertools import compress

from pydantic import BaseModel

from golden_gate.core import slim
from golden_gate.core.item_result import ItemResult
from golden_gate.core.report import Report, RuleChanges
from golden_gate.core.retrieval import RankChange, RetrievalGate, rank_text
from golden_gate.core.slices import SliceVerdict
from golden_gate.core.slim import SlimReport
from golden_gate.core.tally import Tally
from golden_gate.rendering import charts
from golden_gate.rendering.escape import code_span, inline

UNTAGGED = ["(untagged)"]


class TagTally:
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


def tag_tally(report: Report | SlimReport) -> TagTally:
    view = slim.of(report)
    tally = view.memo.get("tags")
    if tally is None:
        tally = view.memo["tags"] = TagTally(view.items)
    return tally


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


def row(item: ItemResult | None, item_id: str) -> Row:
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
    checks = sum(
        r.error_side == "check" for r in item.run_results if r.status == "error" and not r.rerun
    )
    checks = min(checks, item.errors)  # a hand-written check that hung or crashed: no verdict
    if item.errors - checks:
        text += f" ({item.errors - checks} not judged)"
    if checks:
        text += f" ({checks} check error{'s' if checks > 1 else ''})"
    return text


def rule_parts(changes: RuleChanges | None, limit: int = 20) -> list[str]:
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


def rule_files(changes: RuleChanges | None, kind: str) -> list[str]:
    """Rule files of one kind (`not_used`, `own_rule_files`), each its input and escaped path."""
    if changes is None:
        return []
    return [
        f"{inline(f.input, limit=40)} {code_span(f.path, limit=200)}"
        for f in getattr(changes, kind)
    ]


def approvers(changes: RuleChanges | None) -> str | None:
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


def settings_not_used(changes: RuleChanges | None) -> list[str]:
    return list(changes.settings_not_used) if changes is not None else []


def tag_rows(items: Counter[str], passes: Counter[str], regressed: Counter[str]) -> list[TagRow]:
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


def with_slices(rows: list[TagRow], slices: Sequence[SliceVerdict]) -> list[TagRow]:
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


def tag_bars(
    tally: TagTally,
    regressed: Counter[str],
    improved: Counter[str],
    base: TagTally | None,
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


def evaluators_text(report: SlimReport) -> str | None:
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


def agreement_text(report: SlimReport, limit: int = 20) -> str | None:
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


def retrieval(found: RetrievalGate | None) -> dict[str, object] | None:
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
