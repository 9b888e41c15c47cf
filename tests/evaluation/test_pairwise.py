"""`golden-gate pairwise`: the run's answers against the baseline's, both orders, through the
command line against the real fake judge (which prefers the answer covering more key points,
or, as `biased`, always answer A)."""

import json

import pytest
from scipy.stats import binomtest

from golden_gate.core.pairwise import decide, tally
from tests.fakes.assistant_server import AssistantServer
from tests.fakes.judge_server import JudgeServer
from tests.helpers import golden_gate

POINTS = ["set option {i}", "restart the server", "wait {i} seconds"]


def answer(i: int, points: int) -> str:
    said = [p.format(i=i) for p in POINTS[:points]]
    return ". ".join(s.capitalize() for s in said) + "."


@pytest.fixture
def reports(tmp_path):
    golden = tmp_path / "golden.jsonl"
    golden.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"q{i}",
                    "question": f"How do I configure feature {i}?",
                    "reference_key_points": [p.format(i=i) for p in POINTS],
                }
            )
            + "\n"
            for i in range(7)
        )
    )
    base = {f"How do I configure feature {i}?": answer(i, 2) for i in range(7)}
    run = dict(base)
    for i in range(4):
        run[f"How do I configure feature {i}?"] = answer(i, 3)  # better: a key point more
    run["How do I configure feature 4?"] = answer(4, 1)  # worse
    run["How do I configure feature 5?"] = answer(5, 2) + " Good luck."  # other words, as good
    for name, answers in (("base.json", base), ("report.json", run)):
        with AssistantServer(answers=answers) as assistant:
            done = golden_gate(
                "eval", golden, "--assistant-url", assistant.url, "-o", tmp_path / name,
                "--quiet", "--cache", "off",
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
    return golden


def pairwise(tmp_path, golden, judge, model):
    return golden_gate(
        "pairwise", tmp_path / "report.json", golden, "--baseline", tmp_path / "base.json",
        "--judge-model", model, "--judge-base-url", judge.base_url,
        "--cache-dir", tmp_path / "cache", "-o", tmp_path / "pairwise.json",
    )  # fmt: skip


def test_an_honest_pairwise_judge_reproduces_the_known_win_rate(tmp_path, reports, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    with JudgeServer() as judge:
        done = pairwise(tmp_path, reports, judge, "openai:judge")
        calls = judge.calls
        again = pairwise(tmp_path, reports, judge, "openai:judge")
        assert judge.calls == calls == 12  # six changed answers, both orders; then the cache
    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "pairwise.json").read_text())
    assert (result["wins"], result["losses"], result["ties"]) == (4, 1, 1)
    assert result["win_rate"] == 0.8
    assert result["p_value"] == pytest.approx(binomtest(4, 5, 0.5).pvalue)
    outcomes = {i["id"]: i["outcome"] for i in result["items"]}
    assert outcomes == {
        "q0": "win",
        "q1": "win",
        "q2": "win",
        "q3": "win",
        "q4": "loss",
        "q5": "tie",
    }
    assert result["items"][0]["reasons"] == [
        "A covers 3 key points, B covers 2. Thus, the score should be: 1.0.",
        "A covers 2 key points, B covers 3. Thus, the score should be: 0.0.",
    ]
    assert "4 won, 1 lost, 1 tied, 0 not judged; win rate 80.0%" in done.stdout
    assert again.returncode == 0, again.stderr


def test_a_judge_that_always_prefers_a_yields_ties_not_wins(tmp_path, reports, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    with JudgeServer() as judge:
        done = pairwise(tmp_path, reports, judge, "openai:judge-biased")
    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "pairwise.json").read_text())
    assert (result["wins"], result["losses"], result["ties"]) == (0, 0, 6)
    assert result["win_rate"] is None and result["p_value"] == 1.0
    assert all((i["first"], i["swapped"]) == ("A", "A") for i in result["items"])


def test_the_orders_decide_together():
    assert decide("A", "B") == "win"
    assert decide("B", "A") == "loss"
    assert [decide(a, b) for a, b in (("A", "A"), ("B", "B"), ("tie", "A"), ("tie", "tie"))] == [
        "tie"
    ] * 4
    assert tally("j", []).win_rate is None
