"""Canaries: answers with a known verdict asked of the judge every run, through `golden-gate`
against the real OpenAI-compatible fake judge (which derives each verdict from its prompt)."""

import json

import pytest

from golden_gate.core import canaries
from golden_gate.core.golden import GoldenItem
from tests.fakes.assistant_server import AssistantServer
from tests.fakes.judge_server import Behaviour, JudgeServer
from tests.helpers import feature_answer as good
from tests.helpers import golden_gate
from tests.helpers import with_feature_context as with_context
from tests.helpers import write_feature_golden as write_golden

RUBBER_STAMP = Behaviour.content(json.dumps({"reasoning": "Looks right to me.", "score": True}))

ANSWERS = {f"How do I configure feature {i}?": good(i) for i in range(5)}


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")


def evaluate(tmp_path, judge, *flags, model="openai:judge-strict", out="report.json"):
    golden = tmp_path / "golden.jsonl"
    if not golden.exists():
        write_golden(golden)
    with AssistantServer(answers=ANSWERS, shape=with_context) as assistant:
        done = golden_gate(
            "eval", golden, "--assistant-url", assistant.url, "-o", tmp_path / out, "--quiet",
            "--judge-model", model, "--judge-base-url", judge.base_url,
            "--context-path", "retrieval.passages", "--sources-path", "sources",
            "--cache-dir", tmp_path / "cache", *flags,
        )  # fmt: skip
    report = json.loads((tmp_path / out).read_text()) if (tmp_path / out).exists() else None
    return done, report


def test_an_honest_judge_passes_every_canary_and_a_warm_rerun_asks_it_nothing(tmp_path, key):
    with JudgeServer() as judge:
        done, report = evaluate(tmp_path, judge, "--evaluators", "correctness,groundedness")
        cold = judge.calls
        again, warm = evaluate(
            tmp_path, judge, "--evaluators", "correctness,groundedness", out="again.json"
        )
        assert judge.calls == cold  # every verdict, the probes' too, came from the cache
    assert done.returncode == 0, done.stderr
    found = report["canaries"]
    assert found["items"] == 2
    # correctness: known-good, empty, off-topic, key point removed; groundedness: known-good,
    # no supporting context; from 2 items each: 12 probes, 12 calls beside 10 for the answers
    assert [(c["evaluator"], c["probes"], c["wrong"], c["status"]) for c in found["checks"]] == [
        ("correctness", 8, 0, "passed"),
        ("groundedness", 4, 0, "passed"),
    ]
    assert cold == 10 + 12
    assert {p["kind"] for p in found["probes"]} == {
        "known-good", "empty", "off-topic", "key-point-removed", "no-context",
    }  # fmt: skip
    # probes are never items: the floor and the paired test see the five answers only
    assert [r["id"] for r in report["results"]] == [f"q{i}" for i in range(5)]
    assert again.returncode == 0, again.stderr
    assert warm["stats"]["judge_calls"] == 0
    assert all(p["cached"] for p in warm["canaries"]["probes"])


def test_the_comment_says_how_the_judge_did_on_its_canaries(tmp_path, key):
    golden = write_golden(tmp_path / "golden.jsonl")
    with JudgeServer() as judge, AssistantServer(answers=ANSWERS) as assistant:
        ran = golden_gate(
            "run", golden, "--assistant-url", assistant.url, "--judge-model",
            "openai:judge-strict", "--judge-base-url", judge.base_url, "--cache", "off",
            "--comment-file", tmp_path / "comment.md", "-o", tmp_path / "r.json", "--quiet",
            "--floor", "0",
        )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert (
        "the judge got 8 of its 8 canaries right (answers whose verdict is known, derived from "
        "golden items; never counted as items)"
    ) in (tmp_path / "comment.md").read_text().replace("\\", "")  # Markdown escapes


def test_a_rubber_stamp_judge_makes_the_run_incomplete_naming_the_probe(tmp_path, key):
    with JudgeServer(default=RUBBER_STAMP) as judge:
        done, report = evaluate(tmp_path, judge)
    assert done.returncode == 3, done.stderr
    # every answer passed: without the canaries this run would have been green
    assert all(r["passes"] == 1 for r in report["results"])
    assert report["complete"] is False
    check = report["canaries"]["checks"][0]
    assert (check["evaluator"], check["wrong"], check["allowed"], check["status"]) == (
        "correctness", 6, 1, "failed",
    )  # fmt: skip
    reason = report["incomplete_reason"]
    assert reason.startswith(
        "judge openai:judge-strict gave 6 of 8 correctness canaries the wrong verdict "
        "(at most 1 allowed): it passed the empty probe (an empty answer, from item q"
    )
    assert reason.endswith("saying: Looks right to me.")
    assert "the evaluation could not be completed: judge openai:judge-strict" in done.stderr


