"""The gate: a floor on the Wilson lower bound and a paired sign-flip test against a baseline.

Per item, score = passed runs / counted runs. The floor is on the mean score; the regression
test is an exact paired sign-flip test on score differences (with one run per item, exactly the
sign test). Pure: takes reports, returns a GateResult; no I/O (DESIGN §4).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection
from fractions import Fraction
from functools import cached_property, reduce
from itertools import compress, repeat
from operator import add, and_, gt, lt, mul, ne, not_, or_, truediv
from typing import Literal

from pydantic import BaseModel, Field, field_validator

from golden_gate.core import slim
from golden_gate.core.report import Report
from golden_gate.core.slim import ItemColumns, SlimReport
from golden_gate.core.stats import (
    MONTE_CARLO_DRAWS,
    floor_percent,
    min_discordant_for_significance,
    paired_sign_flip_test,
    power_of,
    wilson_lower_bound,
)

ReasonCode = Literal["no-results", "below-floor", "significant-regression", "not-comparable"]


class GateSettings(BaseModel):
    floor: float = 0.80
    alpha: float = 0.05
    min_drop: float = 0.02
    confidence: float = 0.95
    require_comparable: bool = False

    @field_validator("confidence")
    @classmethod
    def _open_unit_interval(cls, value: float) -> float:
        if not 0 < value < 1:
            raise ValueError(f"confidence must be between 0 and 1 (exclusive), got {value}")
        return value

    # 0 switches one test off: floor 0 leaves only the paired test, alpha 0 only the floor.
    @field_validator("floor", "alpha")
    @classmethod
    def _test_level(cls, value: float, info: object) -> float:
        if not 0 <= value < 1:
            name = getattr(info, "field_name", "value")
            raise ValueError(f"{name} must be in [0, 1) (0 switches that test off), got {value}")
        return value

    @property
    def floor_on(self) -> bool:
        return self.floor > 0

    @property
    def paired_test_on(self) -> bool:
        return self.alpha > 0

    @field_validator("min_drop")
    @classmethod
    def _drop_in_range(cls, value: float) -> float:
        if not 0 <= value < 1:
            raise ValueError(f"min-drop must be in [0, 1), got {value}")
        return value


class Reason(BaseModel):
    code: ReasonCode
    message: str


class Comparison(BaseModel):
    """The paired comparison on items present (and counted) in both reports.

    Per item d = s_cand − s_base, s = passed runs / counted runs; regressions are items with
    d < 0, improvements d > 0 (with one run each: baseline pass and candidate fail, and the
    reverse). `net_drop` is the mean of −d over shared items.
    """

    shared: int
    regressions: list[str] = Field(default_factory=list)
    improvements: list[str] = Field(default_factory=list)
    p_value: float = 1.0
    p_value_error: float | None = None  # Monte-Carlo standard error, when p was estimated
    method: str = "sign test"
    units: int = 0  # non-zero differences the test used (clusters when clustered)
    independent_units: int = 0  # shared items, with each cluster counted once
    clusters: int | None = None  # clusters among the shared items, when any item has one
    net_drop: float = 0.0
    significant: bool = False
    underpowered: bool = False
    only_in_candidate: list[str] = Field(default_factory=list)
    only_in_baseline: list[str] = Field(default_factory=list)

    @property
    def b(self) -> int:
        return len(self.regressions)

    @property
    def c(self) -> int:
        return len(self.improvements)


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
                f"{n} items{runs} catch a drop of {_points(self.detectable_drop)} points "
                f"{self.power:.0%} of the time"
            )
        if self.items_for_drop is None:
            needed = f"no number of items catches a {_points(self.target_drop)}-point drop"
        elif self.items_for_drop <= n:
            needed = f"a {_points(self.target_drop)}-point drop is within reach"
        else:
            needed = (
                f"catching a {_points(self.target_drop)}-point drop needs about "
                f"{self.items_for_drop} items"
            )
        return f"power: {caught}; {needed} ({self.basis})."


def _points(drop: float) -> str:
    """A drop in percentage points, rounded up: a detectable drop is never understated."""
    value = math.ceil(drop * 1000 - 1e-9) / 10
    return f"{value:g}"


class GateResult(BaseModel):
    verdict: Literal["passed", "failed"]
    reasons: list[Reason] = Field(default_factory=list)
    settings: GateSettings
    n: int
    k: int  # items passing a strict majority of their counted runs
    score_sum: float | None = None  # sum of per-item pass fractions (= k with one run each)
    pass_rate: float | None = None  # mean per-item pass fraction: what the floor is about
    lower_bound: float | None = None
    comparison: Comparison | None = None
    power: PowerNote | None = None
    warnings: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    errored: list[str] = Field(default_factory=list)  # items with an error run, either side
    unanswered: int = 0  # runs the assistant could not answer: counted as failures
    # Runs without a verdict could flip a pass: then the result is no result (exit 3).
    inconclusive: str | None = None
    unstable: list[str] = Field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.verdict == "passed"

    @property
    def pass_rate_text(self) -> str:
        if self.pass_rate is None:
            return "n/a"
        if self.score_sum is not None and abs(self.score_sum - self.k) > 1e-9:
            return f"{self.pass_rate:.1%} of runs over {self.n} items"
        return f"{self.k}/{self.n}"

    @property
    def headline(self) -> str:
        """The verdict and why, in one line."""
        if self.passed:
            if self.comparison is None:
                tested = ""
            elif self.comparison.shared == 0:
                tested = ", no items shared with the baseline (no regression test)"
            else:
                tested = ", no significant regression"
            floor = (
                f"≥ floor {self.settings.floor:.2f}" if self.settings.floor_on else "(floor off)"
            )
            if self.comparison is not None and not self.settings.paired_test_on:
                tested = ", paired test off (alpha 0)"
            return "passed: " + (
                f"pass rate {self.pass_rate_text}, lower bound {self.lower_bound:.3f} "
                + floor
                + tested
            )
        return "failed: " + "; ".join(r.message for r in self.reasons)


class _Tally:
    """What the gate needs of a report's items, from its columns (slim.py).

    A 100,000-item report is too large for a loop of Python statements an item: each count is
    a builtin over a column (`map`, `compress`, `zip`), and the float sums keep the order of a
    plain loop, so every figure is the one an item-by-item loop gives.
    """

    def __init__(self, items: ItemColumns) -> None:
        runs = items.runs
        self.items = items
        self.clusters = items.clusters
        self.counted_ids = list(compress(items.ids, runs))
        self.counted_passes = list(compress(items.passes, runs))
        self.counted_runs = list(compress(runs, runs))
        self.n = len(self.counted_runs)
        # What follows is computed when asked: a baseline needs little of it.

    @cached_property
    def errored(self) -> list[str]:
        """Items with an error run on either side: no counted run, or errors, or unanswered."""
        items = self.items
        erred = map(any, zip(map(not_, items.runs), items.errors, items.unanswered, strict=True))
        return list(compress(items.ids, erred))

    @cached_property
    def unanswered(self) -> int:
        return sum(self.items.unanswered)

    @cached_property
    def k(self) -> int:
        """Items whose counted runs passed by a strict majority (passes * 2 > runs)."""
        return sum(map(lt, self.counted_runs, map(mul, self.counted_passes, repeat(2))))

    @cached_property
    def _fractions(self) -> list[float]:
        return list(map(truediv, self.counted_passes, self.counted_runs))

    @cached_property
    def score_sum(self) -> float:
        return reduce(add, self._fractions, 0.0)

    @cached_property
    def runs(self) -> Counter[int]:
        return Counter(self.counted_runs)

    @cached_property
    def own(self) -> set[str]:
        """Items the pull request defined (rules.py): they count toward the floor only."""
        own = self.items.own
        return own.intersection(self.counted_ids) if own else set()

    @cached_property
    def _base(self) -> tuple[int, float]:
        """Items and score sum without the pull request's own items."""
        if not self.own:
            return self.n, self.score_sum
        base = [i not in self.own for i in self.counted_ids]
        return sum(base), reduce(add, compress(self._fractions, base), 0.0)

    @property
    def base_n(self) -> int:
        return self._base[0]

    @property
    def base_score_sum(self) -> float:
        return self._base[1]

    @cached_property
    def unstable(self) -> list[str]:
        """0 < passes < runs (passes never exceed runs): the counted runs disagree."""
        passes, runs = self.counted_passes, self.counted_runs
        return list(compress(self.counted_ids, map(mul, passes, map(ne, passes, runs))))

    @cached_property
    def variances(self) -> list[float]:
        """The unbiased per-run variance of each item with two or more runs."""
        pairs = zip(self.counted_passes, self.counted_runs, strict=True)
        return [p * (r - p) / (r * (r - 1)) for p, r in pairs if r > 1]

    @cached_property
    def counted(self) -> dict[str, tuple[int, int]]:
        """id -> (passes, runs) of the counted items."""
        pairs = zip(self.counted_passes, self.counted_runs, strict=True)
        return dict(zip(self.counted_ids, pairs, strict=True))

    @property
    def typical_runs(self) -> int:
        return self.runs.most_common(1)[0][0] if self.runs else 1

    @property
    def score(self) -> float:
        return self.score_sum / self.n if self.n else 0.0


