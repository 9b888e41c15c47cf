"""Every supported judge provider, through its real SDK, against a local stand-in of its API.

OpenAI (and OpenAI-compatible servers), Azure OpenAI, Anthropic and Google Gemini each run the
same judge tests: the verdict, what was sent (model, temperature, token cap, the structured
output form the provider is asked for), token usage, and faults (429, 5xx, Anthropic's 529,
refusals and blocks, a reply cut off at the cap), which come back as a verdict or a one-line
`JudgeError`, never as a "no". `golden-gate eval` runs with each of them, and an unsupported
provider is bad input (exit 2) in the CLI and the Action before anything runs.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from golden_gate.core.item_result import TokenUsage
from golden_gate.core.report_file import load_report
from golden_gate.evaluation.judge import Judge, JudgeError, JudgeSettings, LLMJudge
from golden_gate.example_assistant import golden_path, start
from tests.action_world import REPO
from tests.evaluation.test_judge import CORRECT, ITEM, WRONG, judge_all
from tests.fakes.anthropic_server import AnthropicServer
from tests.fakes.gemini_server import GeminiServer
from tests.fakes.judge_server import Behaviour, JudgeServer

KEY = "k-test-0123456789abcdefDUMMY"


@dataclass(frozen=True)
class StandIn:
    """One provider: its stand-in server, a model name, its key variable, its wire format."""

    provider: str
    server: Callable[..., JudgeServer]
    model: str
    key_env: str
    key_header: str  # where the key travels (header name, lowercased)
    path: str  # the path a judge call is sent to
    schema: Callable[[dict[str, Any]], dict[str, Any]]  # the score schema in a request
    cap: Callable[[dict[str, Any]], Any]  # the token cap in a request
    temperature: Callable[[dict[str, Any]], Any]
    model_sent: Callable[[dict[str, Any], str], str]  # the model a request names (body, path)

    def base_url(self, server: JudgeServer) -> str:
        if self.provider == "azure_openai":
            return f"http://127.0.0.1:{server.port}"
        return server.base_url


def _openai_schema(body: dict[str, Any]) -> dict[str, Any]:
    assert body["response_format"]["type"] == "json_schema"
    return body["response_format"]["json_schema"]["schema"]


def _anthropic_schema(body: dict[str, Any]) -> dict[str, Any]:
    (tool,) = body["tools"]
    assert body["tool_choice"] == {"type": "tool", "name": tool["name"]}
    return tool["input_schema"]


def _gemini_schema(body: dict[str, Any]) -> dict[str, Any]:
    config = body["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    return config["responseJsonSchema"]


STAND_INS = {
    s.provider: s
    for s in (
        StandIn(
            "openai",
            JudgeServer,
            "gpt-4.1-mini",
            "OPENAI_API_KEY",
            "authorization",
            "/v1/chat/completions",
            _openai_schema,
            lambda body: body["max_completion_tokens"],
            lambda body: body["temperature"],
            lambda body, path: body["model"],
        ),
        StandIn(
            "azure_openai",
            JudgeServer,
            "judge-deployment",
            "AZURE_OPENAI_API_KEY",
            "api-key",
            "/openai/deployments/judge-deployment/chat/completions",
            _openai_schema,
            lambda body: body["max_completion_tokens"],
            lambda body: body["temperature"],
            lambda body, path: path.split("/")[3],
        ),
        StandIn(
            "anthropic",
            AnthropicServer,
            "claude-sonnet-4-6",
            "ANTHROPIC_API_KEY",
            "authorization",  # this SDK sends the key as a bearer token
            "/v1/messages",
            _anthropic_schema,
            lambda body: body["max_tokens"],
            lambda body: body["temperature"],
            lambda body, path: body["model"],
        ),
        StandIn(
            "google_genai",
            GeminiServer,
            "gemini-2.5-flash",
            "GOOGLE_API_KEY",
            "x-goog-api-key",
            "/v1/models/gemini-2.5-flash:generateContent",
            _gemini_schema,
            lambda body: body["generationConfig"]["maxOutputTokens"],
            lambda body: body["generationConfig"]["temperature"],
            lambda body, path: path.rpartition("/")[2].partition(":")[0],
        ),
        StandIn(
            "ollama",
            JudgeServer,
            "llama3.2",
            "OLLAMA_API_KEY",
            "authorization",
            "/v1/chat/completions",
            _openai_schema,
            lambda body: body["max_tokens"],  # Ollama reads no max_completion_tokens
            lambda body: body["temperature"],
            lambda body, path: body["model"],
        ),
    )
}
PROVIDERS = list(STAND_INS)
# Environment that would send a judge elsewhere than the stand-in, or elsewhere than we say.
FOREIGN_ENV = (
    "OPENAI_BASE_URL",
    "OPENAI_API_BASE",
    "OPENAI_API_VERSION",
    "AZURE_OPENAI_ENDPOINT",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_API_URL",
    "ANTHROPIC_AUTH_TOKEN",
    "GEMINI_API_KEY",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_CLOUD_PROJECT",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)


@pytest.fixture(params=PROVIDERS)
def stand_in(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> StandIn:
    for name in FOREIGN_ENV:
        monkeypatch.delenv(name, raising=False)
    spec = STAND_INS[request.param]
    monkeypatch.setenv(spec.key_env, KEY)
    return spec


@pytest.fixture
def server(stand_in: StandIn) -> Iterator[JudgeServer]:
    with stand_in.server() as running:
        yield running


def model_of(stand_in: StandIn) -> str:
    return f"{stand_in.provider}:{stand_in.model}"


def llm_judge(stand_in: StandIn, server: JudgeServer, **overrides: Any) -> LLMJudge:
    settings: dict[str, Any] = {
        "model": model_of(stand_in),
        "base_url": stand_in.base_url(server),
        "timeout_s": 5.0,
        "max_retries": 2,
    }
    settings.update(overrides)
    return LLMJudge(JudgeSettings(**settings))


def judge_error(judge: Judge) -> JudgeError:
    with pytest.raises(JudgeError) as caught:
        judge_all(judge, [CORRECT])
    assert "\n" not in str(caught.value)
    assert KEY not in str(caught.value)
    return caught.value


# -- verdicts and what is sent ------------------------------------------------------------------


def test_correct_passes_and_wrong_fails(stand_in: StandIn, server: JudgeServer) -> None:
    right, wrong = judge_all(llm_judge(stand_in, server), [CORRECT, WRONG])

    assert right.passed is True and right.score is True
    assert wrong.passed is False and wrong.score is False
    assert "Missing" in wrong.comment and not right.cached
    assert server.calls == 2


def test_the_request_is_what_the_provider_expects(stand_in: StandIn, server: JudgeServer) -> None:
    judge_all(llm_judge(stand_in, server, temperature=0.25, max_tokens=777), [CORRECT])

    (body,) = server.requests
    (path,) = server.paths
    (prompt,) = server.prompts
    assert path == stand_in.path
    assert stand_in.model_sent(body, path) == stand_in.model
    assert stand_in.temperature(body) == 0.25
    assert stand_in.cap(body) == 777
    schema = stand_in.schema(body)
    assert schema["properties"]["score"]["type"] == "boolean"
    assert set(schema["required"]) == {"reasoning", "score"}
    assert ITEM.question in prompt and CORRECT in prompt
    assert all(f"- {point}" in prompt for point in ITEM.reference_key_points)
    assert server.headers[0][stand_in.key_header].removeprefix("Bearer ") == KEY
    if stand_in.provider == "azure_openai":
        assert server.queries == ["api-version=2024-10-21"]


def test_the_token_cap_defaults_to_1024(stand_in: StandIn, server: JudgeServer) -> None:
    judge_all(llm_judge(stand_in, server), [CORRECT])

    assert stand_in.cap(server.requests[0]) == 1024


def test_token_usage_is_recorded(stand_in: StandIn, server: JudgeServer) -> None:
    (verdict,) = judge_all(llm_judge(stand_in, server), [CORRECT])

    assert verdict.tokens.input_tokens == len(server.prompts[0].split())
    assert verdict.tokens.output_tokens > 0


def test_continuous_scores(stand_in: StandIn, server: JudgeServer) -> None:
    item = ITEM.model_copy(
        update={"reference_key_points": [*ITEM.reference_key_points, "Saves use per-run keys"]}
    )
    judge = llm_judge(stand_in, server, continuous=True)
    full, none = judge_all(judge, [CORRECT + " Saves use per-run keys.", WRONG], item)

    assert full.passed is True and full.score == 1.0
    assert none.passed is False and none.score == 0.0
    assert stand_in.schema(server.requests[0])["properties"]["score"]["type"] == "number"


def test_one_judge_works_across_event_loops(stand_in: StandIn, server: JudgeServer) -> None:
    judge = llm_judge(stand_in, server)

    first = judge_all(judge, [CORRECT])[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        unclosed = asyncio.run(
            judge.judge(question=ITEM.question, answer=WRONG, reference=ITEM.reference)
        )
        third = judge_all(judge, [CORRECT])[0]
        gc.collect()

    assert [first.passed, unclosed.passed, third.passed] == [True, False, True]


# -- faults -----------------------------------------------------------------------------------


def test_a_rate_limit_is_retried(stand_in: StandIn, server: JudgeServer) -> None:
    server.enqueue(Behaviour.rate_limited(retry_after=0.01))

    (verdict,) = judge_all(llm_judge(stand_in, server), [CORRECT])

    assert verdict.passed is True
    assert server.calls == 2


def test_a_permanent_server_error_is_a_judge_error(stand_in: StandIn, server: JudgeServer) -> None:
    server.default = Behaviour.server_error(500, retry_after=0.01)

    error = judge_error(llm_judge(stand_in, server, max_retries=1))

    assert server.calls == 2
    assert str(error) == (
        f"judge {model_of(stand_in)} failed: HTTP 500 after 1 retries: fake judge says 500"
    )
    assert error.tokens == TokenUsage()


def test_anthropic_overloaded_529_is_retried_then_a_judge_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    spec = STAND_INS["anthropic"]
    with AnthropicServer() as server:
        server.enqueue(Behaviour.server_error(529, retry_after=0.01))
        (verdict,) = judge_all(llm_judge(spec, server), [CORRECT])
        assert verdict.passed and server.calls == 2

        server.default = Behaviour.server_error(529, retry_after=0.01)
        error = judge_error(llm_judge(spec, server, max_retries=1))

    assert str(error) == (
        f"judge {model_of(spec)} failed: HTTP 529 after 1 retries: fake judge says 529"
    )


def test_an_unauthorized_key_is_a_judge_error_without_the_key(
    stand_in: StandIn, server: JudgeServer
) -> None:
    server.default = Behaviour.unauthorized()

    error = judge_error(llm_judge(stand_in, server))

    assert str(error).startswith(f"judge {model_of(stand_in)} failed: HTTP 401")
    assert server.calls == 1
    assert KEY[:12] not in str(error)


def test_a_refusal_is_a_judge_error_not_a_fail(stand_in: StandIn, server: JudgeServer) -> None:
    server.default = Behaviour.refusal()

    error = judge_error(llm_judge(stand_in, server))

    stop = {"google_genai": "safety"}.get(stand_in.provider, "refusal")
    assert str(error) == (
        f"judge {model_of(stand_in)} failed: the model declined to give a verdict "
        f"(stop reason: {stop})"
    )
    assert server.calls == 1


def test_a_reply_cut_off_at_the_cap_is_a_judge_error(
    stand_in: StandIn, server: JudgeServer
) -> None:
    server.default = Behaviour.cut_off()

    error = judge_error(llm_judge(stand_in, server, max_tokens=50))

    chat_completions = ("openai", "azure_openai", "ollama")
    stop = "length" if stand_in.provider in chat_completions else "max_tokens"
    assert str(error) == (
        f"judge {model_of(stand_in)} failed: the reply hit the generation cap of 50 tokens "
        f"(judge-max-tokens) before a verdict (stop reason: {stop})"
    )


def test_a_gemini_blocked_prompt_is_a_judge_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", KEY)
    spec = STAND_INS["google_genai"]
    with GeminiServer(default=Behaviour.blocked()) as server:
        error = judge_error(llm_judge(spec, server))

    assert str(error) == f"judge {model_of(spec)} failed: the provider blocked the prompt (safety)"


def test_a_plain_text_reply_is_a_judge_error(stand_in: StandIn, server: JudgeServer) -> None:
    server.default = Behaviour.plain_text("yes")

    error = judge_error(llm_judge(stand_in, server))

    assert str(error).startswith(f"judge {model_of(stand_in)} failed: ")
    assert server.calls == 1


def test_a_timeout_is_a_judge_error(stand_in: StandIn, server: JudgeServer) -> None:
    server.default = Behaviour.slow(3.0)

    error = judge_error(llm_judge(stand_in, server, timeout_s=0.3, max_retries=0))

    assert str(error) == f"judge {model_of(stand_in)} failed: timed out after 0.3s (tried 1 times)"


# -- the command and the Action ------------------------------------------------------------------


def _eval(stand_in: StandIn, server: JudgeServer, url: str, out: Path, *extra: str):
    env = {k: v for k, v in os.environ.items() if k not in FOREIGN_ENV}
    env[stand_in.key_env] = KEY
    command = [
        sys.executable,
        "-m",
        "golden_gate",
        "eval",
        str(golden_path()),
        "--assistant-url",
        url,
    ]
    command += ["--subset-tags", "smoke", "--judge-model", model_of(stand_in)]
    command += ["--judge-base-url", stand_in.base_url(server), "-o", str(out), "--quiet"]
    command += ["--cache-dir", str(out.parent / "verdicts"), *extra]
    return subprocess.run(
        command, capture_output=True, text=True, env=env, timeout=120, cwd=out.parent
    )


def test_eval_with_each_provider_judges_like_openai(
    stand_in: StandIn, server: JudgeServer, tmp_path: Path
) -> None:
    with start("candidate") as assistant:
        done = _eval(stand_in, server, assistant.url, tmp_path / "r.json")

    assert done.returncode == 0, done.stderr
    report = load_report(tmp_path / "r.json")
    assert report.judge == model_of(stand_in) and report.complete
    failed = sorted(r.id for r in report.results if not r.passed)
    # The example candidate drops six answers' facts: the judge finds all six (and the checks
    # their missing citations), whichever provider judges.
    assert len(failed) == 6, failed
    assert report.stats.judge_calls == server.calls > 0 and report.stats.input_tokens > 0
    # All cached: each item's verdict, and the judge preflight's (one request, one entry).
    assert server.preflights == 1
    assert len(list((tmp_path / "verdicts").rglob("*.json"))) == server.calls + 1


def test_eval_with_a_failing_provider_is_incomplete_and_caches_nothing(
    stand_in: StandIn, server: JudgeServer, tmp_path: Path
) -> None:
    server.default = Behaviour.unauthorized()  # permanent, and echoes the key it was sent
    with start("candidate") as assistant:
        done = _eval(stand_in, server, assistant.url, tmp_path / "r.json")

    assert done.returncode == 3, done.stdout + done.stderr
    report = load_report(tmp_path / "r.json")
    assert not report.complete
    judge_errors = [run.error for r in report.results for run in r.run_results if run.error]
    assert judge_errors and all(
        e.startswith(f"judge: judge {model_of(stand_in)} failed: HTTP 401") for e in judge_errors
    )
    # An answer the judge could not judge is an error, never a "no": the only failed runs are
    # the two answers whose citations the deterministic checks reject before any judge call.
    failed = {r.id: r.why for r in report.results if r.runs and not r.passed}
    assert len(failed) == 2 and all(why.startswith("check ") for why in failed.values()), failed
    assert len(judge_errors) == len(report.results) - 3
    # Nothing but the preflight's verdict (the stand-in's preflight answers; its items fail).
    assert len(list((tmp_path / "verdicts").rglob("*.json"))) == server.preflights == 1
    assert KEY not in done.stdout + done.stderr + (tmp_path / "r.json").read_text()


UNSUPPORTED = ["mistralai:mistral-large-latest", "groq:llama-3.3-70b", "llama3", "nosuch:model"]


@pytest.mark.parametrize("model", UNSUPPORTED)
def test_an_unsupported_provider_is_bad_input_in_the_cli(model: str, tmp_path: Path) -> None:
    command = [sys.executable, "-m", "golden_gate", "eval", str(golden_path())]
    command += ["--assistant-url", "http://127.0.0.1:9", "--judge-model", model, "-o", "r.json"]
    done = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=60)

    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("golden-gate: --judge-model: ") or "--judge-model: " in line
    assert "openai:, azure_openai:, anthropic:, google_genai:, ollama:" in line
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize("model", ["mistralai:mistral-large-latest", "groq:llama-3.3-70b"])
def test_an_unsupported_provider_is_bad_input_in_the_action(world, model: str) -> None:
    pull = world.pull(["prompts/answer.txt"])
    done = world.run(
        "pull_request",
        world.event("pull_request.opened", pull),
        assistant_url="http://127.0.0.1:9",
        judge_model=model,
    )

    assert done.returncode == 2
    assert done.outputs == {"verdict": "error"}
    errors = [line for line in done.stdout.splitlines() if line.startswith("::error")]
    assert errors == [
        f"::error title=golden-gate::input 'judge-model': judge provider "
        f"'{model.partition(':')[0]}' is not supported; use keypoints or one of openai:, "
        "azure_openai:, anthropic:, google_genai:, ollama: followed by a model name"
    ]
    assert world.github.comments(REPO, pull.number) == []


@pytest.mark.parametrize("provider", ["azure_openai", "anthropic", "google_genai"])
def test_the_action_judges_with_each_provider_and_masks_its_key(
    world, candidate, provider: str
) -> None:
    spec = STAND_INS[provider]
    secret = f"{provider}-s3cret-key-value"
    with spec.server() as server:
        # The judge is a rule: the base branch's golden-gate.toml names it.
        world.configure({"judge": {"model": model_of(spec), "base-url": spec.base_url(server)}})
        pull = world.pull(["prompts/answer.txt"])
        done = world.run(
            "pull_request",
            world.event("pull_request.opened", pull),
            assistant_url=candidate,
            extra_env={spec.key_env: secret},
        )
    assert done.returncode == 1, done.stdout + done.stderr  # the candidate regresses
    assert f"::add-mask::{secret}" in done.stdout
    assert int(done.outputs["judge-calls"]) == server.calls > 0
    report = json.loads((world.workspace / done.outputs["report-path"]).read_text())
    assert report["judge"] == model_of(spec) and report["tier"] != "deterministic"
    logs = [line for line in done.stdout.splitlines() if not line.startswith("::add-mask::")]
    assert secret not in "\n".join(logs) + done.stderr


def test_no_provider_sdk_is_imported_before_a_judge_is_built() -> None:
    code = textwrap.dedent(
        """
        import sys
        import golden_gate.evaluation.judge, golden_gate.evaluation.providers
        import golden_gate.action.main, golden_gate.cli
        from golden_gate.evaluation.judge import JudgeSettings
        JudgeSettings(model="anthropic:claude-sonnet-4-6")
        JudgeSettings(model="google_genai:gemini-2.5-flash")
        heavy = {"openevals", "langchain", "langchain_core", "openai", "langchain_openai",
                 "anthropic", "langchain_anthropic", "google", "langchain_google_genai"}
        print(",".join(sorted(n for n in sys.modules if n.split(".")[0] in heavy)))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )

    assert result.stdout.strip() == ""


