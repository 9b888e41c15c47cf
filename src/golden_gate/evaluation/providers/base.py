"""What a judge provider is (`Provider`), and the parts its modules share.

A provider module holds everything that differs between providers: how its chat model and
HTTP client are built, what its request calls the generation cap and the structured output,
where its SDK reads the key and the endpoint, and how its errors read. Nothing here imports an
SDK: a provider imports its own inside the methods that build a judge or read its errors.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from golden_gate.evaluation import tls
from golden_gate.evaluation.providers import chat_completions

if TYPE_CHECKING:
    from golden_gate.core.item_result import TokenUsage
    from golden_gate.evaluation.judge import JudgeSettings

DEFAULT_MAX_TOKENS = 1024
# The seed sent to judges whose API takes one: Chat Completions (and the servers that copy it)
# sample reproducibly with it, as far as they can; the report records it.
JUDGE_SEED = 20231
CUT_OFF = "(judge-max-tokens)"  # marks the error of a reply the generation cap cut off


@dataclass(frozen=True)
class ChatEndpoint:
    """A Chat Completions endpoint the judge calls itself (judge_client.JudgeClient), and the
    request's fixed fields as LangChain's model would have set them."""

    post: Callable[[dict[str, Any]], Awaitable[Any]]  # body -> the 2xx response (.content)
    url: str | None  # the base URL requests go to (the judge's identity names it)
    http_client: Any  # closed after the event loop's last call
    model: str
    temperature: float | None
    max_tokens: int | None
    seed: int | None
    cap_field: str


class Provider(Protocol):
    """One judge provider: the `provider:` of `provider:model`. Its facts are read, never
    set (each provider is a frozen dataclass)."""

    # the `provider:` prefix
    @property
    def name(self) -> str: ...
    @property
    def title(self) -> str: ...
    # the LangChain integration its chat model comes from
    @property
    def package(self) -> str: ...
    # golden-gate's extra that installs it ("": installed with golden-gate)
    @property
    def extra(self) -> str: ...
    # where its SDK reads the API key (masked in logs)
    @property
    def key_env(self) -> tuple[str, ...]: ...
    # False: a local server that takes any key or none
    @property
    def key_required(self) -> bool: ...
    # it speaks Chat Completions (then a judge-base-url on loopback needs no key)
    @property
    def chat_completions(self) -> bool: ...
    # where its SDK reads another endpoint than its own
    @property
    def endpoint_env(self) -> tuple[str, ...]: ...
    # None: the SDK's own (the provider's cloud API)
    @property
    def default_endpoint(self) -> str | None: ...
    # model names that need no `provider:`
    @property
    def bare_prefixes(self) -> tuple[str, ...]: ...
    # the request field the generation cap travels in
    @property
    def cap_field(self) -> str: ...
    # sent with every call, None where the API takes none
    @property
    def seed(self) -> int | None: ...

    def chat_endpoint(self, model: str, settings: JudgeSettings) -> ChatEndpoint | None:
        """The endpoint judge_client.py calls without LangChain; None where the request is
        not the Chat Completions `json_schema` one it sends (`build` is used instead)."""
        ...

    def build(self, model: str, settings: JudgeSettings) -> tuple[Any, Any]:
        """(LangChain chat model, the HTTP client to close after the event loop's last call)."""
        ...

    def sdk_url(self, chat_model: Any) -> str | None:
        """The base URL the SDK resolved (settings or its own variables), where readable."""
        ...

    def describe_error(self, exc: BaseException, settings: JudgeSettings) -> str | None:
        """A failed call's reason in words, when its SDK says more than the transport."""
        ...

    def is_timeout(self, exc: BaseException) -> bool:
        """Every try of the call timed out (its SDK's own timeout error)."""
        ...

    def error_usage(self, exc: BaseException) -> TokenUsage | None:
        """Tokens a failed call was still billed for, where the error carries them."""
        ...

    def remedy(self, status: int | None, message: str) -> str:
        """What to set when a call was refused with `status` and `message` (the judge
        preflight's advice): its key, its model name or its endpoint."""
        ...


def model_kwargs(provider: Provider, settings: JudgeSettings) -> dict[str, Any]:
    """init_chat_model's keyword arguments every provider takes: each SDK names them itself
    (the cap becomes `provider.cap_field`)."""
    kwargs: dict[str, Any] = {
        "model_provider": provider.name,
        "timeout": settings.timeout_s,
        # No retries inside the SDK: the judge retries, and counts each try (retry.py).
        "max_retries": 0,
        "temperature": settings.temperature,
        "max_tokens": getattr(settings, "max_tokens", None) or DEFAULT_MAX_TOKENS,
    }
    base_url = settings.base_url or provider.default_endpoint
    if base_url:
        kwargs["base_url"] = base_url
    return kwargs


def init_chat_model(model: str, kwargs: dict[str, Any]) -> Any:
    from langchain.chat_models import init_chat_model

    return init_chat_model(model, **kwargs)


# -- what a refusal asks the user to set -------------------------------------------------------

_NO_MODEL = ("model_not_found", "does not exist", "not found", "unknown model", "no such model")


def remedy(provider: Provider, status: int | None, message: str) -> str:
    """The setting a refused call points at, from its status and words (the shapes OpenAI,
    Anthropic and Gemini answer; a provider adds its own before calling this)."""
    text = message.lower()
    keys = " or ".join(provider.key_env)
    if status in (401, 403):
        return f"check the API key in {keys} (the provider refused it)"
    if "model" in text and (status in (400, 404, 422) or any(w in text for w in _NO_MODEL)):
        return "check judge-model: the model's name as the provider spells it"
    if status in (404, 405):
        return "check judge-base-url: the API's address (for Chat Completions, ending in /v1)"
    if status is not None and 300 <= status < 400:  # no client of the judge follows one
        return (
            "a redirect, not followed (the judge's key is sent to judge-base-url only): set "
            "judge-base-url to where it points"
        )
    if status == 400:
        return (
            "check judge-model and judge-base-url: the server refused the judge's request "
            "(a structured-output, json_schema, request: see docs/judges.md)"
        )
    return "check judge-model, judge-base-url and the key"


# -- reading errors ---------------------------------------------------------------------------


def module(name: str) -> Any:
    # Only modules the judge already imported: describing an error never imports an SDK.
    return sys.modules.get(name)


def transports() -> list[Any]:
    """The HTTP libraries in use (google-genai uses httpx2, the others httpx)."""
    return [m for m in (module("httpx"), module("httpx2")) if m is not None]


def sdk_cause(exc: BaseException) -> BaseException:
    """The error the SDK raised, under LangChain's wrapping (the SDK's own says more)."""
    cause = exc
    while cause.__cause__ is not None and not _is_sdk_error(cause):
        cause = cause.__cause__
    return cause if _is_sdk_error(cause) else exc


def _is_sdk_error(exc: BaseException) -> bool:
    if chat_completions.transport_fault(exc) is not None:
        return True
    genai_errors = module("google.genai.errors")
    if genai_errors is not None and isinstance(exc, genai_errors.APIError):
        return True
    return any(isinstance(exc, httpx.TransportError) for httpx in transports())


def transport_error(exc: BaseException, settings: JudgeSettings) -> str | None:
    """A timeout or a connection that failed, as the HTTP library raised it; None otherwise."""
    if (fault := chat_completions.transport_fault(exc)) is not None:  # aiohttp's
        if isinstance(fault, chat_completions.Timeout):
            return timed_out(settings)
        return _cannot_connect(fault)
    for httpx in transports():
        if isinstance(exc, httpx.TimeoutException):
            return timed_out(settings)
        if isinstance(exc, httpx.TransportError):
            return _cannot_connect(exc)
    return None


def _cannot_connect(exc: BaseException) -> str:
    said = f"cannot connect ({line(str(exc)) or type(exc).__name__})"
    if not tls.untrusted_certificate(exc):
        return said
    if tls.wrong_host(said):
        return f"{said}: the judge's certificate is for another host (check judge-base-url)"
    return f"{said}: the judge's certificate is not trusted here ({tls.HINT})"


def transport_timeout(exc: BaseException) -> bool:
    if isinstance(chat_completions.transport_fault(exc), chat_completions.Timeout):
        return True
    return any(isinstance(exc, httpx.TimeoutException) for httpx in transports())


def timed_out(settings: JudgeSettings) -> str:
    return f"timed out after {settings.timeout_s:g}s (tried {settings.max_retries + 1} times)"


def cut_off(settings: JudgeSettings, stop_reason: str) -> str:
    cap = getattr(settings, "max_tokens", None) or DEFAULT_MAX_TOKENS
    return (
        f"the reply hit the generation cap of {cap} tokens {CUT_OFF} before a verdict "
        f"(stop reason: {stop_reason})"
    )


def status(code: int | None, message: str, retries: int) -> str:
    after = f" after {retries} retries" if retries else ""
    return f"HTTP {code}{after}: {line(message)}"


def message(body: Any) -> str | None:
    """The message of an error body: `{"error": {"message"}}` or `{"message"}`."""
    if isinstance(body, dict):
        inner = body.get("error")
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return inner["message"]
        if isinstance(body.get("message"), str):
            return body["message"]
    return None


def line(text: str) -> str:
    return next((part.strip() for part in text.splitlines() if part.strip()), "")


def short(text: str, limit: int = 200) -> str:
    """The first line of `text`, cut to `limit` characters."""
    first = line(text)
    return first if len(first) <= limit else first[: limit - 3] + "..."
