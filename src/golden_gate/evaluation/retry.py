"""The judge's retry policy: one layer, ours, and every attempt counted.

Until 0.2 the provider's SDK retried each judge call `judge-retries` times (default 6) inside
one call, invisible to us: against a judge answering HTTP 500, 20 items cost 140 requests
while the report said 20 calls, and the end-of-run re-ask (rejudge.py) asked again on top.
Now the SDKs are built with no retries of their own (providers.model_kwargs) and this module
decides, so what is paid is what the report counts (`stats.judge_attempts`):

- a call is tried at most 1 + `judge-retries` times, again only after a fault that asking
  again can cure: a timeout, a lost connection, HTTP 408, 409, 429 or 5xx; never after a
  reply that was read (a refusal, a cut-off verdict, a score on the wrong scale);
- between tries it waits what the server's `Retry-After` asks (at most RETRY_AFTER_CAP_S),
  else 0.5 s doubling to at most 8 s, with jitter so parallel calls do not retry in step;
- a judge that is down is not hammered: once DOWN_AFTER calls in a row failed on every try,
  later calls are tried once, until one succeeds;
- the end-of-run re-ask of runs the judge failed on (at most 10% of runs) goes through the
  same policy.

So a run's judge requests are at most (calls + one preflight call a judge, preflight.py)
× (1 + judge-retries), and against a judge that is down for the whole run about
judge-concurrency × (1 + judge-retries) + the other calls.
"""

from __future__ import annotations

import asyncio
import random
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from golden_gate.errors import causes
from golden_gate.evaluation import tls
from golden_gate.evaluation.providers.chat_completions import (
    StatusError,
    too_large,
    transport_fault,
)

BACKOFF_S = 0.5
BACKOFF_CAP_S = 8.0
RETRY_AFTER_CAP_S = 60.0
DOWN_AFTER = 3
RETRIED_STATUS = frozenset({408, 409, 429})
T = TypeVar("T")


def _module(name: str) -> Any:
    return sys.modules.get(name)  # only SDKs the judge already imported


def _status(exc: BaseException) -> int | None:
    """The HTTP status of a status error (ours, OpenAI's, Anthropic's, google-genai's), else
    None."""
    if isinstance(exc, StatusError):
        return exc.status_code
    for name in ("openai", "anthropic"):
        sdk = _module(name)
        if sdk is not None and isinstance(exc, sdk.APIStatusError):
            return int(exc.status_code)
    genai = _module("google.genai.errors")
    if genai is not None and isinstance(exc, genai.APIError):
        return int(exc.code) if isinstance(exc.code, int) else None
    return None


def status_of(exc: BaseException) -> int | None:
    """The HTTP status `exc` (or what it was raised from) carries, if any."""
    return next((s for c in causes(exc) if (s := _status(c)) is not None), None)


def retryable(exc: BaseException) -> bool:
    """Whether asking again can cure the fault."""
    if tls.untrusted_certificate(exc) or too_large(exc) is not None:
        return False
    for cause in causes(exc):
        status = _status(cause)
        if status is not None:
            return status in RETRIED_STATUS or status >= 500
        if transport_fault(cause) is not None:  # aiohttp's: timeouts, refused, reset
            return True
        for name in ("openai", "anthropic"):
            sdk = _module(name)
            if sdk is not None and isinstance(cause, sdk.APIConnectionError):  # timeouts too
                return True
        for http in filter(None, (_module("httpx"), _module("httpx2"))):
            if isinstance(cause, http.TransportError):  # timeouts, refused, reset
                return True
    return False


def retry_after(exc: BaseException) -> float | None:
    """The wait the server asked for (`retry-after-ms`, `retry-after` in seconds), if any."""
    for cause in causes(exc):
        headers = getattr(getattr(cause, "response", None), "headers", None)
        if headers is None:
            continue
        for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
            try:
                seconds = float(headers.get(name, "")) * scale
            except (TypeError, ValueError):
                continue
            if seconds >= 0:
                return min(seconds, RETRY_AFTER_CAP_S)
    return None


def backoff(retry: int) -> float:
    """The wait before retry number `retry` (0-based) when the server asked for none."""
    return min(BACKOFF_CAP_S, BACKOFF_S * 2**retry) * random.uniform(0.75, 1.0)


@dataclass
class Outcome:
    """How many tries a call took."""

    attempts: int = 0


class RetryPolicy:
    """One judge's policy and its memory of whether the judge is down."""

    def __init__(self, retries: int, *, sleep: Callable[[float], Awaitable[None]] | None = None):
        self.retries = retries
        self._failed_in_a_row = 0
        self._sleep = sleep or asyncio.sleep

    @property
    def down(self) -> bool:
        return self._failed_in_a_row >= DOWN_AFTER

    async def call(self, attempt: Callable[[], Awaitable[T]], outcome: Outcome) -> T:
        """`attempt()` until it succeeds or the policy gives up (the last error is raised);
        `outcome.attempts` counts every try made."""
        retries = 0 if self.down else self.retries
        for retry in range(retries + 1):
            outcome.attempts += 1
            try:
                result = await attempt()
            except Exception as exc:
                if not retryable(exc):  # a reply was read: asking again cannot change it
                    raise
                if retry == retries:
                    self._failed_in_a_row += 1
                    raise
                wait = retry_after(exc)
                await self._sleep(backoff(retry) if wait is None else wait)
            else:
                self._failed_in_a_row = 0
                return result
        raise AssertionError("unreachable")  # pragma: no cover
