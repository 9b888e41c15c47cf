"""The statistics against the reference values of docs/architecture.md#the-gate-exactly and an
independent oracle (statsmodels)."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

from golden_gate.core.sign_flip import min_discordant_for_significance, sign_test_p
from golden_gate.core.stats import wilson_lower_bound


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


# -- the paired sign-flip test on per-item score differences ----------------------------------

from collections import Counter  # noqa: E402
from fractions import Fraction  # noqa: E402
from itertools import product  # noqa: E402

from scipy.stats import binomtest  # noqa: E402

from golden_gate.core import item_model, sign_flip, stats  # noqa: E402
from golden_gate.core.sign_flip import paired_sign_flip_test  # noqa: E402


def brute_force_p(differences):
    """Every one of the 2^m sign assignments, counted: the definition of the exact test."""
    nonzero = [d for d in differences if d]
    observed = sum(nonzero)
    hits = sum(
        1
        for signs in product((1, -1), repeat=len(nonzero))
        if sum(s * abs(d) for s, d in zip(signs, nonzero, strict=True)) <= observed
    )
    return hits / 2 ** len(nonzero)


def test_the_normal_quantile_is_scipy_stats_own():
    # The floor's z comes from the standard library (no import to pay); scipy.stats agrees.
    from scipy.stats import norm

    for confidence in (0.5, 0.8, 0.9, 0.95, 0.99, 0.999, 0.999999):
        expected = norm.ppf(1 - (1 - confidence) / 2)
        assert stats.z_value(confidence) == pytest.approx(expected, rel=1e-12)


def test_the_exact_sign_flip_pmf_is_scipy_stats_binomial():
    from scipy.stats import binom

    for m in (1, 2, 7, 40, 1_500):
        pmf = sign_flip.weighted_binomial_pmf(Counter({1: m}), m)
        assert list(pmf) == pytest.approx(list(binom.pmf(range(m + 1), m, 0.5)), rel=1e-9)


def test_sign_test_equals_scipy_binomtest():
    for b in range(0, 60):
        for c in range(0, 60):
            if b + c == 0:
                continue
            expected = binomtest(b, b + c, 0.5, alternative="greater").pvalue if b else 1.0
            assert sign_test_p(b, c) == pytest.approx(expected, rel=1e-12, abs=1e-300)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1)), min_size=1, max_size=80))
def test_one_run_per_item_is_exactly_the_sign_test(pairs):
    differences = [Fraction(c - b) for b, c in pairs]
    regressions = sum(1 for b, c in pairs if b > c)
    improvements = sum(1 for b, c in pairs if c > b)
    test = paired_sign_flip_test(differences)
    assert test.p_value == sign_test_p(regressions, improvements)
    assert test.method == "sign test" and test.units == regressions + improvements


runs_scores = st.tuples(st.integers(1, 4), st.integers(1, 4)).flatmap(
    lambda rr: st.tuples(
        st.integers(0, rr[0]), st.just(rr[0]), st.integers(0, rr[1]), st.just(rr[1])
    )
)


@settings(max_examples=150, deadline=None)
@given(st.lists(runs_scores, min_size=1, max_size=12))
def test_several_runs_match_brute_force_enumeration(items):
    differences = [Fraction(pc, rc) - Fraction(pb, rb) for pc, rc, pb, rb in items]
    assert paired_sign_flip_test(differences).p_value == pytest.approx(
        brute_force_p(differences), abs=1e-12
    )


def test_monte_carlo_fallback_agrees_with_the_exact_distribution(monkeypatch):
    rng = __import__("random").Random(7)
    differences = [Fraction(rng.randint(-3, 3), 3) for _ in range(400)]
    differences += [Fraction(-1, 3)] * 12  # a drop, so p is in an interesting range
    exact = paired_sign_flip_test(differences)
    assert exact.method == "exact sign-flip" and exact.error is None
    monkeypatch.setattr(sign_flip, "EXACT_SUPPORT_LIMIT", 10)
    estimate = paired_sign_flip_test(differences)
    assert estimate.method == "Monte-Carlo sign-flip"
    assert abs(estimate.p_value - exact.p_value) < 4 * estimate.error + 1e-4
    assert paired_sign_flip_test(differences).p_value == estimate.p_value  # seeded


def test_fractional_wilson_is_the_design_formula():
    for n in (5, 20, 200, 1000):
        for k in (0.0, n / 3, n * 0.87, n - 0.5, float(n)):
            assert wilson_lower_bound(k, n) == pytest.approx(design_formula_real(k, n), abs=5e-5)


def design_formula_real(k: float, n: int, z: float = 1.96) -> float:
    p = k / n
    low = (p + z * z / (2 * n) - z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (
        1 + z * z / n
    )
    return max(low, 0.0)


def test_floor_percent_never_rounds_up():
    assert stats.floor_percent(0.798) == "79%"
    assert stats.floor_percent(0.7639) == "76%"
    assert stats.floor_percent(0.80) == "80%"
    assert stats.floor_percent(0.0) == "0%"


MIX = item_model.ItemModel(
    mean=0.891, within=0.8 * 0.97 * 0.03 + 0.15 * 0.7 * 0.3 + 0.05 * 0.2 * 0.8
)


def test_power_grows_with_items_and_runs():
    def drop(n, model=MIX):
        return item_model.power_of(model, n=n, alpha=0.05, min_drop=0.02).detectable_drop

    three = item_model.ItemModel(mean=MIX.mean, within=MIX.within, base_runs=3, runs=3)
    assert drop(200) > drop(1000) > drop(10_000) >= 0.02
    assert drop(200) > drop(200, three)  # three runs a side
    needed = item_model.power_of(MIX, n=200, alpha=0.05, min_drop=0.02).items_for_drop
    assert needed is not None

    def power(items):
        return item_model.paired_power(MIX, 0.05, items, alpha=0.05, min_drop=0.02)

    assert power(needed) >= 0.8 > power(needed - 1)
    # A min-drop above the target: no number of items catches it.
    assert item_model.power_of(MIX, n=200, alpha=0.05, min_drop=0.06).items_for_drop is None


@pytest.mark.parametrize(("n", "drop"), [(30, 0.2), (200, 0.06), (1000, 0.03)])
def test_one_run_power_is_the_exact_sign_test_by_brute_force(n, drop):
    """The exact figure against the gate's own sign test on drawn (b, c) counts."""
    import numpy as np

    _, probs = MIX.differences(drop)
    counts = np.random.default_rng(5).multinomial(n, probs, size=20_000)
    caught = [
        sign_flip.sign_test_p(int(b), int(c)) < 0.05 and (b - c) / n > 0.02 for b, _, c in counts
    ]
    rate = sum(caught) / len(caught)
    exact = item_model.paired_power(MIX, drop, n, alpha=0.05, min_drop=0.02)
    assert abs(rate - exact) < 4 * math.sqrt(exact * (1 - exact) / 20_000) + 1e-3


