"""The judge providers golden-gate supports, and everything that differs between them.

A judge model is `provider:model`. The supported providers are the ones the Action image
installs and the tests run through their real SDK against a local stand-in of their API:

- `openai` (OpenAI, and any OpenAI-compatible server through the judge base URL),
- `azure_openai` (Azure OpenAI: the model is the deployment name),
- `anthropic` (Anthropic's Messages API),
- `google_genai` (Google Gemini, the Gemini Developer API).

Any other provider is bad input, found while the settings are read, before anything runs.
This module imports nothing heavy: the SDKs are imported only when a judge is built.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from golden_gate.evaluation.judge import JudgeSettings

KEYPOINTS = "keypoints"
DEFAULT_MAX_TOKENS = 1024
# Azure OpenAI needs an api-version; OPENAI_API_VERSION overrides this one (the first GA
# version with json_schema structured output, which openevals asks for).
DEFAULT_AZURE_API_VERSION = "2024-10-21"


@dataclass(frozen=True)
class Provider:
    name: str  # the `provider:` prefix, as LangChain's init_chat_model names it
    title: str
    package: str  # the LangChain integration that init_chat_model imports
    key_env: tuple[str, ...]  # where its SDK reads the API key, masked in logs
    bare_prefixes: tuple[str, ...] = ()  # model names that need no prefix


PROVIDERS: dict[str, Provider] = {
    p.name: p
    for p in (
        Provider(
            "openai",
            "OpenAI or an OpenAI-compatible server",
            "langchain_openai",
            ("OPENAI_API_KEY",),
            ("gpt-", "chatgpt", "codex", "o1", "o3", "o4"),
        ),
        Provider("azure_openai", "Azure OpenAI", "langchain_openai", ("AZURE_OPENAI_API_KEY",)),
        Provider(
            "anthropic", "Anthropic", "langchain_anthropic", ("ANTHROPIC_API_KEY",), ("claude",)
        ),
        Provider(
            "google_genai",
            "Google Gemini",
            "langchain_google_genai",
            ("GOOGLE_API_KEY", "GEMINI_API_KEY"),
            ("gemini",),
        ),
    )
}
SUPPORTED = ", ".join(f"{name}:" for name in PROVIDERS)
KEY_ENV = [key for provider in PROVIDERS.values() for key in provider.key_env]


def resolve(model: str) -> tuple[Provider, str]:
    """(provider, model name) of `provider:model` or a bare name; ValueError in one sentence."""
    prefix, sep, name = model.partition(":")
    if sep:
        provider = PROVIDERS.get(prefix.strip().lower())
        if provider is None:
            raise ValueError(
                f"judge provider '{prefix}' is not supported; use {KEYPOINTS} or one of "
                f"{SUPPORTED} followed by a model name"
            )
        if not name.strip():
            raise ValueError(f"'{model}' names no model; write {provider.name}:MODEL")
        return provider, name.strip()
    lowered = model.strip().lower()
    for provider in PROVIDERS.values():
        if provider.bare_prefixes and lowered.startswith(provider.bare_prefixes):
            return provider, model.strip()
    raise ValueError(
        f"judge model '{model}' names no supported provider; use {KEYPOINTS} or one of "
        f"{SUPPORTED} followed by a model name"
    )


def names(model: str) -> list[str]:
    """The judges `model` names: one, or a panel written `a,b,c`."""
    return [name.strip() for name in model.split(",") if name.strip()] or [model]


def check_model(model: str) -> str:
    """`model` when each judge it names is `keypoints` or a supported provider's (the settings
    validator)."""
    for name in names(model):
        if name.lower() != KEYPOINTS:
            resolve(name)
    return model


def key_available(model: str, env: Mapping[str, str]) -> bool:
    """False when a judge (of a panel too) needs a key that is not set (fork pull requests get
    no secrets)."""
    return not missing_key_env(model, env)


def missing_key_env(model: str, env: Mapping[str, str]) -> tuple[str, ...]:
    """The variables the first judge (of a panel too) without a key reads its key from; empty
    when every judge has one."""
    for name in names(model):
        if name.lower() == KEYPOINTS:
            continue
        try:
            provider, _ = resolve(name)
        except ValueError:
            continue  # not ours to judge here: the settings already refused it
        if not any(env.get(key) for key in provider.key_env):
            return provider.key_env
    return ()


def import_integrations() -> list[str]:
    """Import every supported provider's LangChain integration (the Action image's build
    check); the names imported. An ImportError names what is missing."""
    import importlib

    packages = sorted({provider.package for provider in PROVIDERS.values()})
    for package in packages:
        importlib.import_module(package)
    return packages


# -- building the chat model ------------------------------------------------------------------


# The seed sent to judges whose API takes one (see `seeded`).
JUDGE_SEED = 20231


def seeded(provider_name: str) -> int | None:
    """The seed a judge of this provider is sent, None where its API takes none."""
    return JUDGE_SEED if provider_name in ("openai", "azure_openai") else None


def model_kwargs(provider: Provider, settings: JudgeSettings) -> dict[str, Any]:
    """init_chat_model's keyword arguments: each SDK names timeout, retries, cap and URL."""
    max_tokens = getattr(settings, "max_tokens", None) or DEFAULT_MAX_TOKENS
    kwargs: dict[str, Any] = {
        "model_provider": provider.name,
        "timeout": settings.timeout_s,
        # No retries inside the SDK: the judge retries, once, and counts each try (retry.py).
        "max_retries": 0,
        "temperature": settings.temperature,
        # ChatOpenAI sends it as max_completion_tokens, ChatAnthropic as max_tokens (which the
        # Messages API requires), ChatGoogleGenerativeAI as generationConfig.maxOutputTokens.
        "max_tokens": max_tokens,
    }
    base_url = settings.base_url
    if provider.name in ("openai", "azure_openai"):
        # openevals asks for a json_schema chat completion; keep *-pro/codex names there.
        kwargs["use_responses_api"] = False
        # A fixed seed: Chat Completions (and the servers that copy it) sample reproducibly
        # with it, as far as they can; the report records it.
        kwargs["seed"] = seeded(provider.name)
    if provider.name == "azure_openai":
        kwargs["api_version"] = os.environ.get("OPENAI_API_VERSION") or DEFAULT_AZURE_API_VERSION
        if base_url:
            kwargs["azure_endpoint"] = base_url
            base_url = None
    if provider.name == "google_genai":
        # The Gemini Developer API (not Vertex AI, whatever GOOGLE_GENAI_USE_VERTEXAI says),
        # and the SDK counts attempts, not retries: one.
        kwargs["vertexai"] = False
        kwargs["max_retries"] = 1
    if base_url:
        kwargs["base_url"] = base_url
    return kwargs


