"""Agreement between raters, pure: a judge against human labels (Cohen's kappa with its
interval), the judges of a panel among themselves (Cohen's or Fleiss' kappa), and each
evaluator's pass rate in a report. No I/O: the calibration run and the report use these.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from statistics import NormalDist

from pydantic import BaseModel, Field

from golden_gate.core.item_result import counts
from golden_gate.core.report import Report

CONFIDENCE = 0.95


# -- pure statistics -------------------------------------------------------------------------


class Confusion(BaseModel):
    """Human labels (rows) against judge verdicts (columns), counted over judged answers."""

    human_pass_judge_pass: int = Field(default=0, ge=0)
    human_pass_judge_fail: int = Field(default=0, ge=0)
    human_fail_judge_pass: int = Field(default=0, ge=0)
    human_fail_judge_fail: int = Field(default=0, ge=0)

    @property
    def n(self) -> int:
        return (
            self.human_pass_judge_pass
            + self.human_pass_judge_fail
            + self.human_fail_judge_pass
            + self.human_fail_judge_fail
        )

    @property
    def agreeing(self) -> int:
        return self.human_pass_judge_pass + self.human_fail_judge_fail

    @property
    def table(self) -> tuple[tuple[int, int], tuple[int, int]]:
        """((pass/pass, pass/fail), (fail/pass, fail/fail)): rows human, columns judge."""
        return (
            (self.human_pass_judge_pass, self.human_pass_judge_fail),
            (self.human_fail_judge_pass, self.human_fail_judge_fail),
        )

    @classmethod
    def from_table(cls, table: Sequence[Sequence[int]]) -> Confusion:
        (pp, pf), (fp, ff) = table
        return cls(
            human_pass_judge_pass=pp,
            human_pass_judge_fail=pf,
            human_fail_judge_pass=fp,
            human_fail_judge_fail=ff,
        )

    @classmethod
    def tally(cls, pairs: Iterable[tuple[bool, bool]]) -> Confusion:
        """Count (human passed, judge passed) pairs."""
        counts = [[0, 0], [0, 0]]
        for human, judge in pairs:
            counts[0 if human else 1][0 if judge else 1] += 1
        return cls.from_table(counts)


class Kappa(BaseModel):
    """Cohen's kappa with its confidence interval; `value` is None when kappa is undefined."""

    value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    se: float | None = None
    confidence: float = CONFIDENCE
    reason: str | None = None  # why kappa is undefined
    note: str | None = None  # a caveat on a defined kappa (degenerate interval, few labels)


def observed_agreement(confusion: Confusion) -> float | None:
    """The fraction of judged answers where judge and human agree; None with no answers."""
    return confusion.agreeing / confusion.n if confusion.n else None


