"""`golden-gate review`: the answers a person should label, written in the format `calibrate`
reads; through the command line against the real fake judge and assistant."""

import json

import pytest

from golden_gate.core.item_result import EvaluatorOutcome, ItemResult, JudgeVote, RunResult
from golden_gate.core.item_result import Verdict as V
from golden_gate.core.report import Report
from golden_gate.core.review import review_lines
from tests.fakes.assistant_server import AssistantServer
from tests.fakes.judge_server import JudgeServer
from tests.helpers import golden_gate, write_feature_golden


def good(i: int) -> str:
    return f"Set option {i} in the config, then restart the server."


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")


def test_review_output_round_trips_through_calibrate(tmp_path, key):
    golden = write_feature_golden(tmp_path / "golden.jsonl", sources=False)
    panel = ["--judge-model", "openai:judge-strict,openai:judge-lenient"]
    candidate = {f"How do I configure feature {i}?": good(i) for i in range(5)}
    # right, in other words: the strict judge fails it, the lenient one passes it (a tie fails)
    candidate["How do I configure feature 1?"] = "Enable option 1 in the config, then restart it."
    candidate["How do I configure feature 1?"] += " Restart the server."
    candidate["How do I configure feature 4?"] = "See the docs."  # wrong
    with JudgeServer() as judge:
        flags = ["--judge-base-url", judge.base_url, "--cache-dir", tmp_path / "cache"]
        base_answers = {f"How do I configure feature {i}?": good(i) for i in range(5)}
        with AssistantServer(answers=base_answers) as assistant:
            made = golden_gate(
                "eval", golden, "--assistant-url", assistant.url, "-o", tmp_path / "base.json",
                *panel, *flags, "--judge-canaries", "0", "--quiet",
            )  # fmt: skip
        with AssistantServer(answers=candidate) as assistant:
            ran = golden_gate(
                "eval", golden, "--assistant-url", assistant.url, "-o", tmp_path / "report.json",
                *panel, *flags, "--quiet",
            )  # fmt: skip
        assert made.returncode == 0, made.stderr
        assert ran.returncode == 3  # the lenient judge passes off-topic canaries
        review = tmp_path / "review.jsonl"
        done = golden_gate(
            "review", tmp_path / "report.json", "--baseline", tmp_path / "base.json", "-o", review
        )
        assert done.returncode == 0, done.stderr
        lines = [json.loads(line) for line in review.read_text().splitlines()]
        by_id = {line["id"]: line for line in lines}
        assert len(by_id) == len(lines)  # one answer per item, as the labels file keys them
        assert [line["why"] for line in lines[:2]] == ["regressed", "regressed"]
        assert by_id["q1"]["answer"] == candidate["How do I configure feature 1?"]
        assert by_id["q1"]["question"] == "How do I configure feature 1?"
        assert by_id["q4"]["judge"] == "fail" and by_id["q4"]["label"] == ""
        canary = [line for line in lines if line["why"] == "canary"]
        # the known-bad answers the lenient judge passed, with its reasoning
        assert canary and all(line["judge"] == "pass" for line in canary)
        assert all(line["judge_reason"].startswith("off-topic probe: ") for line in canary)
        assert f"{len(lines)} answers to label" in done.stdout
        # a person labels what they reviewed; one line stays blank for later
        labelled = []
        for line in lines[:-1]:
            line["label"] = "pass" if line["id"] == "q1" else "fail"
            labelled.append(line)
        review.write_text("".join(json.dumps(line) + "\n" for line in [*labelled, lines[-1]]))
        calibrated = golden_gate(
            "calibrate", golden, "--labels", review, "--judge-model", "openai:judge-strict",
            *flags, "-o", tmp_path / "calibration.json",
        )  # fmt: skip
    assert calibrated.returncode in (0, 1), calibrated.stderr  # measured, either way
    calibration = json.loads((tmp_path / "calibration.json").read_text())
    assert calibration["labels"] == len(labelled)  # the blank line was skipped
    # the strict judge fails the answer the person passed: the disagreement is measured
    assert [(d["id"], d["human"], d["judge"]) for d in calibration["disagreements"]] == [
        ("q1", "pass", "fail")
    ]


def test_a_file_with_no_label_yet_is_one_sentence(tmp_path):
    golden = write_feature_golden(tmp_path / "golden.jsonl", n=2, sources=False)
    labels = tmp_path / "review.jsonl"
    labels.write_text(
        json.dumps({"id": "q0", "answer": "x", "label": "", "why": "unstable"}) + "\n"
    )
    done = golden_gate("calibrate", golden, "--labels", labels, "--judge-model", "keypoints")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"golden-gate: error: {labels}: no answer is labelled yet (1 wait for a label of pass "
        "or fail)"
    )


def _item(item_id, statuses, votes=None):
    runs = []
    for status in statuses:
        evaluations = None
        if votes is not None:
            evaluations = [
                EvaluatorOutcome(
                    evaluator="correctness",
                    status=status,
                    votes=[JudgeVote(judge=f"j{i}", passed=v) for i, v in enumerate(votes)],
                )
            ]
        runs.append(
            RunResult(
                status=status,
                answer=f"answer of {item_id} ({status})",
                verdict=V(passed=status == "pass", comment=f"judged {status}"),
                evaluations=evaluations,
            )
        )
    passes = statuses.count("pass")
    return ItemResult(id=item_id, passes=passes, runs=len(statuses), run_results=runs)


def test_unstable_items_and_disagreements_are_listed_and_steady_passes_are_not():
    report = Report(
        judge="j0,j1",
        results=[
            _item("a", ["pass", "fail", "pass"]),  # unstable
            _item("b", ["pass"]),  # steady
            _item("c", ["fail"], votes=[True, False]),  # the judges disagree
        ],
    )
    lines = review_lines(report)
    assert [(line.id, line.why) for line in lines] == [("c", "judges disagree"), ("a", "unstable")]
    unstable = lines[1]
    assert unstable.answer == "answer of a (fail)" and unstable.judge == "fail"
