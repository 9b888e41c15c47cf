"""OpenAI, and the providers that speak its Chat Completions API (`OpenAICompatible`).

openevals asks for a `json_schema` chat completion; judge_client.py sends that request through
chat_completions.py, with neither LangChain's model nor the SDK in between. LangChain's model
is built instead where it would ask otherwise (a tool call, for the models it deems too old
for structured output) or route the call itself (the LangSmith gateway), and
when GOLDEN_GATE_JUDGE_LANGCHAIN is set (to compare the two; tests/evaluation/test_judge_paths.py).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from golden_gate.evaluation.providers import base, chat_completions

if TYPE_CHECKING:
    from golden_gate.core.item_result import TokenUsage
    from golden_gate.evaluation.judge import JudgeSettings


@dataclass(frozen=True)
class OpenAICompatible:
    """A provider reached through the OpenAI SDK at `default_endpoint` (or the judge base URL)."""

    name: str
    title: str
    key_env: tuple[str, ...]
    default_endpoint: str | None = None
    key_required: bool = True
    chat_completions: bool = True
    endpoint_env: tuple[str, ...] = ()
    bare_prefixes: tuple[str, ...] = ()
    cap_field: str = "max_completion_tokens"
    # A key the SDK is given when none is set: it insists on one, a local server ignores it.
    placeholder_key: str | None = None
    package: str = "langchain_openai"
    extra: str = ""
    seed: int | None = base.JUDGE_SEED

    def model_kwargs(self, settings: JudgeSettings) -> dict[str, Any]:
        """init_chat_model's keyword arguments, for LangChain's ChatOpenAI."""
        kwargs = base.model_kwargs(self, settings)
        kwargs["model_provider"] = "openai"  # LangChain's ChatOpenAI, whatever the server
        # Chat Completions (openevals asks for json_schema), even for *-pro/codex names.
        kwargs["use_responses_api"] = False
        kwargs["seed"] = self.seed
        key = self.api_key(settings.base_url)
        if key is not None and (self.placeholder_key is not None or key == LOOPBACK_KEY):
            kwargs["api_key"] = key  # a key variable the SDK does not read itself, or none
        return kwargs

    def api_key(self, base_url: str | None = None) -> str | None:
        key = next((os.environ[k] for k in self.key_env if os.environ.get(k)), None)
        if key is None and self.placeholder_key is None:
            from golden_gate.evaluation.providers import loopback

            # A server on this machine takes any key or none; the SDK insists on one.
            return LOOPBACK_KEY if loopback(base_url) else None
        return key or self.placeholder_key

    def chat_endpoint(self, model: str, settings: JudgeSettings) -> base.ChatEndpoint | None:
        if langchain_asks(model):
            return None
        key = self.api_key(settings.base_url)
        if key is None:
            raise ValueError(f"no API key (set {' or '.join(self.key_env)})")
        url = chat_completions.base_url(settings.base_url or self.default_endpoint)
        client = chat_completions.Client(
            url=url, api_key=key, timeout_s=settings.timeout_s, connections=settings.concurrency
        )
        return base.ChatEndpoint(
            post=client.post,
            url=url,
            http_client=client,
            model=model,
            temperature=chat_temperature(model, settings.temperature),
            max_tokens=settings.max_tokens or base.DEFAULT_MAX_TOKENS,
            seed=self.seed,
            cap_field=self.cap_field,
        )

    def build(self, model: str, settings: JudgeSettings) -> tuple[Any, Any]:
        kwargs = self.model_kwargs(settings)
        if os.environ.get("OPENAI_PROXY"):  # LangChain builds the proxied client (one a model)
            from golden_gate.evaluation.transport import capped_reads
            from golden_gate.limits import MAX_JUDGE_REPLY_BYTES

            chat_model = base.init_chat_model(model, kwargs)
            client = chat_model.http_async_client
            # Its replies capped as our own client's are.
            client.event_hooks = capped_reads(MAX_JUDGE_REPLY_BYTES, chat_completions.VERDICT_NOTE)
            return chat_model, client
        kwargs["http_async_client"] = client = sdk_http_client(settings.concurrency)
        return base.init_chat_model(model, kwargs), client

    def sdk_url(self, chat_model: Any) -> str | None:
        client = getattr(chat_model, "root_async_client", None)
        return str(client.base_url) if client is not None else None

    def describe_error(self, exc: BaseException, settings: JudgeSettings) -> str | None:
        openai = base.module("openai")
        if isinstance(exc, chat_completions.StatusError) or (
            openai is not None and isinstance(exc, openai.APIStatusError)
        ):
            code = exc.status_code
            body = base.short(str(exc)).removeprefix(f"Error code: {code} - ")
            return base.status(code, body, settings.max_retries)
        if openai is None:
            return base.transport_error(exc, settings)
        if isinstance(exc, openai.LengthFinishReasonError):
            # Raised on the reply, never retried: a runaway is one quick error.
            return base.cut_off(settings, "length")
        if (reason := base.transport_error(base.sdk_cause(exc), settings)) is not None:
            return reason
        if isinstance(exc, openai.APITimeoutError):
            return base.timed_out(settings)
        if isinstance(exc, openai.APIConnectionError):
            return f"cannot connect ({base.short(str(exc))})"
        return None

    def remedy(self, status: int | None, message: str) -> str:
        # OpenAI: 404 `model_not_found` ("The model `x` does not exist or you do not have
        # access to it."), 401 `invalid_api_key`.
        return base.remedy(self, status, message)

    def is_timeout(self, exc: BaseException) -> bool:
        exc = base.sdk_cause(exc)
        openai = base.module("openai")
        return (openai is not None and isinstance(exc, openai.APITimeoutError)) or (
            base.transport_timeout(exc)
        )

    def error_usage(self, exc: BaseException) -> TokenUsage | None:
        # A reply the SDK could not parse (cut off) was still paid for.
        usage = getattr(getattr(exc, "completion", None), "usage", None)
        if usage is None:
            return None
        from golden_gate.core.item_result import TokenUsage

        return TokenUsage(
            input_tokens=usage.prompt_tokens or 0, output_tokens=usage.completion_tokens or 0
        )


FORCE_LANGCHAIN = "GOLDEN_GATE_JUDGE_LANGCHAIN"
LOOPBACK_KEY = "none"  # sent to a judge-base-url on loopback when no key is set
_GATEWAY_OFF = ("", "false", "0", "no")


def langchain_asks(model: str) -> bool:
    """Whether LangChain's ChatOpenAI asks this judge's calls (`build`), not chat_completions.py.

    LangChain asks models it deems too old for structured output (gpt-3*, gpt-4, gpt-4-*) with
    a tool instead of `json_schema`; the LangSmith gateway (LANGSMITH_GATEWAY) is a route only
    LangChain takes.
    """
    if os.environ.get(FORCE_LANGCHAIN, "").strip() not in ("", "0"):
        return True
    if os.environ.get("LANGSMITH_GATEWAY", "").strip().lower() not in _GATEWAY_OFF:
        return True
    name = model.lower()
    return name.startswith("gpt-3") or name.startswith("gpt-4-") or name == "gpt-4"


def chat_temperature(model: str, temperature: float | None) -> float | None:
    """The temperature ChatOpenAI sends: it drops any but 1 for gpt-5 reasoning models."""
    name = model.lower()
    if name.startswith("gpt-5") and "chat" not in name and temperature not in (None, 1):
        return None
    return temperature


def sdk_http_client(connections: int) -> Any:
    """An HTTP client for the OpenAI SDK (over httpx2, its HTTP library) holding `connections`
    (the judge's concurrency) in small pools (transport.py), given to LangChain's model: its
    own default is shared process-wide and fails with "Event loop is closed" in a
    second event loop."""
    import httpx2
    import openai

    from golden_gate.evaluation.transport import capped_reads, sharded, tls_context
    from golden_gate.limits import MAX_JUDGE_REPLY_BYTES

    # No redirect is followed: the key goes to the judge's endpoint only (secret_env.py).
    return openai.DefaultAsyncHttpxClient(
        transport=sharded(connections, http=httpx2),
        verify=tls_context(httpx2),
        event_hooks=capped_reads(MAX_JUDGE_REPLY_BYTES, chat_completions.VERDICT_NOTE),
        follow_redirects=False,
    )


PROVIDER = OpenAICompatible(
    name="openai",
    title="OpenAI or an OpenAI-compatible server",
    key_env=("OPENAI_API_KEY",),
    endpoint_env=("OPENAI_BASE_URL",),
    bare_prefixes=("gpt-", "chatgpt", "codex", "o1", "o3", "o4"),
)
