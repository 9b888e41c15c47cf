"""The two ways an OpenAI judge call is made are one judge: the SDK's client given to openevals
directly (the default, judge_client.py) and LangChain's chat model (`GOLDEN_GATE_JUDGE_LANGCHAIN=1`,
and what the other providers use).

Both run against the same `JudgeServer` on 127.0.0.1, and must send the same request body,
byte for byte, get the same verdicts, the same identity and so the same cache keys, and fail
the same way: retries on 429 and 5xx, timeouts, token usage and the served model included.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from typing import Any

import pytest

from golden_gate.core.golden import GoldenItem
from golden_gate.core.item_result import Verdict
from golden_gate.errors import InputError
from golden_gate.evaluation import judge_client, tracing
from golden_gate.evaluation.cache import VerdictCache
from golden_gate.evaluation.evaluate import EvalSettings, evaluate
from golden_gate.evaluation.judge import JudgeError, JudgeSettings, LLMJudge
from golden_gate.evaluation.providers.openai import FORCE_LANGCHAIN
from golden_gate.evaluation.response import AssistantSettings
from golden_gate.evaluation.target import AssistantClient
from tests.evaluation.test_judge import CORRECT, DUMMY_KEY, ITEM, WRONG, judge_all
from tests.fakes.assistant_server import AssistantServer
from tests.fakes.judge_server import Behaviour, JudgeServer

PATHS = ("sdk", "langchain")


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", DUMMY_KEY)
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", DUMMY_KEY)
    for name in (
        "OPENAI_BASE_URL",
        "OPENAI_API_BASE",
        "OPENAI_API_VERSION",
        FORCE_LANGCHAIN,
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server() -> Any:
    with JudgeServer() as running:
        yield running


def build(
    path: str, server: JudgeServer, monkeypatch: pytest.MonkeyPatch, **overrides: Any
) -> LLMJudge:
    """A judge on `path`; the choice is made when the judge binds to its first event loop."""
    settings: dict[str, Any] = {
        "model": "openai:gpt-4.1-mini",
        "base_url": server.base_url,
        "timeout_s": 5.0,
        "max_retries": 2,
    }
    settings.update(overrides)
    if settings["model"].startswith("azure_openai:"):
        settings["base_url"] = f"http://127.0.0.1:{server.port}"
    with monkeypatch.context() as env:
        env.setenv(FORCE_LANGCHAIN, "1" if path == "langchain" else "")
        judge = LLMJudge(JudgeSettings(**settings))
    assert judge.direct is (path == "sdk")
    return judge


Outcome = Verdict | JudgeError


def outcomes(judge: LLMJudge, answers: list[str]) -> list[Outcome]:
    """Each answer's verdict or error, judged one after the other in one event loop."""

    async def run() -> list[Outcome]:
        results: list[Outcome] = []
        try:
            for answer in answers:
                try:
                    results.append(
                        await judge.judge(
                            question=ITEM.question, answer=answer, reference=ITEM.reference
                        )
                    )
                except JudgeError as exc:
                    results.append(exc)
        finally:
            await judge.aclose()
        return results

    return asyncio.run(run())


def same(a: Outcome, b: Outcome) -> None:
    if isinstance(a, Verdict):
        assert isinstance(b, Verdict), str(b)
        assert a.model_dump(exclude={"latency_ms"}) == b.model_dump(exclude={"latency_ms"})
    else:
        assert isinstance(b, JudgeError), b
        assert (str(a), a.tokens, a.timed_out) == (str(b), b.tokens, b.timed_out)


def both(
    server: JudgeServer, monkeypatch: pytest.MonkeyPatch, answers: list[str], **overrides: Any
) -> tuple[list[Outcome], list[Outcome], list[bytes], list[bytes]]:
    """Outcomes and request bodies of the SDK path, then of the LangChain path."""
    sdk = outcomes(build("sdk", server, monkeypatch, **overrides), answers)
    sent = len(server.bodies)
    chain = outcomes(build("langchain", server, monkeypatch, **overrides), answers)
    return sdk, chain, server.bodies[:sent], server.bodies[sent:]