def _changed_items(candidate: ItemColumns, baseline: ItemColumns) -> int:
    """Shared items whose question or reference changed (both record a differing hash)."""
    ours, theirs = candidate.hashes, baseline.hashes
    if candidate.ids != baseline.ids:
        by_id = dict(zip(baseline.ids, theirs, strict=True))
        theirs = list(map(by_id.get, candidate.ids))
    if ours == theirs:
        return 0
    return sum(1 for a, b in zip(ours, theirs, strict=True) if a and b and a != b)


def _comparability_warnings(
    candidate: Report | SlimReport,
    baseline: Report | SlimReport,
    tallies: tuple[_Tally, _Tally] | None = None,
    changed: int | None = None,
) -> list[str]:
    cand_view, base_view = slim.of(candidate), slim.of(baseline)
    candidate, baseline = cand_view.header, base_view.header
    warnings = []
    if candidate.judge != baseline.judge:
        warnings.append(
            f"the yardstick moved: the baseline was judged by '{baseline.judge}', "
            f"this run by '{candidate.judge}'"
        )
    if (
        candidate.judge_prompt_hash
        and baseline.judge_prompt_hash
        and candidate.judge_prompt_hash != baseline.judge_prompt_hash
    ):
        warnings.append("the yardstick moved: the judge prompt differs from the baseline's")
    cand, base = candidate.dataset, baseline.dataset
    if (
        cand is not None
        and base is not None
        and cand.fingerprint
        and base.fingerprint
        and sorted(cand.tags) == sorted(base.tags)
        and cand.shard == base.shard
        and cand.fingerprint != base.fingerprint
    ):
        warnings.append("the yardstick moved: the golden set differs from the baseline's")
    cand_tally, base_tally = tallies or (_Tally(cand_view.items), _Tally(base_view.items))
    if changed is None:
        changed = _changed_items(cand_view.items, base_view.items)
    if changed:
        warnings.append(
            f"the yardstick moved: {changed} shared item(s) changed question or reference "
            "since the baseline"
        )
    if candidate.tier != baseline.tier:
        warnings.append(
            f"the yardstick moved: this run used the {candidate.tier} tier, "
            f"the baseline the {baseline.tier} tier"
        )
    warnings.extend(_run_settings_warnings(candidate, baseline, cand_tally, base_tally))
    return warnings