def cohens_kappa(confusion: Confusion, *, confidence: float = CONFIDENCE) -> Kappa:
    """Cohen's kappa for a 2x2 table, with a large-sample (Wald) confidence interval.

    kappa = (p_o - p_e) / (1 - p_e), with p_o the observed agreement and p_e the agreement
    expected by chance from the margins (p_e = sum_i p_i. * p_.i).

    Standard error: the large-sample variance of Fleiss, Cohen and Everitt (1969), not the
    null variance (which only serves to test kappa = 0):

        var = [ sum_i p_ii * (1 - (p_i. + p_.i)(1 - k))^2
              + (1 - k)^2 * sum_{i != j} p_ij * (p_.i + p_j.)^2
              - (k - p_e(1 - k))^2 ] / (n (1 - p_e)^2)

    The interval is kappa ± z·SE, clamped to [-1, 1]. This is what
    `statsmodels.stats.inter_rater.cohens_kappa` computes (kappa_low/kappa_upp).

    Degenerate tables:
    - no answers, or the humans used one label only: kappa is undefined (value None and a
      reason). With one human label p_e equals the agreement itself, so kappa is 0/0 or 0
      whatever the judge does: it says nothing about the judge.
    - the judge gave one verdict only: kappa is exactly 0 with SE 0 (a judge that does not
      discriminate agrees no better than chance); the note says so.
    - perfect agreement: kappa is 1 with SE 0, so the interval is a point; the note gives the
      rule-of-three bound on the disagreement rate instead.
    """
    if not 0 < confidence < 1:
        raise ValueError("confidence must be in (0, 1)")
    n = confusion.n
    if n == 0:
        return Kappa(confidence=confidence, reason="no labelled answer got a verdict")
    table = confusion.table
    p = [[cell / n for cell in row] for row in table]
    rows = [p[0][0] + p[0][1], p[1][0] + p[1][1]]  # human margins
    cols = [p[0][0] + p[1][0], p[0][1] + p[1][1]]  # judge margins
    if 0.0 in rows:
        only = "pass" if rows[0] else "fail"
        return Kappa(
            confidence=confidence,
            reason=(
                f"every human label is '{only}', so kappa is undefined: it needs answers "
                "humans passed and answers they failed"
            ),
        )
    p_o = p[0][0] + p[1][1]
    p_e = rows[0] * cols[0] + rows[1] * cols[1]  # < 1: both human margins are in (0, 1)
    kappa = (p_o - p_e) / (1 - p_e)
    q = 1 - kappa
    term_a = sum(p[i][i] * (1 - (rows[i] + cols[i]) * q) ** 2 for i in (0, 1))
    term_b = q**2 * (p[0][1] * (cols[0] + rows[1]) ** 2 + p[1][0] * (cols[1] + rows[0]) ** 2)
    term_c = (kappa - p_e * q) ** 2
    variance = (term_a + term_b - term_c) / ((1 - p_e) ** 2 * n)
    se = math.sqrt(max(variance, 0.0))
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    note = None
    if p_o == 1.0 or 0.0 in cols:
        se = 0.0  # exactly 0 here; the formula leaves rounding noise of ~1e-9
    if p_o == 1.0:
        note = (
            f"perfect agreement on {n} labels: the large-sample interval collapses to a point; "
            f"by the rule of three the disagreement rate is still up to {3 / n:.1%} "
            f"({confidence:.0%})"
        )
    elif 0.0 in cols:
        only = "pass" if cols[0] else "fail"
        note = (
            f"the judge said '{only}' to every answer: it does not tell answers apart, so it "
            "agrees no better than chance"
        )
    elif n < 30:
        note = f"only {n} labels: the large-sample interval is a rough guide"
    return Kappa(
        value=kappa,
        ci_low=max(-1.0, kappa - z * se),
        ci_high=min(1.0, kappa + z * se),
        se=se,
        confidence=confidence,
        note=note,
    )


def fleiss_kappa(counts: Sequence[Sequence[int]]) -> float | None:
    """Fleiss' kappa: `counts[i][j]` raters put subject i in category j, the same number of
    raters for every subject (Fleiss 1971). None when undefined (no subjects, fewer than two
    raters, or every rating in one category, where chance agreement is already perfect).

    P_i = (sum_j n_ij^2 - n) / (n (n - 1)), P = mean P_i, p_j = sum_i n_ij / (N n),
    P_e = sum_j p_j^2, kappa = (P - P_e) / (1 - P_e). With two raters and two categories it
    differs from Cohen's kappa only in pooling the raters' margins (Scott's pi).
    """
    rows = [list(row) for row in counts]
    if not rows:
        return None
    n = sum(rows[0])
    if n < 2 or any(sum(row) != n for row in rows):
        return None
    subjects = len(rows)
    p_bar = sum((sum(c * c for c in row) - n) / (n * (n - 1)) for row in rows) / subjects
    totals = [sum(col) for col in zip(*rows, strict=True)]
    p_e = sum((t / (subjects * n)) ** 2 for t in totals)
    if p_e >= 1:
        return None
    return (p_bar - p_e) / (1 - p_e)


