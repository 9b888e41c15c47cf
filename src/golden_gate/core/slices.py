"""Per-slice floors: a tag's own floor, critical tags, and Holm across the slices tested.

One floor over every item lets a slice that matters (the refusals, billing) sink unseen
behind the rest. `floor-by-tag` gives a tag its own floor on the Wilson bound of its items;
a `critical` tag fails the gate on any one regressed item (no test: one is too many); each
sliced tag with a baseline also gets the paired regression test on its items, and with
several slices tested at once their p-values are Holm-adjusted (step-down, family-wise error
at alpha), so ten slices do not make ten chances of a false alarm. A slice with fewer than
`min-slice-items` counted items has no floor or test verdict ("not enough items", never
"passed"); a critical tag's regressed item still fails the gate there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, Field

from golden_gate.core.slim import ItemColumns
from golden_gate.core.tally import Tally

SliceState = Literal["passed", "failed", "not enough items", "not tested"]


class SliceVerdict(BaseModel):
    """One tag's slice: its items, its bound against its floor, its own paired test."""

    tag: str
    n: int  # items with a verdict
    k: int  # of them passing
    pass_rate: float | None = None
    lower_bound: float | None = None
    floor: float | None = None
    critical: bool = False
    shared: int | None = None  # items paired with the baseline
    p_value: float | None = None
    p_holm: float | None = None  # Holm-adjusted over the slices tested
    net_drop: float | None = None
    regressions: list[str] = Field(default_factory=list)
    verdict: SliceState
    why: str = ""


class SliceProblem(BaseModel):
    code: Literal["slice-below-floor", "slice-regression", "critical-regression"]
    message: str


# (candidate slice, baseline slice) -> (p-value, net drop, shared items, regressed ids)
Compare = Callable[[Tally, Tally], tuple[float, float, int, list[str]]]


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the given order: the i-th smallest p is
    multiplied by (m - i + 1), made monotone, capped at 1. Reject where adjusted < alpha."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [1.0] * m
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def with_tag(items: ItemColumns, tag: str) -> ItemColumns:
    """The items carrying `tag`, as columns of their own."""
    keep = [i for i, tags in enumerate(items.tags) if tag in tags]
    ids = [items.ids[i] for i in keep]
    chosen = set(ids)
    return ItemColumns(
        ids=ids,
        tags=[items.tags[i] for i in keep],
        passes=[items.passes[i] for i in keep],
        runs=[items.runs[i] for i in keep],
        errors=[items.errors[i] for i in keep],
        unanswered=[items.unanswered[i] for i in keep],
        hashes=[items.hashes[i] for i in keep],
        clusters={i: c for i, c in items.clusters.items() if i in chosen},
        own={i for i in items.own if i in chosen},
    )


def gate_slices(
    items: ItemColumns,
    base_items: ItemColumns | None,
    *,
    floor_by_tag: Mapping[str, float],
    critical_tags: Sequence[str],
    min_items: int,
    confidence: float,
    alpha: float,
    min_drop: float,
    compare: Compare,
    regressed: Sequence[str] = (),
) -> tuple[list[SliceVerdict], list[SliceProblem]]:
    """Each sliced tag's verdict (floors and critical tags, sorted by tag) and the problems
    that fail the gate. `regressed`: the whole comparison's regressed items (baseline pass,
    candidate fail), for the critical tags."""
    tags = sorted({*floor_by_tag, *critical_tags})
    if not tags:
        return [], []
    slices: list[SliceVerdict] = []
    problems: list[SliceProblem] = []
    tested: list[tuple[SliceVerdict, float]] = []
    regressed_set = set(regressed)
    for tag in tags:
        mine = with_tag(items, tag)
        theirs = with_tag(base_items, tag) if base_items is not None else None
        tally = Tally(mine)
        # A dropped item is only in the baseline's columns: the slice is both sides' items.
        members = {*mine.ids, *(theirs.ids if theirs is not None else ())}
        critical = tag in critical_tags
        verdict = SliceVerdict(
            tag=tag,
            n=tally.n,
            k=tally.k,
            pass_rate=tally.score if tally.n else None,
            floor=floor_by_tag.get(tag),
            critical=critical,
            regressions=sorted(members & regressed_set),
            verdict="not tested",
        )
        slices.append(verdict)
        if critical and verdict.regressions:
            count = len(verdict.regressions)
            shown = ", ".join(verdict.regressions[:5])
            shown += f" and {count - 5} more" if count > 5 else ""
            problems.append(
                SliceProblem(
                    code="critical-regression",
                    message=f"critical tag '{tag}': {count} item(s) regressed ({shown})",
                )
            )
            verdict.verdict = "failed"
            verdict.why = "a critical item regressed"
        if tally.n < min_items:
            if verdict.verdict != "failed":
                verdict.verdict = "not enough items"
                verdict.why = f"{tally.n} items, fewer than min-slice-items {min_items}"
            continue
        # The base branch's clusters rule, as in the whole gate.
        clusters = {**mine.clusters, **(theirs.clusters if theirs is not None else {})}
        verdict.lower_bound = tally.floor_bound(confidence, clusters).lower
        # The pull request's own items may only make a floor stricter, never carry it.
        base_lower = (
            tally.floor_bound(confidence, clusters, base_only=True).lower
            if tally.own and tally.base_n
            else verdict.lower_bound
        )
        if verdict.floor is not None and verdict.floor > 0:
            if min(verdict.lower_bound, base_lower) < verdict.floor:
                low, over = (
                    (verdict.lower_bound, f"{tally.k}/{tally.n} passed")
                    if verdict.lower_bound < verdict.floor
                    else (base_lower, f"on the base branch's {tally.base_n} items")
                )
                problems.append(
                    SliceProblem(
                        code="slice-below-floor",
                        message=f"tag '{tag}' below its floor: lower bound "
                        f"{low:.3f} < {verdict.floor:.2f} ({over})",
                    )
                )
                verdict.verdict = "failed"
                verdict.why = verdict.why or "below its floor"
            elif verdict.verdict != "failed":
                verdict.verdict = "passed"
        elif verdict.verdict != "failed" and not critical:
            verdict.verdict = "passed"
        if theirs is not None and alpha > 0:
            base = Tally(theirs)
            p_value, net_drop, shared, _ = compare(tally, base)
            if shared:
                verdict.shared, verdict.p_value, verdict.net_drop = shared, p_value, net_drop
                tested.append((verdict, p_value))
        if critical and verdict.verdict == "not tested" and theirs is not None:
            verdict.verdict = "passed"
    adjusted = holm([p for _, p in tested])
    for (verdict, _), p_holm in zip(tested, adjusted, strict=True):
        verdict.p_holm = p_holm
        if p_holm < alpha and (verdict.net_drop or 0.0) > min_drop:
            family = f", Holm over {len(tested)} slices" if len(tested) > 1 else ""
            problems.append(
                SliceProblem(
                    code="slice-regression",
                    message=f"significant regression in tag '{verdict.tag}': p = "
                    f"{verdict.p_value:.4f} (adjusted {p_holm:.4f}{family}) < {alpha:g}, "
                    f"net drop {verdict.net_drop:.1%}",
                )
            )
            verdict.verdict = "failed"
            verdict.why = verdict.why or "significant regression"
    return slices, problems
