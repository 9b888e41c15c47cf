"""The gate's records: its settings, the reasons a gate fails, the paired comparison and the
result, with what the settings alone decide (the fewest items that can clear the floor).
Pure; the decision itself is core/gate.py."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import (
    BaseModel,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
)

from golden_gate.core import retrieval
from golden_gate.core.power import PowerNote
from golden_gate.core.retrieval import RetrievalGate
from golden_gate.core.slices import SliceVerdict
from golden_gate.core.stats import floor_bound, wilson_lower_bound

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
# The run's verdict (the Action's `verdict` output): the gate's, or no result.
RunVerdict = Literal["passed", "failed", "incomplete"]
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

    def run_verdict(self, complete: bool) -> RunVerdict:
        """The run's verdict, as every output shows it: this gate's, unless the evaluation
        (`complete` False) or the gate has no result."""
        return "incomplete" if not complete or self.inconclusive else self.verdict

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
