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
    basis = from_confusion(18, 2, 4, 6, scores, corrected=False)
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
    # the gate's small-sample corrections widen the interval, never move the estimate
    gated = from_confusion(18, 2, 4, 6, scores)
    assert gated is not None and gated.estimate == basis.estimate
    assert gated.lower < basis.lower and gated.upper > basis.upper
    assert from_confusion(1, 0, 0, 0, scores) is None  # one label: no interval


def test_a_lenient_judge_passes_the_judge_floor_and_fails_the_human_one(tmp_path, monkeypatch):
    import json

    from tests.fakes.assistant_server import AssistantServer
    from tests.fakes.judge_server import JudgeServer
    from tests.helpers import golden_gate

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    golden = tmp_path / "golden.jsonl"
    golden.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"q{i}",
                    "question": f"How do I configure feature {i}?",
                    "reference_key_points": [f"set option {i}", "restart the server"],
                }
            )
            + "\n"
            for i in range(20)
        )
    )

    def good(i):
        return f"Set option {i} in the config, then restart the server."

    # People pass whole answers only; the lenient judge passes half an answer too.
    labels = [(good(i), "pass") for i in range(8)]
    labels += [("Restart the server.", "fail")] * 8 + [("See the docs.", "fail")] * 4
    (tmp_path / "labels.jsonl").write_text(
        "".join(
            json.dumps({"id": f"q{i}", "answer": answer, "label": label}) + "\n"
            for i, (answer, label) in enumerate(labels)
        )
    )
    answers = {f"How do I configure feature {i}?": good(i) for i in range(12)}
    answers.update({f"How do I configure feature {i}?": f"Set option {i}." for i in range(12, 20)})
    with JudgeServer() as judge:
        flags = [
            "--judge-model", "openai:judge-lenient", "--judge-base-url", judge.base_url,
            "--cache-dir", tmp_path / "cache",
        ]  # fmt: skip
        calibrated = golden_gate(
            "calibrate", golden, "--labels", tmp_path / "labels.jsonl", *flags,
            "-o", tmp_path / "calibration.json",
        )  # fmt: skip
        assert (tmp_path / "calibration.json").exists(), calibrated.stderr
        outcomes = {}
        with AssistantServer(answers=answers) as assistant:
            for basis in ("judge", "human"):
                outcomes[basis] = golden_gate(
                    "run", golden, "--assistant-url", assistant.url, *flags, "--quiet",
                    "--calibration", tmp_path / "calibration.json", "--floor-basis", basis,
                    "--comment-file", tmp_path / f"{basis}.md", "-o", tmp_path / f"{basis}.json",
                    # canaries would catch this judge too; this test is about the floor
                    "--judge-canaries", "0",
                )  # fmt: skip
    confusion = json.loads((tmp_path / "calibration.json").read_text())["confusion"]
    assert confusion == {
        "human_pass_judge_pass": 8,
        "human_pass_judge_fail": 0,
        "human_fail_judge_pass": 8,
        "human_fail_judge_fail": 4,
    }
    # the judge passes all 20: its Wilson bound 0.839 clears the floor 0.80
    assert outcomes["judge"].returncode == 0, outcomes["judge"].stdout
    expected = from_confusion(8, 0, 8, 4, [1.0] * 20)
    assert expected is not None and expected.lower < 0.8
    note = f"people would pass about {expected.estimate:.1%} of these answers"
    assert note in outcomes["judge"].stdout
    assert outcomes["human"].returncode == 1
    assert (
        f"below the floor on the human basis: lower bound {expected.lower:.3f} < 0.80"
        in outcomes["human"].stdout
    )


def test_floor_basis_human_without_a_calibration_of_this_judge_has_no_result(tmp_path):
    from golden_gate.core.gate import evaluate_gate
    from golden_gate.core.slim import of
    from golden_gate.core.verdict import GateSettings
    from tests.helpers import report

    view = of(report({f"q{i}": True for i in range(30)}))
    gate = evaluate_gate(view, None, GateSettings(floor_basis="human"), calibration=None)
    assert gate.run_verdict(True) == "incomplete"
    assert gate.inconclusive == (
        "floor-basis human: there is no calibration of the judge (set calibration), so what "
        "people would say cannot be estimated"
    )


def test_the_human_floor_weighs_unjudged_runs_as_the_judge_floor_does():
    # The human basis is decided inside the gate, so its pass is checked with the unjudged
    # runs counted as failures too: here they would pull the human bound below the floor
    # (0.800 < 0.81) though the judge's Wilson bound stays above it (0.816).
    from golden_gate.core.agreement import Confusion, Kappa
    from golden_gate.core.calibration import CalibrationReport
    from golden_gate.core.gate import evaluate_gate
    from golden_gate.core.item_result import ItemResult
    from golden_gate.core.report import Report
    from golden_gate.core.verdict import GateSettings

    results = [ItemResult(id=f"q{i}", passes=1, runs=1) for i in range(60)]
    results += [ItemResult(id=f"e{i}", passes=0, runs=0, errors=1) for i in range(6)]
    run = Report(judge="openai:gpt-4.1-mini", results=results)
    calibration = CalibrationReport(
        created_at="2026-01-01T00:00:00Z",
        judge="openai:gpt-4.1-mini",
        judge_identity_hash="sha256:" + "0" * 64,
        labels=40,
        n=40,
        kappa=Kappa(value=1.0),
        confusion=Confusion(human_pass_judge_pass=30, human_fail_judge_fail=10),
        min_kappa=0.6,
        passed=True,
    )
    judged = from_confusion(30, 0, 0, 10, [1.0] * 60)
    counted = from_confusion(30, 0, 0, 10, [1.0] * 60 + [0.0] * 6)
    assert judged is not None and counted is not None
    assert counted.lower < 0.81 < judged.lower
    on_judge = evaluate_gate(run, None, GateSettings(floor=0.81), calibration=calibration)
    assert on_judge.run_verdict(True) == "passed"
    human = GateSettings(floor=0.81, floor_basis="human")
    on_human = evaluate_gate(run, None, human, calibration=calibration)
    assert on_human.run_verdict(True) == "incomplete"
    assert on_human.inconclusive is not None
    assert "6 run(s) got no verdict" in on_human.inconclusive
    assert "below the floor on the human basis" in on_human.inconclusive