# -- what is sent, and what comes back -------------------------------------------------------

SETTINGS = {
    "boolean": {},
    "continuous": {"continuous": True},
    "no-reasoning": {"use_reasoning": False},
    "choices": {"choices": [0.0, 0.5, 1.0]},
    "cap-and-temperature": {"max_tokens": 300, "temperature": 0.7},
    # LangChain drops a non-default temperature for gpt-5 reasoning models.
    "gpt-5": {"model": "openai:gpt-5-mini", "temperature": 0.3},
    "o-series": {"model": "openai:o4-mini"},
    "azure": {"model": "azure_openai:judge-deployment"},
}


@pytest.mark.parametrize("overrides", list(SETTINGS.values()), ids=list(SETTINGS))
def test_both_paths_send_the_same_bytes_and_get_the_same_verdicts(
    server: JudgeServer, monkeypatch: pytest.MonkeyPatch, overrides: dict[str, Any]
) -> None:
    sdk, chain, sdk_bodies, chain_bodies = both(server, monkeypatch, [CORRECT, WRONG], **overrides)

    assert sdk_bodies == chain_bodies and len(sdk_bodies) == 2
    assert server.paths[:2] == server.paths[2:] and server.queries[:2] == server.queries[2:]
    for a, b in zip(sdk, chain, strict=True):
        same(a, b)
    right, wrong = sdk
    assert isinstance(right, Verdict) and isinstance(wrong, Verdict)
    assert right.passed and not wrong.passed
    assert right.tokens is not None and right.tokens.input_tokens > 0
    assert right.served_model


