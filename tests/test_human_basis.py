"""The human-basis floor (prediction-powered inference) against `ppi_py`, the authors' package,
as the sign test is checked against scipy."""

import random

import numpy as np
import ppi_py
import pytest

from golden_gate.core.human_basis import from_confusion, ppi_mean


def sample(rng, n, big_n, *, rate=0.7, false_pass=0.15, false_fail=0.05):
    def one():
        human = rng.random() < rate
        judged = rng.random() >= false_fail if human else rng.random() < false_pass
        return float(human), float(judged)

    pairs = [one() for _ in range(n)]
    unlabelled = [one()[1] for _ in range(big_n)]
    return [y for y, _ in pairs], [v for _, v in pairs], unlabelled


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize(("n", "big_n"), [(40, 200), (150, 150), (25, 1000)])
def test_the_estimate_and_interval_equal_ppi_py(seed, n, big_n):
    rng = random.Random(seed)
    labels, verdicts, unlabelled = sample(rng, n, big_n)
    ours = ppi_mean(labels, verdicts, unlabelled, confidence=0.95)
    arrays = [np.array(x) for x in (labels, verdicts, unlabelled)]
    lower, upper = ppi_py.ppi_mean_ci(*arrays, alpha=0.05)
    estimate = ppi_py.ppi_mean_pointestimate(*arrays)
    assert ours[0] == pytest.approx(float(np.ravel(estimate)[0]), abs=1e-12)
    assert ours[1] == pytest.approx(float(np.ravel(lower)[0]), abs=1e-12)
    assert ours[2] == pytest.approx(float(np.ravel(upper)[0]), abs=1e-12)
    # plain PPI (λ = 1) too
    fixed = ppi_mean(labels, verdicts, unlabelled, confidence=0.9, lam=1.0)
    lower, upper = ppi_py.ppi_mean_ci(*arrays, alpha=0.1, lam=1.0)
    assert fixed[1:3] == pytest.approx((float(np.ravel(lower)[0]), float(np.ravel(upper)[0])))


def test_a_confusion_table_is_the_labelled_pairs():
    # 30 labels: 18 pass/pass, 2 pass/fail, 4 fail/pass (a lenient judge), 6 fail/fail
    scores = [1.0] * 85 + [0.0] * 15
    basis = from_confusion(18, 2, 4, 6, scores)
    assert basis is not None
    labels = [1.0] * 20 + [0.0] * 10
    verdicts = [1.0] * 18 + [0.0] * 2 + [1.0] * 4 + [0.0] * 6
    lower, upper = ppi_py.ppi_mean_ci(
        np.array(labels), np.array(verdicts), np.array(scores), alpha=0.05
    )
    assert (basis.lower, basis.upper) == pytest.approx(
        (float(np.ravel(lower)[0]), float(np.ravel(upper)[0])), abs=1e-12
    )
    # the judge passed 85 %; corrected for its false passes, people would pass fewer
    assert basis.judge_rate == 0.85 and basis.estimate < 0.85
    assert from_confusion(1, 0, 0, 0, scores) is None  # one label: no interval