def own_http_client(provider: Provider, kwargs: dict[str, Any], connections: int) -> Any:
    """An HTTP client owned by one event loop, passed in `kwargs` where the SDK takes one.

    LangChain's OpenAI and Anthropic models share one client process-wide, which fails with
    "Event loop is closed" in a second event loop; Gemini's SDK makes one per model. The
    OpenAI client holds `connections` (the judge's concurrency) in small pools
    (transport.py), as the assistant's does.
    """
    if provider.name in ("openai", "azure_openai"):
        import httpx2
        import openai

        from golden_gate.evaluation.transport import sharded, tls_context

        client = openai.DefaultAsyncHttpxClient(
            transport=sharded(connections, http=httpx2),
            verify=tls_context(httpx2),  # for proxies from the environment
        )
        kwargs["http_async_client"] = client
        return client
    return None


def attach_http_client(provider: Provider, chat_model: Any) -> Any:
    """For models that take no client argument: give them their own; return what to close."""
    if provider.name == "anthropic":
        import anthropic
        import httpx2

        from golden_gate.evaluation.transport import tls_context

        client = anthropic.DefaultAsyncHttpxClient(verify=tls_context(httpx2))
        params = {**chat_model._client_params, "http_client": client}
        chat_model.__dict__["_async_client"] = anthropic.AsyncClient(**params)
        return client
    if provider.name == "google_genai":
        return chat_model.client.aio
    return None


# -- what came back ---------------------------------------------------------------------------

_REFUSED = {"refusal", "content_filter", "safety", "prohibited_content", "blocklist", "spii"}
_CUT_SHORT = {"length", "max_tokens", "model_length"}


def stop_reason(message: Any) -> str | None:
    """Why the model stopped, as its API says it (lowercased), or why the prompt was blocked."""
    metadata = getattr(message, "response_metadata", None) or {}
    feedback = metadata.get("prompt_feedback") or {}
    blocked = feedback.get("block_reason") if isinstance(feedback, dict) else None
    if blocked:
        return f"blocked: {_enum_name(blocked)}"
    if (getattr(message, "additional_kwargs", None) or {}).get("refusal"):
        return "refusal"  # OpenAI's structured-output refusal
    reason = metadata.get("stop_reason") or metadata.get("finish_reason")
    return _enum_name(reason) if reason else None


def _enum_name(value: Any) -> str:
    return str(getattr(value, "name", value)).lower()


_recorder_class: type | None = None


