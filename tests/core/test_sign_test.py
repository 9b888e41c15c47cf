"""The sign test's p-value from exact integers (core/sign_flip.py `sign_test_p`): the float
nearest the exact binomial tail, against its definition summed in full, and scipy as the oracle."""

import math
from fractions import Fraction

import pytest
import scipy.special
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from golden_gate.core import sign_flip
from golden_gate.core.sign_flip import sign_test_p

GRID = [0, 1, 2, 5, 30, 1_000, 24_800, 25_000, 25_200, 50_000]


def exact_tail(b: int, c: int) -> float:
    """The definition, every term summed: C(n, k) for k >= b, over 2^n, rounded once."""
    n = b + c
    term, total = 1, 0  # C(n, n)
    for k in range(n, b - 1, -1):
        total += term
        term = term * k // (n - k + 1)  # C(n, k - 1)
    return float(Fraction(total, 2**n))


def test_small_counts_give_exactly_the_fraction():
    for n in range(0, 101):
        for b in range(0, n + 1):
            tail = sum(math.comb(n, k) for k in range(b, n + 1))
            assert sign_test_p(b, n - b) == float(Fraction(tail, 2**n)), (b, n - b)


@pytest.mark.parametrize("n", [257, 1_000, 2_001, 5_000, 12_345])
def test_where_the_sum_stops_early_the_float_is_still_the_exact_one(n):
    # Near n/2 the sum stops after about sqrt(n) terms; far out every term is summed.
    root = math.isqrt(n)
    counts = {n // 2 + j * root // 2 for j in range(-12, 13)} | {1, 2, n - 2, n - 1, n}
    for b in sorted(counts):
        assert sign_test_p(b, n - b) == exact_tail(b, n - b), (b, n - b)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 4_000), st.integers(0, 4_000))
def test_any_counts_give_the_exact_float(b, c):
    assert sign_test_p(b, c) == exact_tail(b, c)


@pytest.mark.parametrize(("b", "c"), [(25_000, 25_000), (25_001, 24_999), (25_300, 24_700)])
def test_fifty_thousand_discordant_items_exactly(b, c):
    assert sign_test_p(b, c) == exact_tail(b, c)
    assert sign_test_p(c, b) == exact_tail(c, b)


def test_one_more_regression_than_improvements_is_one_half_exactly():
    # P(X >= (n + 1) / 2) = 1/2 for odd n: the sum must stop on 0.5 itself, not next to it.
    for n in (1, 3, 101, 2_001, 40_001):
        assert sign_test_p((n + 1) // 2, (n - 1) // 2) == 0.5


def test_no_regression_is_p_one():
    for c in GRID:
        assert sign_test_p(0, c) == 1.0


def test_scipy_binomtest_agrees_to_1e_12():
    for b in GRID:
        for c in GRID:
            if b == 0:
                continue
            expected = binomtest(b, b + c, 0.5, alternative="greater").pvalue
            assert sign_test_p(b, c) == pytest.approx(expected, rel=1e-12, abs=1e-300), (b, c)


def test_scipy_bdtrc_agrees_as_far_as_it_is_accurate():
    # bdtrc (what the gate used before) loses digits as n grows: 2e-10 off the exact sum at
    # n = 100,000, where binomtest stays within 1e-15 (both measured against exact_tail).
    for b in GRID:
        for c in GRID:
            if b == 0:
                continue
            expected = float(scipy.special.bdtrc(b - 1, b + c, 0.5))
            rel = 1e-12 if b + c <= 2_000 else 1e-9
            assert sign_test_p(b, c) == pytest.approx(expected, rel=rel, abs=1e-300), (b, c)


def test_the_binomial_from_prime_factors_is_math_comb():
    for n in range(0, 160):
        assert [sign_flip._binomial_from_primes(n, k) for k in range(n + 1)] == [
            math.comb(n, k) for k in range(n + 1)
        ]
    for n, k in [(2_003, 1_001), (2_048, 1_024), (4_099, 2_050), (4_099, 4_098), (30_000, 15_001)]:
        assert sign_flip._binomial_from_primes(n, k) == math.comb(n, k)
        assert sign_flip._binomial(n, k) == math.comb(n, k)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 3_000), st.integers(0, 3_000))
def test_one_more_regression_never_raises_p(b, c):
    # Exactly monotone: the exact tails are, and rounding to nearest keeps the order.
    assert sign_test_p(b + 1, c) <= sign_test_p(b, c)
    if c > 0:
        assert sign_test_p(b + 1, c - 1) <= sign_test_p(b, c)
