"""Google Gemini through the Gemini Developer API (not Vertex AI): the verdict is asked for as
generationConfig.responseJsonSchema, the cap as maxOutputTokens."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from golden_gate.evaluation.providers import base

if TYPE_CHECKING:
    from golden_gate.core.item_result import TokenUsage
    from golden_gate.evaluation.judge import JudgeSettings


@dataclass(frozen=True)
class GoogleGenAI:
    name: str = "google_genai"
    title: str = "Google Gemini"
    package: str = "langchain_google_genai"
    extra: str = "google-genai"
    key_env: tuple[str, ...] = ("GOOGLE_API_KEY", "GEMINI_API_KEY")
    key_required: bool = True
    chat_completions: bool = False
    endpoint_env: tuple[str, ...] = ("GOOGLE_GEMINI_BASE_URL",)
    default_endpoint: str | None = None
    bare_prefixes: tuple[str, ...] = ("gemini",)
    cap_field: str = "maxOutputTokens"
    seed: int | None = None

    def chat_endpoint(self, model: str, settings: JudgeSettings) -> None:
        return None  # not Chat Completions: LangChain's model asks

    def build(self, model: str, settings: JudgeSettings) -> tuple[Any, Any]:
        kwargs = base.model_kwargs(self, settings)
        # The Gemini Developer API, whatever GOOGLE_GENAI_USE_VERTEXAI says; and the SDK
        # counts attempts, not retries: one, as retry.py retries.
        kwargs["vertexai"] = False
        kwargs["max_retries"] = 1
        kwargs["client_args"] = capped_client_args()
        chat_model = base.init_chat_model(model, kwargs)
        _no_redirects(chat_model.client._api_client)
        return chat_model, chat_model.client.aio  # the SDK makes one client per model

    def sdk_url(self, chat_model: Any) -> str | None:
        try:  # the google-genai client's resolved HTTP options
            url = chat_model.client._api_client._http_options.base_url
        except AttributeError:
            return None
        return str(url) if url else None

    def describe_error(self, exc: BaseException, settings: JudgeSettings) -> str | None:
        genai_errors = base.module("google.genai.errors")
        exc = base.sdk_cause(exc)  # LangChain wraps the SDK's errors; the SDK's says more
        if genai_errors is not None and isinstance(exc, genai_errors.APIError):
            message = exc.message or exc.status or str(exc)
            return base.status(exc.code, message, settings.max_retries)
        return None

    def remedy(self, status: int | None, message: str) -> str:
        # Gemini: a bad key is 400 INVALID_ARGUMENT "API key not valid"; an unknown model 404
        # "models/NAME is not found for API version v1beta".
        if status in (400, 403) and "api key" in message.lower():
            return f"check the API key in {' or '.join(self.key_env)} (the provider refused it)"
        return base.remedy(self, status, message)

    def is_timeout(self, exc: BaseException) -> bool:
        return base.transport_timeout(base.sdk_cause(exc))

    def error_usage(self, exc: BaseException) -> TokenUsage | None:
        return None


def capped_client_args() -> dict[str, Any]:
    """What the SDK's async client is built with so its replies are capped: it reads a reply
    whole (aiohttp's `text()`) unless given an HTTP transport, then goes over httpx2, whose
    replies a hook reads first, at most MAX_JUDGE_REPLY_BYTES decoded. LangChain hands the
    same arguments to the SDK's sync client, which the judge never calls."""
    import httpx2

    from golden_gate.evaluation.providers import chat_completions
    from golden_gate.evaluation.transport import capped_reads, tls_context
    from golden_gate.limits import MAX_JUDGE_REPLY_BYTES

    return {
        "transport": httpx2.AsyncHTTPTransport(verify=tls_context(httpx2)),
        "event_hooks": capped_reads(MAX_JUDGE_REPLY_BYTES, chat_completions.VERDICT_NOTE),
        "follow_redirects": False,  # x-goog-api-key would go along (secret_env.py)
    }


def _no_redirects(api_client: Any) -> None:
    """The SDK follows redirects, x-goog-api-key and all, to any host (secret_env.py): off.
    Over aiohttp its request arguments come from `async_client_args` (read again after a
    connection error); over httpx from the clients it built."""
    options = api_client._http_options
    options.async_client_args = {**(options.async_client_args or {}), "allow_redirects": False}
    request_args = getattr(api_client, "_async_client_session_request_args", None)
    if isinstance(request_args, dict):
        request_args["allow_redirects"] = False
    for name in ("_httpx_client", "_async_httpx_client"):
        client = getattr(api_client, name, None)
        if client is not None and hasattr(client, "follow_redirects"):
            client.follow_redirects = False
            kwargs = getattr(client, "_client_kwargs", None)  # the per-event-loop clients'
            if isinstance(kwargs, dict):
                kwargs["follow_redirects"] = False


PROVIDER = GoogleGenAI()
