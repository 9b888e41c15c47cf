"""The assistant under test, over HTTP: one item in, one answer (or one actionable error) out.

The HTTP client: the request, the retries, and every failed attempt turned into one
actionable sentence; the settings and reading a response are evaluation/response.py.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import math
import random
import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Self

import aiohttp
from aiohttp.http_exceptions import ContentEncodingError
from pydantic import BaseModel
from yarl import URL

from golden_gate import __version__, redaction
from golden_gate.core.golden import GoldenItem
from golden_gate.core.item_result import TokenUsage
from golden_gate.errors import EXIT_BAD_INPUT, IncompleteError, causes
from golden_gate.evaluation import http_session, tls
from golden_gate.evaluation.response import (
    EXCERPT_CHARS,
    MAX_BACKOFF_S,
    OPTIONAL_PATHS,
    AssistantSettings,
    BadResponse,
    one_line,
    paths_found,
    read_answer,
    usage_of,
)
from golden_gate.surrogates import repair

log = logging.getLogger(__name__)

MAX_RETRY_AFTER_S = 60.0  # an assistant asking for longer is not worth waiting for in CI
_SLOT = re.compile(r"\{(question|id|conversation_id|history)\}")
REFUSED = "the request cannot be sent"  # by the HTTP client, whatever the assistant does
MAX_SERVED_MODELS = 20  # distinct model names kept from responses (an answer is untrusted)


class Answer(BaseModel):
    """What the assistant said for one item, or why it said nothing usable."""

    text: str | None = None
    sources: list[str] | None = None
    context: str | None = None  # the retrieved passages' text, joined; None when absent
    tool_calls: list[tuple[str, object]] | None = None  # read at tools_path; None without it
    http_status: int | None = None
    latency_ms: float
    error: str | None = None
    attempts: int
    surrogates_replaced: int = 0  # halves of emoji in the answer and sources, made U+FFFD
    usage: TokenUsage | None = None  # what the response says it used (usage_path)

    @property
    def ok(self) -> bool:
        return self.error is None and self.text is not None


@dataclass
class _Outcome:
    """One attempt's result; `retryable` failures are tried again after a pause."""

    latency_ms: float
    status: int | None = None
    text: str | None = None
    sources: list[str] | None = None
    context: str | None = None
    tool_calls: list[tuple[str, object]] | None = None
    error: str | None = None
    retryable: bool = False
    retry_after: float | None = None
    surrogates_replaced: int = 0
    usage: TokenUsage | None = None


class AssistantUnusable(IncompleteError):
    """The first request (the preflight) failed in a way every other one would: said once."""


class AssistantMisconfigured(AssistantUnusable):
    """The first answer came back, but not where answer-path says: a setting to fix (exit 2)."""

    exit_code = EXIT_BAD_INPUT


# What the ssl module says when the server does not speak TLS (an https URL to plain HTTP),
# OpenSSL 3.0's words and 3.2's. Every aiohttp connect error to an https URL says "ssl:",
# so that alone is no sign (a name that does not resolve says it too).
_PLAIN_HTTP = (
    "wrong version number",
    "wrong_version_number",
    "record layer failure",
    "packet length too long",
    "unknown protocol",
)