_SETTING_NAMES = {
    "runs": "runs per item",
    "reruns_counted": "counting re-runs of failures",
    "unanswered_counts_as_failure": "counting unanswered runs as failures",
    "judge_temperature": "judge temperature",
    "checks_hash": "deterministic checks (refusal phrases, forbidden patterns)",
    "evaluators": "evaluators",
    "judge_panel": "judge panel rules",
}


def _run_settings_warnings(
    candidate: Report, baseline: Report, cand_tally: _Tally, base_tally: _Tally
) -> list[str]:
    """Settings that change what a pass means, recorded by both or inferred from the results."""
    cand, base = candidate.run_settings, baseline.run_settings
    if cand is not None and base is not None:
        return [
            f"the yardstick moved: {label} differ (baseline {getattr(base, name)}, "
            f"this run {getattr(cand, name)})"
            for name, label in _SETTING_NAMES.items()
            if getattr(base, name) is not None
            and getattr(cand, name) is not None
            and getattr(base, name) != getattr(cand, name)
        ]
    warnings = []
    if base is None and baseline.format is not None and baseline.tool_version is not None:
        warnings.append(
            f"the yardstick moved: the baseline was made by golden-gate {baseline.tool_version}, "
            "which counted re-runs of failures and left unanswered runs out; make it again"
        )
    if cand_tally.runs and base_tally.runs and cand_tally.typical_runs != base_tally.typical_runs:
        warnings.append(
            f"the yardstick moved: the baseline has {base_tally.typical_runs} run(s) per item, "
            f"this run {cand_tally.typical_runs}"
        )
    return warnings