def test_a_judge_that_ignores_the_context_fails_the_groundedness_canaries(tmp_path, key):
    golden = write_golden(tmp_path / "golden.jsonl")
    with JudgeServer() as judge:
        done, report = evaluate(
            tmp_path, judge, "--evaluators", "correctness,groundedness", model="openai:judge-blind"
        )
        with AssistantServer(answers=ANSWERS, shape=with_context) as assistant:
            ran = golden_gate(
                "run", golden, "--assistant-url", assistant.url, "-o", tmp_path / "run.json",
                "--judge-model", "openai:judge-blind", "--judge-base-url", judge.base_url,
                "--evaluators", "correctness,groundedness", "--context-path",
                "retrieval.passages", "--sources-path", "sources", "--cache-dir",
                tmp_path / "cache", "--comment-file", tmp_path / "comment.md", "--quiet",
                "--floor", "0",  # five items cannot reach a floor: the canaries decide here
            )  # fmt: skip
    assert done.returncode == 3, done.stderr
    checks = {c["evaluator"]: c for c in report["canaries"]["checks"]}
    assert checks["correctness"]["status"] == "passed"
    assert (checks["groundedness"]["wrong"], checks["groundedness"]["status"]) == (2, "failed")
    reason = report["incomplete_reason"]
    assert "it passed the no-context probe (the key points with a context that supports" in reason
    wrong = [p for p in report["canaries"]["probes"] if p["passed"] != p["expected"]]
    assert {p["kind"] for p in wrong} == {"no-context"}
    assert all(p["context"] == canaries.UNRELATED_CONTEXT for p in wrong)
    # the gate says it in the comment, and the step is incomplete, not green
    assert ran.returncode == 3, ran.stderr
    comment = (tmp_path / "comment.md").read_text()
    assert "The evaluation is incomplete: judge openai:judge-blind gave 2 of 4 groundedness" in (
        comment
    )


def test_canaries_off_ask_the_judge_about_the_answers_only(tmp_path, key):
    with JudgeServer(default=RUBBER_STAMP) as judge:
        done, report = evaluate(tmp_path, judge, "--judge-canaries", "0")
        assert judge.calls == 5
    assert done.returncode == 0, done.stderr
    assert "canaries" not in report


def test_a_judge_that_cannot_judge_its_canaries_is_not_trusted(tmp_path, key):
    # The answers' five calls are judged; then every call fails (no retries): the canaries
    # are unjudged, and an unchecked judge is not a working one.
    with JudgeServer() as judge:
        golden = write_golden(tmp_path / "golden.jsonl")
        with AssistantServer(answers=ANSWERS, shape=with_context) as assistant:
            first = golden_gate(
                "eval", golden, "--assistant-url", assistant.url, "-o", tmp_path / "a.json",
                "--judge-model", "openai:judge-strict", "--judge-base-url", judge.base_url,
                "--judge-canaries", "0", "--cache-dir", tmp_path / "cache", "--quiet",
            )  # fmt: skip
        assert first.returncode == 0, first.stderr
        judge.default = Behaviour.server_error(500)
        done, report = evaluate(tmp_path, judge, "--judge-retries", "0")
    assert done.returncode == 3, done.stderr
    check = report["canaries"]["checks"][0]
    assert (check["unjudged"], check["status"]) == (8, "unchecked")
    assert report["incomplete_reason"].startswith(
        "judge openai:judge-strict could not judge 8 of its 8 correctness canaries"
    )


def test_probes_are_derived_the_same_way_every_time():
    items = [
        GoldenItem(
            id=f"q{i}",
            question=f"How do I configure feature {i}?",
            reference_key_points=[f"set option {i}", "restart the server"],
        )
        for i in range(6)
    ] + [GoldenItem(id="one", question="Which port?", reference_key_points=["port 8080"])]
    first = canaries.derive(items, 3, "correctness", "openai:x")
    again = canaries.derive(list(reversed(items)), 3, "correctness", "openai:x")
    assert [p for _, p in first] == [p for _, p in again]
    removed = {p.item: p.answer for _, p in first if p.kind == "key-point-removed"}
    # the point left out is the one the others do not say ("set option i")
    assert all(answer == "restart the server." for answer in removed.values())
    # one key point: nothing to leave out, so no such probe
    only = canaries.derive([items[-1], items[0]], 2, "correctness", "openai:x")
    assert [p.kind for _, p in only if p.item == "one"] == ["known-good", "empty", "off-topic"]
    # another item saying the same key points is no off-topic answer: none is made
    twin = items[0].model_copy(update={"id": "twin", "question": "And feature 0 again?"})
    kinds = [p.kind for _, p in canaries.derive([items[0], twin], 1, "correctness", "openai:x")]
    assert "off-topic" not in kinds
    assert canaries.derive(items, 3, "my-rubric", "openai:x") == []
    assert canaries.derive(items, 0, "correctness", "openai:x") == []
