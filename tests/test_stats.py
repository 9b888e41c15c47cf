"""The statistics against DESIGN §4's reference values and an independent oracle (statsmodels)."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

from golden_gate.stats import min_discordant_for_significance, sign_test_p, wilson_lower_bound


def design_formula(k: int, n: int, z: float = 1.96) -> float:
    p = k / n
    return (p + z * z / (2 * n) - z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (
        1 + z * z / n
    )


def test_reference_values_from_the_design():
    assert round(wilson_lower_bound(19, 20), 4) == 0.7639
    assert round(wilson_lower_bound(190, 200), 4) == 0.9104


def test_wilson_matches_statsmodels_on_thousands_of_cases():
    cases = 0
    for n in range(1, 121):
        for k in range(0, n + 1):
            low, _ = proportion_confint(k, n, alpha=0.05, method="wilson")
            assert wilson_lower_bound(k, n) == pytest.approx(max(low, 0.0), abs=1e-9)
            # The brief's closed form with z = 1.96 agrees to the fourth decimal.
            assert wilson_lower_bound(k, n) == pytest.approx(design_formula(k, n), abs=5e-5)
            cases += 1
    assert cases > 7000


@pytest.mark.parametrize("confidence", [0.8, 0.9, 0.99])
def test_wilson_other_confidence_levels_match_statsmodels(confidence):
    for n in (5, 20, 200, 1000):
        for k in (0, n // 3, n // 2, n - 1, n):
            low, _ = proportion_confint(k, n, alpha=1 - confidence, method="wilson")
            assert wilson_lower_bound(k, n, confidence=confidence) == pytest.approx(
                max(low, 0.0), abs=1e-9
            )


def test_sign_test_matches_exact_mcnemar_on_thousands_of_cases():
    cases = 0
    for b in range(0, 70):
        for c in range(0, 70):
            if b + c == 0:
                assert sign_test_p(b, c) == 1.0
                continue
            # statsmodels' exact McNemar is two-sided: min(1, 2 * P(X <= min(b, c))).
            two_sided = mcnemar([[0, b], [c, 0]], exact=True).pvalue
            ours = sign_test_p(b, c)
            if b > c:
                assert min(1.0, 2 * ours) == pytest.approx(two_sided, rel=1e-9, abs=1e-12)
            elif b == c:
                assert two_sided == pytest.approx(1.0)
            # And against the binomial tail computed directly.
            direct = sum(math.comb(b + c, i) for i in range(b, b + c + 1)) / 2 ** (b + c)
            assert ours == pytest.approx(direct, rel=1e-9)
            cases += 1
    assert cases > 4000


def test_sign_test_reference_examples():
    assert sign_test_p(0, 0) == 1.0
    assert sign_test_p(10, 0) == pytest.approx(1 / 1024)
    assert sign_test_p(5, 0) == pytest.approx(1 / 32)
    assert sign_test_p(0, 5) == 1.0


def test_min_discordant():
    assert min_discordant_for_significance(0.05) == 5
    assert min_discordant_for_significance(0.01) == 7
    assert min_discordant_for_significance(0.5) == 2
    for alpha in (0.2, 0.1, 0.05, 0.01, 0.001):
        m = min_discordant_for_significance(alpha)
        assert sign_test_p(m, 0) < alpha
        assert sign_test_p(m - 1, 0) >= alpha


def test_bad_arguments():
    with pytest.raises(ValueError):
        wilson_lower_bound(0, 0)
    with pytest.raises(ValueError):
        wilson_lower_bound(5, 4)
    with pytest.raises(ValueError):
        sign_test_p(-1, 2)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 5000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_bound_within_zero_and_p(kn):
    k, n = kn
    low = wilson_lower_bound(k, n)
    assert 0.0 <= low <= k / n + 1e-12


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 3000).flatmap(lambda n: st.tuples(st.integers(0, n - 1), st.just(n))))
def test_bound_monotone_in_k(kn):
    k, n = kn
    assert wilson_lower_bound(k + 1, n) > wilson_lower_bound(k, n)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 400), st.integers(0, 400))
def test_one_more_regression_never_raises_p(b, c):
    # A shared item turning from pass to fail either adds a regression or removes an improvement.
    assert sign_test_p(b + 1, c) <= sign_test_p(b, c) + 1e-12
    if c > 0:
        assert sign_test_p(b + 1, c - 1) <= sign_test_p(b, c) + 1e-12
