"""Evaluation end to end against a real assistant server and a real OpenAI-compatible judge."""

import asyncio
import itertools
import json

import pytest

from golden_gate.cache import VerdictCache
from golden_gate.checks import CheckSettings
from golden_gate.evaluate import EvalSettings, evaluate
from golden_gate.golden import GoldenItem
from golden_gate.judge import JudgeSettings, make_judge
from golden_gate.target import AssistantClient, TargetSettings
from tests.fakes.assistant_server import AssistantServer
from tests.fakes.judge_server import Behaviour, JudgeServer


def items(n: int, **extra) -> list[GoldenItem]:
    return [
        GoldenItem(
            id=f"q{i:03d}",
            question=f"How do I configure feature {i}?",
            reference_key_points=[f"set option {i}", "restart the server"],
            reference_urls=["docs/config.md"],
            tags=["smoke"],
            **extra,
        )
        for i in range(n)
    ]


def good(i: int) -> str:
    return f"Set option {i} in the config, then restart the server. Source: docs/config.md"


def bad(i: int) -> str:
    return f"Set option {i} in the config. Source: docs/config.md"


@pytest.fixture
def judge_server(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    with JudgeServer() as server:
        yield server


def llm_judge(server, **kw):
    return make_judge(
        JudgeSettings(
            model="openai:gpt-4.1-mini",
            base_url=server.base_url,
            timeout_s=30,  # generous: a loaded CI machine must not turn into judge errors
            max_retries=kw.pop("max_retries", 2),
            **kw,
        )
    )


def run(golden, url, judge, cache_dir=None, **settings):
    async def go():
        async with AssistantClient(TargetSettings(url=url, backoff_s=0.01, retries=2)) as client:
            return await evaluate(
                golden,
                client=client,
                judge=judge,
                cache=VerdictCache(cache_dir),
                settings=EvalSettings(**settings),
                checks=CheckSettings(),
            )

    return asyncio.run(go())


def test_verdicts_from_the_judge_and_zero_calls_on_a_rerun(tmp_path, judge_server):
    golden = items(30)
    answers = {it.question: (good(i) if i % 3 else bad(i)) for i, it in enumerate(golden)}
    with AssistantServer(answers=answers) as assistant:
        first = run(
            golden, assistant.url, llm_judge(judge_server), tmp_path / "cache", rerun_failures=0
        )
        calls_after_first = judge_server.calls
        second = run(
            golden, assistant.url, llm_judge(judge_server), tmp_path / "cache", rerun_failures=0
        )
    assert calls_after_first == 30
    assert judge_server.calls == 30  # the second run made zero judge calls
    assert second.stats.judge_calls == 0 and second.stats.cache_hits == 30
    passed = {r.id for r in first.results if r.passed}
    assert passed == {f"q{i:03d}" for i in range(30) if i % 3}
    assert [r.passed for r in first.results] == [r.passed for r in second.results]
    # What the judge was sent holds the question, the answer and the key points.
    prompt = judge_server.prompts[0]
    assert "How do I configure feature" in prompt
    assert "restart the server" in prompt and "Source: docs/config.md" in prompt
    assert first.judge == "openai:gpt-4.1-mini" and first.judge_prompt_hash
    assert first.stats.input_tokens > 0
    verdict = first.results[1].run_results[0].verdict
    assert verdict.passed and verdict.tokens.input_tokens > 0 and not verdict.cached
    assert second.results[1].run_results[0].verdict.cached


def test_a_failed_check_is_never_judged(judge_server):
    golden = items(4)
    answers = {
        it.question: f"Set option {i}, then restart the server." for i, it in enumerate(golden)
    }  # no citation
    with AssistantServer(answers=answers, sources=[]) as assistant:
        rep = run(golden, assistant.url, llm_judge(judge_server), rerun_failures=0)
    assert judge_server.calls == 0
    assert all(not r.passed for r in rep.results)
    assert rep.results[0].why == "check citations: missing citation: docs/config.md"


def test_identical_answers_are_judged_once(judge_server):
    golden = items(1)
    with AssistantServer(answers={golden[0].question: good(0)}) as assistant:
        rep = run(golden, assistant.url, llm_judge(judge_server), runs=5)
    assert judge_server.calls == 1
    assert rep.results[0].passes == 5 and rep.results[0].runs == 5


def test_429_then_success_counts_once(judge_server):
    golden = items(1)
    judge_server.enqueue(Behaviour.rate_limited(retry_after=0.01))
    with AssistantServer(answers={golden[0].question: good(0)}) as assistant:
        rep = run(golden, assistant.url, llm_judge(judge_server))
    assert judge_server.calls == 2  # the SDK retried once
    assert rep.stats.judge_calls == 1
    assert rep.results[0].passed and rep.complete


def test_permanent_500_makes_errors_not_failures_and_the_run_incomplete(tmp_path, judge_server):
    golden = items(10)
    judge_server.default = Behaviour.server_error(500, retry_after=0.01)
    answers = {it.question: good(i) for i, it in enumerate(golden)}
    with AssistantServer(answers=answers) as assistant:
        rep = run(golden, assistant.url, llm_judge(judge_server, max_retries=1), tmp_path / "cache")
    assert all(r.errored and r.errors == 1 for r in rep.results)
    assert all(r.run_results[0].status == "error" for r in rep.results)
    assert "judge:" in rep.results[0].run_results[0].error
    assert not rep.complete
    assert "10 of 10 runs ended in an error" in rep.incomplete_reason
    assert not list((tmp_path / "cache").rglob("*.json"))  # nothing cached


def flaky_shape():
    """Answers "flaky" alternate bad, good, bad... for item 0: a flaky assistant."""
    flip = itertools.cycle([False, True])

    def shape(answer, sources):
        if answer == "flaky":
            return {"answer": good(0) if next(flip) else bad(0), "sources": sources}
        return {"answer": answer, "sources": sources}

    return shape


def test_reruns_are_diagnostic_and_never_counted():
    golden = items(2)
    answers = {golden[0].question: "flaky", golden[1].question: bad(1)}
    judge = make_judge(JudgeSettings(model="keypoints"))
    with AssistantServer(answers=answers, shape=flaky_shape()) as assistant:
        rep = run(golden, assistant.url, judge, runs=1, rerun_failures=2)
    flaky, broken = rep.results
    # bad, then two diagnostic re-runs (good, bad): shown, never counted (counting only the
    # re-runs of failures would bias the pass rate up).
    assert (flaky.passes, flaky.runs) == (0, 1)
    assert [r.rerun for r in flaky.run_results] == [False, True, True]
    assert [r.status for r in flaky.run_results] == ["fail", "pass", "fail"]
    assert (broken.passes, broken.runs) == (0, 1) and len(broken.run_results) == 3
    assert rep.run_settings.runs == 1 and rep.run_settings.rerun_failures == 2


def test_repeats_count_every_run_and_unstable_items_are_marked():
    golden = items(2)
    answers = {golden[0].question: "flaky", golden[1].question: good(1)}
    judge = make_judge(JudgeSettings(model="keypoints"))
    with AssistantServer(answers=answers, shape=flaky_shape()) as assistant:
        rep = run(golden, assistant.url, judge, runs=4)
    flaky, steady = rep.results
    assert (flaky.passes, flaky.runs) == (2, 4) and flaky.unstable and flaky.score == 0.5
    assert (steady.passes, steady.runs) == (4, 4) and not steady.unstable
    assert not any(r.rerun for r in flaky.run_results)  # nothing re-run by default


def test_an_answer_the_assistant_could_not_give_is_a_failed_run():
    golden = items(10)
    with AssistantServer(status=500) as assistant:
        rep = run(golden, assistant.url, make_judge(JudgeSettings()), max_error_rate=0.5)
    # Counted, as failures: an assistant that errors cannot drop its items out of the gate.
    assert all((r.passes, r.runs, r.unanswered, r.errors) == (0, 1, 1, 0) for r in rep.results)
    first = rep.results[0].run_results[0]
    assert first.error.startswith("HTTP 500") and first.error_side == "assistant"
    assert not rep.complete  # and above max-error-rate the run is incomplete, as before
    assert "10 unanswered by the assistant, 0 not judged" in rep.incomplete_reason


def test_nineteen_of_200_unanswered_fails_the_gate_instead_of_dropping_out():
    """The issue's case: 19 of 200 items that passed in the baseline now get HTTP 500 (9.5 %,
    under max-error-rate). Counted as failed runs, they fail the paired test."""
    from golden_gate.gate import evaluate_gate

    golden = items(200)
    answers = {it.question: good(i) for i, it in enumerate(golden)}
    broken = [it.question for it in golden[::10][:19]]
    judge = make_judge(JudgeSettings(model="keypoints"))
    with AssistantServer(answers=answers) as assistant:
        baseline = run(golden, assistant.url, judge)
    with AssistantServer(answers=answers, failing_questions=broken, fail_status=500) as assistant:
        candidate = run(golden, assistant.url, judge)
    assert baseline.pass_rate_text() == "200/200 (100.0%)"
    assert candidate.complete  # 19 of 200 runs: below the default max-error-rate of 10 %
    assert sum(r.unanswered for r in candidate.results) == 19
    gate = evaluate_gate(candidate, baseline)
    assert not gate.passed
    assert [r.code for r in gate.reasons] == ["significant-regression"]
    assert gate.comparison.b == 19 and gate.n == 200 and gate.k == 181
    assert len(gate.errored) == 19 and gate.unanswered == 19


def test_budget_cap_stops_judging(judge_server):
    golden = items(6)
    answers = {it.question: good(i) for i, it in enumerate(golden)}
    with AssistantServer(answers=answers) as assistant:
        rep = run(
            golden, assistant.url, llm_judge(judge_server), max_judge_calls=2, max_error_rate=1.0
        )
    assert judge_server.calls == 2
    assert rep.stats.budget_exhausted
    assert sum(r.errored for r in rep.results) == 4
    assert "budget" in rep.incomplete_reason


def test_deterministic_tier_without_a_judge():
    golden = items(3)
    answers = {golden[0].question: good(0), golden[1].question: "no citation here"}
    with AssistantServer(answers=answers, sources=[]) as assistant:
        rep = run(golden, assistant.url, None, rerun_failures=0)
    assert rep.tier == "deterministic" and rep.judge == "deterministic"
    assert [r.passed for r in rep.results] == [True, False, False]


def test_report_is_json_serialisable_with_details(tmp_path):
    golden = items(2)
    with AssistantServer(answers={golden[0].question: good(0)}, latency_s=0.01) as assistant:
        rep = run(golden, assistant.url, make_judge(JudgeSettings()))
    data = json.loads(rep.model_dump_json())
    first = data["results"][0]["run_results"][0]
    assert first["latency_ms"] >= 10 and first["http_status"] == 200
    assert first["checks"][0] == {"name": "citations", "passed": True, "reason": ""}
