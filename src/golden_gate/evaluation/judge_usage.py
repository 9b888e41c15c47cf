"""What a judge call through a LangChain chat model spent and which model answered, read from
LangChain's usage callback (the direct OpenAI path fills its record itself: judge_client.py)."""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from golden_gate.core.report import TokenUsage
from golden_gate.evaluation import judge_client, providers

if TYPE_CHECKING:
    from langchain_core.callbacks import UsageMetadataCallbackHandler

usage_var: ContextVar[UsageMetadataCallbackHandler | None] = ContextVar(
    "golden_gate_judge_usage", default=None
)
_usage_hook_registered = False


def register_hook() -> None:
    # get_usage_metadata_callback() registers a new global hook on every call (a list that
    # only grows and is walked on every model call); one hook and a per-call value is the
    # same mechanism without the leak.
    global _usage_hook_registered
    if not _usage_hook_registered:
        from langchain_core.tracers.context import register_configure_hook

        register_configure_hook(usage_var, inheritable=True)
        _usage_hook_registered = True


def _sum_usage(handler: UsageMetadataCallbackHandler) -> TokenUsage:
    usage = handler.usage_metadata.values()
    return TokenUsage(
        input_tokens=sum(u.get("input_tokens", 0) for u in usage),
        output_tokens=sum(u.get("output_tokens", 0) for u in usage),
    )


def recorded(
    provider: providers.Provider,
    handler: Any,
    record: judge_client.CallRecord,
    exc: Exception | None = None,
) -> judge_client.CallRecord:
    """The call's record: as the direct client filled it, or read from LangChain's callback."""
    if handler is None:
        return record
    record = judge_client.CallRecord(
        tokens=_sum_usage(handler),
        served_model=min(handler.usage_metadata, default=None),
        stopped=handler.stopped,
    )
    if exc is not None and (usage := provider.error_usage(exc)) is not None:
        record.tokens.input_tokens += usage.input_tokens
        record.tokens.output_tokens += usage.output_tokens
    return record