def compare(
    candidate: Report | SlimReport, baseline: Report | SlimReport, settings: GateSettings
) -> Comparison:
    """Pair items counted in both reports: the paired sign-flip test on per-item scores."""
    return _compare(_tally(candidate), _tally(baseline), settings)[0]


def _tally(report: Report | SlimReport) -> _Tally:
    return _Tally(slim.of(report).items)


def _compare(
    cand_tally: _Tally, base_tally: _Tally, settings: GateSettings
) -> tuple[Comparison, float]:
    """The comparison, and the variance of the differences (per item, clusters summed)."""
    cand_items, base_items = cand_tally.items, base_tally.items
    shared: Collection[str]
    if not cand_tally.own and cand_items.ids == base_items.ids:
        # The same items in the same order (one golden set, run twice): paired by position,
        # in C, with no lookup an item. Shared: counted on both sides.
        ids = cand_items.ids
        cand_counted = list(map(bool, cand_items.runs))
        base_counted = list(map(bool, base_items.runs))
        both = list(map(and_, cand_counted, base_counted))
        shared = list(compress(ids, both))
        differ = map(
            or_,
            map(ne, cand_items.passes, base_items.passes),
            map(ne, cand_items.runs, base_items.runs),
        )
        cp, cr, bp, br = cand_items.passes, cand_items.runs, base_items.passes, base_items.runs
        changed = sorted(
            (ids[i], (cp[i], cr[i], bp[i], br[i]))
            for i in compress(range(len(ids)), map(and_, both, differ))
        )
        only_in_candidate = sorted(compress(ids, map(gt, cand_counted, base_counted)))
        only_in_baseline = sorted(compress(ids, map(lt, cand_counted, base_counted)))
    else:
        cand, base = cand_tally.counted, base_tally.counted
        # The pull request's own items (new, or reworded copies) are never paired: a re-added
        # id could otherwise offset a real regression with an easy question.
        shared = (cand.keys() - cand_tally.own) & base.keys()
        changed = sorted((i, (*cand[i], *base[i])) for i in shared if cand[i] != base[i])
        only_in_candidate = sorted(cand.keys() - base.keys())
        only_in_baseline = sorted(base.keys() - cand.keys())
    shared_count = len(shared)
    fractions: dict[tuple[int, int, int, int], Fraction] = {}  # few distinct (pc, rc, pb, rb)
    totals: dict[str, Fraction] = {}
    regressions: list[str] = []
    improvements: list[str] = []
    # The base branch's clusters rule (a pull request could split a cluster to look stronger).
    clusters = {**cand_tally.clusters, **base_tally.clusters}
    # Only items whose (passes, runs) differ can differ in score, taken in the order of ids.
    for item_id, key in changed:  # key: passes and runs, the candidate's then the baseline's
        d = fractions.get(key)
        if d is None:
            d = fractions[key] = Fraction(key[0], key[1]) - Fraction(key[2], key[3])
        if d == 0:
            continue
        (regressions if d < 0 else improvements).append(item_id)
        unit = clusters.get(item_id)
        unit = item_id if unit is None else "\0cluster:" + unit
        before = totals.get(unit)
        totals[unit] = d if before is None else before + d
    test = paired_sign_flip_test(list(totals.values()))
    # Exact sums, over the few distinct differences rather than every unit.
    distinct = Counter(totals.values())
    total = sum((d * n for d, n in distinct.items()), Fraction(0))
    net_drop = float(-total / shared_count) if shared_count else 0.0
    # The noise the test works against: the spread of the differences around their mean, so a
    # real drop does not count as noise in the power statement.
    squares = sum((d * d * n for d, n in distinct.items()), Fraction(0))
    spread = max(0.0, float(squares / shared_count) - net_drop**2) if shared_count else 0.0
    shared_clusters = {clusters[i] for i in shared if i in clusters} if clusters else set()
    units = len(shared_clusters) + (
        sum(1 for i in shared if i not in clusters) if clusters else shared_count
    )
    comparison = Comparison(
        shared=shared_count,
        regressions=regressions,
        improvements=improvements,
        p_value=test.p_value,
        p_value_error=test.error,
        method=test.method,
        units=test.units,
        clusters=len(shared_clusters) if shared_clusters else None,
        independent_units=units,
        net_drop=net_drop,
        significant=test.p_value < settings.alpha and net_drop > settings.min_drop,
        underpowered=settings.paired_test_on and test.min_possible_p >= settings.alpha,
        only_in_candidate=only_in_candidate,
        only_in_baseline=only_in_baseline,
    )
    return comparison, spread