def test_several_runs_power_agrees_with_the_exact_sign_flip_test():
    """The simulated figure (the test's normal form) against the exact sign-flip test."""
    import numpy as np

    model = item_model.ItemModel(mean=MIX.mean, within=MIX.within, base_runs=3, runs=3)
    values, probs = model.differences(0.12)
    counts = np.random.default_rng(6).multinomial(30, probs, size=2_000)
    caught = 0
    for row in counts:
        differences = [
            Fraction(round(v * 3), 3) for v, k in zip(values, row, strict=True) for _ in range(k)
        ]
        drop = -float(sum(differences)) / 30
        caught += sign_flip.paired_sign_flip_test(differences).p_value < 0.05 and drop > 0.02
    estimate = item_model.paired_power(model, 0.12, 30, alpha=0.05, min_drop=0.02)
    assert abs(caught / 2_000 - estimate) < 0.04  # three standard errors of both, and a bit


def test_a_thousand_equal_differences_do_not_overflow():
    """C(m, k) / 2^m overflows a float from m = 1,024: the distribution is built in logs."""
    differences = [Fraction(-1, 3)] * 515 + [Fraction(1, 3)] * 515 + [Fraction(-2, 3)] * 3
    differences += [Fraction(1, 3)] * 600
    test = paired_sign_flip_test(differences)
    assert test.method == "exact sign-flip" and 0 < test.p_value <= 1


def test_unevenly_counted_runs_fall_back_to_monte_carlo_without_overflow():
    """Judge failures leave 85..100 counted runs: the common denominator passes 2^63."""
    rng = __import__("random").Random(1)
    differences = []
    for _ in range(300):
        counted = rng.randint(85, 100)
        differences.append(
            Fraction(rng.randint(int(counted * 0.8), counted), counted)
            - Fraction(rng.randint(80, 100), 100)
        )
    test = paired_sign_flip_test(differences)
    assert test.method == "Monte-Carlo sign-flip" and test.error is not None
    assert 0 < test.p_value <= 1
