"""The gate's power: how big a drop it catches 80 % of the time, before a run (from the
baseline's variability) and after (from the observed spread); and whether the floor is within
reach of n items at all.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import TYPE_CHECKING, NamedTuple

from pydantic import BaseModel

from golden_gate.core.item_model import (
    CONCENTRATED,
    SPREAD,
    ItemModel,
    detectable_drop,
    items_for_drop,
)
from golden_gate.core.report import Report
from golden_gate.core.sign_flip import min_discordant_for_significance
from golden_gate.core.slim import SlimReport
from golden_gate.core.stats import wilson_lower_bound
from golden_gate.core.tally import Tally, tally_of

if TYPE_CHECKING:
    from golden_gate.core.verdict import Comparison, GateSettings


TARGET_DROP = 0.05  # the drop the statement says how many items need


class Differences(NamedTuple):
    """What the power statement reads of a comparison's per-item differences."""

    mean_square: float  # mean of d², d = s_cand − s_base over the shared items
    design_effect: float = 1.0  # their clusters' (stats.design_effect)


class PowerNote(BaseModel):
    """What this gate could have caught: a drop in mean per-item score, with 80 % probability,
    from the power of the paired test the gate runs (stats.paired_power), for a drop spread over
    every item and one concentrated on a few (each figure is checked at its own drop)."""

    detectable_drop: float | None  # spread over every item
    detectable_concentrated: float | None = None
    items_for_drop: int | None  # a spread TARGET_DROP
    items_for_concentrated: int | None = None
    target_drop: float = TARGET_DROP
    power: float = 0.80
    runs: int = 1
    basis: str = ""  # the assumptions, in one line
    test_off: bool = False  # alpha 0: no drop is tested for

    def sentence(self, n: int) -> str:
        """What the gate could catch, in one short sentence (`detail` says on what basis).
        `n`: the items the statement is about (the shared ones when a baseline paired)."""
        if self.test_off:
            return "power: the paired test is off (alpha 0): no drop can fail this gate."
        return f"power: {self._caught(n)}; {self._needed(n)}."

    def detail(self) -> str:
        """The assumptions behind `sentence`, and which figure is which shape of drop."""
        if self.test_off:
            return ""
        shapes = []
        for name, drop, items in (
            ("spread over every item", self.detectable_drop, self.items_for_drop),
            (
                "on the most reliable items",
                self.detectable_concentrated,
                self.items_for_concentrated,
            ),
        ):
            caught = f"{points(d)} points" if (d := _usable(drop)) is not None else "no drop"
            needs = f"{items} items for {points(self.target_drop)}" if items else "no n suffices"
            shapes.append(f"{name}: {caught} ({needs})")
        return f"{self.basis}; {'; '.join(shapes)}"

    def _caught(self, n: int) -> str:
        runs = f" × {self.runs} runs" if self.runs > 1 else ""
        drops = [_usable(self.detectable_drop), _usable(self.detectable_concentrated)]
        known = sorted(d for d in drops if d is not None)
        if not known:
            return f"{n} items{runs} cannot reliably catch any drop"
        if len(known) < len(drops):
            return (
                f"{n} items{runs} catch a drop of {points(known[0])} points "
                f"{'spread over every item' if drops[0] is not None else 'concentrated'} "
                f"{self.power:.0%} of the time, no drop "
                f"{'concentrated' if drops[0] is not None else 'spread over every item'}"
            )
        shown = _span(points(known[0]), points(known[-1]))
        return f"{n} items{runs} catch a drop of {shown} points {self.power:.0%} of the time"

    def _needed(self, n: int) -> str:
        drop = points(self.target_drop)
        counts = [self.items_for_drop, self.items_for_concentrated]
        known = sorted(c for c in counts if c is not None)
        if not known:
            return f"no number of items catches a {drop}-point drop"
        if len(known) == len(counts) and known[-1] <= n:
            return f"a {drop}-point drop is within reach"
        if len(known) < len(counts):
            shape = "spread over every item" if counts[0] is not None else "concentrated"
            return f"catching a {drop}-point drop {shape} needs about {known[0]} items"
        return f"catching a {drop}-point drop needs about {_span(known[0], known[-1])} items"


def _span(low: object, high: object) -> str:
    """A range, low to high (callers sort), or one figure when both ends agree."""
    return f"{low}" if low == high else f"{low}–{high}"


def points(drop: float) -> str:
    """A drop in percentage points, rounded up: a detectable drop is never understated."""
    value = math.ceil(drop * 1000 - 1e-9) / 10
    return f"{value:g}"


def _usable(drop: float | None) -> float | None:
    return None if drop is None or drop >= 1 else drop


def power_note(
    tally: Tally,
    base_tally: Tally | None,
    differences: Differences | None,
    settings: GateSettings,
    comparison: Comparison | None = None,
) -> PowerNote:
    """How big a drop this gate catches 80 % of the time, for items like these.

    With a comparison, about the items it paired (clusters by their design effect). The items'
    pass rates: the baseline's mean; their within-item variability from repeated runs, else
    from how often one-run items changed outcome, else the most variable case."""
    paired = comparison is not None and comparison.shared > 0
    n = comparison.shared if paired and comparison is not None else tally.n
    runs = tally.typical_runs
    reference = base_tally if base_tally is not None and base_tally.n else tally
    base_runs = reference.typical_runs if base_tally is not None else runs
    mean = reference.score
    variances = (base_tally.variances if base_tally is not None else []) or tally.variances
    deff = 1.0
    if variances:
        within = sum(variances) / len(variances)
        source = f"a {mean:.1%} pass rate, within-item variance {within:.3f} from repeated runs"
    elif paired and differences is not None and comparison is not None:
        # One run a side: an unchanged system changes an item's outcome with chance
        # 2·E[p(1 − p)]; a real drop adds to it, which only makes the statement cautious. One
        # change more than seen: a few dozen items that happened not to change do not prove
        # every item steady.
        changed = (differences.mean_square * n + 1) / (n + 1)
        within = min(changed / 2, mean * (1 - mean))
        source = (
            f"a {mean:.1%} pass rate, within-item variance {max(within, 0):.3f} from the items "
            "that changed"
        )
    else:
        within = mean * (1 - mean)
        source = f"a {mean:.1%} pass rate, each as variable as the average (the cautious case)"
    if paired and differences is not None:
        deff = differences.design_effect
    units = comparison.independent_units if paired and comparison is not None else None
    model = ItemModel(mean=mean, within=within, base_runs=base_runs, runs=runs, design_effect=deff)
    return statement(model, n=n, settings=settings, units=units, source=source)