def _power(
    tally: _Tally,
    base_tally: _Tally | None,
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
    tally = _tally(baseline) if baseline is not None else None
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


def evaluate_gate(
    candidate: Report | SlimReport,
    baseline: Report | SlimReport | None,
    settings: GateSettings | None = None,
) -> GateResult:
    """Apply the floor and, with a baseline, the paired regression test.

    Runs the judge could not judge are not verdicts; but if counting them as failures would
    fail a gate that passes, the pass rests on what was not seen: `inconclusive` says so.
    """
    settings = settings or GateSettings()
    cand = slim.of(candidate)
    base = slim.of(baseline) if baseline is not None else None
    base_tally = _Tally(base.items) if base is not None else None
    # Questions changed since the baseline: the same count for the pessimistic pass below.
    changed = _changed_items(cand.items, base.items) if base is not None else None
    result = _evaluate_gate(cand, cand.items, base, base_tally, changed, settings)
    result.warnings.extend(cand.header.warnings or [])  # what the evaluation itself saw
    if result.passed and any(cand.items.errors):
        worst = cand.items.with_errors_counted()
        pessimistic = _evaluate_gate(cand, worst, base, base_tally, changed, settings)
        if not pessimistic.passed:
            not_judged = sum(cand.items.errors)
            result.inconclusive = (
                f"{not_judged} run(s) got no verdict (the judge failed on them), and counted as "
                f"failures they would fail the gate ({pessimistic.reasons[0].message}): "
                "judge them again"
            )
    return result


def _evaluate_gate(
    candidate: SlimReport,
    items: ItemColumns,
    baseline: SlimReport | None,
    base_tally: _Tally | None,
    changed: int | None,
    settings: GateSettings,
) -> GateResult:
    """The gate on `items` (the candidate's, or them with unjudged runs counted as failures)."""
    tally = _Tally(items)
    n, k = tally.n, tally.k
    errored = sorted(tally.errored)
    unstable = sorted(tally.unstable)
    if n == 0:
        message = (
            "no results: the report has no items"
            if not len(items)
            else f"no results: none of the {len(items)} items got a verdict"
        )
        return GateResult(
            verdict="failed",
            reasons=[Reason(code="no-results", message=message)],
            settings=settings,
            n=0,
            k=0,
            errored=errored,
        )

    reasons: list[Reason] = []
    warnings: list[str] = []
    notes: list[str] = []
    pass_rate = tally.score
    lower = wilson_lower_bound(tally.score_sum, n, confidence=settings.confidence)
    if lower < settings.floor:
        reasons.append(
            Reason(
                code="below-floor",
                message=f"below the floor: lower bound {lower:.3f} < {settings.floor:.2f} "
                f"({_rate_text(tally)} passed)",
            )
        )
    if tally.own and tally.base_n:
        # The pull request's own items may only make the floor stricter, never carry it.
        base_lower = wilson_lower_bound(
            tally.base_score_sum, tally.base_n, confidence=settings.confidence
        )
        if base_lower < settings.floor <= lower:
            reasons.append(
                Reason(
                    code="below-floor",
                    message=f"below the floor on the base branch's items: lower bound "
                    f"{base_lower:.3f} < {settings.floor:.2f} over {tally.base_n} items (the "
                    f"pull request's {len(tally.own)} own items are not counted for this)",
                )
            )
    if not settings.floor_on:
        only = "only the paired test can fail it" if baseline is not None else "nothing can fail it"
        notes.append(f"floor 0: the floor is off for this gate; {only}.")
    if not settings.paired_test_on and baseline is not None:
        notes.append("alpha 0: the paired test is off for this gate; only the floor can fail it.")
    if not floor_reachable(n, settings):
        notes.append(unreachable_floor_message(n, settings) + ".")
    notes.append(
        f"{n} items can only show the assistant is unlikely to pass fewer than "
        f"{floor_percent(lower)} of such questions ({settings.confidence:.0%} confidence); "
        "a green check is not proof of quality."
    )
    if tally.unanswered:
        notes.append(
            f"{tally.unanswered} run(s) the assistant could not answer count as failed runs."
        )

    comparison = None
    spread = None
    if baseline is None or base_tally is None:
        notes.append("no baseline: only the floor applies.")
    else:
        tallies = (tally, base_tally)
        warnings.extend(_comparability_warnings(candidate, baseline, tallies, changed))
        if warnings and settings.require_comparable:
            reasons.append(
                Reason(code="not-comparable", message="not comparable with the baseline")
            )
        comparison, spread = _compare(*tallies, settings)
        if comparison.significant:
            reasons.append(
                Reason(
                    code="significant-regression",
                    message=f"significant regression: {comparison.b} regressed vs "
                    f"{comparison.c} improved, p = {comparison.p_value:.4f} < "
                    f"{settings.alpha:g}, net drop {comparison.net_drop:.1%}",
                )
            )
        elif comparison.p_value < settings.alpha:
            notes.append(
                f"the drop is real (p = {comparison.p_value:.4f} < {settings.alpha:g}) but small: "
                f"net drop {comparison.net_drop:.1%} is not above min-drop "
                f"{settings.min_drop:.1%}, so the gate passes."
            )
        if comparison.shared == 0:
            spread = None
            notes.append("no items are shared with the baseline: the regression test did not run.")
        elif comparison.underpowered:
            notes.append(
                f"only {comparison.units} item(s) or cluster(s) changed outcome; with so few the "
                f"test can never reach significance at alpha {settings.alpha:g}, so 'no "
                "regression' is not evidence of none."
            )
        if comparison.method == "Monte-Carlo sign-flip" and comparison.p_value_error:
            notes.append(
                f"p was estimated by {MONTE_CARLO_DRAWS:,} seeded random sign flips "
                f"(standard error {comparison.p_value_error:.4f})."
            )
    power = _power(tally, base_tally, spread, settings, comparison)
    paired = comparison is not None and comparison.shared > 0
    notes.append(power.sentence(comparison.shared if paired else n))
    return GateResult(
        verdict="failed" if reasons else "passed",
        reasons=reasons,
        settings=settings,
        n=n,
        k=k,
        score_sum=tally.score_sum,
        pass_rate=pass_rate,
        lower_bound=lower,
        comparison=comparison,
        power=power,
        warnings=warnings,
        notes=notes,
        errored=errored,
        unanswered=tally.unanswered,
        unstable=unstable,
    )


def _rate_text(tally: _Tally) -> str:
    if abs(tally.score_sum - tally.k) > 1e-9:
        return f"{tally.score:.1%} of runs"
    return f"{tally.k}/{tally.n}"
