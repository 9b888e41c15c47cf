"""The gate's power: how big a drop it catches 80 % of the time, before a run (from the
baseline's variability) and after (from the observed spread); and whether the floor is within
reach of n items at all.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from pydantic import BaseModel

from golden_gate.core.report import Report
from golden_gate.core.slim import SlimReport
from golden_gate.core.stats import min_discordant_for_significance, power_of, wilson_lower_bound
from golden_gate.core.tally import Tally, tally_of

if TYPE_CHECKING:
    from golden_gate.core.gate import Comparison, GateSettings


class PowerNote(BaseModel):
    """What this gate could have caught: a drop in mean per-item score, with 80 % probability."""

    detectable_drop: float | None
    items_for_drop: int | None
    target_drop: float = 0.05
    power: float = 0.80
    runs: int = 1
    basis: str = ""
    test_off: bool = False  # alpha 0: no drop is tested for

    def sentence(self, n: int) -> str:
        """`n`: the items the statement is about (the shared ones when a baseline paired)."""
        if self.test_off:
            return "power: the paired test is off (alpha 0): no drop can fail this gate."
        runs = f" × {self.runs} runs" if self.runs > 1 else ""
        if self.detectable_drop is None or self.detectable_drop >= 1:
            caught = f"{n} items{runs} cannot reliably catch any drop"
        else:
            caught = (
                f"{n} items{runs} catch a drop of {points(self.detectable_drop)} points "
                f"{self.power:.0%} of the time"
            )
        if self.items_for_drop is None:
            needed = f"no number of items catches a {points(self.target_drop)}-point drop"
        elif self.items_for_drop <= n:
            needed = f"a {points(self.target_drop)}-point drop is within reach"
        else:
            needed = (
                f"catching a {points(self.target_drop)}-point drop needs about "
                f"{self.items_for_drop} items"
            )
        return f"power: {caught}; {needed} ({self.basis})."


def points(drop: float) -> str:
    """A drop in percentage points, rounded up: a detectable drop is never understated."""
    value = math.ceil(drop * 1000 - 1e-9) / 10
    return f"{value:g}"


def power_note(
    tally: Tally,
    base_tally: Tally | None,
    spread: float | None,
    settings: GateSettings,
    comparison: Comparison | None = None,
) -> PowerNote:
    """How big a drop this gate catches 80 % of the time, from the observed spread.

    With a comparison, about the items it paired (each cluster one unit), not all items."""
    paired = comparison is not None and comparison.shared > 0
    n = comparison.shared if paired else tally.n
    units = comparison.independent_units if paired else None
    runs = tally.typical_runs
    base_runs = base_tally.typical_runs if base_tally is not None else runs
    if spread is not None:
        variance = spread
        basis = "from the spread of this run's differences with the baseline"
    elif tally.variances:
        # Within-item variability of this run, paired with a baseline of the same runs.
        mean_v = sum(tally.variances) / len(tally.variances)
        variance = mean_v * (1 / runs + 1 / base_runs)
        basis = "from this run's per-item variability"
    else:
        p = tally.score
        variance = p * (1 - p) * (1 / runs + 1 / base_runs)
        basis = "assuming every item is as variable as the average"
    note = plan_power(
        n=n, runs=min(runs, base_runs), variance=variance, settings=settings, units=units
    )
    return note.model_copy(update={"runs": runs, "basis": basis})


def plan_power(
    *, n: int, runs: int, variance: float, settings: GateSettings, units: int | None = None
) -> PowerNote:
    """The normal approximation, floored by the fewest changed items the test can act on.

    `units`: independent units (clusters count once); fewer than the test needs to reach
    alpha at all means no drop can be caught."""
    if not settings.paired_test_on:
        return PowerNote(detectable_drop=None, items_for_drop=None, runs=runs, test_off=True)
    fewest_units = min_discordant_for_significance(settings.alpha)
    power = power_of(n=n, variance=variance, alpha=settings.alpha, min_drop=settings.min_drop)
    detectable = power.detectable_drop
    smallest = fewest_units / (n * runs) if n else 1.0
    if detectable is not None:
        detectable = max(detectable, smallest)
    if units is not None and units < fewest_units:
        detectable = None
    needed = power.items_for_drop
    if needed is not None:
        fewest = math.ceil(min_discordant_for_significance(settings.alpha) / (0.05 * runs))
        needed = max(needed, fewest)
    return PowerNote(detectable_drop=detectable, items_for_drop=needed, runs=runs)


def planned_power(
    *, n: int, runs: int, baseline: Report | SlimReport | None, settings: GateSettings
) -> PowerNote:
    """Before anything runs: the power of n items × runs, from the baseline's variability."""
    tally = tally_of(baseline) if baseline is not None else None
    base_runs = tally.typical_runs if tally is not None and tally.n else runs
    if tally is not None and tally.variances:
        per_run = sum(tally.variances) / len(tally.variances)
        basis = f"from the baseline's per-item variability over {len(tally.variances)} items"
    elif tally is not None and tally.n:
        p = tally.score
        per_run = p * (1 - p)
        basis = (
            f"from the baseline's {p:.1%} pass rate, assuming every item is as variable as "
            "the average (one run per item shows no more)"
        )
    else:
        per_run = 0.9 * 0.1
        basis = "no baseline: assuming a 90% pass rate, every item as variable as the average"
    note = plan_power(
        n=n,
        runs=min(runs, base_runs),
        variance=per_run * (1 / runs + 1 / base_runs),
        settings=settings,
    )
    return note.model_copy(update={"runs": runs, "basis": basis})


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
