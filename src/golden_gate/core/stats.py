"""The gate's bounds: the Wilson lower bound and its cluster-aware form for the floor, and the
design effect of clustered items. Pure, no I/O (docs/architecture.md#the-gate-exactly). The
paired sign-flip test is sign_flip.py; the power under a model of the items, item_model.py.

Only `scipy.special` and numpy are used, imported when needed: `scipy.stats` costs about a
second to import and a skipped run or a small gate should not pay it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from types import ModuleType


@functools.cache
def special() -> ModuleType:
    """`scipy.special`, imported once, when a p-value first needs it."""
    import scipy.special

    return scipy.special


def z_value(confidence: float) -> float:
    """The two-sided normal quantile for a confidence level (1.959964 for 95 %)."""
    return NormalDist().inv_cdf(1 - (1 - confidence) / 2)


def wilson_lower_bound(k: float, n: int, *, confidence: float = 0.95) -> float:
    """Lower end of the Wilson score interval for k successes in n trials.

    `k` may be fractional: with several runs per item it is the sum of per-item pass
    fractions. A variable in [0, 1] with mean p has variance at most p(1 − p), so the bound on
    per-item scores is conservative (`bench/soundness.py` measures its coverage).
    """
    if n <= 0:
        raise ValueError("the Wilson bound needs at least one item")
    if not 0 <= k <= n:
        raise ValueError(f"k={k} is outside 0..{n}")
    return _wilson(k / n, n, z_value(confidence))


def _wilson(p: float, n: float, z: float) -> float:
    """The Wilson lower end for a proportion p over n (possibly effective, fractional) trials."""
    z2n = z * z / n
    centre = p + z2n / 2
    spread = z * math.sqrt(p * (1 - p) / n + z2n / (4 * n))
    return max(0.0, (centre - spread) / (1 + z2n))


def design_effect(values: Sequence[float], groups: Sequence[str | None]) -> float:
    """The variance of the mean with clusters over the variance as if independent, never
    below 1: both the same sandwich estimator (squared residuals summed per cluster, and per
    item; an item in no cluster is its own), so it is 1 when every cluster is one item."""
    n = len(values)
    if n < 2:
        return 1.0
    mean = math.fsum(values) / n
    sums: dict[str, list[float]] = {}
    singles = 0
    for value, group in zip(values, groups, strict=True):
        if group is None:
            singles += 1
        else:
            sums.setdefault(group, []).append(value)
    units = singles + len(sums)
    if units == n:
        return 1.0
    if units < 2:
        return math.inf
    independent = math.fsum((v - mean) ** 2 for v in values)
    if independent <= 0:
        return 1.0
    in_clusters = math.fsum((v - mean) ** 2 for members in sums.values() for v in members)
    per_cluster = math.fsum((math.fsum(m) - mean * len(m)) ** 2 for m in sums.values())
    clustered = independent - in_clusters + per_cluster
    return max(1.0, (clustered * units / (units - 1)) / (independent * n / (n - 1)))


@dataclass(frozen=True)
class FloorBound:
    """The floor's lower bound, and how clusters widened it."""

    lower: float
    design_effect: float = 1.0  # variance of the mean with clusters / as independent items
    effective_items: float | None = None  # n / design effect, after the t correction
    clusters: int | None = None  # clusters of two or more counted items


def floor_bound(
    scores: Sequence[float],
    groups: Sequence[str | None],
    *,
    confidence: float = 0.95,
    df_correction: bool = True,
) -> FloorBound:
    """The lower bound the floor is on: Wilson's, over an effective number of items when items
    share a cluster.

    Without clusters (no cluster holds two counted items) it is exactly `wilson_lower_bound`.
    With them, the Wilson interval on the effective sample size (Kish): n / deff, deff = the
    cluster-robust variance of the mean over the variance as if the items were independent
    (both the same sandwich estimator, so deff = 1 when every cluster is one item), never below
    1; then the Korn–Graubard degrees-of-freedom correction, n_eff · (z / t_{G−1})², for the G
    clusters the variance was estimated from. Korn & Graubard, "Confidence intervals for
    proportions with small expected number of positive counts estimated from survey data",
    Survey Methodology 24 (1998); Dean & Pagano, "Evaluating confidence interval methods for
    binomial proportions in clustered surveys", J. Survey Stat. Methodol. 3 (2015).
    `bench/soundness.py` chose it by simulation over the plain deff correction.
    """
    n = len(scores)
    if n <= 0:
        raise ValueError("the floor's bound needs at least one item")
    total = math.fsum(scores)
    p = min(1.0, max(0.0, total / n))
    z = z_value(confidence)
    sums: dict[str, list[float]] = {}
    singles = 0
    for score, group in zip(scores, groups, strict=True):
        if group is None:
            singles += 1
        else:
            sums.setdefault(group, []).append(score)
    shared = sum(1 for members in sums.values() if len(members) > 1)
    if not shared:
        return FloorBound(lower=_wilson(p, n, z))
    units = singles + len(sums)  # G: clusters, and items in none
    if units < 2:  # one cluster holds every item: nothing to estimate its variance from
        return FloorBound(lower=0.0, design_effect=math.inf, effective_items=0.0, clusters=1)
    deff = design_effect(scores, groups)
    effective = n / deff
    if df_correction:
        t = float(special().stdtrit(units - 1, 1 - (1 - confidence) / 2))
        effective *= (z / t) ** 2
    return FloorBound(
        lower=_wilson(p, effective, z),
        design_effect=deff,
        effective_items=effective,
        clusters=shared,
    )


def floor_percent(value: float) -> str:
    """A proportion as a whole percentage rounded down: a bound is never overstated."""
    return f"{math.floor(value * 100 + 1e-9)}%"
