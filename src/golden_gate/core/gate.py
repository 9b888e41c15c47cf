"""The gate: a floor on the Wilson lower bound and a paired sign-flip test against a baseline.

Per item, score = passed runs / counted runs. The floor is on the mean score; the regression
test is an exact paired sign-flip test on score differences (with one run per item, exactly the
sign test). Pure: takes reports, returns a GateResult; no I/O
(docs/architecture.md#the-gate-exactly).

About 500 lines: the gate's records (settings, comparison, result) and its one decision; the
tally of a report's items (tally.py) and the power (power.py) are modules of their own.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Sequence
from fractions import Fraction
from itertools import compress
from operator import and_, gt, lt, ne, or_
from typing import Any, Literal

from pydantic import (
    BaseModel,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
)

from golden_gate import __version__
from golden_gate.core import judges, retrieval, slim
from golden_gate.core.power import (
    Differences,
    PowerNote,
    floor_reachable,
    power_note,
    unreachable_floor_message,
)
from golden_gate.core.report import Report, selection_digest
from golden_gate.core.retrieval import RetrievalGate
from golden_gate.core.rules import PR_SUFFIX
from golden_gate.core.slices import SliceProblem, SliceVerdict, gate_slices
from golden_gate.core.slim import ItemColumns, SlimReport
from golden_gate.core.stats import (
    MONTE_CARLO_DRAWS,
    design_effect,
    floor_bound,
    floor_percent,
    paired_sign_flip_test,
    wilson_lower_bound,
)
from golden_gate.core.tally import Tally, changed_items, tally_of

ReasonCode = Literal[
    "no-results",
    "below-floor",
    "significant-regression",
    "not-comparable",
    "slice-below-floor",
    "slice-regression",
    "critical-regression",
    "retrieval-below-floor",
    "retrieval-regression",
]
# The per-slice settings, left out of the gate's JSON at their defaults (it stays what it was).
_SLICE_DEFAULTS = {"floor_by_tag": {}, "critical_tags": [], "min_slice_items": 10}


class GateSettings(BaseModel):
    floor: float = 0.80
    alpha: float = 0.05
    min_drop: float = 0.02
    confidence: float = 0.95
    require_comparable: bool = False
    # judge: the floor is on the judge's pass rate; human: on what people would say, by
    # prediction-powered inference from the calibration's labels (core/human_basis.py).
    floor_basis: Literal["judge", "human"] = "judge"
    # Per-slice floors (core/slices.py): a tag's own floor, tags where one regressed item
    # fails the gate, and the fewest items a slice needs for a verdict of its own.
    floor_by_tag: dict[str, float] = Field(default_factory=dict)
    critical_tags: list[str] = Field(default_factory=list)
    min_slice_items: int = Field(default=10, ge=1)
    # The retrieval layer (core/retrieval.py): hit@k's k, and a floor on hit@k (0: off).
    retrieval_k: int = Field(default=retrieval.DEFAULT_K, ge=1, le=1000)
    retrieval_floor: float = Field(default=0.0, ge=0, lt=1)

    @model_serializer(mode="wrap")
    def _default_basis_unsaid(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # The gate's JSON stays what it was for every gate on the judge's verdicts.
        data = handler(self)
        if self.floor_basis == "judge":
            data.pop("floor_basis", None)
        for name, default in _SLICE_DEFAULTS.items():
            if data.get(name) == default:
                data.pop(name, None)
        if self.retrieval_k == retrieval.DEFAULT_K and not self.retrieval_floor:
            data.pop("retrieval_k", None)
            data.pop("retrieval_floor", None)
        return data

    @field_validator("floor_by_tag")
    @classmethod
    def _slice_floors(cls, floors: dict[str, float]) -> dict[str, float]:
        for tag, floor in floors.items():
            if not 0 <= floor < 1:
                raise ValueError(f"the floor of tag '{tag}' must be in [0, 1), got {floor}")
        return floors

    @property
    def sliced(self) -> bool:
        return bool(self.floor_by_tag or self.critical_tags)

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


def fewest_items_for_floor(settings: GateSettings) -> int:
    """The fewest independent items whose bound, every one passing, clears the floor."""
    n = 1
    while wilson_lower_bound(n, n, confidence=settings.confidence) < settings.floor:
        n += 1  # the floor is below 1, so this ends (16 for 0.80 at 95 %)
    return n


def floor_out_of_reach(clusters: Sequence[str | None], settings: GateSettings) -> str | None:
    """The sentence when these items (one cluster label each, None for none) cannot clear the
    floor even with every one passing, by the bound the gate uses (clusters widen it); None
    when they can. A configuration error, said before anything is asked or paid."""
    n = len(clusters)
    if not settings.floor_on or n == 0:
        return None
    best = floor_bound([1.0] * n, list(clusters), confidence=settings.confidence).lower
    if best >= settings.floor:
        return None
    need = fewest_items_for_floor(settings)
    shared = Counter(c for c in clusters if c is not None)
    grouped = sum(1 for size in shared.values() if size > 1)
    where, more = "", ""
    if grouped:
        where = f" ({grouped} clusters of related items among them)"
        more = " (more when items share a cluster: a cluster counts as less than its items)"
    return (
        f"with {n} items{where} even {n}/{n} passing gives a lower bound of {best:.3f} < floor "
        f"{settings.floor:.2f}: select at least {need} items{more} or lower the floor"
    )


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
    # Baseline items the run did not evaluate as the base defines them (core/rules.py): paired
    # as failed items, so dropping an item can never hide its regression. Written only when
    # there are some (an ordinary verdict's JSON is as it was).
    dropped: list[str] = Field(default_factory=list, exclude_if=lambda v: not v)

    @property
    def b(self) -> int:
        return len(self.regressions)

    @property
    def net_text(self) -> str:
        """The net change in words: a negative drop is a gain, never "net drop -25.0%"."""
        if self.net_drop > 0:
            return f"net drop {self.net_drop:.1%}"
        if self.net_drop < 0:
            return f"net gain {-self.net_drop:.1%}"
        return "no net change"

    @property
    def c(self) -> int:
        return len(self.improvements)


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
    # Each sliced tag's verdict (floor-by-tag, critical-tags); none without them.
    slices: list[SliceVerdict] = Field(default_factory=list, exclude_if=lambda v: not v)
    # The retrieval layer's figures and decision; absent when it is not in use.
    retrieval: RetrievalGate | None = Field(default=None, exclude_if=lambda v: v is None)

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
    def pass_rate_detail(self) -> str:
        """The percentage after `pass_rate_text`, unless that already is one."""
        if self.pass_rate is None or self.pass_rate_text.endswith(f"over {self.n} items"):
            return ""
        return f" ({self.pass_rate:.1%})"

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


def _comparability_warnings(
    candidate: Report | SlimReport,
    baseline: Report | SlimReport,
    tallies: tuple[Tally, Tally] | None = None,
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
    if _other_golden_set(candidate, baseline) and candidate.rule_changes is not None:
        # A pull request that edits the golden set: its items are shown as its own (rules.py).
        warnings.append("the yardstick moved: the golden set differs from the baseline's")
    cand_tally, base_tally = tallies or (Tally(cand_view.items), Tally(base_view.items))
    if changed is None:
        changed = changed_items(cand_view.items, base_view.items)
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
    warnings.extend(judges.moved(candidate.judges, baseline.judges))
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
    candidate: Report, baseline: Report, cand_tally: Tally, base_tally: Tally
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
            and not (name == "runs" and getattr(base, name) > getattr(cand, name))
        ]
    warnings = []
    if base is None and baseline.format is not None and baseline.tool_version is not None:
        warnings.append(_no_run_settings(baseline.tool_version))
    # A per-item score means the same at any number of runs; a baseline with more of them (as
    # `mode: baseline` makes it) is only a steadier sample of it.
    if cand_tally.runs and base_tally.runs and cand_tally.typical_runs > base_tally.typical_runs:
        warnings.append(
            f"the yardstick moved: the baseline has {base_tally.typical_runs} run(s) per item, "
            f"this run {cand_tally.typical_runs}"
        )
    return warnings


def _version(text: str) -> tuple[int, ...] | None:
    """`0.2.0` as (0, 2, 0); None for what is no release number (`0.3.0rc1` is 0.3.0)."""
    found = re.match(r"(?:golden-gate\s+)?v?(\d+(?:\.\d+)*)", text.strip())
    return tuple(int(part) for part in found.group(1).split(".")) if found else None


def _no_run_settings(made_by: str) -> str:
    """The warning for a baseline that records no run settings this version can read: one
    from a newer release records them where this one does not look, one from an older
    release counted re-runs of failures."""
    made, this = _version(made_by), _version(__version__)
    if made is not None and this is not None and made > this:
        return (
            f"the baseline was made by a newer golden-gate ({made_by}; this is {__version__}) "
            "and records no run settings this version can read: they were assumed to be this "
            "run's; update golden-gate to compare them"
        )
    return (
        f"the yardstick moved: the baseline was made by golden-gate {made_by}, which counted "
        "re-runs of failures and left unanswered runs out; make it again"
    )


def compare(
    candidate: Report | SlimReport, baseline: Report | SlimReport, settings: GateSettings
) -> Comparison:
    """Pair items counted in both reports: the paired sign-flip test on per-item scores."""
    dropped = _dropped(slim.of(candidate))
    return _compare(tally_of(candidate), tally_of(baseline), settings, dropped)[0]


def _dropped(candidate: SlimReport) -> frozenset[str]:
    changes = candidate.header.rule_changes
    return frozenset(changes.dropped) if changes is not None else frozenset()


def _compare(
    cand_tally: Tally,
    base_tally: Tally,
    settings: GateSettings,
    dropped: frozenset[str] = frozenset(),
) -> tuple[Comparison, Differences]:
    """The comparison, and what the power statement needs of the differences.

    `dropped`: baseline items the run did not evaluate, each paired as a failed item."""
    cand_items, base_items = cand_tally.items, base_tally.items
    shared: Collection[str]
    counted_dropped: list[str] = []
    if not cand_tally.own and not dropped and cand_items.ids == base_items.ids:
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
        # A dropped item counts as a failed one (no run passed): its drop is the regression.
        counted_dropped = sorted(i for i in dropped if i in base and i not in shared)
        changed = sorted(
            [(i, (*cand[i], *base[i])) for i in shared if cand[i] != base[i]]
            + [(i, (0, 1, *base[i])) for i in counted_dropped]
        )
        shared = shared | set(counted_dropped)
        only_in_candidate = sorted(cand.keys() - base.keys())
        only_in_baseline = sorted(base.keys() - cand.keys() - dropped)
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
    # What the power statement models the items from: the mean squared per-item difference
    # (items, not clusters: a cluster's sum is not one item's), and the clusters' design effect.
    squares = 0.0
    deff = 1.0
    if shared_count:
        by_item = {(p, r, q, s): Fraction(p, r) - Fraction(q, s) for _, (p, r, q, s) in changed}
        item_squares = Counter(by_item[key] ** 2 for _, key in changed)
        squares = float(sum((d * k for d, k in item_squares.items()), Fraction(0)) / shared_count)
        if clusters:
            per_item = {item_id: float(by_item[key]) for item_id, key in changed}
            deff = design_effect(
                [per_item.get(i, 0.0) for i in shared], [clusters.get(i) for i in shared]
            )
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
        dropped=counted_dropped,
    )
    return comparison, Differences(mean_square=squares, design_effect=deff)


# Fewer of the run's items than this share pairing with the baseline (same id, same question
# and reference): the comparison would rest on a few items, so there is none (exit 3).
MIN_SHARED_SHARE = 0.5
REGENERATE = (
    "regenerate the baseline from this golden set and selection (golden-gate eval, or the "
    "Action's baseline mode)"
)


def _other_golden_set(candidate: Report | SlimReport, baseline: Report | SlimReport) -> bool:
    """Both record the fingerprint of one whole selection by the same tags, and they differ.
    Selections by other tags (a full-set baseline, a smoke-subset run: the usual pair) have
    fingerprints that cannot be compared; their items are, one by one, by their recorded
    question-and-reference hashes (`not_comparable`'s share of items that pair)."""
    cand, base = slim.of(candidate).header.dataset, slim.of(baseline).header.dataset
    return (
        cand is not None
        and base is not None
        and bool(cand.fingerprint and base.fingerprint)
        and sorted(cand.tags) == sorted(base.tags)
        and cand.shard is None
        and base.shard is None
        and cand.fingerprint != base.fingerprint
    )


def not_comparable(
    candidate: Report | SlimReport,
    baseline: Report | SlimReport,
    result: GateResult,
    changed: int | None,
) -> str | None:
    """Why the baseline cannot be compared with this run at all (exit 3, not a warning): it
    pairs with too few of the run's items (an item pairs by id and, where both record one, the
    same question-and-reference hash, whatever tags selected it), or (with no pull request
    editing the golden set) the same tags selected another golden set."""
    cand = slim.of(candidate)
    comparison = result.comparison
    if comparison is None:
        return None
    own = cand.header.rule_changes is not None
    if _other_golden_set(cand, baseline) and not own:
        return (
            "not comparable with the baseline: it was made from another golden set (the same "
            f"tags select items with another dataset fingerprint); {REGENERATE}"
        )
    run_items = result.n - len(tally_of(cand).own)
    same = comparison.shared - len(comparison.dropped) - (changed or 0)
    if run_items > 0 and same < MIN_SHARED_SHARE * run_items:
        return (
            f"not comparable with the baseline: only {max(same, 0)} of this run's {run_items} "
            f"items pair with it (same id, question and reference; at least "
            f"{MIN_SHARED_SHARE:.0%} must); {REGENERATE}"
        )
    return None


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
    base_tally = Tally(base.items) if base is not None else None
    missing = _missing_items(cand, base_tally) if base_tally is not None else []
    # Items the pull request dropped are counted in the comparison already (_compare).
    missing = [i for i in missing if i not in _dropped(cand)]
    share = len(missing) / base_tally.n if missing and base_tally is not None else 0.0
    items = cand.items
    if share > MISSING_SHARE and base_tally is not None:
        items = _with_missing_failed(items, missing, base_tally)
        cand = SlimReport(cand.header, items)
    # Questions changed since the baseline: the same count for the pessimistic pass below.
    changed = changed_items(cand.items, base.items) if base is not None else None
    result = _evaluate_gate(cand, cand.items, base, base_tally, changed, settings)
    _gate_retrieval(result, cand, base, settings)
    if missing:
        shown = ", ".join(missing[:MISSING_SHOWN])
        more = f" and {len(missing) - MISSING_SHOWN} more" if len(missing) > MISSING_SHOWN else ""
        counted = (
            "counted as failed runs (more than "
            f"{MISSING_SHARE:.0%} of the baseline's items: a truncated report cannot pass)"
            if share > MISSING_SHARE
            else f"not counted (at most {MISSING_SHARE:.0%} of the baseline's items)"
        )
        result.warnings.insert(
            0,
            f"{len(missing)} baseline item(s) missing from this report ({share:.1%} of the "
            f"baseline's {base_tally.n if base_tally else 0}): {shown}{more}; {counted}",
        )
    result.warnings.extend(cand.header.warnings or [])  # what the evaluation itself saw
    cut_short = _cut_short(slim.of(candidate))
    if cut_short:
        result.inconclusive = cut_short
        return result
    if base is not None:
        unrelated = not_comparable(cand, base, result, changed)
        if unrelated is not None:
            result.inconclusive = unrelated
            return result
    if result.passed and any(cand.items.errors):
        worst = cand.items.with_errors_counted()
        pessimistic = _evaluate_gate(
            cand, worst, base, base_tally, changed, settings, with_power=False
        )
        if not pessimistic.passed:
            result.inconclusive = (
                f"{_no_verdict(cand)}, and counted as failures they would fail the gate "
                f"({pessimistic.reasons[0].message}): {_again(cand)}"
            )
    return result


def _no_verdict(cand: SlimReport) -> str:
    """The runs counted apart, by what failed on them: the judge or a hand-written check."""
    total = sum(cand.items.errors)
    checks = min(total, cand.header.stats.check_errors if cand.header.stats else 0)
    judge = total - checks
    if not checks:
        return f"{total} run(s) got no verdict (the judge failed on them)"
    if not judge:
        return f"{total} run(s) got no verdict (a hand-written check failed to run on them)"
    return (
        f"{total} run(s) got no verdict (the judge failed on {judge}, a hand-written check "
        f"failed to run on {checks})"
    )


def _again(cand: SlimReport) -> str:
    checks = cand.header.stats.check_errors if cand.header.stats else 0
    fix = "make the check run (fix it, or raise check-timeout)"
    if not checks:
        return "judge them again"
    return (
        f"{fix} and run them again"
        if checks >= sum(cand.items.errors)
        else (f"judge them again, and {fix}")
    )


def _gate_retrieval(
    result: GateResult, cand: SlimReport, base: SlimReport | None, settings: GateSettings
) -> None:
    """The retrieval layer's floor and paired test (core/retrieval.py), as reasons of their own:
    retrieval that got worse fails the gate even when every answer passes."""
    items = cand.items
    clusters = {**items.clusters, **(base.items.clusters if base is not None else {})}
    found = retrieval.gate(
        cand.header.retrieval,
        base.header.retrieval if base is not None else None,
        tags=dict(zip(items.ids, items.tags, strict=True)),
        clusters=clusters,
        own=items.own,
        k=settings.retrieval_k,
        floor=settings.retrieval_floor,
        alpha=settings.alpha,
        min_drop=settings.min_drop,
        confidence=settings.confidence,
    )
    if found is None:
        return
    result.retrieval = found
    if cand.header.retrieval is None and base is not None and base.header.retrieval is not None:
        # Retrieval the baseline measured and this run did not: a set-up that lost its
        # sources-path should be seen, though it cannot fail the gate.
        result.warnings.append(
            "the baseline measured retrieval and this run did not: set `sources-path` to "
            "where the response lists its sources"
        )
    k = found.k
    if found.below_floor and found.overall is not None and found.lower_bound is not None:
        result.reasons.append(
            Reason(
                code="retrieval-below-floor",
                message=f"retrieval below the floor: hit@{k} lower bound "
                f"{found.lower_bound:.3f} < {found.floor:.2f} (hit@{k} "
                f"{found.overall.hit_rate:.1%} over {found.overall.items} items)",
            )
        )
    compared = found.comparison
    if compared is not None and compared.significant:
        result.reasons.append(
            Reason(
                code="retrieval-regression",
                message=f"significant retrieval regression: hit@{k} fell for "
                f"{len(compared.fell)} item(s), rose for {len(compared.rose)}, p = "
                f"{compared.p_value:.4f} < {settings.alpha:g}, net drop {compared.net_drop:.1%}",
            )
        )
    if result.reasons:
        result.verdict = "failed"


# Differences whose design effect by page reaches this (over at least PAGES_FOR_WARNING pages
# holding two or more shared items) are said to look clustered: bench/soundness.py measures
# how often it is said of independent and of clustered questions.
CLUSTERED_DEFF = 2.0
PAGES_FOR_WARNING = 8


def undeclared_clusters(
    candidate: Report | SlimReport, baseline: Report | SlimReport, pages: dict[str, str]
) -> str | None:
    """A warning when neither report declares clusters but the per-item differences with the
    baseline look clustered by page (`pages`: item id → its first reference page)."""
    cand, base = tally_of(candidate), tally_of(baseline)
    if cand.clusters or base.clusters:
        return None
    counted_c, counted_b = cand.counted, base.counted
    shared = sorted(counted_c.keys() & counted_b.keys() & pages.keys())
    groups = Counter(pages[i] for i in shared)
    if sum(1 for size in groups.values() if size > 1) < PAGES_FOR_WARNING:
        return None
    differences = [
        counted_c[i][0] / counted_c[i][1] - counted_b[i][0] / counted_b[i][1] for i in shared
    ]
    deff = design_effect(differences, [pages[i] for i in shared])
    if deff < CLUSTERED_DEFF:
        return None
    return (
        f"the changes since the baseline look clustered by page (design effect {deff:.1f} over "
        f"{len(groups)} pages): questions about one page are not independent evidence, so the "
        "paired test may false-alarm; give golden items a `cluster` (their page) to count each "
        "page once"
    )


# Baseline items a candidate report leaves out: above this share of the baseline's counted
# items they count as failed runs (a report cut short cannot pass); at or below it, a warning.
MISSING_SHARE = 0.02
MISSING_SHOWN = 10


def _cut_short(candidate: SlimReport) -> str | None:
    """Why the report is not all its evaluation selected, when it records its selection."""
    header = candidate.header
    dataset = header.dataset
    if dataset is None or not dataset.selected:
        return None
    present = [*candidate.items.ids, *(header.not_asked or [])]
    if selection_digest(present) == dataset.selected:
        return None
    selected = f"the {dataset.items} items" if dataset.items is not None else "the items"
    return (
        f"the report holds {len(candidate.items)} item(s)"
        + (f" and {len(header.not_asked)} not asked" if header.not_asked else "")
        + f", not {selected} its evaluation selected: it was cut short or edited; "
        "evaluate again"
    )


def _missing_items(candidate: SlimReport, base_tally: Tally) -> list[str]:
    """Baseline items (counted there) absent from the candidate report altogether, among the
    items its selection covers: with tags, the baseline items carrying one of them; none when
    the candidate is one shard of a split evaluation."""
    dataset = candidate.header.dataset
    if (dataset is not None and dataset.shard) or not len(candidate.items):
        return []  # a shard holds part of the items; an empty report is "no results"
    # Items an interrupted evaluation never asked are said by the report (incomplete).
    present = set(candidate.items.ids).union(candidate.header.not_asked or ())
    tags = set(dataset.tags) if dataset is not None and dataset.tags else None
    base = base_tally.items
    counted = set(base_tally.counted_ids)
    return sorted(
        i
        for i, item_tags in zip(base.ids, base.tags, strict=True)
        if i in counted and i not in present and (tags is None or tags.intersection(item_tags))
    )


def _with_missing_failed(items: ItemColumns, missing: list[str], base: Tally) -> ItemColumns:
    """The candidate's items and each missing one as failed runs (as many as the baseline's)."""
    runs = base.counted
    tags = dict(zip(base.items.ids, base.items.tags, strict=True))
    return ItemColumns(
        ids=[*items.ids, *missing],
        tags=[*items.tags, *(tags[i] for i in missing)],
        passes=[*items.passes, *([0] * len(missing))],
        runs=[*items.runs, *(runs[i][1] for i in missing)],
        errors=[*items.errors, *([0] * len(missing))],
        unanswered=[*items.unanswered, *([0] * len(missing))],
        hashes=[*items.hashes, *([None] * len(missing))],
        clusters=items.clusters,
        own=items.own,
    )


def _evaluate_gate(
    candidate: SlimReport,
    items: ItemColumns,
    baseline: SlimReport | None,
    base_tally: Tally | None,
    changed: int | None,
    settings: GateSettings,
    *,
    with_power: bool = True,
) -> GateResult:
    """The gate on `items` (the candidate's, or them with unjudged runs counted as failures;
    only its verdict is read then, so `with_power` False skips the power statement)."""
    tally = Tally(items)
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
    # The base branch's clusters rule, as in the paired test.
    clusters = {**tally.clusters, **(base_tally.clusters if base_tally is not None else {})}
    bound = tally.floor_bound(settings.confidence, clusters)
    lower = bound.lower
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
        base_lower = tally.floor_bound(settings.confidence, clusters, base_only=True).lower
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
    if bound.clusters:
        notes.append(
            f"the floor's bound counts the {bound.clusters} clusters' correlation: "
            f"{n} items weigh as {bound.effective_items:.0f} independent ones "
            f"(design effect {bound.design_effect:.2f})."
        )
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
    spread: Differences | None = None
    if baseline is None or base_tally is None:
        notes.append("no baseline: only the floor applies.")
    else:
        tallies = (tally, base_tally)
        warnings.extend(_comparability_warnings(candidate, baseline, tallies, changed))
        if warnings and settings.require_comparable:
            reasons.append(
                Reason(code="not-comparable", message="not comparable with the baseline")
            )
        comparison, spread = _compare(*tallies, settings, _dropped(candidate))
        unpaired = _named_yet_unpaired(tally, base_tally) if comparison.shared == 0 else 0
        if unpaired:
            reasons.append(
                Reason(
                    code="not-comparable",
                    message=f"nothing pairs with the baseline, though it names {unpaired} of "
                    "this run's items: their definitions differ from the baseline's record, so "
                    "the regression test cannot run",
                )
            )
        if comparison.dropped:
            notes.append(
                f"{len(comparison.dropped)} baseline item(s) this run did not evaluate as the "
                "base branch defines them (dropped) count as failed items in the comparison."
            )
        if comparison.significant:
            reasons.append(
                Reason(
                    code="significant-regression",
                    message=f"significant regression: {comparison.b} regressed vs "
                    f"{comparison.c} improved, p = {comparison.p_value:.4f} < "
                    f"{settings.alpha:g}, {comparison.net_text}",
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
        elif comparison.underpowered and comparison.units == 0:
            notes.append(
                "no shared item changed outcome since the baseline: the paired test had nothing "
                "to weigh."
            )
        elif comparison.underpowered:
            changed_units = (
                "1 item or cluster"
                if comparison.units == 1
                else f"{comparison.units} items or clusters"
            )
            notes.append(
                f"only {changed_units} changed outcome; with so few the test can never reach "
                f"significance at alpha {settings.alpha:g}, so 'no regression' is not evidence "
                "of none."
            )
        if comparison.method == "Monte-Carlo sign-flip" and comparison.p_value_error:
            notes.append(
                f"p was estimated by {MONTE_CARLO_DRAWS:,} seeded random sign flips "
                f"(standard error {comparison.p_value_error:.4f})."
            )
    slices: list[SliceVerdict] = []
    if settings.sliced:
        slices, problems = _slices(items, base_tally, settings, comparison, _dropped(candidate))
        reasons.extend(Reason(code=p.code, message=p.message) for p in problems)
        notes.extend(
            f"tag '{s.tag}': not enough items for a verdict of its own ({s.why})."
            for s in slices
            if s.verdict == "not enough items"
        )
    power = None
    if with_power:
        power = power_note(tally, base_tally, spread, settings, comparison)
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
        slices=slices,
    )


def _slices(
    items: ItemColumns,
    base_tally: Tally | None,
    settings: GateSettings,
    comparison: Comparison | None,
    dropped: frozenset[str],
) -> tuple[list[SliceVerdict], list[SliceProblem]]:
    """The sliced tags' verdicts, each slice's paired test the same as the whole gate's."""

    def compare(cand: Tally, base: Tally) -> tuple[float, float, int, list[str]]:
        result, _ = _compare(cand, base, settings, dropped)
        return result.p_value, result.net_drop, result.shared, result.regressions

    return gate_slices(
        items,
        base_tally.items if base_tally is not None else None,
        floor_by_tag=settings.floor_by_tag,
        critical_tags=settings.critical_tags,
        min_items=settings.min_slice_items,
        confidence=settings.confidence,
        alpha=settings.alpha,
        min_drop=settings.min_drop,
        compare=compare,
        regressed=comparison.regressions if comparison is not None else (),
    )


def _named_yet_unpaired(tally: Tally, base_tally: Tally) -> int:
    """The run's counted items (the pull request's own too, by the id they copy) that the
    baseline also counts: with none paired, a pass would rest on no comparison at all."""
    named = {i.removesuffix(PR_SUFFIX) for i in tally.counted_ids}
    return len(named.intersection(base_tally.counted_ids))


def _rate_text(tally: Tally) -> str:
    if abs(tally.score_sum - tally.k) > 1e-9:
        return f"{tally.score:.1%} of runs"
    return f"{tally.k}/{tally.n}"