def statement(
    model: ItemModel,
    *,
    n: int,
    settings: GateSettings,
    source: str,
    units: int | None = None,
) -> PowerNote:
    """The one power statement behind `plan`, the comment and the summary: the drop the
    gate's paired test catches 80 % of the time at n items, and the items a 5-point drop
    needs, computed for the test itself under `model` (stats.paired_power).

    `units`: independent units (clusters count once); fewer than the test needs to reach
    alpha at all means no drop can be caught."""
    if not settings.paired_test_on:
        return PowerNote(detectable_drop=None, items_for_drop=None, runs=model.runs, test_off=True)
    # Rounded (the mean to half a point, the variance to 0.002, the design effect up to 0.05):
    # a statement costs dozens of power figures, and gates of alike items share one.
    model = ItemModel(
        mean=round(model.mean * 200) / 200,
        within=round(model.within * 500) / 500,
        base_runs=model.base_runs,
        runs=model.runs,
        design_effect=math.ceil(model.design_effect * 20 - 1e-9) / 20,
    )
    too_few = units is not None and units < min_discordant_for_significance(settings.alpha)
    figures: dict[float, tuple[float | None, int | None]] = {}
    for loss in (SPREAD, CONCENTRATED):
        shaped = dataclasses.replace(model, hit_loss=loss)
        detectable = None if too_few else _detectable(shaped, n, settings.alpha, settings.min_drop)
        needed = _needed(shaped, TARGET_DROP, settings.alpha, settings.min_drop)
        if needed is not None and detectable is not None and n > 0:
            # The two searches meet at 80 % ± the Monte-Carlo error: say one consistent thing.
            needed = min(needed, n) if detectable <= TARGET_DROP else max(needed, n + 1)
        figures[loss] = (detectable, needed)
    clusters = (
        f", clusters as n / {model.design_effect:.2f} items" if model.design_effect > 1 else ""
    )
    basis = f"the gate's own test, for independent items{clusters} at {source}"
    return PowerNote(
        detectable_drop=figures[SPREAD][0],
        detectable_concentrated=figures[CONCENTRATED][0],
        items_for_drop=figures[SPREAD][1],
        items_for_concentrated=figures[CONCENTRATED][1],
        runs=model.runs,
        basis=basis,
    )


@functools.lru_cache(maxsize=1024)
def _detectable(model: ItemModel, n: int, alpha: float, min_drop: float) -> float | None:
    return detectable_drop(model, n=n, alpha=alpha, min_drop=min_drop)


@functools.lru_cache(maxsize=1024)
def _needed(model: ItemModel, drop: float, alpha: float, min_drop: float) -> int | None:
    return items_for_drop(model, drop, alpha=alpha, min_drop=min_drop)


def planned_power(
    *, n: int, runs: int, baseline: Report | SlimReport | None, settings: GateSettings
) -> PowerNote:
    """Before anything runs: the power of n items × runs, for items like the baseline's."""
    tally = tally_of(baseline) if baseline is not None else None
    base_runs = tally.typical_runs if tally is not None and tally.n else runs
    if tally is not None and tally.variances:
        mean = tally.score
        within = sum(tally.variances) / len(tally.variances)
        source = (
            f"the baseline's {mean:.1%} pass rate and within-item variance {within:.3f} over "
            f"its {len(tally.variances)} items' runs"
        )
    elif tally is not None and tally.n:
        mean = tally.score
        within = mean * (1 - mean)
        source = (
            f"the baseline's {mean:.1%} pass rate, each as variable as the average (the "
            "cautious case: one run per item shows no more)"
        )
    else:
        mean, within, base_runs = 0.9, 0.9 * 0.1, runs
        source = "a 90% pass rate (no baseline), each as variable as the average"
    model = ItemModel(mean=mean, within=within, base_runs=base_runs, runs=runs)
    return statement(model, n=n, settings=settings, source=source)


def fewest_passes_for_floor(n: int, settings: GateSettings) -> int | None:
    """The fewest passing items (of n, one run each) whose lower bound clears the floor."""
    if not floor_reachable(n, settings):
        return None
    low, high = 0, n
    while low < high:
        mid = (low + high) // 2
        if wilson_lower_bound(mid, n, confidence=settings.confidence) >= settings.floor:
            high = mid
        else:
            low = mid + 1
    return low


def floor_reachable(n: int, settings: GateSettings) -> bool:
    """Whether n items could clear the floor at all (every one of them passing)."""
    return n > 0 and wilson_lower_bound(n, n, confidence=settings.confidence) >= settings.floor


def unreachable_floor_message(n: int, settings: GateSettings) -> str:
    best = wilson_lower_bound(n, n, confidence=settings.confidence) if n else 0.0
    return (
        f"the floor {settings.floor:.2f} is out of reach: even {n} of {n} items passing gives a "
        f"lower bound of {best:.3f}; use more items or a lower floor"
    )
