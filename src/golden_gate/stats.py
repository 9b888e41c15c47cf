"""The statistics of the gate: pure functions, no I/O (DESIGN §4)."""

from __future__ import annotations

import math


def wilson_lower_bound(k: int, n: int, *, confidence: float = 0.95) -> float:
    """Lower end of the Wilson score interval for k successes in n trials."""
    if n <= 0:
        raise ValueError("the Wilson bound needs at least one item")
    if not 0 <= k <= n:
        raise ValueError(f"k={k} is outside 0..{n}")
    from scipy.stats import binomtest  # lazily: a skipped run never pays for scipy

    low = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson").low
    return max(0.0, float(low))


def sign_test_p(b: int, c: int) -> float:
    """One-sided exact sign test (exact McNemar): P(X >= b), X ~ Binomial(b + c, 1/2).

    b = items the baseline passed and the candidate failed, c = the reverse.
    """
    if b < 0 or c < 0:
        raise ValueError("discordant counts cannot be negative")
    if b + c == 0:
        return 1.0
    from scipy.stats import binomtest

    return float(binomtest(b, b + c, 0.5, alternative="greater").pvalue)


def min_discordant_for_significance(alpha: float) -> int:
    """The fewest discordant items with which the sign test can reach p < alpha at all.

    The smallest p-value with m discordant items is 0.5**m (all of them regressions).
    """
    if not 0 < alpha < 1:
        raise ValueError("alpha must be in (0, 1)")
    m = math.ceil(math.log(alpha) / math.log(0.5))
    while 0.5**m >= alpha:
        m += 1
    while m > 1 and 0.5 ** (m - 1) < alpha:
        m -= 1
    return m
