"""Evaluation end to end against a real assistant server and a real OpenAI-compatible judge."""

import asyncio
import io
import itertools
import json
import re

import pytest

from golden_gate.core.golden import GoldenItem
from golden_gate.evaluation.cache import VerdictCache
from golden_gate.evaluation.checks import CheckSettings
from golden_gate.evaluation.evaluate import EvalSettings, evaluate
from golden_gate.evaluation.judge import JudgeSettings, make_judge
from golden_gate.evaluation.response import AssistantSettings
from golden_gate.evaluation.target import AssistantClient
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
            # generous: a loaded CI machine must not turn into judge errors
            timeout_s=kw.pop("timeout_s", 30),
            max_retries=kw.pop("max_retries", 2),
            **kw,
        )
    )


def run(golden, url, judge, cache_dir=None, progress=None, **settings):
    # These tests count the answers' judge calls; the canaries' are counted in test_canaries.
    settings.setdefault("canaries", 0)

    async def go():
        async with AssistantClient(AssistantSettings(url=url, backoff_s=0.01, retries=2)) as client:
            return await evaluate(
                golden,
                client=client,
                judge=judge,
                cache=VerdictCache(cache_dir),
                settings=EvalSettings(**settings),
                checks=CheckSettings(),
                progress=progress,
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


def test_identical_answers_are_judged_once(tmp_path, judge_server):
    # With the cache on, whatever the timing: an answer judged while another identical one is
    # in flight shares its call, one judged after it reads its verdict from the cache.
    golden = items(1)
    with AssistantServer(answers={golden[0].question: good(0)}) as assistant:
        rep = run(golden, assistant.url, llm_judge(judge_server), tmp_path / "cache", runs=5)
    assert judge_server.calls == 1
    assert rep.results[0].passes == 5 and rep.results[0].runs == 5
    # One judge sample for five identical answers: the four reused verdicts say so.
    assert sorted(r.verdict.cached for r in rep.results[0].run_results) == [False] + [True] * 4


def test_identical_answers_in_flight_together_share_one_call_without_the_cache(judge_server):
    judge_server.latency_s = 1.0  # the five answers all arrive while the first call is out
    golden = items(1)
    with AssistantServer(answers={golden[0].question: good(0)}) as assistant:
        rep = run(golden, assistant.url, llm_judge(judge_server), runs=5)
    assert judge_server.calls == 1
    assert sorted(r.verdict.cached for r in rep.results[0].run_results) == [False] + [True] * 4


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
    from golden_gate.core.gate import evaluate_gate

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


def test_judge_calls_that_fail_are_counted_in_tokens_and_cost(judge_server):
    golden = items(4)
    judge_server.default = Behaviour.length()  # every reply stops at the generation cap
    answers = {it.question: good(i) for i, it in enumerate(golden)}
    with AssistantServer(answers=answers) as assistant:
        rep = run(
            golden,
            assistant.url,
            llm_judge(judge_server),
            max_error_rate=1.0,
            judge_prices=(0.4, 1.6),
        )
    # Not retried by the SDK, nor asked again at the end: the same question stops at the cap.
    assert judge_server.calls == 4
    assert all(r.run_results[0].error_side == "judge" for r in rep.results)
    assert "generation cap of 1024 tokens" in rep.results[0].run_results[0].error
    stats = rep.stats
    assert stats.judge_calls == 4
    assert stats.output_tokens == 4 * len(Behaviour.length().text.split())
    assert stats.input_tokens > 0
    assert stats.cost_usd == round((stats.input_tokens * 0.4 + stats.output_tokens * 1.6) / 1e6, 6)


def test_the_comment_shows_tokens_always_and_a_cost_only_with_prices(judge_server):
    from golden_gate.core.gate import evaluate_gate
    from golden_gate.rendering.render import render_comment, render_summary

    golden = items(3)
    answers = {it.question: good(i) for i, it in enumerate(golden)}
    with AssistantServer(answers=answers) as assistant:
        unpriced = run(golden, assistant.url, llm_judge(judge_server))
        priced = run(golden, assistant.url, llm_judge(judge_server), judge_prices=(2.5, 10))
    tokens = (
        f"{unpriced.stats.input_tokens:,} input + {unpriced.stats.output_tokens:,} output tokens"
    )
    for render in (render_comment, render_summary):
        assert f"3 judge calls · 0 cache hits · {tokens}" in render(
            unpriced, evaluate_gate(unpriced, None)
        )
        assert unpriced.stats.cost_usd is None
        text = render(priced, evaluate_gate(priced, None))
        assert f"{tokens} · ${priced.stats.cost_usd:.4f}" in text
    assert priced.stats.cost_usd > 0


def test_timeouts_beside_successes_warn_that_the_server_has_fewer_slots(monkeypatch):
    """A server with one slot and six calls sent at once: the first is answered, the others
    wait in its queue until their timeout (which counts the wait) runs out."""
    from golden_gate.core.gate import evaluate_gate
    from golden_gate.rendering.escape import inline
    from golden_gate.rendering.render import render_comment

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    golden = items(6)
    answers = {it.question: good(i) for i, it in enumerate(golden)}
    with JudgeServer(slots=1, latency_s=1.0) as one_slot, AssistantServer(answers=answers) as a:
        judge = llm_judge(one_slot, timeout_s=1.6, max_retries=0, concurrency=6)
        rep = run(golden, a.url, judge, judge_concurrency=6, max_error_rate=1.0)
        # All six were sent (then the five that timed out, again); it served one at a time.
        assert one_slot.max_in_flight >= 6
    judged = sum(r.run_results[0].verdict is not None for r in rep.results)
    # The calls that timed out were asked again at the end (into the same one slot): counted.
    assert judged >= 1 and rep.stats.judge_timeouts >= 3
    warning = (
        f"{rep.stats.judge_timeouts} judge calls timed out while others succeeded: the server "
        "may have fewer "
        "parallel slots than judge-concurrency (6); lower judge-concurrency or raise judge-timeout"
    )
    assert rep.warnings == [warning]
    gate = evaluate_gate(rep, None)
    assert warning in gate.warnings
    assert inline(warning, limit=400) in render_comment(rep, gate)  # escaped, as all text


def test_a_single_timeout_is_no_slot_warning(judge_server):
    golden = items(3)
    judge_server.enqueue(Behaviour.slow(3.0))
    answers = {it.question: good(i) for i, it in enumerate(golden)}
    with AssistantServer(answers=answers) as assistant:
        rep = run(
            golden,
            assistant.url,
            llm_judge(judge_server, timeout_s=0.5, max_retries=0),
            max_error_rate=1.0,
        )
    assert rep.stats.judge_timeouts == 1 and rep.warnings is None


def test_two_judge_servers_behind_one_model_name_never_share_verdicts(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    golden = items(5)
    answers = {it.question: good(i) for i, it in enumerate(golden)}
    cache = tmp_path / "cache"
    with (
        JudgeServer(served_model="model-a.gguf") as server_a,
        JudgeServer(served_model="model-b.gguf") as server_b,
        AssistantServer(answers=answers) as assistant,
    ):
        first = run(golden, assistant.url, llm_judge(server_a), cache)
        second = run(golden, assistant.url, llm_judge(server_b), cache)
        again = run(golden, assistant.url, llm_judge(server_a), cache)
    assert (server_a.calls, server_b.calls) == (5, 5)  # B judged everything afresh
    assert second.stats.cache_hits == 0 and again.stats.cache_hits == 5
    served = {r.run_results[0].verdict.served_model for r in second.results}
    assert served == {"model-b.gguf"}
    assert {r.run_results[0].verdict.served_model for r in again.results} == {"model-a.gguf"}
    assert first.warnings is None


def test_progress_beats_while_slow_judge_calls_run(judge_server):
    from golden_gate.evaluation.progress import Progress

    judge_server.latency_s = 0.8
    golden = items(2)
    answers = {it.question: good(i) for i, it in enumerate(golden)}
    stream = io.StringIO()
    progress = Progress(2, stream=stream, interval_s=60, heartbeat_s=0.2)
    with AssistantServer(answers=answers) as assistant:
        run(
            golden,
            assistant.url,
            llm_judge(judge_server, concurrency=1),
            progress=progress,
            judge_concurrency=1,
        )
    lines = stream.getvalue().splitlines()
    # Before anything finished: one call sent, the other waiting for the slot (not counted).
    assert any(
        "0/2 items · 0 errors · assistant 0/8 in flight · judge 1/1 in flight · "
        "0 judge calls made" in line
        for line in lines
    )
    assert (
        "2/2 items · 0 errors · assistant 0/8 in flight · judge 0/1 in flight · "
        "2 judge calls made · 0 cache hits" in lines[-1]
    )


class Snapshots(io.StringIO):
    """A log that notes, with each progress line, how many calls the judge server received."""

    def __init__(self, server: JudgeServer) -> None:
        super().__init__()
        self.server = server
        self.lines: list[tuple[str, int]] = []

    def write(self, text: str) -> int:
        if text.strip():
            self.lines.append((text.strip(), self.server.calls))
        return super().write(text)


IN_FLIGHT = re.compile(r"assistant (\d+)/(\d+) in flight · judge (\d+)/(\d+) in flight")
MADE = re.compile(r"(\d+) judge calls made")


def test_progress_counts_judge_calls_made_and_in_flight_within_the_slots(judge_server):
    from golden_gate.evaluation.progress import Progress

    judge_server.latency_s = 0.2  # slow enough that calls wait for the two slots
    golden = items(10)
    answers = {it.question: good(i) for i, it in enumerate(golden)}
    stream = Snapshots(judge_server)
    progress = Progress(10, stream=stream, interval_s=0, heartbeat_s=0.05)
    with AssistantServer(answers=answers) as assistant:
        rep = run(
            golden,
            assistant.url,
            llm_judge(judge_server, concurrency=2),
            progress=progress,
            judge_concurrency=2,
        )

    assert len(stream.lines) > 2
    for line, received in stream.lines:
        assistant_now, assistant_slots, judge_now, judge_slots = map(
            int, IN_FLIGHT.search(line).groups()
        )
        made = int(MADE.search(line).group(1))
        assert (assistant_slots, judge_slots) == (8, 2)
        assert assistant_now <= assistant_slots and judge_now <= judge_slots, line
        # Made means answered (or failed): never more than the server has received.
        assert made <= received, line
    last = stream.lines[-1][0]
    assert "judge 0/2 in flight · 10 judge calls made" in last
    assert rep.stats.judge_calls == 10 == judge_server.calls


def test_an_interrupted_run_counts_only_the_judge_calls_made(judge_server):
    judge_server.latency_s = 60.0  # nothing is answered before the interrupt
    golden = items(6)
    answers = {it.question: good(i) for i, it in enumerate(golden)}

    async def go(url):
        judge = llm_judge(judge_server, concurrency=2)
        async with AssistantClient(AssistantSettings(url=url)) as client:
            task = asyncio.ensure_future(
                evaluate(
                    golden,
                    client=client,
                    judge=judge,
                    cache=VerdictCache(None),
                    settings=EvalSettings(judge_concurrency=2),
                )
            )
            while judge_server.calls < 2:  # both slots taken, four calls waiting for one
                await asyncio.sleep(0.01)
            task.cancel()
            try:
                return await task
            finally:
                await judge.aclose()

    with AssistantServer(answers=answers) as assistant:
        rep = asyncio.run(go(assistant.url))

    assert rep.complete is False
    assert judge_server.calls == 2
    assert rep.stats.judge_calls == 0  # two cut short, four never sent


def test_verdicts_from_two_models_behind_one_server_are_a_warning(tmp_path, judge_server):
    # The server was restarted with another model under the same name and URL: the identity
    # cannot know before a call, so the report says its verdicts are mixed.
    golden = items(2)
    answers = {it.question: good(i) for i, it in enumerate(golden)}
    judge_server.served_model = "model-7b.gguf"
    with AssistantServer(answers=answers) as assistant:
        run(golden[:1], assistant.url, llm_judge(judge_server), tmp_path / "cache")
        judge_server.served_model = "model-3b.gguf"
        rep = run(golden, assistant.url, llm_judge(judge_server), tmp_path / "cache")
    assert rep.stats.cache_hits == 1 and judge_server.calls == 2
    assert rep.warnings == [
        "the verdicts in this report came from 2 models behind one judge name "
        "(model-3b.gguf, model-7b.gguf): the server's model changed, and verdicts of both "
        "(some from the cache) are mixed"
    ]


def test_progress_lines_in_a_log_never_repeat_and_the_last_says_done():
    import io

    from golden_gate.evaluation.progress import Progress

    stream = io.StringIO()  # not a terminal: the periodic lines of a CI log
    progress = Progress(3, stream=stream, interval_s=0)
    progress.update()
    progress.update()  # nothing changed: no second line
    progress.done = 1
    progress.update()
    progress.done = 3
    progress.update()
    progress.finish()
    lines = stream.getvalue().splitlines()
    assert [line.split(" · ")[0] for line in lines] == [
        "golden-gate: 0/3 items",
        "golden-gate: 1/3 items",
        "golden-gate: 3/3 items",
        "golden-gate: done: 3/3 items",
    ]
    assert all(a != b for a, b in itertools.pairwise(lines))
    progress.update(force=True)  # the heartbeat says the run is alive, whatever the counts
    assert len(stream.getvalue().splitlines()) == len(lines) + 1


def test_runs_the_judge_failed_on_are_asked_again_at_the_end(judge_server, capsys):
    golden = items(10)
    for _ in range(3):  # the judge fails its first three calls, then answers
        judge_server.enqueue(Behaviour.server_error(500, retry_after=0.01))
    answers = {it.question: good(i) for i, it in enumerate(golden)}
    with AssistantServer(answers=answers) as assistant:
        rep = run(
            golden, assistant.url, llm_judge(judge_server, max_retries=0), judge_concurrency=1
        )
    assert judge_server.calls == 13
    assert not any(r.errored for r in rep.results) and rep.complete
    assert all(r.passed for r in rep.results)
    assert "asked the judge again about 3 run(s) it had failed on: 3 judged now" in (
        capsys.readouterr().err
    )


def test_asking_the_judge_again_is_bounded(judge_server, capsys):
    golden = items(12)
    judge_server.default = Behaviour.server_error(500, retry_after=0.01)
    answers = {it.question: good(i) for i, it in enumerate(golden)}
    with AssistantServer(answers=answers) as assistant:
        rep = run(golden, assistant.url, llm_judge(judge_server, max_retries=0))
    # Twelve runs, each failed; ten asked again (REJUDGE_MIN), all failing again.
    assert judge_server.calls == 22
    assert all(r.errored for r in rep.results) and not rep.complete
    err = capsys.readouterr().err
    assert "about 10 run(s) it had failed on: 0 judged now; 2 more not asked again" in err


def test_a_reply_cut_off_by_the_generation_cap_is_not_asked_again(judge_server, capsys):
    golden = items(4)
    judge_server.default = Behaviour.cut_off()  # every reply stops at the cap
    answers = {it.question: good(i) for i, it in enumerate(golden)}
    with AssistantServer(answers=answers) as assistant:
        rep = run(golden, assistant.url, llm_judge(judge_server, max_retries=0))
    # The same question would stop at the same cap: one call an item, no money spent twice.
    assert judge_server.calls == 4
    assert all(r.errored for r in rep.results)
    assert all("(judge-max-tokens)" in r.run_results[0].error for r in rep.results)
    assert "asked the judge again" not in capsys.readouterr().err


def test_the_progress_line_says_the_runs_passed_and_the_time_left():
    import time as clock

    from golden_gate.evaluation.progress import Progress

    stream = io.StringIO()
    progress = Progress(4, stream=stream)
    progress.started = clock.monotonic() - 10  # one item of four took ten seconds
    progress.done, progress.passes, progress.runs = 1, 2, 3
    line = progress.line()
    assert "1/4 items" in line and "2/3 runs passed" in line
    assert line.endswith("about 30 s left")
    # Finished, nothing is left; and the clock is not part of what a log line repeats.
    progress.done = 4
    assert "left" not in progress.line(done=True)
    assert "left" not in progress.counts() and "runs passed" in progress.counts()


def test_the_report_keeps_an_answer_whole_up_to_a_bound(tmp_path):
    # Pairwise comparison and the report page read the answer the report keeps: a long answer
    # whole (it was cut at 2,000 characters), a runaway one cut at the bound.
    golden = items(2)
    long, runaway = "word " * 1_500, "x" * 50_000
    answers = {golden[0].question: long, golden[1].question: runaway}
    with AssistantServer(answers=answers) as assistant:
        report = run(golden, assistant.url, None)
    kept = {r.id: r.run_results[0].answer or "" for r in report.results}
    assert kept[golden[0].id] == long  # 7,500 characters, whole
    assert len(kept[golden[1].id]) == 20_000 and kept[golden[1].id].endswith("…")


def test_a_conversation_the_judge_failed_on_is_resumed_at_that_turn_at_the_end(
    judge_server, capsys
):
    from golden_gate.core.golden import Turn

    def turns(n: int) -> list[Turn]:
        return [
            Turn(question=f"Chat {n}: feature {i}?", reference_key_points=[f"set option {i}"])
            for i in range(3)
        ]

    golden = [GoldenItem(id=f"chat{n}", turns=turns(n)) for n in range(3)]
    judge_server.enqueue(Behaviour.server_error(500, retry_after=0.01))  # the first call fails
    answers = {t.question: good(i) for n in range(3) for i, t in enumerate(turns(n))}
    with AssistantServer(answers=answers) as assistant:
        rep = run(
            golden, assistant.url, llm_judge(judge_server, max_retries=0), judge_concurrency=1
        )
        asked = [r.json["text"] for r in assistant.requests if r.method == "POST"]
    # The paused conversation went on from the turn the judge failed on: its recorded answer
    # judged again, the later turns asked then; no turn asked twice (turns are not independent).
    assert sorted(asked) == sorted(answers)  # each turn asked once
    assert judge_server.calls == 10  # nine turns, and the one failed call
    assert rep.complete and not any(r.errored for r in rep.results)
    assert all(r.passed for r in rep.results)
    for result in rep.results:
        (conversation,) = result.run_results
        assert [t.status for t in conversation.turns or []] == ["pass"] * 3
        assert conversation.failed_turn is None
    assert "asked the judge again about 1 run(s) it had failed on: 1 judged now" in (
        capsys.readouterr().err
    )
