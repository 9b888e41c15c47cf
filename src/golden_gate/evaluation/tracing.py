"""LangSmith tracing, which openevals and LangChain wrap around every judge call: kept off.

Inherited tracing would upload prompts and answers and add seconds at exit
(docs/architecture.md#the-judge-openevals), so it
is forced off. Off, LangSmith's `traceable` still hands its set-up and tear-down of each
wrapped call to a worker thread (four thread round trips a judge call, openevals wrapping two
functions), only to find there is nothing to record. `set_runtime_overrides` is LangSmith's
own hook for running that work elsewhere; ours runs it inline whenever tracing is off, and
leaves it to LangSmith's threads whenever it is on.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from contextvars import Context
from typing import Any

_installed = False


def keep_off() -> None:
    """Turn tracing off for this process (LangSmith reads these when a call is made)."""
    os.environ["LANGSMITH_TRACING"] = "false"
    os.environ["LANGCHAIN_TRACING_V2"] = "false"


def disable() -> None:
    """`keep_off`, and make untraced calls skip the thread hops (imports LangSmith: for a judge
    that calls through LangChain)."""
    global _installed
    keep_off()
    if not _installed:
        import langsmith

        langsmith.set_runtime_overrides(aio_to_thread=_inline_when_untraced)
        _installed = True


async def _inline_when_untraced(
    default: Callable[..., Awaitable[Any]],
    ctx: Context,
    func: Callable[..., Any],
    /,
    *args: Any,
    **kwargs: Any,
) -> Any:
    from langsmith.utils import tracing_is_enabled

    if ctx.run(tracing_is_enabled):
        return await default(ctx, func, *args, **kwargs)
    return ctx.run(func, *args, **kwargs)