def error_hint(error: str, status: int | None, url: str) -> str:
    """What to check for an assistant error: the setting most likely wrong, or where to look."""
    https = url.lower().startswith("https:")
    if error.startswith(REFUSED):
        return "check `assistant-url` and `assistant-headers`: the HTTP client cannot send them"
    if status in (404, 405):
        return "is `assistant-path` right (and `assistant-url`)?"
    if status in (400, 415, 422):
        return "is `request-template` the body your service expects?"
    if status in (401, 403):
        return "does the service need a token in `assistant-headers`?"
    if status is not None and 200 <= status < 300:
        if error.startswith(("no answer at", "answer at")):
            return "set `answer-path` to where the answer is in the response"
        if error.startswith(("sources at", "no sources at")):
            return "set `sources-path` to where the sources are in the response, or leave it empty"
        if error.startswith(("context at", "no context at")):
            return "set `context-path` to where the passages are, or leave it empty"
        if error.startswith(("tool calls at", "tool call ")):
            return "set `tools-path` to where the tool calls are, or leave it empty"
        if error.startswith("response is not JSON"):
            return "is this the service's API (not a web page or a proxy)?"
        return "does the response hold the answer where `answer-path` says?"
    if status is not None and (status == 429 or status >= 500):
        return "the service failed: see its logs"
    lowered = error.lower()
    if "certificate verify failed" in lowered or "certificate_verify_failed" in lowered:
        if tls.wrong_host(lowered):
            return (
                "the service's certificate is not for this host: use a name it is for in "
                "`assistant-url`"
            )
        trust = "is the service's certificate valid and signed by a CA this runner trusts?"
        return f"{trust} ({tls.HINT})"
    if https and any(words in lowered for words in _PLAIN_HTTP):
        return "the URL says https: does the service speak plain http?"
    if "[ssl:" in lowered:  # another TLS failure (a protocol version, an alert): said as is
        return "the TLS handshake with the service failed: see the SSL error"
    if "connection refused" in lowered or "cannot connect" in lowered:
        return (
            "is the assistant running there? (in the Action's container 127.0.0.1 is that "
            "container: a server an earlier step started on the runner is "
            "`http://runner-host:PORT`, listening on 0.0.0.0)"
        )
    if "timed out" in lowered:
        return "raise `timeout`, or lower `concurrency`"
    return "see the run's error in report.json"


def error_kind(error: str, status: int | None) -> str:
    """Errors that need the same fix share a kind: the status, or the error's first words."""
    if status is not None:
        return f"HTTP {status}" if not 200 <= status < 300 else error.split(" (")[0][:60]
    return " ".join(error.split()[:2])


