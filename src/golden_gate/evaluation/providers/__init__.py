"""The judge providers golden-gate supports: one module each, one registry (`PROVIDERS`).

A judge model is `provider:model`. A provider module says everything that differs between
providers (base.Provider); a new one is that module and its line in `PROVIDERS`. Each is
tested against a local stand-in of its API, through its own client and through its SDK
(tests/evaluation/test_judge_providers.py, test_judge_paths.py).
Any other provider is bad input, found while the settings are read, before anything runs.
Nothing here imports an SDK: a provider imports its own only when a judge is built.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from golden_gate.evaluation.providers import (
    anthropic,
    azure_openai,
    chat_completions,
    google_genai,
    ollama,
    openai,
)
from golden_gate.evaluation.providers.base import (
    CUT_OFF,
    DEFAULT_MAX_TOKENS,
    JUDGE_SEED,
    Provider,
    cut_off,
    sdk_cause,
    transport_error,
)

if TYPE_CHECKING:
    from golden_gate.evaluation.judge import JudgeSettings

__all__ = ["CUT_OFF", "DEFAULT_MAX_TOKENS", "JUDGE_SEED", "PROVIDERS", "Provider"]

KEYPOINTS = "keypoints"

PROVIDERS: dict[str, Provider] = {
    "openai": openai.PROVIDER,
    "azure_openai": azure_openai.PROVIDER,
    "anthropic": anthropic.PROVIDER,
    "google_genai": google_genai.PROVIDER,
    "ollama": ollama.PROVIDER,
}
SUPPORTED = ", ".join(f"{name}:" for name in PROVIDERS)
KEY_ENV = [key for provider in PROVIDERS.values() for key in provider.key_env]
ENDPOINT_ENV = [name for provider in PROVIDERS.values() for name in provider.endpoint_env]


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


def key_available(model: str, env: Mapping[str, str], base_url: str | None = None) -> bool:
    """False when a judge (of a panel too) needs a key that is not set (fork pull requests get
    no secrets)."""
    return not missing_key_env(model, env, base_url)


def loopback(url: str | None) -> bool:
    """Whether `url` is on this machine (localhost, 127.0.0.0/8, ::1)."""
    import ipaddress
    from urllib.parse import urlsplit

    if not url:
        return False
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _judges(model: str) -> Iterator[tuple[str, Provider]]:
    """Each LLM judge `model` names (of a panel too) with its provider; a name that is not
    ours to judge here is skipped: the settings already refused it."""
    for name in names(model):
        if name.lower() == KEYPOINTS:
            continue
        try:
            provider, _ = resolve(name)
        except ValueError:
            continue
        yield name, provider


def missing_key_env(
    model: str, env: Mapping[str, str], base_url: str | None = None
) -> tuple[str, ...]:
    """The variables the first judge (of a panel too) without a key reads its key from; empty
    when every judge has one. An OpenAI-compatible judge at a `base_url` on this machine
    needs none: a self-hosted server there usually takes any key or none."""
    for _, provider in _judges(model):
        if provider.key_required and not any(env.get(key) for key in provider.key_env):
            if provider.chat_completions and loopback(base_url):
                continue
            return provider.key_env
    return ()


def endpoint(model: str, base_url: str | None) -> str | None:
    """Where the judge (the first of a panel) is called when it is not its provider's cloud
    API: the judge base URL, else the provider's default endpoint (a local server)."""
    if base_url:
        return base_url
    try:
        provider, _ = resolve(names(model)[0])
    except ValueError:
        return None
    return provider.default_endpoint


def missing_extra(model: str) -> str | None:
    """One sentence when a judge `model` names (of a panel too) needs an integration that is not
    installed: the judge SDKs the command does not need by default are extras of golden-gate
    (the Action's image has them all)."""
    import importlib.util

    for name, provider in _judges(model):
        if provider.extra and importlib.util.find_spec(provider.package) is None:
            return (
                f"judge model '{name}' needs {provider.title}'s integration ({provider.package}), "
                f"which is not installed: pip install 'golden-gate[{provider.extra}]'"
            )
    return None


def import_integrations() -> list[str]:
    """Import every supported provider's LangChain integration (the Action image's build
    check); the names imported. An ImportError names what is missing."""
    import importlib

    packages = sorted({provider.package for provider in PROVIDERS.values()})
    for package in packages:
        importlib.import_module(package)
    return packages


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


def describe_error(
    provider: Provider, exc: BaseException, settings: JudgeSettings, stopped: str | None
) -> str | None:
    """The reason for a failed call, in words, when the reply or the SDK says one; None
    otherwise."""
    if (large := chat_completions.too_large(exc)) is not None:
        return str(large)
    if stopped is not None:
        name = stopped.removeprefix("blocked: ")
        if stopped.startswith("blocked: "):
            return f"the provider blocked the prompt ({name})"
        if name in _REFUSED:
            return f"the model declined to give a verdict (stop reason: {name})"
        if name in _CUT_SHORT:
            return cut_off(settings, name)
    if (reason := provider.describe_error(exc, settings)) is not None:
        return reason
    return transport_error(sdk_cause(exc), settings)
