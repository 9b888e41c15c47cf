"""A floor on what people would say: the pass rate people would give, estimated from the judge's
verdicts on this run's items corrected by its measured errors on the labelled answers.

Prediction-powered inference (Angelopoulos, Bates, Fannjiang, Jordan, Zrnic, "Prediction-powered
inference", Science 2023), in its power-tuned form (PPI++, Angelopoulos, Duchi, Zrnic 2023) as
`ppi_py.ppi_mean_ci` computes it: with human labels Y and judge verdicts Ŷ on n labelled
answers, and judge verdicts Ŷᵘ on the run's N items,

    θ̂ = λ·mean(Ŷᵘ) + mean(Y − λ·Ŷ),    se² = var(λ·Ŷᵘ)/N + var(Y − λ·Ŷ)/n,

λ in [0, 1] chosen to shrink se (λ = 0 is the labels alone, λ = 1 plain PPI), and the interval
θ̂ ± z·se. A judge that passes 15 % of bad answers lifts mean(Ŷᵘ); the labelled answers measure
that lift and take it off, which the Wilson bound on the judge's verdicts cannot do.

It assumes the labelled answers are drawn like the run's items (the same kind of questions
and answers, the same judge and prompt): labels written for the hardest items only correct by
the wrong amount. Pure: the calibration's confusion table and the run's per-item scores in.

The gate's bound adds two small-sample corrections to ppi_py's normal interval (`corrected`):
the rectifier's variance counts one pseudo-answer in each cell of the confusion table (with
n − 1 in the denominator), and the quantile is Student's t with n − 1 degrees of freedom. With
few labels and a high pass rate the plain interval's variance is often near zero (49 of 50
labels pass): by simulation (bench/human_basis.py) its lower end covered the true rate 77–97 %
of the time over a grid of 30–200 labels and pass rates 0.7–0.95, the corrected one ≥ 95 %.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

from pydantic import BaseModel

from golden_gate.core.calibration import CalibrationReport
from golden_gate.core.slim import SlimReport
from golden_gate.core.tally import Tally
from golden_gate.core.verdict import GateResult, Reason


class HumanBasis(BaseModel):
    """The pass rate people would give this run's answers, by PPI."""

    estimate: float
    lower: float
    upper: float
    confidence: float
    labels: int  # labelled answers with a verdict (n)
    items: int  # the run's counted items (N)
    judge_rate: float  # the judge's own mean on those items
    lam: float  # the power-tuning weight given to the judge's verdicts


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _var(values: Sequence[float], ddof: int = 0) -> float:
    m = _mean(values)
    return sum((v - m) ** 2 for v in values) / (len(values) - ddof)


def ppi_mean(
    labels: Sequence[float],
    verdicts: Sequence[float],
    unlabelled: Sequence[float],
    *,
    confidence: float = 0.95,
    lam: float | None = None,
    corrected: bool = False,
) -> tuple[float, float, float, float]:
    """(estimate, lower, upper, λ) of the mean of `labels`' population, two-sided at
    `confidence`; `verdicts[i]` is the judge's on the answer `labels[i]` labels. Exactly
    ppi_py's `ppi_mean_ci` unless `corrected` (see the module's docstring)."""
    n, big_n = len(labels), len(unlabelled)
    if n < 2 or big_n < 1 or len(verdicts) != n:
        raise ValueError("PPI needs at least two labelled answers and one unlabelled item")
    if lam is None:
        # The variance-minimising λ for the mean (ppi_py's _calc_lam_glm, clipped to [0, 1]):
        # cov(Y, Ŷ) / ((1 + n/N) · var(Ŷ ∪ Ŷᵘ)).
        my, mv = _mean(labels), _mean(verdicts)
        cov = sum((y - my) * (v - mv) for y, v in zip(labels, verdicts, strict=True)) / n
        pooled = _var([*verdicts, *unlabelled], ddof=1)
        lam = cov / ((1 + n / big_n) * pooled) if pooled > 0 else 0.0
        lam = min(1.0, max(0.0, lam))
    rectified = [y - lam * v for y, v in zip(labels, verdicts, strict=True)]
    estimate = lam * _mean(unlabelled) + _mean(rectified)
    if corrected:
        pseudo = [y - lam * v for y, v in ((1, 1), (1, 0), (0, 1), (0, 0))]
        spread = _var([*rectified, *pseudo], ddof=1)
        from scipy.stats import t  # only a gate with a calibration gets here

        z = float(t.ppf(0.5 + confidence / 2, n - 1))
    else:
        spread = _var(rectified)
        z = NormalDist().inv_cdf(0.5 + confidence / 2)
    se = math.sqrt(lam**2 * _var(unlabelled) / big_n + spread / n)
    return estimate, estimate - z * se, estimate + z * se, lam