def reply_recorder() -> Any:
    """A usage callback that also keeps why the model stopped (`stopped`), for error reasons."""
    global _recorder_class
    if _recorder_class is None:
        from langchain_core.callbacks import UsageMetadataCallbackHandler

        class ReplyRecorder(UsageMetadataCallbackHandler):
            stopped: str | None = None

            def on_llm_end(self, response: Any, **kwargs: Any) -> None:
                super().on_llm_end(response, **kwargs)
                for generations in response.generations:
                    for generation in generations:
                        self.stopped = stop_reason(getattr(generation, "message", None))

        _recorder_class = ReplyRecorder
    return _recorder_class()


def describe_error(exc: BaseException, settings: JudgeSettings, stopped: str | None) -> str | None:
    """The reason for a failed call, in words, when it is provider-specific; None otherwise."""
    if stopped is not None:
        name = stopped.removeprefix("blocked: ")
        if stopped.startswith("blocked: "):
            return f"the provider blocked the prompt ({name})"
        if name in _REFUSED:
            return f"the model declined to give a verdict (stop reason: {name})"
        if name in _CUT_SHORT:
            return cut_off(settings, name)
    retries = settings.max_retries
    openai = _module("openai")
    if openai is not None and isinstance(exc, openai.LengthFinishReasonError):
        # Raised on the reply, never retried: a runaway is one quick error.
        return cut_off(settings, "length")
    # LangChain's Gemini model wraps the SDK's errors; the SDK's own error says more.
    cause = exc
    while cause.__cause__ is not None and not _is_sdk_error(cause):
        cause = cause.__cause__
    exc = cause if _is_sdk_error(cause) else exc
    anthropic = _module("anthropic")
    if anthropic is not None:
        if isinstance(exc, anthropic.APITimeoutError):
            return f"timed out after {settings.timeout_s:g}s (tried {retries + 1} times)"
        if isinstance(exc, anthropic.APIStatusError):
            status = exc.status_code
            retried = status in (408, 409, 429) or status >= 500  # what the SDK retries
            return _status(status, _message(exc.body) or str(exc), retries if retried else 0)
        if isinstance(exc, anthropic.APIConnectionError):
            return f"cannot connect ({_line(str(exc))})"
    genai_errors = _module("google.genai.errors")
    if genai_errors is not None and isinstance(exc, genai_errors.APIError):
        retried = exc.code in (408, 429, 500, 502, 503, 504)  # what the SDK retries
        return _status(exc.code, exc.message or exc.status or str(exc), retries if retried else 0)
    for httpx in filter(None, (_module("httpx"), _module("httpx2"))):  # google-genai: httpx2
        if isinstance(exc, httpx.TimeoutException):
            return f"timed out after {settings.timeout_s:g}s (tried {retries + 1} times)"
        if isinstance(exc, httpx.TransportError):
            return f"cannot connect ({_line(str(exc)) or type(exc).__name__})"
    return None


CUT_OFF = "(judge-max-tokens)"  # marks the error of a reply the generation cap cut off


def cut_off(settings: JudgeSettings, stop_reason: str) -> str:
    cap = getattr(settings, "max_tokens", None) or DEFAULT_MAX_TOKENS
    return (
        f"the reply hit the generation cap of {cap} tokens {CUT_OFF} before a verdict "
        f"(stop reason: {stop_reason})"
    )


def is_timeout(exc: BaseException) -> bool:
    """Every try of the call timed out (a sign the server has fewer slots than we use)."""
    while exc.__cause__ is not None and not _is_sdk_error(exc):
        exc = exc.__cause__
    for name in ("openai", "anthropic"):
        sdk = _module(name)
        if sdk is not None and isinstance(exc, sdk.APITimeoutError):
            return True
    return any(
        isinstance(exc, httpx.TimeoutException)
        for httpx in filter(None, (_module("httpx"), _module("httpx2")))
    )


def _is_sdk_error(exc: BaseException) -> bool:
    genai_errors = _module("google.genai.errors")
    if genai_errors is not None and isinstance(exc, genai_errors.APIError):
        return True
    return any(
        isinstance(exc, httpx.TransportError)
        for httpx in filter(None, (_module("httpx"), _module("httpx2")))
    )


def _module(name: str) -> Any:
    # Only modules the judge already imported: describing an error never imports an SDK.
    import sys

    return sys.modules.get(name)


def _status(status: int | None, message: str, retries: int) -> str:
    after = f" after {retries} retries" if retries else ""
    return f"HTTP {status}{after}: {_line(message)}"


def _message(body: Any) -> str | None:
    """The message of an error body: `{"error": {"message"}}` or `{"message"}`."""
    if isinstance(body, dict):
        inner = body.get("error")
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return inner["message"]
        if isinstance(body.get("message"), str):
            return body["message"]
    return None


def _line(text: str) -> str:
    return next((part.strip() for part in text.splitlines() if part.strip()), "")