def test_both_paths_are_one_judge_with_the_same_cache_keys(
    server: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    sdk = build("sdk", server, monkeypatch)
    chain = build("langchain", server, monkeypatch)

    assert sdk.identity() == chain.identity()
    assert sdk.prompt_hash == chain.prompt_hash
    keys = [
        VerdictCache.key(
            judge_identity=j.identity(),
            question=ITEM.question,
            answer=CORRECT,
            reference=ITEM.reference,
        ).hex
        for j in (sdk, chain)
    ]
    assert keys[0] == keys[1]


def test_verdicts_cached_by_one_path_are_hits_for_the_other(
    tmp_path: Any, server: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    golden = [
        GoldenItem(
            id=f"q{i}",
            question=f"{ITEM.question} ({i})",
            reference_key_points=ITEM.reference_key_points,
        )
        for i in range(4)
    ]
    answers = {item.question: CORRECT if i % 2 else WRONG for i, item in enumerate(golden)}

    def run(path: str) -> Any:
        judge = build(path, server, monkeypatch)

        async def go() -> Any:
            async with AssistantClient(AssistantSettings(url=assistant.url)) as client:
                try:
                    return await evaluate(
                        golden,
                        client=client,
                        judge=judge,
                        cache=VerdictCache(tmp_path / "cache"),
                        settings=EvalSettings(rerun_failures=0, canaries=0),
                    )
                finally:
                    await judge.aclose()

        return asyncio.run(go())

    with AssistantServer(answers=answers) as assistant:
        first = run("sdk")
        second = run("langchain")

    assert first.stats is not None and second.stats is not None
    assert first.stats.judge_calls == 4 and server.calls == 4
    assert second.stats.judge_calls == 0 and second.stats.cache_hits == 4
    assert [r.passed for r in first.results] == [r.passed for r in second.results]


def test_a_reply_in_markdown_fences_reads_the_same(
    server: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # LangChain's JSON parser takes a fenced reply (servers that ignore response_format).
    server.default = Behaviour.content('```json\n{"reasoning": "All there.", "score": true}\n```')

    sdk, chain, _, _ = both(server, monkeypatch, [CORRECT])

    same(sdk[0], chain[0])
    assert isinstance(sdk[0], Verdict) and sdk[0].passed and sdk[0].comment == "All there."


def test_the_served_model_is_recorded_on_both_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    with JudgeServer(served_model="qwen2.5-7b-instruct-q4_k_m.gguf") as other:
        sdk, chain, _, _ = both(other, monkeypatch, [CORRECT])

    same(sdk[0], chain[0])
    assert isinstance(sdk[0], Verdict)
    assert sdk[0].served_model == "qwen2.5-7b-instruct-q4_k_m.gguf"


# -- faults --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "script",
    [
        [Behaviour.rate_limited(retry_after=0.01)],
        [Behaviour.server_error(500), Behaviour.server_error(503)],
        [Behaviour.slow(2.0)],
    ],
    ids=["429", "500-then-503", "timeout"],
)
def test_both_paths_retry_429_5xx_and_timeouts(
    server: JudgeServer, monkeypatch: pytest.MonkeyPatch, script: list[Behaviour]
) -> None:
    calls = []
    results = []
    for path in PATHS:
        server.enqueue(*script)
        start = server.calls
        results.append(outcomes(build(path, server, monkeypatch, timeout_s=0.5), [CORRECT])[0])
        calls.append(server.calls - start)

    assert calls == [len(script) + 1] * 2
    same(*results)
    assert isinstance(results[0], Verdict) and results[0].passed


@pytest.mark.parametrize(
    ("behaviour", "reason"),
    [
        (Behaviour.server_error(500), "HTTP 500 after 2 retries: fake judge says 500"),
        (Behaviour.error_page(502), "HTTP 502 after 2 retries: Error code: 502"),
        (Behaviour.error_page(400), "HTTP 400: Error code: 400"),
        (Behaviour.slow(2.0), "timed out after 0.3s (tried 3 times)"),
        (Behaviour.unauthorized(), "HTTP 401: Incorrect API key provided"),
        (Behaviour.malformed_json(), "the reply was not the JSON verdict asked for"),
        (Behaviour.plain_text("yes"), "the reply was not the JSON verdict asked for"),
        (Behaviour.no_score(), "the reply has no 'score'"),
        (Behaviour.content('{"reasoning": "ok", "score": "yes"}'), "the score was 'yes'"),
        (Behaviour.refusal(), "the model declined to give a verdict (stop reason: refusal)"),
        (Behaviour.length(), "the reply hit the generation cap of 1024 tokens"),
    ],
    ids=[
        "500",
        "502-html",
        "400-html",
        "timeout",
        "401",
        "malformed-json",
        "plain-text",
        "no-score",
        "score-string",
        "refusal",
        "cut-off",
    ],
)
def test_both_paths_fail_alike(
    server: JudgeServer, monkeypatch: pytest.MonkeyPatch, behaviour: Behaviour, reason: str
) -> None:
    server.default = behaviour
    errors = []
    calls = []
    for path in PATHS:
        start = server.calls
        errors.append(outcomes(build(path, server, monkeypatch, timeout_s=0.3), [CORRECT])[0])
        calls.append(server.calls - start)

    same(*errors)
    assert calls[0] == calls[1]
    error = errors[0]
    assert isinstance(error, JudgeError)
    assert reason in str(error)
    assert DUMMY_KEY not in str(error)
    assert error.timed_out is (behaviour.kind == "slow")
    if behaviour.kind in ("cut_off", "no_score", "malformed_json"):
        assert error.tokens is not None and error.tokens.output_tokens > 0  # paid for


class _HangUp:
    """A server on 127.0.0.1 that accepts connections and closes them unanswered."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = self._listener.accept()
                self.accepted += 1
                conn.recv(65536)  # the request, then no answer
                conn.close()

    def close(self) -> None:
        self._listener.close()


@pytest.mark.parametrize("fault", ["refused", "hang-up"])
def test_both_paths_retry_a_connection_that_fails_and_say_so(
    server: JudgeServer, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    hang_up = _HangUp()
    if fault == "refused":
        hang_up.close()  # nothing listens on its port now
    url = f"http://127.0.0.1:{hang_up.port}/v1"
    try:
        errors = [
            outcomes(build(path, server, monkeypatch, base_url=url), [CORRECT])[0] for path in PATHS
        ]
    finally:
        hang_up.close()

    for error in errors:
        assert isinstance(error, JudgeError)
        # The words after "cannot connect" are each HTTP library's own.
        assert "failed: cannot connect (" in str(error)
        assert error.attempts == 3 and not error.timed_out  # the first try and two retries
    if fault == "hang-up":
        assert hang_up.accepted >= 6


def test_concurrent_calls_on_the_sdk_path_stay_within_the_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with JudgeServer(latency_s=0.05) as slow:
        verdicts = judge_all(build("sdk", slow, monkeypatch, concurrency=3), [CORRECT] * 9)

        assert all(v.passed for v in verdicts)
        assert slow.calls == 9 and slow.max_in_flight == 3


def test_both_paths_send_the_same_credentials_and_organisation(
    server: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_ORGANIZATION", "org-from-langchains-variable")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-1")
    both(server, monkeypatch, [CORRECT])
    monkeypatch.setenv("OPENAI_ORG_ID", "org-2")
    both(server, monkeypatch, [CORRECT])

    wanted = ("authorization", "openai-organization", "openai-project", "content-type", "accept")
    sent = [{name: h.get(name) for name in wanted} for h in server.headers]
    assert sent[0] == sent[1] and sent[2] == sent[3]
    assert sent[0]["authorization"] == f"Bearer {DUMMY_KEY}"
    assert sent[0]["openai-organization"] == "org-from-langchains-variable"
    assert sent[2]["openai-organization"] == "org-2" and sent[2]["openai-project"] == "proj-1"


@pytest.mark.parametrize("variable", ["OPENAI_API_BASE", "OPENAI_BASE_URL"])
def test_both_paths_find_the_endpoint_in_the_same_variables(
    server: JudgeServer, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    monkeypatch.setenv(variable, server.base_url)
    sdk, chain, sdk_bodies, chain_bodies = both(server, monkeypatch, [CORRECT], base_url=None)

    same(sdk[0], chain[0])
    assert isinstance(sdk[0], Verdict) and sdk_bodies == chain_bodies
    judges = [build(path, server, monkeypatch, base_url=None) for path in PATHS]
    assert judges[0].endpoint == judges[1].endpoint == server.base_url.rstrip("/")
    assert judges[0].identity() == judges[1].identity()


def test_both_paths_go_through_openai_proxy(
    server: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    with JudgeServer() as proxy:
        monkeypatch.setenv("OPENAI_PROXY", proxy.base_url.removesuffix("/v1"))
        for path in PATHS:
            outcomes(build(path, server, monkeypatch), [CORRECT])
        asked = f"{server.base_url}/chat/completions"
        assert proxy.seen == [f"POST {asked}"] * 2  # the absolute form: a proxy's
    assert server.calls == 0


@pytest.mark.parametrize("proxy", ["proxy.internal:3128", "socks5://u:hunter2@127.0.0.1:1080"])
def test_an_unusable_openai_proxy_is_refused_as_the_judge_is_set_up(
    server: JudgeServer, monkeypatch: pytest.MonkeyPatch, proxy: str
) -> None:
    # aiohttp reads the proxy per call: without this, every item's verdict would fail alike.
    monkeypatch.setenv("OPENAI_PROXY", proxy)
    with pytest.raises(InputError, match="could not be set up: OPENAI_PROXY") as caught:
        build("sdk", server, monkeypatch)
    assert "not a usable proxy URL" in str(caught.value)
    assert "hunter2" not in str(caught.value)
    try:  # LangChain's path refuses it too, at once or at the first call
        outcome: Any = outcomes(build("langchain", server, monkeypatch), [CORRECT])[0]
    except InputError as exc:
        outcome = exc
    assert not isinstance(outcome, Verdict)
    assert "hunter2" not in str(outcome)
    assert server.calls == 0


def test_neither_path_goes_through_http_proxy(
    server: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The SDK's httpx client, given a transport, reads no HTTP(S)_PROXY: the direct path
    # neither, so both reach the same place (OPENAI_PROXY is the judge's proxy).
    with JudgeServer() as proxy:
        for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY"):
            monkeypatch.setenv(name, proxy.base_url.removesuffix("/v1"))
        for path in PATHS:
            outcomes(build(path, server, monkeypatch), [CORRECT])
        assert proxy.seen == []
    assert server.calls == 2


def test_the_langsmith_gateway_keeps_langchains_model(
    server: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANGSMITH_GATEWAY", "true")
    with pytest.raises(AssertionError):  # `build` asserts the path it asked for
        build("sdk", server, monkeypatch)


def test_other_providers_keep_langchain(
    monkeypatch: pytest.MonkeyPatch, server: JudgeServer
) -> None:
    # gpt-4-* is asked with a tool by LangChain, which the SDK path does not reproduce.
    judge = build("langchain", server, monkeypatch, model="openai:gpt-4-turbo")
    assert not judge.direct
    with monkeypatch.context() as env:
        env.delenv(FORCE_LANGCHAIN, raising=False)
        assert not LLMJudge(
            JudgeSettings(model="openai:gpt-4-turbo", base_url=server.base_url)
        ).direct
        assert LLMJudge(JudgeSettings(model="openai:gpt-4o-mini", base_url=server.base_url)).direct


# -- LangSmith, off ------------------------------------------------------------------------------


def test_untraced_langsmith_work_runs_inline_and_traced_work_in_its_threads() -> None:
    from langsmith import tracing_context

    tracing.disable()
    here = threading.get_ident()

    async def where(enabled: bool) -> int:
        from langsmith._internal._aiter import aio_to_thread

        with tracing_context(enabled=enabled):
            import contextvars

            return await aio_to_thread(contextvars.copy_context(), threading.get_ident)

    assert asyncio.run(where(False)) == here
    assert asyncio.run(where(True)) != here


# -- the direct path's own copy of openevals' steps ---------------------------------------------


@pytest.mark.parametrize(
    "scale", [{}, {"continuous": True}, {"choices": [0.0, 0.5, 1.0]}, {"use_reasoning": False}]
)
def test_the_direct_scorer_asks_as_openevals_asks(scale: dict[str, Any]) -> None:
    """`Scorer` builds what openevals hands an OpenAI client: the same params, schema included."""
    from openevals.llm import create_async_llm_as_judge

    seen: list[dict[str, Any]] = []
    content = '{"reasoning": "covered", "score": true}'

    class Client:
        model = "gpt-4.1-mini"

        async def create(self, **params: Any) -> Any:
            seen.append(params)
            return judge_client._Reply(content)

    client = Client()
    client.chat = type("Chat", (), {"completions": client})()  # type: ignore[attr-defined]
    prompt = "Q {inputs} A {outputs} R {reference_outputs} C {context}"
    theirs = create_async_llm_as_judge(prompt=prompt, judge=client, model=client.model, **scale)
    ours = judge_client.Scorer(client, prompt, **scale)  # type: ignore[arg-type]
    values = {"inputs": "q?", "outputs": "a", "reference_outputs": "- r", "context": "c"}
    results = [asyncio.run(evaluator(**values)) for evaluator in (theirs, ours)]
    assert seen[0] == seen[1]
    assert results[0] == results[1]