# Landis & Koch (1977), "The measurement of observer agreement for categorical data".
_LANDIS_KOCH = ((0.20, "slight"), (0.40, "fair"), (0.60, "moderate"), (0.80, "substantial"))


def landis_koch(kappa: float | None) -> str:
    """Landis and Koch's name for a kappa value ("substantial", ...)."""
    if kappa is None:
        return "undefined"
    if kappa < 0:
        return "poor (worse than chance)"
    for upper, name in _LANDIS_KOCH:
        if kappa <= upper:
            return name
    return "almost perfect"


def decide(kappa: Kappa, *, min_kappa: float, complete: bool) -> bool:
    """Pass when complete and the kappa point estimate is at least `min_kappa` (see module)."""
    return complete and kappa.value is not None and kappa.value >= min_kappa


def error_share_too_high(errors: int, total: int, max_error_rate: float) -> bool:
    return total > 0 and errors / total > max_error_rate


# -- what a report says about its evaluators and judges (pure) -------------------------------


class EvaluatorRate(BaseModel):
    evaluator: str
    passed: int  # counted runs this evaluator passed
    judged: int  # counted runs it gave a verdict on


class Agreement(BaseModel):
    """How far a panel's judges agree, over every (run, evaluator) all of them judged."""

    judges: list[str]
    verdicts: int  # (run, evaluator) pairs every judge gave a verdict on
    kappa: float | None  # Cohen's for two judges, Fleiss' for more; None when undefined
    method: str
    disagreements: list[str]  # ids of items where the judges disagreed on some verdict


def evaluator_rates(report: Report) -> list[EvaluatorRate]:
    """Each evaluator's pass rate over the counted runs that recorded it, in first-seen order."""
    rates: dict[str, EvaluatorRate] = {}
    for item in report.results:
        for run in item.run_results:
            if not counts(run):
                continue
            for outcome in run.evaluations or []:
                rate = rates.setdefault(
                    outcome.evaluator,
                    EvaluatorRate(evaluator=outcome.evaluator, passed=0, judged=0),
                )
                if outcome.status != "error":
                    rate.judged += 1
                    rate.passed += outcome.status == "pass"
    return list(rates.values())


def agreement(report: Report) -> Agreement | None:
    """The panel's agreement, or None when the report has no panel of two or more judges."""
    judges: list[str] = []
    units: list[list[bool]] = []
    disagreeing: set[str] = set()
    for item in report.results:
        for run in item.run_results:
            if run.rerun:
                continue
            for outcome in run.evaluations or []:
                votes = [v for v in outcome.votes if v.passed is not None]
                if len(outcome.votes) < 2 or len(votes) < len(outcome.votes):
                    continue
                judges = judges or [v.judge for v in outcome.votes]
                if [v.judge for v in votes] != judges:  # a report read back may be uneven
                    continue
                units.append([bool(v.passed) for v in votes])
                if len({v.passed for v in votes}) > 1:
                    disagreeing.add(item.id)
    if not judges:
        return None
    if len(judges) == 2:
        kappa = _two_judge_kappa(units)
        method = "Cohen's κ"
    else:
        table = [[sum(u), len(u) - sum(u)] for u in units]
        kappa = fleiss_kappa(table)
        method = "Fleiss' κ"
    return Agreement(
        judges=judges,
        verdicts=len(units),
        kappa=kappa,
        method=method,
        disagreements=sorted(disagreeing),
    )


def _two_judge_kappa(units: list[list[bool]]) -> float | None:
    """Cohen's κ between two judges, the same whichever is listed first; None when chance
    agreement is certain (both judges gave one and the same answer throughout)."""
    if not units:
        return None
    n = len(units)
    observed = sum(a == b for a, b in units) / n
    first = sum(a for a, _ in units) / n
    second = sum(b for _, b in units) / n
    expected = first * second + (1 - first) * (1 - second)
    if expected >= 1:
        return None
    return (observed - expected) / (1 - expected)
