"""The power of the paired test, under a model of the items (their pass probabilities, spread
between and within items): simulated gates, the smallest drop caught 80 % of the time, the items
a drop needs. Pure; numpy imported when needed (docs/architecture.md#the-gate-exactly)."""

from __future__ import annotations

import functools
import math
from collections import Counter
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

from golden_gate.core.sign_flip import min_discordant_for_significance, weighted_binomial_pmf
from golden_gate.core.stats import special

# The power of the paired test, under a model of the items (step 18;
# docs/architecture.md#the-gate-exactly).
POWER_NODES = 64  # quantile nodes of the items' pass probabilities
POWER_DRAWS = 2_000  # simulated gates a power figure, with several runs an item
POWER_SEED = 20261201
# What a drop is assumed to look like: the share of its passes each item it hits loses. Spread:
# every item loses alike; concentrated: a few items lose half their passes. At a few dozen
# items the two differ by many points of power, so the gate states both (bench/soundness.py).
SPREAD = 0.0
CONCENTRATED = 0.5


@dataclass(frozen=True)
class ItemModel:
    """What the power of the paired test is computed under.

    Items are independent draws from a population whose per-run pass probabilities p follow a
    Beta distribution with this mean and mean within-item variance E[p(1 − p)] (`within`); a
    drop of δ hits the most reliable items, each losing the share `hit_loss` of its passes (q =
    p · (1 − hit_loss); SPREAD: every item loses δ points), so it adds the variance a real drop
    adds. `design_effect`: the differences' clustering, counted as n / deff independent items.
    """

    mean: float
    within: float
    base_runs: int = 1
    runs: int = 1
    design_effect: float = 1.0
    hit_loss: float = SPREAD

    @property
    def steady(self) -> bool:
        """Every item always passes or always fails, one run a side."""
        return self.within <= 1e-12 and self.base_runs == 1 and self.runs == 1

    def differences(self, drop: float):  # -> (values, probabilities), numpy arrays
        """The distribution of one item's score difference d = s_cand − s_base."""
        values, untouched, hit, share = self.difference_parts(drop)
        return values, (1 - share) * untouched + share * hit

    def difference_parts(self, drop: float):  # -> (values, untouched, hit, share)
        """d's distribution for the items the drop leaves alone and for those it hits, and the
        share it hits (a golden set's drop of δ hits that share of its items, no more)."""
        import numpy as np

        mean = min(max(self.mean, 1e-9), 1.0)
        within = min(max(self.within, 0.0), mean * (1 - mean))
        between = mean * (1 - mean) - within
        nodes, weights = _beta_nodes(mean, within, between)
        # The items hit lose the share `lost` of their passes (Σ hit · lost · p = drop); a drop
        # above hit_loss of the mean, or a spread one, takes from every item alike.
        lost = min(1.0, max(self.hit_loss, drop / mean))
        hit = np.full(len(nodes), drop / (lost * mean) if lost > 0 else 0.0)
        lowered = np.clip(nodes * (1 - lost), 0.0, 1.0)
        if self.hit_loss == SPREAD:
            # Every item loses the same points (none below zero), as many as make the drop.
            low, high = drop, 1.0
            for _ in range(40):
                mid = (low + high) / 2
                low, high = (mid, high) if weights @ np.minimum(nodes, mid) < drop else (low, mid)
            lowered, hit = np.clip(nodes - high, 0.0, 1.0), np.ones(len(nodes))
        elif lost > drop / mean:
            # Concentrated on the most reliable items: the most changed outcomes for the drop,
            # so the hardest drop of this size for a test that counts them.
            order = np.argsort(-nodes, kind="stable")
            mass = weights[order] * nodes[order] * lost
            before = np.cumsum(mass) - mass
            hit[order] = np.clip((drop - before) / np.maximum(mass, 1e-300), 0.0, 1.0)
        rb, rc = self.base_runs, self.runs
        scale = math.lcm(rb, rc)
        x, y = np.arange(rb + 1), np.arange(rc + 1)
        base = _binomial_rows(x, rb, nodes)  # nodes × (rb + 1)
        same = _binomial_rows(y, rc, nodes)
        less = _binomial_rows(y, rc, lowered)
        index = y[None, :] * (scale // rc) - x[:, None] * (scale // rb) + scale

        def spread(node_weights, cand):  # d's distribution over these items
            probs = np.zeros(2 * scale + 1)
            np.add.at(probs, index, np.einsum("n,ni,nj->ij", node_weights, base, cand))
            total = probs.sum()
            return probs / total if total > 0 else probs

        share = float(min(1.0, weights @ hit))
        values = (np.arange(2 * scale + 1) - scale) / scale
        return values, spread(weights * (1 - hit), same), spread(weights * hit, less), share


@functools.lru_cache(maxsize=256)
def _beta_nodes(mean: float, within: float, between: float):  # -> numpy arrays
    """Pass probabilities and their weights: quantile nodes of the Beta distribution."""
    import numpy as np

    if within <= 1e-12:  # every item always passes or always fails
        return np.array([0.0, 1.0]), np.array([1 - mean, mean])
    if between <= 1e-12:  # every item as variable as the average
        return np.array([mean]), np.array([1.0])
    size = mean * (1 - mean) / between - 1
    quantiles = (np.arange(POWER_NODES) + 0.5) / POWER_NODES
    nodes = special().betaincinv(mean * size, (1 - mean) * size, quantiles)
    return nodes, np.full(POWER_NODES, 1 / POWER_NODES)


def _binomial_rows(k, runs: int, p):  # numpy arrays
    comb = special().comb(runs, k)
    return comb[None, :] * p[:, None] ** k[None, :] * (1 - p[:, None]) ** (runs - k[None, :])


def paired_power(model: ItemModel, drop: float, n: int, *, alpha: float, min_drop: float) -> float:
    """P(the gate's paired test fails it) with n items (n / deff independent ones) when the
    mean per-item score falls by `drop`: the test the gate runs, significant (p < alpha) with
    a net drop above min-drop.

    One run a side: exactly, the sign test over the binomial number of changed items. Several:
    by POWER_DRAWS seeded draws of the items' differences, each tested by the sign-flip test's
    normal form with a continuity correction (the exact test's distribution is a sum of many
    symmetric ± terms; `bench/soundness.py` checks the figures against the exact test).
    """
    units = int(n / model.design_effect) if model.design_effect > 1 else n
    if units <= 0 or alpha <= 0:
        return 0.0
    if model.steady:
        # Items that always pass or always fail, one run a side: each item the drop hits is a
        # regression and nothing improves, so the gate fails once there are enough of them.
        # In plain Python: a gate with nothing to test imports no numpy or scipy.
        fewest = max(min_discordant_for_significance(alpha), math.floor(units * min_drop) + 1)
        return _binomial_at_least(fewest, units, min(max(drop, 0.0), 1.0))
    import numpy as np

    values, probs = model.differences(drop)
    scale = len(values) // 2
    if scale == 1:
        return _sign_test_power(probs[0], probs[2], units, alpha=alpha, min_drop=min_drop)
    rng = np.random.default_rng(POWER_SEED)
    values, untouched, hit, share = model.difference_parts(drop)
    # As many items hit as make the golden set's mean drop by `drop` (rounded at random).
    hits = np.floor(units * share + rng.random(POWER_DRAWS)).astype(np.int64)
    counts = _multinomial_rows(rng, units - hits, untouched) + _multinomial_rows(rng, hits, hit)
    total = counts @ values
    squares = counts @ (values * values)
    if units <= EXACT_POWER_UNITS:
        significant = _exact_significant(counts, scale, alpha)
    else:
        z = NormalDist().inv_cdf(1 - alpha)
        # p = P(T* <= T) ≈ Φ((T + h) / sqrt(Σd²)), h half the finest step of T*'s lattice.
        significant = (total + 1 / scale) < -z * np.sqrt(squares)
    caught = significant & (squares > 0) & (-total / units > min_drop)
    return float(caught.mean())


def _multinomial_rows(rng, trials, probs):  # -> counts, one row per draw
    import numpy as np

    if probs.sum() <= 0:
        return np.zeros((len(trials), len(probs)), dtype=np.int64)
    return rng.multinomial(trials, probs)


# Up to this many items the simulated gates run the exact sign-flip test, as the gate does: the
# normal form misjudges a few dozen large differences.
EXACT_POWER_UNITS = 120
_CRITICAL_WEIGHTS: dict[tuple[float, tuple[int, ...]], int] = {}


def _exact_significant(counts, scale: int, alpha: float):  # numpy arrays -> bool array
    """Per simulated gate (its counts of each difference −scale..scale, in steps of 1/scale),
    whether the exact sign-flip test is significant: P(S >= negative weight) < alpha, S the
    weight given a plus sign (paired_sign_flip_test). Kept per magnitude counts: simulated
    gates of a few dozen items repeat them."""
    import numpy as np

    steps = np.arange(1, scale + 1)
    magnitudes = counts[:, scale + 1 :] + counts[:, scale - 1 :: -1][:, :scale]
    negatives = counts[:, scale - 1 :: -1][:, :scale] @ steps
    critical = np.empty(len(counts), dtype=np.int64)
    for row, key in enumerate(map(tuple, magnitudes.tolist())):
        found = _CRITICAL_WEIGHTS.get((alpha, key))
        if found is None:
            total = int(np.dot(key, steps))
            pmf = weighted_binomial_pmf(Counter(dict(zip(steps.tolist(), key, strict=True))), total)
            tail = np.cumsum(pmf[::-1])[::-1]  # tail[k] = P(S >= k)
            below = np.flatnonzero(tail < alpha)
            found = int(below[0]) if len(below) else total + 1
            _CRITICAL_WEIGHTS[(alpha, key)] = found
        critical[row] = found
    return negatives >= critical


def _binomial_at_least(k: int, n: int, p: float) -> float:
    """P(X >= k), X ~ Binomial(n, p), summing the k terms below it in logs."""
    if k <= 0:
        return 1.0
    if k > n or p <= 0:
        return 0.0
    if p >= 1:
        return 1.0
    log_p, log_q = math.log(p), math.log1p(-p)
    below = math.fsum(
        math.exp(
            math.lgamma(n + 1)
            - math.lgamma(j + 1)
            - math.lgamma(n - j + 1)
            + j * log_p
            + (n - j) * log_q
        )
        for j in range(k)
    )
    return min(1.0, max(0.0, 1.0 - below))


def _sign_test_power(regress: float, improve: float, n: int, *, alpha: float, min_drop: float):
    """Exact: M ~ Binomial(n, P(changed)), regressions B | M ~ Binomial(M, share); the gate
    fails when P(Binomial(M, 1/2) >= B) < alpha and (2B − M) / n > min_drop."""
    import numpy as np

    sp = special()

    def upper(k, trials, p):  # P(X > k), X ~ Binomial(trials, p), for any integer k
        return np.where(
            k < 0, 1.0, np.where(k >= trials, 0.0, sp.bdtrc(np.maximum(k, 0), trials, p))
        )

    changed = regress + improve
    if changed <= 0:
        return 0.0
    share = min(1.0, regress / changed)
    mean, sd = n * changed, math.sqrt(n * changed * (1 - changed))
    low, high = max(0, int(mean - 12 * sd - 2)), min(n, int(mean + 12 * sd + 2))
    m = np.arange(low, high + 1)
    b = _critical_counts(high, alpha)[low : high + 1]
    b = np.maximum(b, np.floor((m + n * min_drop) / 2) + 1)  # net drop above min-drop
    weight = upper(m - 1, n, changed) - upper(m, n, changed)
    return float(min(1.0, max(0.0, (weight * upper(b - 1, m, share)).sum())))


_CRITICAL: dict[float, Any] = {}  # alpha -> critical counts for M = 0, 1, ...


def _critical_counts(high: int, alpha: float):  # -> numpy array
    """For each number M = 0..(at least) high of changed items, the sign test's critical count:
    the smallest b with P(X >= b) < alpha, X ~ Binomial(M, 1/2) (M + 1 when none is). Kept
    per alpha, grown by doubling: a power search asks for it dozens of times."""
    import numpy as np

    known = _CRITICAL.get(alpha)
    if known is not None and len(known) > high:
        return known
    sp = special()

    def upper(k, m):  # P(X > k)
        return np.where(k < 0, 1.0, np.where(k >= m, 0.0, sp.bdtrc(np.maximum(k, 0), m, 0.5)))

    m = np.arange(max(1024, 2 * high + 1))
    z = NormalDist().inv_cdf(1 - alpha)
    b = np.maximum(np.floor(m / 2 + z * np.sqrt(m) / 2) - 3, 0)
    while (short := (b <= m) & (upper(b - 1, m) >= alpha)).any():
        b = np.where(short, b + 1, b)
    while (spare := (b >= 1) & (upper(b - 2, m) < alpha)).any():
        b = np.where(spare, b - 1, b)
    _CRITICAL[alpha] = b
    return b


@dataclass(frozen=True)
class Power:
    """The drop the paired test catches with probability `power`, and the items it takes."""

    detectable_drop: float | None  # None: no drop up to the whole mean is caught that often
    items_for_drop: int | None  # items needed to catch `target_drop`; None: no n suffices
    target_drop: float
    power: float


def _normal_guess(model: ItemModel, drop: float, alpha: float, power: float) -> float:
    """Items a drop needs by the normal approximation, under the alternative's own variance:
    where the searches below start (the figure itself is the exact or simulated power's)."""
    if model.steady:  # d is −1 with probability `drop`, else 0
        mean, variance = -drop, max(drop * (1 - drop), 1e-12)
    else:
        values, probs = model.differences(drop)
        mean = float(probs @ values)
        variance = max(float(probs @ (values * values)) - mean * mean, 1e-12)
    normal = NormalDist()
    z = normal.inv_cdf(1 - alpha) + normal.inv_cdf(power)
    return min(max(z * z * variance / max(-mean, 1e-9) ** 2, 1.0), 1e9)


def detectable_drop(
    model: ItemModel, *, n: int, alpha: float, min_drop: float, power: float = 0.80
) -> float | None:
    """The drop caught with probability `power` at n items, to 0.1 point (the upper end)."""

    def caught(drop: float) -> bool:
        return paired_power(model, drop, n, alpha=alpha, min_drop=min_drop) >= power

    top = model.mean  # a drop takes a share of the passes: at most all of them
    if n <= 0 or not caught(top):
        return None
    # Bracket around the normal approximation's drop (a few guesses), then bisect.
    low, high = 0.0, top
    guess = top / 2
    for _ in range(30):  # the drop whose normal-approximation sample size is n
        items = _normal_guess(model, guess, alpha, power)
        step = guess * math.sqrt(items / n)
        if abs(step - guess) < 1e-4:
            break
        guess = min(top, max(1e-4, step))
    for factor in (1.0, 1.3, 1.8):
        candidate = min(top, guess * factor)
        if caught(candidate):
            high = candidate
            break
        low = max(low, candidate)
    for factor in (0.8, 0.6):
        candidate = guess * factor
        if candidate <= low or candidate >= high:
            continue
        if caught(candidate):
            high = candidate
        else:
            low = candidate
            break
    while high - low > 0.001:
        mid = (low + high) / 2
        low, high = (low, mid) if caught(mid) else (mid, high)
    # Stated to 0.1 point, rounded up; the bits below that differ with the BLAS kernel.
    return min(top, math.ceil(round(high * 1000, 6)) / 1000)


def items_for_drop(
    model: ItemModel,
    drop: float,
    *,
    alpha: float,
    min_drop: float,
    power: float = 0.80,
    max_items: int = 200_000,
) -> int | None:
    """The fewest items that catch `drop` with probability `power`; None: not even max_items."""

    def caught(items: int) -> bool:
        return paired_power(model, drop, items, alpha=alpha, min_drop=min_drop) >= power

    if drop > model.mean or drop <= min_drop:
        return None
    guess = min(max_items, max(1, round(_normal_guess(model, drop, alpha, power))))
    # Bracket: up from the guess until caught, down until not, then bisect.
    high = guess
    while not caught(high):
        if high >= max_items:
            return None
        high = min(max_items, math.ceil(high * 1.25) + 1)
    low = high
    while low > 1:
        low = max(1, math.floor(low / 1.25))
        if not caught(low):
            break
    else:
        return 1
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if caught(mid) else (mid, high)
    return high


def power_of(
    model: ItemModel,
    *,
    n: int,
    alpha: float,
    min_drop: float,
    power: float = 0.80,
    target_drop: float = 0.05,
) -> Power:
    """The drop caught with probability `power` at n items, and the items `target_drop` needs."""
    return Power(
        detectable_drop=detectable_drop(model, n=n, alpha=alpha, min_drop=min_drop, power=power),
        items_for_drop=items_for_drop(
            model, target_drop, alpha=alpha, min_drop=min_drop, power=power
        ),
        target_drop=target_drop,
        power=power,
    )
