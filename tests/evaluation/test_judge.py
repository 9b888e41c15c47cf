"""The judges: the offline keypoints rule, and the LLM judge against a real local server.

The LLM judge runs the real stack (openevals, LangChain, the OpenAI SDK and its retries)
against `JudgeServer`, an OpenAI-compatible server on 127.0.0.1 that derives its verdict
from the prompt it receives, so these tests check what the judge was sent, not a mock.
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import json
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from golden_gate.core.golden import GoldenItem
from golden_gate.core.item_result import TokenUsage, Verdict
from golden_gate.errors import EXIT_BAD_INPUT, InputError
from golden_gate.evaluation import fence
from golden_gate.evaluation.judge import (
    KEYPOINTS,
    Judge,
    JudgeError,
    JudgeSettings,
    KeypointsJudge,
    LLMJudge,
    key_points,
    make_judge,
    redact,
)
from tests.fakes.judge_server import Behaviour, JudgeServer, derive_verdict

DUMMY_KEY = "sk-test-0123456789abcdefDUMMY"
MODEL = "openai:gpt-4.1-mini"

ITEM = GoldenItem(
    id="cache-ttl",
    question="How long are cached verdicts kept?",
    reference_key_points=[
        "Entries unused for 7 days are evicted",
        "The cache is restored by key prefix",
    ],
)
CORRECT = (
    "Entries unused for 7 days are evicted, and at the start of a run the cache is restored "
    "by key prefix."
)
WRONG = "Cached verdicts are kept forever."


@pytest.fixture(autouse=True)
def _judge_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", DUMMY_KEY)
    for name in ("OPENAI_BASE_URL", "OPENAI_API_BASE", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(name, raising=False)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


@pytest.fixture
def server() -> Any:
    with JudgeServer() as running:
        yield running


def llm_judge(server: JudgeServer, **overrides: Any) -> LLMJudge:
    settings: dict[str, Any] = {
        "model": MODEL,
        "base_url": server.base_url,
        "timeout_s": 2.0,
        "max_retries": 2,
    }
    settings.update(overrides)
    return LLMJudge(JudgeSettings(**settings))


def judge_all(judge: Judge, answers: list[str], item: GoldenItem = ITEM) -> list[Verdict]:
    """Judge answers concurrently in one event loop, then close the judge."""

    async def run() -> list[Verdict]:
        try:
            calls = [
                judge.judge(question=item.question, answer=a, reference=item.reference)
                for a in answers
            ]
            return list(await asyncio.gather(*calls))
        finally:
            await judge.aclose()

    return asyncio.run(run())


def judge_one(judge: Judge, answer: str, item: GoldenItem = ITEM) -> Verdict:
    return judge_all(judge, [answer], item)[0]


def judge_error(judge: Judge, answer: str = CORRECT) -> JudgeError:
    with pytest.raises(JudgeError) as caught:
        judge_one(judge, answer)
    return caught.value


# -- the LLM judge: verdicts and what it sends ------------------------------------------------


def test_correct_answer_passes_and_wrong_answer_fails(server: JudgeServer) -> None:
    right, wrong = judge_all(llm_judge(server), [CORRECT, WRONG])

    assert right.passed is True and right.score is True
    assert wrong.passed is False and wrong.score is False
    assert "Missing" in wrong.comment
    assert not right.cached and right.latency_ms is not None and right.latency_ms > 0
    assert server.calls == 2


def test_the_judge_is_sent_question_answer_and_every_key_point(server: JudgeServer) -> None:
    judge_one(llm_judge(server), CORRECT)

    (body,) = server.requests
    (prompt,) = server.prompts
    assert ITEM.question in prompt
    assert CORRECT in prompt
    for point in ITEM.reference_key_points:
        assert f"- {point}" in prompt
    assert server.paths == ["/v1/chat/completions"]
    assert body["model"] == "gpt-4.1-mini"
    assert body["temperature"] == 0
    assert body["response_format"]["type"] == "json_schema"
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["score"]["type"] == "boolean"
    assert set(schema["required"]) == {"reasoning", "score"}
    assert server.headers[0]["authorization"] == f"Bearer {DUMMY_KEY}"


def test_token_usage_is_recorded_in_the_verdict(server: JudgeServer) -> None:
    verdict = judge_one(llm_judge(server), CORRECT)

    (body,) = server.requests
    expected_input = len(server.prompts[0].split())
    expected_output = len(json.dumps(derive_verdict(body)).split())
    assert verdict.tokens == TokenUsage(input_tokens=expected_input, output_tokens=expected_output)
    assert verdict.tokens.total > 0


def test_continuous_scores_pass_from_one_half(server: JudgeServer) -> None:
    item = ITEM.model_copy(
        update={"reference_key_points": [*ITEM.reference_key_points, "Saves use per-run keys"]}
    )
    judge = llm_judge(server, continuous=True)
    full, third = judge_all(judge, [CORRECT + " Saves use per-run keys.", WRONG], item)

    assert full.passed is True and full.score == 1.0
    assert third.passed is False and third.score == 0.0
    schema = server.requests[0]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["score"]["type"] == "number"


def test_without_reasoning_the_verdict_has_no_comment(server: JudgeServer) -> None:
    verdict = judge_one(llm_judge(server, use_reasoning=False), CORRECT)

    assert verdict.passed is True and verdict.comment == ""
    schema = server.requests[0]["response_format"]["json_schema"]["schema"]
    assert schema["required"] == ["score"]


def test_one_judge_works_across_event_loops(server: JudgeServer) -> None:
    # A second asyncio.run must not reuse connections that belong to the first loop.
    judge = llm_judge(server)

    first = judge_one(judge, CORRECT)  # closes the judge at the end of its loop
    second = judge_one(judge, WRONG)
    with warnings.catch_warnings():
        # The unclosed loop's sockets are left to the GC, which warns; that is the point.
        warnings.simplefilter("ignore", ResourceWarning)
        unclosed = asyncio.run(
            judge.judge(question=ITEM.question, answer=CORRECT, reference=ITEM.reference)
        )
        fourth = judge_one(judge, WRONG)
        gc.collect()

    assert [v.passed for v in (first, second, unclosed, fourth)] == [True, False, True, False]
    assert server.calls == 4


def test_concurrent_calls_are_bounded_by_the_concurrency_setting() -> None:
    with JudgeServer(latency_s=0.05) as slow_server:
        verdicts = judge_all(llm_judge(slow_server, concurrency=2), [CORRECT] * 6)

        assert all(v.passed for v in verdicts)
        assert slow_server.calls == 6
        assert slow_server.max_in_flight == 2


def test_every_request_carries_the_generation_cap(server: JudgeServer) -> None:
    judge_one(llm_judge(server), CORRECT)
    judge_one(llm_judge(server, max_tokens=300), CORRECT)

    # LangChain's OpenAI model sends the cap as `max_completion_tokens`.
    assert [body["max_completion_tokens"] for body in server.requests] == [1024, 300]
    assert all("max_tokens" not in body for body in server.requests)


def test_the_model_the_server_says_it_served_is_recorded() -> None:
    with JudgeServer(served_model="qwen2.5-7b-instruct-q4_k_m.gguf") as other:
        verdict = judge_one(llm_judge(other), CORRECT)

    assert verdict.served_model == "qwen2.5-7b-instruct-q4_k_m.gguf"


# -- the LLM judge: faults ----------------------------------------------------------------------


def test_a_reply_cut_at_the_generation_cap_is_one_quick_sentence(server: JudgeServer) -> None:
    server.default = Behaviour.length()

    error = judge_error(llm_judge(server, max_tokens=64, max_retries=3))

    assert str(error) == (
        f"judge {MODEL} failed: the reply hit the generation cap of 64 tokens "
        "(judge-max-tokens) before a verdict (stop reason: length)"
    )
    assert server.calls == 1  # a runaway is not retried: one call, not minutes of them
    assert error.tokens is not None and error.tokens.output_tokens > 0  # still paid for
    assert not error.timed_out


def test_rate_limit_is_retried_after_retry_after(server: JudgeServer) -> None:
    server.enqueue(Behaviour.rate_limited(retry_after=0.01))

    verdict = judge_one(llm_judge(server), CORRECT)

    assert verdict.passed is True
    assert server.calls == 2


def test_timeout_is_retried(server: JudgeServer) -> None:
    server.enqueue(Behaviour.slow(2.0))

    verdict = judge_one(llm_judge(server, timeout_s=0.2, max_retries=1), CORRECT)

    assert verdict.passed is True
    assert server.calls == 2


def test_permanent_server_error_is_a_judge_error_not_a_fail(server: JudgeServer) -> None:
    server.default = Behaviour.server_error(500, retry_after=0.01)

    error = judge_error(llm_judge(server, max_retries=2))

    assert server.calls == 3  # the first try and two retries
    assert str(error) == (f"judge {MODEL} failed: HTTP 500 after 2 retries: fake judge says 500")
    assert error.tokens == TokenUsage()


def test_timeout_after_retries_is_a_judge_error(server: JudgeServer) -> None:
    server.default = Behaviour.slow(2.0)

    error = judge_error(llm_judge(server, timeout_s=0.2, max_retries=0))

    assert "timed out after 0.2s" in str(error)
    assert server.calls == 1
    assert error.timed_out


@pytest.mark.parametrize(
    ("behaviour", "reason"),
    [
        (Behaviour.malformed_json(), "the reply was not the JSON verdict asked for"),
        (Behaviour.plain_text("yes"), "the reply was not the JSON verdict asked for"),
        (Behaviour.no_score(), "the reply has no 'score'"),
        (Behaviour.content('{"reasoning": "ok", "score": "yes"}'), "the score was 'yes'"),
        (Behaviour.content('{"reasoning": "ok", "score": 1}'), "the score was 1"),
    ],
    ids=["malformed-json", "plain-yes", "no-score", "score-string", "score-number"],
)
def test_a_bad_reply_is_a_judge_error_without_retry(
    server: JudgeServer, behaviour: Behaviour, reason: str
) -> None:
    server.default = behaviour

    error = judge_error(llm_judge(server))

    assert reason in str(error)
    assert server.calls == 1  # a malformed reply is not retried by the SDK
    assert "\n" not in str(error)


def test_a_boolean_score_in_continuous_mode_is_a_judge_error(server: JudgeServer) -> None:
    server.default = Behaviour.content('{"reasoning": "ok", "score": true}')

    error = judge_error(llm_judge(server, continuous=True))

    assert "expected a number" in str(error)


def test_judge_errors_never_contain_the_api_key(server: JudgeServer) -> None:
    server.default = Behaviour.unauthorized()

    error = judge_error(llm_judge(server))

    assert str(error).startswith(f"judge {MODEL} failed: HTTP 401: Incorrect API key provided: ")
    assert server.calls == 1
    assert DUMMY_KEY not in str(error)
    assert DUMMY_KEY[:12] not in str(error)


def test_redact_masks_environment_secrets_and_key_shapes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGE_API_KEY", "plain-secret-value")

    text = redact(f"a {DUMMY_KEY} b plain-secret-value c sk-proj-abcdef123 d Bearer xyz")

    assert text == "a *** b *** c *** d ***"


# -- the LLM judge: configuration -------------------------------------------------------------


def test_a_custom_prompt_file_is_used(server: JudgeServer, tmp_path: Path) -> None:
    text = (
        "Judge strictly.\nQuestion: {inputs}\n<output>{outputs}</output>\n"
        "<reference_outputs>{reference_outputs}</reference_outputs>\n"
        'Literal braces: {{"score": true}}\n'
    )
    prompt_file = tmp_path / "judge-prompt.txt"
    prompt_file.write_text(text, encoding="utf-8")
    judge = llm_judge(server, prompt_file=prompt_file)

    right, wrong = judge_all(judge, [CORRECT, WRONG])

    assert right.passed and not wrong.passed
    # The gate's notice first, then the prompt with the question fenced (fence.py).
    assert server.prompts[0].startswith(fence.NOTICE + "Judge strictly.\nQuestion: <untrusted_")
    assert f"\n{ITEM.question}\n</untrusted_text id=" in server.prompts[0]
    assert '{"score": true}' in server.prompts[0]
    assert judge.prompt_hash == hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize("missing", ["inputs", "outputs", "reference_outputs"])
def test_a_prompt_file_without_a_placeholder_is_an_input_error(
    tmp_path: Path, missing: str
) -> None:
    parts = {
        "inputs": "Q: {inputs}",
        "outputs": "A: {outputs}",
        "reference_outputs": "R: {reference_outputs}",
    }
    del parts[missing]
    prompt_file = tmp_path / "prompt.txt"
    prompt_file.write_text("\n".join(parts.values()), encoding="utf-8")

    with pytest.raises(InputError) as caught:
        LLMJudge(JudgeSettings(model=MODEL, prompt_file=prompt_file))

    assert str(caught.value) == f"{prompt_file}: the judge prompt has no {{{missing}}} placeholder"
    assert caught.value.exit_code == EXIT_BAD_INPUT


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{inputs} {outputs} {reference_outputs} {context}", "{context}, which is never filled"),
        ('{inputs} {outputs} {reference_outputs} {"score": 1}', "never filled"),
        ("{inputs} {outputs} {reference_outputs} }", "is not a valid template"),
    ],
    ids=["unknown-placeholder", "json-braces", "stray-brace"],
)
def test_a_prompt_file_openevals_cannot_fill_is_an_input_error(
    tmp_path: Path, text: str, problem: str
) -> None:
    prompt_file = tmp_path / "prompt.txt"
    prompt_file.write_text(text, encoding="utf-8")

    with pytest.raises(InputError, match="judge prompt") as caught:
        LLMJudge(JudgeSettings(model=MODEL, prompt_file=prompt_file))

    assert str(caught.value).startswith(f"{prompt_file}: ")
    assert problem in str(caught.value)


@pytest.mark.parametrize("kind", ["missing", "directory", "not-utf8"])
def test_an_unreadable_prompt_file_is_an_input_error(tmp_path: Path, kind: str) -> None:
    prompt_file = tmp_path / "prompt.txt"
    if kind == "directory":
        prompt_file.mkdir()
    elif kind == "not-utf8":
        prompt_file.write_bytes(b"\xff\xfe{inputs}")

    with pytest.raises(InputError) as caught:
        LLMJudge(JudgeSettings(model=MODEL, prompt_file=prompt_file))

    assert str(caught.value).startswith(f"{prompt_file}: cannot read the judge prompt file (")


@pytest.mark.parametrize("model", ["nosuch:model", "mistralai:mistral-large-latest", "llama3"])
def test_an_unsupported_provider_is_refused_by_the_settings(model: str) -> None:
    with pytest.raises(ValidationError) as caught:
        JudgeSettings(model=model)

    (problem,) = caught.value.errors()
    assert problem["loc"] == ("model",)
    assert "openai:, azure_openai:, anthropic:, google_genai:" in problem["msg"]


def test_a_missing_api_key_is_an_input_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")

    with pytest.raises(InputError, match=f"judge model '{MODEL}' could not be set up"):
        LLMJudge(JudgeSettings(model=MODEL))


def test_responses_api_names_are_kept_on_chat_completions(server: JudgeServer) -> None:
    verdict = judge_one(llm_judge(server, model="openai:gpt-5-pro"), CORRECT)

    assert verdict.passed
    assert server.paths == ["/v1/chat/completions"]


def test_identity_covers_everything_that_changes_a_verdict(
    server: JudgeServer, tmp_path: Path
) -> None:
    prompt_file = tmp_path / "prompt.txt"
    prompt_file.write_text("{inputs} {outputs} {reference_outputs}", encoding="utf-8")
    base = llm_judge(server)
    variants = [
        llm_judge(server, model="openai:gpt-4.1"),
        llm_judge(server, prompt_file=prompt_file),
        llm_judge(server, continuous=True),
        llm_judge(server, choices=[0.0, 0.5, 1.0]),
        llm_judge(server, use_reasoning=False),
        llm_judge(server, temperature=0.5),
        llm_judge(server, max_tokens=4096),
        llm_judge(server, base_url="http://127.0.0.1:9/v1"),  # same model, another server
        make_judge(JudgeSettings()),
    ]
    same = llm_judge(server, timeout_s=9.0, max_retries=0, concurrency=1)
    # The endpoint is normalised: credentials, a trailing slash and the host's case go.
    spelled = llm_judge(
        server, base_url=f"HTTP://user:pass-word-1@LocalHost:{server.port}/v1/"
    ).identity()
    plain = llm_judge(server, base_url=f"http://localhost:{server.port}/v1").identity()

    identities = {base.identity()} | {v.identity() for v in variants}
    assert len(identities) == len(variants) + 1
    assert same.identity() == base.identity()
    assert spelled == plain and "pass-word-1" not in spelled
    assert json.loads(base.identity())["endpoint"] == server.base_url
    assert json.loads(base.identity())["openevals"] == "0.2.2"
    assert base.name == MODEL and base.prompt_hash is not None


def test_make_judge_picks_the_judge_by_model() -> None:
    assert isinstance(make_judge(JudgeSettings()), KeypointsJudge)
    assert isinstance(make_judge(JudgeSettings(model="Keypoints")), KeypointsJudge)
    assert isinstance(make_judge(JudgeSettings(model=MODEL)), LLMJudge)


# -- the keypoints judge --------------------------------------------------------------------------


def test_keypoints_judge_passes_an_answer_covering_every_key_point() -> None:
    verdict = judge_one(KeypointsJudge(), CORRECT)

    assert verdict.passed is True
    assert verdict.score == 1.0
    assert verdict.comment == "all 2 key points covered"
    assert verdict.tokens == TokenUsage()


def test_keypoints_judge_names_the_missing_key_point() -> None:
    answer = "Entries unused for 7 days are evicted."

    verdict = judge_one(KeypointsJudge(), answer)

    assert verdict.passed is False
    assert verdict.score == 0.5
    assert verdict.comment == 'missing key point: "The cache is restored by key prefix"'


def test_keypoints_judge_tolerates_case_punctuation_and_stop_words() -> None:
    # "cache", "restored", "key", "prefix" are the content words; 3 of 4 is above 0.6.
    answer = "ENTRIES, unused for 7 days, are EVICTED! Restores use a key-prefix."
    item = ITEM.model_copy(update={"reference_key_points": ["The cache is restored by key prefix"]})

    assert judge_one(KeypointsJudge(), answer, item).passed is False  # "restores" != "restored"
    assert judge_one(KeypointsJudge(), answer + " restored cache", item).passed is True
    assert judge_one(KeypointsJudge(threshold=0.5), "cache key", item).passed is True
    assert judge_one(KeypointsJudge(threshold=1.0), "cache restored key", item).passed is False


def test_keypoints_judge_is_deterministic() -> None:
    verdicts = judge_all(KeypointsJudge(), [WRONG, WRONG, CORRECT, CORRECT])
    summary = [(v.passed, v.score, v.comment) for v in verdicts]

    assert summary[0] == summary[1] and summary[2] == summary[3]
    assert summary[0] == (
        False,
        0.0,
        'missing key point: "Entries unused for 7 days are evicted"; '
        'missing key point: "The cache is restored by key prefix"',
    )
    assert KeypointsJudge().identity() == KeypointsJudge().identity()
    assert KeypointsJudge(0.6).prompt_hash != KeypointsJudge(0.8).prompt_hash
    assert KeypointsJudge().name == KEYPOINTS


def test_keypoints_judge_without_key_points_passes() -> None:
    item = ITEM.model_copy(update={"reference_key_points": []})

    verdict = judge_one(KeypointsJudge(), "anything", item)

    assert verdict.passed is True and verdict.comment == "no key points to check"


def test_key_points_are_the_reference_bullets() -> None:
    assert key_points(ITEM.reference) == ITEM.reference_key_points
    assert key_points("one line\n\nanother line") == ["one line", "another line"]


# -- cost of importing ------------------------------------------------------------------------


def test_importing_the_judge_module_does_not_import_openevals_or_langchain() -> None:
    code = textwrap.dedent(
        """
        import sys
        import golden_gate.evaluation.judge
        heavy = sorted(
            name for name in sys.modules
            if name.split(".")[0] in {
                "openevals", "langchain", "langchain_core", "openai", "langchain_openai",
                "anthropic", "langchain_anthropic", "google", "langchain_google_genai",
            }
        )
        print(",".join(heavy))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )

    assert result.stdout.strip() == ""


