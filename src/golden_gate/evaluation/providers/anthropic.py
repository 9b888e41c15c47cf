"""Anthropic's Messages API: the verdict is a forced tool call, the cap is `max_tokens` (which
the API requires)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from golden_gate.evaluation.providers import base, chat_completions

if TYPE_CHECKING:
    from golden_gate.core.item_result import TokenUsage
    from golden_gate.evaluation.judge import JudgeSettings


@dataclass(frozen=True)
class Anthropic:
    name: str = "anthropic"
    title: str = "Anthropic"
    package: str = "langchain_anthropic"
    extra: str = "anthropic"
    key_env: tuple[str, ...] = ("ANTHROPIC_API_KEY",)
    key_required: bool = True
    chat_completions: bool = False
    endpoint_env: tuple[str, ...] = ("ANTHROPIC_BASE_URL",)
    default_endpoint: str | None = None
    bare_prefixes: tuple[str, ...] = ("claude",)
    cap_field: str = "max_tokens"
    seed: int | None = None

    def chat_endpoint(self, model: str, settings: JudgeSettings) -> None:
        return None  # not Chat Completions: LangChain's model asks

    def build(self, model: str, settings: JudgeSettings) -> tuple[Any, Any]:
        import anthropic
        import httpx2

        from golden_gate.evaluation.transport import capped_reads, tls_context
        from golden_gate.limits import MAX_JUDGE_REPLY_BYTES

        chat_model = base.init_chat_model(model, base.model_kwargs(self, settings))
        # The model takes no client argument, and LangChain's is shared process-wide ("Event
        # loop is closed" in a second loop): it gets its own, its replies capped.
        # No redirect is followed: x-api-key would go along to another host (secret_env.py).
        client = anthropic.DefaultAsyncHttpxClient(
            verify=tls_context(httpx2),
            follow_redirects=False,
            event_hooks=capped_reads(MAX_JUDGE_REPLY_BYTES, chat_completions.VERDICT_NOTE),
        )
        params = {**chat_model._client_params, "http_client": client}
        chat_model.__dict__["_async_client"] = anthropic.AsyncClient(**params)
        return chat_model, client

    def sdk_url(self, chat_model: Any) -> str | None:
        url = getattr(chat_model, "anthropic_api_url", None)
        return str(url) if url else None

    def describe_error(self, exc: BaseException, settings: JudgeSettings) -> str | None:
        anthropic = base.module("anthropic")
        exc = base.sdk_cause(exc)
        if anthropic is None:
            return None
        if isinstance(exc, anthropic.APITimeoutError):
            return base.timed_out(settings)
        if isinstance(exc, anthropic.APIStatusError):
            code = exc.status_code
            return base.status(code, base.message(exc.body) or str(exc), settings.max_retries)
        if isinstance(exc, anthropic.APIConnectionError):
            return f"cannot connect ({base.line(str(exc))})"
        return None

    def remedy(self, status: int | None, message: str) -> str:
        # Anthropic: 404 `not_found_error` with "model: NAME", 401 `authentication_error`.
        if status == 404 and "model:" in message.lower():
            return "check judge-model: the model's name as Anthropic spells it"
        return base.remedy(self, status, message)

    def is_timeout(self, exc: BaseException) -> bool:
        exc = base.sdk_cause(exc)
        anthropic = base.module("anthropic")
        return (anthropic is not None and isinstance(exc, anthropic.APITimeoutError)) or (
            base.transport_timeout(exc)
        )

    def error_usage(self, exc: BaseException) -> TokenUsage | None:
        return None


PROVIDER = Anthropic()