@pytest.mark.parametrize(
    ("model", "variable"),
    [
        ("anthropic:claude-x", "ANTHROPIC_BASE_URL"),
        ("google_genai:gemini-x", "GOOGLE_GEMINI_BASE_URL"),
        ("openai:gpt-x", "OPENAI_BASE_URL"),
    ],
)
def test_a_server_chosen_by_the_sdks_own_variable_is_another_judge(
    monkeypatch: pytest.MonkeyPatch, model: str, variable: str
) -> None:
    # Verdicts from one server must never be served for another, however the SDK found it.
    for key in ("ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.setenv(key, "sk-test-0123456789abcdef")
    identities = []
    for url in ("http://127.0.0.1:8001/v1", "http://user:secret@127.0.0.1:8002/v1"):
        monkeypatch.setenv(variable, url)
        identities.append(LLMJudge(JudgeSettings(model=model)).identity())
    assert identities[0] != identities[1]
    assert "127.0.0.1:8002" in identities[1] and "secret" not in identities[1]


def test_ollama_needs_no_key_and_defaults_to_its_local_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from golden_gate.evaluation import providers

    for name in (*FOREIGN_ENV, "OLLAMA_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    assert providers.missing_key_env("ollama:llama3.2", os.environ) == ()
    judge = LLMJudge(JudgeSettings(model="ollama:llama3.2"))
    assert judge.endpoint == "http://127.0.0.1:11434/v1"
    assert providers.endpoint("ollama:llama3.2", None) == judge.endpoint  # the preflight's

    with JudgeServer() as server:  # any key will do: the SDK sends a placeholder
        judge = LLMJudge(JudgeSettings(model="ollama:llama3.2", base_url=server.base_url))
        (verdict,) = judge_all(judge, [CORRECT])
    assert verdict.passed is True
    assert server.headers[0]["authorization"] == "Bearer ollama"


def test_every_registered_provider_says_all_the_judge_asks_of_it() -> None:
    from golden_gate.evaluation import providers
    from golden_gate.evaluation.providers import base

    fields = [name for name, v in vars(base.Provider).items() if isinstance(v, property)]
    assert "name" in fields and "seed" in fields
    methods = ["chat_endpoint", "build", "sdk_url", "describe_error", "is_timeout", "error_usage"]
    for name, provider in providers.PROVIDERS.items():
        assert provider.name == name
        assert all(hasattr(provider, field) for field in fields), name
        assert all(callable(getattr(provider, method, None)) for method in methods), name
        assert provider.key_env and provider.cap_field
        # Its stand-in above runs every test of this module through its SDK.
        assert name in STAND_INS


def test_ollama_not_running_at_its_default_endpoint_stops_the_run_before_any_question(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    from tests.fakes.assistant_server import AssistantServer
    from tests.helpers import golden_gate

    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", 11434)) == 0:
            pytest.skip("an Ollama server listens on this machine")
    monkeypatch.delenv("OLLAMA_API_KEY", raising=False)
    golden = tmp_path / "g.jsonl"
    golden.write_text('{"id": "q1", "question": "q1?", "reference_key_points": ["x"]}\n')
    with AssistantServer(answers={}) as assistant:
        done = golden_gate(
            "eval", golden, "--assistant-url", assistant.url, "--quiet", "--cache", "off",
            "--judge-model", "ollama:llama3.2", "-o", tmp_path / "r.json", cwd=tmp_path,
            timeout=60,
        )  # fmt: skip
        asked = assistant.request_count

    assert done.returncode == 3
    lines = [line for line in done.stderr.splitlines() if "error" in line]
    assert lines == [
        "golden-gate: error: the judge at http://127.0.0.1:11434/v1 cannot be reached "
        "(connection refused): is it running? check judge-base-url"
    ]
    assert asked == 0
