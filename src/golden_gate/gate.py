"""The gate: an absolute floor on the Wilson lower bound and a paired sign test against a baseline.

Pure: takes reports, returns a GateResult; no I/O (DESIGN §4).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, field_validator

from golden_gate.report import Report
from golden_gate.stats import min_discordant_for_significance, sign_test_p, wilson_lower_bound

ReasonCode = Literal["no-results", "below-floor", "significant-regression", "not-comparable"]


class GateSettings(BaseModel):
    floor: float = 0.80
    alpha: float = 0.05
    min_drop: float = 0.03
    confidence: float = 0.95
    require_comparable: bool = False

    @field_validator("floor", "alpha", "confidence")
    @classmethod
    def _open_unit_interval(cls, value: float, info: object) -> float:
        if not 0 < value < 1:
            name = getattr(info, "field_name", "value")
            raise ValueError(f"{name} must be between 0 and 1 (exclusive), got {value}")
        return value

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
    """The paired comparison on items present (and counted) in both reports."""

    shared: int
    regressions: list[str] = Field(default_factory=list)
    improvements: list[str] = Field(default_factory=list)
    p_value: float = 1.0
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


class GateResult(BaseModel):
    verdict: Literal["passed", "failed"]
    reasons: list[Reason] = Field(default_factory=list)
    settings: GateSettings
    n: int
    k: int
    pass_rate: float | None = None
    lower_bound: float | None = None
    comparison: Comparison | None = None
    warnings: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    errored: list[str] = Field(default_factory=list)
    unstable: list[str] = Field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.verdict == "passed"

    @property
    def headline(self) -> str:
        """The verdict and why, in one line."""
        if self.passed:
            return "passed: " + (
                f"pass rate {self.k}/{self.n}, lower bound {self.lower_bound:.3f} "
                f"≥ floor {self.settings.floor:.2f}"
                + ("" if self.comparison is None else ", no significant regression")
            )
        return "failed: " + "; ".join(r.message for r in self.reasons)


class _Tally:
    """What the gate needs of each item of a report, in one pass over its results.

    A 100,000-item report is a million Python objects: each pass over it costs, so the gate
    makes one a report instead of one a question.
    """

    def __init__(self, report: Report) -> None:
        self.hashes: list[tuple[str, str | None]] = []  # every item, in order
        self.passed: dict[str, bool] = {}  # counted items: id -> passed (the last one wins)
        self.errored: list[str] = []
        self.unstable: list[str] = []
        self.n = 0
        self.k = 0
        for r in report.results:
            self.hashes.append((r.id, r.item_hash))
            if r.errored:
                self.errored.append(r.id)
                continue
            passed = self.passed[r.id] = r.passed
            self.n += 1
            self.k += passed
            if r.unstable:
                self.unstable.append(r.id)


def _comparability_warnings(
    candidate: Report, baseline: Report, tallies: tuple[_Tally, _Tally] | None = None
) -> list[str]:
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
    cand_tally, base_tally = tallies or (_Tally(candidate), _Tally(baseline))
    base_hashes = dict(base_tally.hashes)
    changed = sum(
        1
        for item_id, item_hash in cand_tally.hashes
        if item_hash and (base_hash := base_hashes.get(item_id)) and item_hash != base_hash
    )
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
    return warnings


def compare(candidate: Report, baseline: Report, settings: GateSettings) -> Comparison:
    """Pair items counted in both reports; regressions are baseline passes the candidate fails."""
    return _compare(_Tally(candidate), _Tally(baseline), settings)


def _compare(cand_tally: _Tally, base_tally: _Tally, settings: GateSettings) -> Comparison:
    cand, base = cand_tally.passed, base_tally.passed
    shared = cand.keys() & base.keys()
    cand_passed = {i for i, passed in cand.items() if passed}
    base_passed = {i for i, passed in base.items() if passed}
    # Set algebra instead of a lookup a pair: regressions are shared baseline passes the
    # candidate did not pass, improvements the reverse.
    regressions = sorted((base_passed & shared) - cand_passed)
    improvements = sorted((cand_passed & shared) - base_passed)
    b, c = len(regressions), len(improvements)
    p_value = sign_test_p(b, c)
    net_drop = (b - c) / len(shared) if shared else 0.0
    return Comparison(
        shared=len(shared),
        regressions=regressions,
        improvements=improvements,
        p_value=p_value,
        net_drop=net_drop,
        significant=p_value < settings.alpha and net_drop > settings.min_drop,
        underpowered=b + c < min_discordant_for_significance(settings.alpha),
        only_in_candidate=sorted(cand.keys() - base.keys()),
        only_in_baseline=sorted(base.keys() - cand.keys()),
    )


def evaluate_gate(
    candidate: Report, baseline: Report | None, settings: GateSettings | None = None
) -> GateResult:
    """Apply the floor and, with a baseline, the paired regression test."""
    settings = settings or GateSettings()
    tally = _Tally(candidate)
    n, k = tally.n, tally.k
    errored = sorted(tally.errored)
    unstable = sorted(tally.unstable)
    if n == 0:
        message = (
            "no results: the report has no items"
            if not candidate.results
            else f"no results: none of the {len(candidate.results)} items got a verdict"
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
    lower = wilson_lower_bound(k, n, confidence=settings.confidence)
    if lower < settings.floor:
        reasons.append(
            Reason(
                code="below-floor",
                message=f"below the floor: lower bound {lower:.3f} < {settings.floor:.2f} "
                f"({k}/{n} passed)",
            )
        )
    notes.append(
        f"{n} items can only show the assistant is unlikely to pass fewer than "
        f"{lower:.0%} of such questions ({settings.confidence:.0%} confidence); "
        "a green check is not proof of quality."
    )

    comparison = None
    if baseline is None:
        notes.append("no baseline: only the floor applies.")
    else:
        tallies = (tally, _Tally(baseline))
        warnings.extend(_comparability_warnings(candidate, baseline, tallies))
        if warnings and settings.require_comparable:
            reasons.append(
                Reason(code="not-comparable", message="not comparable with the baseline")
            )
        comparison = _compare(*tallies, settings)
        if comparison.significant:
            reasons.append(
                Reason(
                    code="significant-regression",
                    message=f"significant regression: {comparison.b} regressed vs "
                    f"{comparison.c} improved, p = {comparison.p_value:.4f} < "
                    f"{settings.alpha:g}, net drop {comparison.net_drop:.1%}",
                )
            )
        if comparison.shared == 0:
            notes.append("no items are shared with the baseline: the regression test did not run.")
        elif comparison.underpowered:
            notes.append(
                f"only {comparison.b + comparison.c} item(s) changed outcome; fewer than "
                f"{min_discordant_for_significance(settings.alpha)} can never reach "
                f"significance at alpha {settings.alpha:g}, so 'no regression' is not evidence "
                "of none."
            )
    return GateResult(
        verdict="failed" if reasons else "passed",
        reasons=reasons,
        settings=settings,
        n=n,
        k=k,
        pass_rate=k / n,
        lower_bound=lower,
        comparison=comparison,
        warnings=warnings,
        notes=notes,
        errored=errored,
        unstable=unstable,
    )
