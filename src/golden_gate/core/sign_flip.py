"""The paired sign-flip test on per-item score differences: exact (by convolution) up to a
support limit, a seeded Monte-Carlo estimate beyond it; with one run per item it is exactly the
sign test (docs/architecture.md#the-gate-exactly). Pure."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from golden_gate.core.stats import special

# Above this many units of support the exact sign-flip distribution is replaced by a seeded
# Monte-Carlo estimate (about 40 MB of float64 and well under a second of FFTs at the cap).
EXACT_SUPPORT_LIMIT = 5_000_000
MONTE_CARLO_DRAWS = 200_000
MONTE_CARLO_SEED = 20240917


def sign_test_p(b: int, c: int) -> float:
    """One-sided exact sign test (exact McNemar): P(X >= b), X ~ Binomial(b + c, 1/2), as the
    float nearest the exact rational value (integers only, no scipy).

    b = items the baseline passed and the candidate failed, c = the reverse.
    """
    if b < 0 or c < 0:
        raise ValueError("discordant counts cannot be negative")
    if b == 0:
        return 1.0
    n = b + c
    # Sum the tail away from the middle, T(m) = sum of C(n, k) for k >= m with m > n/2: for
    # b above n/2 that is the p-value itself, else p = 1 - P(X <= b - 1) = 1 - T(n - b + 1).
    upper = 2 * b > n
    m = b if upper else n - b + 1
    # T(m) = C(n, m) * S, S = sum over j of r_0 ... r_{j-1}, r_i = (n - m - i) / (m + 1 + i):
    # each ratio is below 1 and smaller than the one before, so after J terms the rest of S is
    # at most the next product / (1 - r_J) (a geometric bound). The first J terms are summed
    # in exact rationals (binary splitting), J doubling until the float of the lower end and
    # that of the upper end agree: rounding is monotone, so the exact p rounds to that float
    # too. Near n/2 that takes about sqrt(n) terms, where summing all n/2 would be quadratic
    # (a p exactly halfway between two floats would take them all: still exact, only slower).
    first = _binomial(n, m)
    terms = n - m + 1  # r_{n-m} = 0: no term after these
    done = min(32, terms)
    product, denominator, partial = _ratio_series(n, m, 0, done)
    while True:
        k = m + done
        spread = 2 * k + 1 - n
        scale = denominator << n  # p is (the tail sum * denominator) / scale
        # Bit lengths first, cheaply: is the error below 2^-60 of p, or below 2^-1100?
        f_bits = first.bit_length()
        error_bits = f_bits + product.bit_length() + ((k + 1) // spread + 1).bit_length()
        value_bits = f_bits + partial.bit_length() - 2 if upper else scale.bit_length() - 2
        if (
            product == 0
            or min(error_bits + 60 - value_bits, error_bits + 1100 - scale.bit_length()) <= 0
        ):
            low = first * partial
            error = -(-(first * product * (k + 1)) // spread)
            if upper:
                p, q = low / scale, (low + error) / scale  # int / int: correctly rounded
            else:
                p, q = (scale - low - error) / scale, (scale - low) / scale
            if p == q:
                return p
        more = min(2 * done, terms)
        product2, denominator2, partial2 = _ratio_series(n, m, done, more)
        partial = partial * denominator2 + product * partial2
        product, denominator, done = product * product2, denominator * denominator2, more


def _ratio_series(n: int, m: int, lo: int, hi: int) -> tuple[int, int, int]:
    """For r_i = (n - m - i) / (m + 1 + i): the product of r_lo..r_{hi-1} as P / D, and the sum
    over j in lo..hi-1 of r_lo ... r_{j-1} as S / D; returns (P, D, S)."""
    if hi - lo == 1:
        return n - m - lo, m + 1 + lo, m + 1 + lo
    mid = (lo + hi) // 2
    p1, d1, s1 = _ratio_series(n, m, lo, mid)
    p2, d2, s2 = _ratio_series(n, m, mid, hi)
    return p1 * p2, d1 * d2, s1 * d2 + p1 * s2


def _binomial(n: int, k: int) -> int:
    """C(n, k): math.comb while k or n - k is small, else from its prime factors (Python
    3.11's math.comb takes ~170 ms for C(100 000, 50 000), the prime factors ~7 ms)."""
    if min(k, n - k) <= 1_000:
        return math.comb(n, k)
    return _binomial_from_primes(n, k)


def _binomial_from_primes(n: int, k: int) -> int:
    """C(n, k) as the product of p^e over primes p <= n, e = the carries when adding k and
    n - k in base p (Kummer), counted as sum over i of n // p^i - k // p^i - (n - k) // p^i."""
    factors = []
    root = math.isqrt(n)
    for p in _primes(n):
        if p > root:
            if n // p - k // p - (n - k) // p:
                factors.append(p)
            continue
        power, q = 0, p
        while q <= n:
            power += n // q - k // q - (n - k) // q
            q *= p
        if power:
            factors.append(p**power)
    # Multiplied in pairs, so the large products are of similar sizes (fast for big integers).
    while len(factors) > 1:
        factors = [math.prod(factors[i : i + 2]) for i in range(0, len(factors), 2)]
    return factors[0] if factors else 1


def _primes(n: int) -> list[int]:
    """The primes up to n (a sieve of Eratosthenes)."""
    sieve = bytearray([1]) * (n + 1)
    sieve[:2] = bytes(min(2, n + 1))
    for p in range(2, math.isqrt(n) + 1):
        if sieve[p]:
            sieve[p * p :: p] = bytes(len(range(p * p, n + 1, p)))
    return list(itertools.compress(range(n + 1), sieve))


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


@dataclass(frozen=True)
class PairedTest:
    """The one-sided paired sign-flip test on per-item (or per-cluster) score differences."""

    p_value: float
    method: str  # "sign test", "exact sign-flip" or "Monte-Carlo sign-flip"
    units: int  # the differences that are not zero: items, or clusters when clustered
    error: float | None = None  # the Monte-Carlo standard error of p, when estimated

    @property
    def min_possible_p(self) -> float:
        """The smallest p-value the test could give with this many non-zero differences."""
        return 0.5**self.units


def paired_sign_flip_test(differences: Sequence[Fraction]) -> PairedTest:
    """H0: each difference is as likely negative as positive; H1: the candidate is worse.

    T = sum of the differences; p = P(T* <= T) with T* the sum under independent random signs
    (exact, so no normal approximation). Differences of ±1 (one run per item) give exactly the
    sign test; otherwise the exact distribution is built from the distinct magnitudes, and a
    support too wide for that falls back to a seeded Monte-Carlo estimate with its error.
    """
    nonzero = [d for d in differences if d != 0]
    if not nonzero:
        return PairedTest(p_value=1.0, method="sign test", units=0)
    if all(abs(d) == abs(nonzero[0]) for d in nonzero):
        b = sum(1 for d in nonzero if d < 0)
        return PairedTest(
            p_value=sign_test_p(b, len(nonzero) - b), method="sign test", units=len(nonzero)
        )
    # T* <= T  ⟺  the weight given a minus sign is at least the observed negative weight.
    # By symmetry of the signs that is P(S >= negatives), S = the weight given a plus sign.
    scale = math.lcm(*(d.denominator for d in nonzero))
    weights = [abs(d.numerator) * (scale // d.denominator) for d in nonzero]
    common = math.gcd(*weights)
    weights = [w // common for w in weights]
    negatives = sum(w for d, w in zip(nonzero, weights, strict=True) if d < 0)
    total = sum(weights)
    if total <= EXACT_SUPPORT_LIMIT:
        pmf = weighted_binomial_pmf(Counter(weights), total)
        p = float(min(1.0, max(0.0, pmf[negatives:].sum())))
        return PairedTest(p_value=p, method="exact sign-flip", units=len(nonzero))
    # Too wide for the exact distribution (or runs counted so unevenly that the common
    # denominator explodes): sample the signs, on the magnitudes as floats.
    magnitudes = Counter(abs(float(d)) for d in nonzero)
    observed = sum(abs(float(d)) for d in nonzero if d < 0)
    p, error = _monte_carlo_tail(magnitudes, observed)
    return PairedTest(p_value=p, method="Monte-Carlo sign-flip", units=len(nonzero), error=error)


def weighted_binomial_pmf(counts: Counter[int], total: int):  # -> numpy array
    """The distribution of S = sum over distinct weights w of w · Binomial(m_w, 1/2)."""
    import numpy as np

    gammaln = special().gammaln
    pmf = np.ones(1)
    for weight, m in sorted(counts.items()):
        k = np.arange(m + 1)
        # In logs: C(m, k) / 2^m overflows a float from m = 1,024 on.
        binomial = np.exp(gammaln(m + 1) - gammaln(k + 1) - gammaln(m - k + 1) - m * math.log(2))
        scaled = np.zeros(weight * m + 1)
        scaled[::weight] = binomial
        pmf = _convolve(pmf, scaled)
    assert len(pmf) == total + 1
    return np.clip(pmf, 0.0, None)


def _convolve(a, b):  # numpy arrays
    import numpy as np

    if len(a) * len(b) <= 4_000_000:
        return np.convolve(a, b)
    size = len(a) + len(b) - 1
    fft_size = 1 << (size - 1).bit_length()
    out = np.fft.irfft(np.fft.rfft(a, fft_size) * np.fft.rfft(b, fft_size), fft_size)[:size]
    return out


def _monte_carlo_tail(counts: Counter[float], threshold: float) -> tuple[float, float]:
    import numpy as np

    rng = np.random.default_rng(MONTE_CARLO_SEED)
    s = np.zeros(MONTE_CARLO_DRAWS)
    for weight, m in sorted(counts.items()):
        s += weight * rng.binomial(m, 0.5, size=MONTE_CARLO_DRAWS)
    # A relative tolerance: sums of the same floats in another order may differ in the last bit.
    hits = int((s >= threshold * (1 - 1e-12)).sum())
    # (hits + 1) / (draws + 1): a valid p-value for a Monte-Carlo test, never exactly zero.
    p = (hits + 1) / (MONTE_CARLO_DRAWS + 1)
    return p, math.sqrt(p * (1 - p) / MONTE_CARLO_DRAWS)