class AssistantClient:
    """Asks the assistant every item with bounded concurrency and retries on transient faults."""

    def __init__(
        self, settings: AssistantSettings, *, client: aiohttp.ClientSession | None = None
    ) -> None:
        self.settings = settings
        self._template = json.loads(settings.request_template)
        base = settings.url.rstrip("/")
        self._url = f"{base}/{settings.path.lstrip('/')}" if settings.path else settings.url
        # Named, so the service's logs can tell the gate's traffic apart; a configured header
        # replaces a default whatever its case (both would be sent otherwise).
        defaults = {"Content-Type": "application/json", "User-Agent": f"golden-gate/{__version__}"}
        given = {name.lower() for name in settings.headers}
        self._headers = {
            **{name: value for name, value in defaults.items() if name.lower() not in given},
            **settings.headers,
        }
        # Parsed once, not on every request; credentials in it sent as httpx sent them.
        self._target = http_session.credentials_as_header(URL(self._url), self._headers)
        # Scrubbed from its errors: the headers, and the Basic credentials made of the URL's.
        basic = [v for k, v in self._headers.items() if k.lower() == "authorization"]
        self._secrets = [*settings.headers.values(), *basic]
        # Each phase limited (http_session.py), and the whole attempt too (`_attempt`).
        self._timeout = http_session.timeout(settings.timeout_s)
        # Held only while a request is in flight, so items sleeping in backoff free their slot.
        self._slots = asyncio.Semaphore(settings.concurrency)
        self.in_flight = 0  # requests holding a slot (for the progress line)
        self.served_models: set[str] = set()  # read at model_path: at most MAX_SERVED_MODELS
        # How many answers were read, how many held each optional path set, and the first's
        # top-level keys: a path that finds nothing in any answer is a setting to fix.
        self.answered = 0
        self.found: dict[str, int] = {}
        self.first_keys: list[str] | None = None
        self._primed: dict[str, Answer] = {}  # the preflight's answer, for the item's first run
        self._owns_client = client is None
        self._client = client  # an injected session is the caller's; ours opens on first use

    def _open(self) -> aiohttp.ClientSession:
        # No CA bundle loaded for a plain-http assistant (70 ms before its first answer); the
        # client follows no redirect, so such a session never speaks TLS. No proxy from
        # HTTP(S)_PROXY: the assistant is often a service on the runner itself.
        https = self._target.scheme == "https"
        return http_session.session(
            connections=self.settings.concurrency,
            timeout_s=self.settings.timeout_s,
            ssl=tls.context() if https else True,
        )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._owns_client and self._client is not None:
            client, self._client = self._client, None
            await client.close()

    @property
    def url(self) -> str:
        """Where the questions go, without credentials."""
        return redaction.without_credentials(self._url)

    def explain(self, error: str, status: int | None) -> str:
        """An assistant error as one sentence: what, from where, and what to check."""
        hint = error_hint(error, status, self.url)
        if status is not None and error.startswith(f"HTTP {status}"):
            rest = error.removeprefix(f"HTTP {status}").lstrip(": ")
            detail = f" ({rest})" if rest else ""
            return f"HTTP {status} from POST {self.url}{detail}: {hint}"
        where = f"HTTP {status} from POST {self.url}" if status else f"POST {self.url}"
        return f"{error} ({where}): {hint}"

    def explain_errors(self, errors: list[tuple[str, int | None]]) -> list[str]:
        """The first error of each kind, explained, with how many runs met it."""
        kinds: dict[str, list[tuple[str, int | None]]] = {}
        for error, status in errors:
            kinds.setdefault(error_kind(error, status), []).append((error, status))
        return [
            f"{self.explain(*found[0])} ({len(found)} run{'s' if len(found) != 1 else ''})"
            for found in sorted(kinds.values(), key=len, reverse=True)
        ]

    async def preflight(self, item: GoldenItem) -> None:
        """Ask `item` once before the run (its answer is kept for its first run, so nothing is
        asked twice); an error every request would meet (a wrong path, body or answer path,
        nothing listening, TLS to a plain-HTTP server) stops the run now, explained, instead
        of after every item has failed the same way."""
        answer = await self.ask(item)
        if answer.ok:
            self._primed[item.id] = answer
            return
        status, error = answer.http_status, answer.error or "no answer"
        definite = (status is not None and 400 <= status < 500 and status not in (408, 429)) or (
            status is not None and 200 <= status < 300
        )
        lowered = error.lower()
        if status is None and (
            "connection refused" in lowered
            or "cannot connect" in lowered
            or error.startswith(REFUSED)
        ):
            definite = True
        if not definite:  # a timeout or a 5xx may be this item's: the run goes on
            self._primed[item.id] = answer
            return
        said = (
            f"the assistant's first answer (item '{item.id}', before the run) failed: "
            f"{self.explain(error, status)}"
        )
        if status is not None and 200 <= status < 300 and error.startswith("no answer at "):
            # A response read whole, without the answer where answer-path says: a setting.
            raise AssistantMisconfigured(said)  # explain() names answer-path
        raise AssistantUnusable(said)

    async def ask(
        self,
        item: GoldenItem,
        *,
        question: str | None = None,
        history: list[dict[str, str]] | None = None,
        conversation_id: str = "",
    ) -> Answer:
        """Ask one item (or one turn of a conversation: its `question`, the `history` so far
        and the conversation's id); transport and HTTP problems come back as `Answer.error`,
        never raised."""
        primed = self._primed.pop(item.id, None) if not history else None
        # A conversation's first turn goes out again under the conversation's id: a stateful
        # service must see every turn of it.
        if primed is not None and not conversation_id:
            return primed
        document = _fill(
            self._template,
            {
                "question": item.question if question is None else question,
                "id": item.id,
                "conversation_id": conversation_id or item.id,
                "history": history or [],
            },
        )
        body = json.dumps(document, ensure_ascii=False).encode("utf-8")
        attempts = 0
        while True:
            attempts += 1
            async with self._slots:
                self.in_flight += 1
                try:
                    outcome = await self._attempt(body)
                finally:
                    self.in_flight -= 1
            if outcome.error is not None:
                outcome.error = self._scrub(outcome.error)  # before it reaches a log line
            if not outcome.retryable or attempts > self.settings.retries:
                return self._answer(outcome, attempts)
            delay = outcome.retry_after
            if delay is None:
                # Full jitter: retries of many items spread out instead of arriving together.
                ceiling = min(MAX_BACKOFF_S, self.settings.backoff_s * 2 ** min(attempts - 1, 16))
                delay = random.uniform(0, ceiling)
            log.debug(
                "item %s: attempt %d failed (%s); retrying in %.2f s",
                item.id,
                attempts,
                outcome.error,
                delay,
            )
            await asyncio.sleep(delay)

    def _answer(self, outcome: _Outcome, attempts: int) -> Answer:
        error = outcome.error
        if error is not None and outcome.retryable and attempts > 1:
            if outcome.status is not None:
                error = f"HTTP {outcome.status} after {attempts} attempts"
            else:
                error = f"{error} (after {attempts} attempts)"
        return Answer(
            text=outcome.text,
            sources=outcome.sources,
            context=outcome.context,
            tool_calls=outcome.tool_calls,
            http_status=outcome.status,
            latency_ms=outcome.latency_ms,
            error=error,
            attempts=attempts,
            surrogates_replaced=outcome.surrogates_replaced,
            usage=outcome.usage,
        )

    async def _attempt(self, body: bytes) -> _Outcome:
        started = time.perf_counter()

        def elapsed_ms() -> float:
            return (time.perf_counter() - started) * 1000

        timeout_s = self.settings.timeout_s
        if self._client is None:
            self._client = self._open()
        try:
            # aiohttp times each read separately; this deadline also stops an assistant that
            # trickles its answer a byte at a time.
            async with (
                asyncio.timeout(timeout_s),
                self._client.post(
                    self._target,
                    data=body,
                    headers=self._headers,
                    allow_redirects=False,  # as httpx: a redirect is the assistant's answer
                    timeout=self._timeout,  # an injected session's too
                ) as response,
            ):
                status = response.status
                if status == 429 or status >= 500:
                    return _Outcome(
                        elapsed_ms(),
                        status,
                        error=f"HTTP {status}",
                        retryable=True,
                        retry_after=_retry_after(response.headers.get("retry-after")),
                    )
                if not 200 <= status < 300:
                    excerpt = await _read_excerpt(response)
                    detail = f": {excerpt}" if excerpt else ""
                    return _Outcome(elapsed_ms(), status, error=f"HTTP {status}{detail}")
                raw = await http_session.read_capped(response, self.settings.max_body_bytes)
                headers = response.headers
        except TimeoutError:  # aiohttp's timeouts are TimeoutErrors too
            return _Outcome(elapsed_ms(), error=f"timed out after {timeout_s:g} s", retryable=True)
        except aiohttp.ClientConnectorCertificateError as exc:
            # Not retried: the certificate is the same on the next attempt.
            return _Outcome(elapsed_ms(), error=f"cannot connect ({one_line(exc)})")
        except aiohttp.ClientConnectorError as exc:
            if isinstance(exc.os_error, ConnectionRefusedError):
                return _Outcome(elapsed_ms(), error="connection refused", retryable=True)
            return _Outcome(elapsed_ms(), error=f"cannot connect ({one_line(exc)})", retryable=True)
        except aiohttp.ClientPayloadError as exc:
            if cause := next((c for c in causes(exc) if isinstance(c, ContentEncodingError)), None):
                # A body that fails to decompress: retrying won't help.
                detail = one_line(getattr(cause, "message", "") or exc)
                return _Outcome(elapsed_ms(), error=f"the response body cannot be read ({detail})")
            return _Outcome(
                elapsed_ms(),
                error=f"the assistant closed the connection ({one_line(exc)})",
                retryable=True,
            )
        except aiohttp.ServerDisconnectedError as exc:
            return _Outcome(
                elapsed_ms(),
                error=f"the assistant closed the connection ({one_line(exc)})",
                retryable=True,
            )
        except aiohttp.ClientError as exc:  # a reset, a malformed response head, ...
            return _Outcome(elapsed_ms(), error=one_line(exc) or type(exc).__name__, retryable=True)
        except ValueError as exc:
            # aiohttp refuses some requests with a plain ValueError before sending (a URL or
            # header it cannot encode): every request would meet it, so it is not retried.
            return _Outcome(elapsed_ms(), error=f"{REFUSED} ({one_line(exc)})")
        return self._outcome(raw, status, headers, elapsed_ms())  # read outside: our own errors

    def _outcome(self, raw: bytes | None, status: int, headers: Any, latency_ms: float) -> _Outcome:
        """A 2xx response's answer, or why the body is not one (never retried: it won't change)."""
        if raw is None:
            limit = self.settings.max_body_bytes
            return _Outcome(latency_ms, status, error=f"response body exceeds {limit} bytes")
        try:
            text, sources, context, calls, model = read_answer(
                self.settings, raw, headers.get("content-type", "")
            )
        except BadResponse as exc:
            return _Outcome(latency_ms, status, error=str(exc))
        if model is not None and len(self.served_models) < MAX_SERVED_MODELS:
            self.served_models.add(model)
        self._count_paths(raw)
        # JSON can carry half an emoji ("\ud83d"): repaired here, the answer encodes anywhere.
        text, replaced = repair(text)
        if sources is not None:
            repaired = [repair(source) for source in sources]
            sources = [source for source, _ in repaired]
            replaced += sum(count for _, count in repaired)
        if context is not None:
            context, count = repair(context)
            replaced += count
        return _Outcome(
            latency_ms,
            status,
            text=text,
            sources=sources,
            context=context,
            tool_calls=calls,
            surrogates_replaced=replaced,
            usage=usage_of(self.settings, raw),
        )

    def _count_paths(self, raw: bytes) -> None:
        if not any(getattr(self.settings, attr) for attr in OPTIONAL_PATHS.values()):
            return
        found, keys = paths_found(self.settings, raw)
        self.answered += 1
        for name in found:
            self.found[name] = self.found.get(name, 0) + 1
        if self.first_keys is None:
            self.first_keys = keys

    def path_mistake(self) -> str | None:
        """One sentence when a path set into the answer found nothing in every answer read:
        a wrong setting, not as many answers each failing a check (some answers without
        sources, a refusal say, are an assistant's to give)."""
        if not self.answered:
            return None
        for name, attr in OPTIONAL_PATHS.items():
            path = getattr(self.settings, attr)
            if path and not self.found.get(name):
                keys = ", ".join(self.first_keys or []) or "none"
                every = (
                    "the one answer"
                    if self.answered == 1
                    else f"any of the {self.answered} answers"
                )
                return (
                    f"{name} '{path}' found nothing in {every} (the first answer's keys: "
                    f"{keys}): check {name}, a dotted path into the response "
                    "(e.g. data.sources, choices.0.message.content)"
                )
        return None

    def _scrub(self, message: str) -> str:
        # A proxy or echoing server could put a header value in a message, registered or not.
        return redaction.scrub(message, also=self._secrets)


def _fill(node: Any, values: dict[str, Any]) -> Any:
    """Put the slots into the parsed template's strings, so json.dumps escapes them correctly.

    A string that is `{history}` alone becomes the chat-message list itself; inside a longer
    string, its JSON text."""
    if isinstance(node, str):
        if node == "{history}":
            return values["history"]
        # One pass, so a question that itself contains "{id}" is left alone.
        return _SLOT.sub(lambda match: _slot_text(values[match.group(1)]), node)
    if isinstance(node, list):
        return [_fill(child, values) for child in node]
    if isinstance(node, dict):
        return {key: _fill(child, values) for key, child in node.items()}
    return node


def _slot_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (seconds or HTTP-date), capped; None if absent."""
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    if not math.isfinite(seconds):
        return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER_S)


async def _read_excerpt(response: aiohttp.ClientResponse) -> str:
    """The start of an error body: often says exactly what was wrong with the request."""
    data = b""
    async for chunk in response.content.iter_any():
        data += chunk
        if len(data) >= EXCERPT_CHARS:
            break
    return one_line(data[:EXCERPT_CHARS].decode("utf-8", "replace"))
