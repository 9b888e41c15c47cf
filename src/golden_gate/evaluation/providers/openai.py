"""OpenAI, and the providers that speak its Chat Completions API (`OpenAICompatible`).

openevals asks for a `json_schema` chat completion; judge_client.py sends that request
through the OpenAI SDK's own client, with no LangChain model in between.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from golden_gate.evaluation.providers import base

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
    endpoint_env: tuple[str, ...] = ()
    bare_prefixes: tuple[str, ...] = ()
    cap_field: str = "max_completion_tokens"
    # A key the SDK is given when none is set: it insists on one, a local server ignores it.
    placeholder_key: str | None = None
    package: str = "langchain_openai"
    structured_output: str = base.JSON_SCHEMA
    seed: int | None = base.JUDGE_SEED

    def model_kwargs(self, settings: JudgeSettings) -> dict[str, Any]:
        kwargs = base.model_kwargs(self, settings)
        kwargs["model_provider"] = "openai"  # LangChain's ChatOpenAI, whatever the server
        # Chat Completions (openevals asks for json_schema), even for *-pro/codex names.
        kwargs["use_responses_api"] = False
        kwargs["seed"] = self.seed
        if self.placeholder_key is not None:  # a key variable the SDK does not read itself
            key = next((os.environ[k] for k in self.key_env if os.environ.get(k)), None)
            kwargs["api_key"] = key or self.placeholder_key
        return kwargs

    def build(self, model: str, settings: JudgeSettings) -> tuple[Any, Any]:
        kwargs = self.model_kwargs(settings)
        client = http_client(settings.concurrency)
        kwargs["http_async_client"] = client
        return base.init_chat_model(model, kwargs), client

    def sdk_url(self, chat_model: Any) -> str | None:
        client = getattr(chat_model, "root_async_client", None)
        return str(client.base_url) if client is not None else None

    def describe_error(self, exc: BaseException, settings: JudgeSettings) -> str | None:
        openai = base.module("openai")
        if openai is None:
            return None
        if isinstance(exc, openai.LengthFinishReasonError):
            # Raised on the reply, never retried: a runaway is one quick error.
            return base.cut_off(settings, "length")
        if (reason := base.transport_error(base.sdk_cause(exc), settings)) is not None:
            return reason
        if isinstance(exc, openai.APITimeoutError):
            return base.timed_out(settings)
        if isinstance(exc, openai.APIStatusError):
            code = exc.status_code
            body = base.short(str(exc)).removeprefix(f"Error code: {code} - ")
            return base.status(code, body, settings.max_retries)
        if isinstance(exc, openai.APIConnectionError):
            return f"cannot connect ({base.short(str(exc))})"
        return None

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


def http_client(connections: int) -> Any:
    """An HTTP client owned by one event loop, holding `connections` (the judge's concurrency)
    in small pools (transport.py), as the assistant's does.

    LangChain's OpenAI model shares one client process-wide, which fails with "Event loop is
    closed" in a second event loop.
    """
    import httpx2
    import openai

    from golden_gate.evaluation.transport import sharded, tls_context

    return openai.DefaultAsyncHttpxClient(
        transport=sharded(connections, http=httpx2),
        verify=tls_context(httpx2),  # for proxies from the environment
    )


PROVIDER = OpenAICompatible(
    name="openai",
    title="OpenAI or an OpenAI-compatible server",
    key_env=("OPENAI_API_KEY",),
    endpoint_env=("OPENAI_BASE_URL",),
    bare_prefixes=("gpt-", "chatgpt", "codex", "o1", "o3", "o4"),
)