def from_confusion(
    human_pass_judge_pass: int,
    human_pass_judge_fail: int,
    human_fail_judge_pass: int,
    human_fail_judge_fail: int,
    scores: Sequence[float],
    *,
    confidence: float = 0.95,
    corrected: bool = True,
) -> HumanBasis | None:
    """The human basis from a calibration's confusion table and the run's per-item scores
    (the judge's pass fraction of each counted item); None without two labels and an item.
    `corrected`: the gate's small-sample corrections (the module's docstring)."""
    labels = [1.0] * (human_pass_judge_pass + human_pass_judge_fail) + [0.0] * (
        human_fail_judge_pass + human_fail_judge_fail
    )
    verdicts = (
        [1.0] * human_pass_judge_pass
        + [0.0] * human_pass_judge_fail
        + [1.0] * human_fail_judge_pass
        + [0.0] * human_fail_judge_fail
    )
    if len(labels) < 2 or not scores:
        return None
    estimate, lower, upper, lam = ppi_mean(
        labels, verdicts, scores, confidence=confidence, corrected=corrected
    )
    return HumanBasis(
        estimate=estimate,
        lower=lower,
        upper=upper,
        confidence=confidence,
        labels=len(labels),
        items=len(scores),
        judge_rate=_mean(scores),
        lam=lam,
    )


def describe(basis: HumanBasis) -> str:
    """The comment's line: what people would say, and what it assumes."""
    return (
        f"people would pass about {basis.estimate:.1%} of these answers (lower bound "
        f"{max(0.0, basis.lower):.3f} at {basis.confidence:.0%}; the judge passed "
        f"{basis.judge_rate:.1%}): the judge's verdicts on {basis.items} items corrected by its "
        f"errors on {basis.labels} labelled answers (prediction-powered inference), assuming the "
        "labelled answers are drawn like this run's"
    )


def apply(gate: GateResult, view: SlimReport, calibration: CalibrationReport | None) -> None:
    """State the human basis in the gate's notes when the calibration is of this run's judge
    and prompt; with `floor-basis = "human"` the floor is on its lower bound instead of the
    judge's Wilson bound, and a run without such a calibration has no result (a fault is
    never a pass)."""
    settings = gate.settings
    human = settings.floor_basis == "human"
    header = view.header
    problem = None
    if calibration is None:
        problem = "there is no calibration of the judge (set calibration)"
    elif calibration.judge != header.judge or (
        calibration.judge_prompt_hash
        and header.judge_prompt_hash
        and calibration.judge_prompt_hash != header.judge_prompt_hash
    ):
        problem = (
            f"the calibration measured judge '{calibration.judge}' with another prompt or model "
            f"than this run's '{header.judge}'"
        )
    basis = None
    if problem is None and calibration is not None:
        tally = Tally(view.items)
        scores = [p / r for p, r in zip(tally.counted_passes, tally.counted_runs, strict=True)]
        c = calibration.confusion
        basis = from_confusion(
            c.human_pass_judge_pass,
            c.human_pass_judge_fail,
            c.human_fail_judge_pass,
            c.human_fail_judge_fail,
            scores,
            confidence=settings.confidence,
        )
        if basis is None:
            problem = "the calibration has fewer than two judged labels, or the run no item"
    if basis is None:
        if human:
            gate.inconclusive = gate.inconclusive or (
                f"floor-basis human: {problem}, so what people would say cannot be estimated"
            )
        return
    gate.notes.append(describe(basis) + ".")
    if not human:
        return
    gate.reasons = [r for r in gate.reasons if r.code != "below-floor"]
    if settings.floor_on and basis.lower < settings.floor:
        gate.reasons.append(
            Reason(
                code="below-floor",
                message=f"below the floor on the human basis: lower bound {basis.lower:.3f} < "
                f"{settings.floor:.2f} (what people would say, by prediction-powered inference "
                f"from {basis.labels} labels)",
            )
        )
    gate.verdict = "failed" if gate.reasons else "passed"