def test_langsmith_tracing_is_forced_off(server: JudgeServer) -> None:
    # Tracing inherited from the environment would upload prompts and answers; point its
    # endpoint at the fake server and check nothing but the judge call arrives.
    code = textwrap.dedent(
        """
        import asyncio, sys
        from golden_gate.evaluation.judge import JudgeSettings, make_judge
        from langsmith.utils import tracing_is_enabled

        judge = make_judge(JudgeSettings(model=sys.argv[1], base_url=sys.argv[2]))

        async def main():
            verdict = await judge.judge(question="q", answer="a b", reference="- a")
            await judge.aclose()
            return verdict

        print(asyncio.run(main()).passed, tracing_is_enabled())
        """
    )
    env = dict(
        os.environ,
        LANGSMITH_TRACING="true",
        LANGCHAIN_TRACING_V2="true",
        LANGSMITH_API_KEY="lsv2-test-dummy-key",
        LANGSMITH_ENDPOINT=f"http://127.0.0.1:{server.port}",
    )
    result = subprocess.run(
        [sys.executable, "-c", code, MODEL, server.base_url],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "False"]
    assert server.seen == ["POST /v1/chat/completions"]


def test_a_direct_openai_judge_never_imports_openevals(server: JudgeServer) -> None:
    """The OpenAI path runs openevals' steps itself (judge_client.Scorer), prompt included:
    openevals' package (its LangChain prompt classes, LangSmith's wrappers) is never imported."""
    code = textwrap.dedent(
        """
        import asyncio, sys
        from golden_gate.evaluation.judge import JudgeSettings, make_judge

        judge = make_judge(JudgeSettings(model=sys.argv[1], base_url=sys.argv[2]))

        async def main():
            verdict = await judge.judge(question="q", answer="a b", reference="- a")
            await judge.aclose()
            return verdict

        print(asyncio.run(main()).passed, judge.direct)
        print(sorted(name for name in sys.modules if name.split(".")[0] == "openevals"))
        """
    )
    env = dict(os.environ, OPENAI_API_KEY=DUMMY_KEY)
    env.pop("GOLDEN_GATE_JUDGE_LANGCHAIN", None)
    result = subprocess.run(
        [sys.executable, "-c", code, MODEL, server.base_url],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["True True", "[]"]


def test_openevals_prompts_read_without_openevals_are_its_own() -> None:
    """The prompt text is in the verdict cache's key: read apart from openevals' package, it
    must be the very string openevals exports, for the default prompt and every preset."""
    import openevals.prompts

    from golden_gate.evaluation import openevals_prompts
    from golden_gate.evaluation.evaluators import PRESETS

    names = {"CORRECTNESS_PROMPT", *(preset.prompt for preset in PRESETS.values())}
    for name in sorted(names):
        assert openevals_prompts.prompt(name) == getattr(openevals.prompts, name), name
