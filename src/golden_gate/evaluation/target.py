"""The assistant under test, over HTTP: one item in, one answer (or one actionable error) out.

About 520 lines, one module: the assistant's HTTP contract (the request, the retries, and
every malformed reply turned into one actionable sentence) is one concern.
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

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from golden_gate import jsontext, redaction
from golden_gate.core.cost import read_usage
from golden_gate.core.golden import GoldenItem
from golden_gate.core.item_result import TokenUsage
from golden_gate.errors import IncompleteError, InputError
from golden_gate.evaluation.transport import sharded
from golden_gate.limits import MAX_CONCURRENCY, MAX_RETRIES, MAX_TIMEOUT_S
from golden_gate.surrogates import repair

log = logging.getLogger(__name__)

MAX_BACKOFF_S = 30.0  # one backoff sleep never exceeds this, however many retries
MAX_RETRY_AFTER_S = 60.0  # an assistant asking for longer is not worth waiting for in CI
_HEADER_NAME = re.compile(r"[^!#$%&'*+.^_`|~0-9A-Za-z-]")  # RFC 9110 token characters
_HEADER_VALUE = re.compile(r"[^\t\x20-\x7e]")
_SLOT = re.compile(r"\{(question|id|conversation_id|history)\}")
_SOURCE_KEYS = ("url", "source", "path", "id")
_EXCERPT_CHARS = 80
MAX_SERVED_MODELS = 20  # distinct model names kept from responses (an answer is untrusted)


class AssistantSettings(BaseModel):
    """Where the assistant is and how to talk to it."""

    model_config = ConfigDict(extra="forbid")

    url: str = ""  # empty: the compose-started service's address, known once it runs
    path: str = "/ask"
    request_template: str = '{"text": "{question}"}'
    answer_path: str = "answer"
    sources_path: str | None = None
    context_path: str | None = None  # the retrieved passages, for groundedness/hallucination
    model_path: str | None = None  # the model that answered, to warn of a judge that is it
    usage_path: str | None = None  # the assistant's own token usage, for the cost (c_sys)
    tools_path: str | None = None  # the tool calls the answer made (evaluation/trajectory.py)
    headers: dict[str, str] = Field(default_factory=dict)
    concurrency: int = Field(default=8, ge=1, le=MAX_CONCURRENCY)
    timeout_s: float = Field(default=60.0, gt=0, le=MAX_TIMEOUT_S, allow_inf_nan=False)
    retries: int = Field(default=3, ge=0, le=MAX_RETRIES)
    backoff_s: float = Field(default=0.5, ge=0, le=MAX_BACKOFF_S)
    max_body_bytes: int = Field(default=5_000_000, ge=1)

    @field_validator("url")
    @classmethod
    def _url_is_http(cls, value: str) -> str:
        # Caught here, a bad URL is one clear message instead of one transport error per item.
        if value and not value.startswith(("http://", "https://")):
            raise ValueError(
                f"the assistant URL must start with http:// or https:// (got {value!r})"
            )
        if value and (problem := redaction.url_problem(value)):
            shown = redaction.without_credentials(value)
            raise ValueError(f"the assistant URL {shown!r} is not a usable URL ({problem})")
        return value

    @field_validator(
        "answer_path", "sources_path", "context_path", "model_path", "usage_path", "tools_path"
    )
    @classmethod
    def _paths_are_dotted(cls, value: str | None, info: ValidationInfo) -> str | None:
        # An empty segment ("", "a..b", ".x") matches nothing: every run would fail alike.
        if value is not None and any(not part.strip() for part in value.split(".")):
            flag = info.field_name.replace("_", "-") if info.field_name else "path"
            raise ValueError(
                f"{flag} {value!r} has an empty segment; write keys and array indexes "
                "joined by dots (retrieval.passages)"
            )
        return value

    @field_validator("headers")
    @classmethod
    def _headers_are_http(cls, value: dict[str, str]) -> dict[str, str]:
        # Refused here, not by the transport on every request (retried, then exit 3).
        for name, text in value.items():
            bad = _HEADER_NAME.search(name) if name else None
            if not name or bad is not None:
                where = f"has {bad.group()!r} after {name[: bad.start()]!r}" if bad else "is empty"
                raise ValueError(f"a header name {where}: use letters, digits and -")
            if _HEADER_VALUE.search(text):
                # The value is often a secret: name the header, never show the value.
                raise ValueError(
                    f"the value of header '{name}' holds a line break, a control or a "
                    "non-ASCII character"
                )
        return value

    @field_validator("request_template")
    @classmethod
    def _template_is_json_with_question(cls, value: str) -> str:
        try:
            document = jsontext.loads(value)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"request-template is not valid JSON ({exc.msg} at column {exc.colno}): {value!r}"
            ) from None
        if not any("{question}" in text for text in _strings(document)):
            raise InputError(
                'request-template must contain "{question}" in a string value, '
                f'e.g. {{"text": "{{question}}"}} (got {value!r})'
            )
        return value


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


def error_hint(error: str, status: int | None, url: str) -> str:
    """What to check for an assistant error: the setting most likely wrong, or where to look."""
    https = url.lower().startswith("https:")
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
    if https and ("ssl" in lowered or "tls" in lowered or "wrong version" in lowered):
        return "the URL says https: does the service speak plain http?"
    if "connection refused" in lowered or "cannot connect" in lowered:
        return (
            "is the assistant running there? (from a Docker action, a server an earlier step "
            "started on 127.0.0.1 cannot be reached: use a job `services:` container or "
            "`compose-file`)"
        )
    if "timed out" in lowered:
        return "raise `timeout`, or lower `concurrency`"
    return "see the run's error in report.json"


def error_kind(error: str, status: int | None) -> str:
    """Errors that need the same fix share a kind: the status, or the error's first words."""
    if status is not None:
        return f"HTTP {status}" if not 200 <= status < 300 else error.split(" (")[0][:60]
    return " ".join(error.split()[:2])


class _BadResponse(Exception):
    """The body is not the answer we were told to expect (never retried: it would not change)."""


class AssistantClient:
    """Asks the assistant every item with bounded concurrency and retries on transient faults."""

    def __init__(self, settings: AssistantSettings, *, client: httpx.AsyncClient | None = None):
        self.settings = settings
        self._template = json.loads(settings.request_template)
        base = settings.url.rstrip("/")
        self._url = f"{base}/{settings.path.lstrip('/')}" if settings.path else settings.url
        self._headers = {"Content-Type": "application/json", **settings.headers}
        self._secrets = list(settings.headers.values())  # scrubbed from its errors
        self._timeout = httpx.Timeout(settings.timeout_s)
        # Held only while a request is in flight, so items sleeping in backoff free their slot.
        self._slots = asyncio.Semaphore(settings.concurrency)
        self.in_flight = 0  # requests holding a slot (for the progress line)
        self.served_models: set[str] = set()  # read at model_path: at most MAX_SERVED_MODELS
        self._primed: dict[str, Answer] = {}  # the preflight's answer, for the item's first run
        self._owns_client = client is None
        # The pools must hold the concurrency, or requests would queue in a pool and burn their
        # timeout there; kept small each (see transport.py). An injected client is the caller's.
        self._client = (
            client
            if client is not None
            else httpx.AsyncClient(transport=sharded(settings.concurrency))
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
        if self._owns_client:
            await self._client.aclose()

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
        if status is None and ("connection refused" in lowered or "cannot connect" in lowered):
            definite = True
        if not definite:  # a timeout or a 5xx may be this item's: the run goes on
            self._primed[item.id] = answer
            return
        raise AssistantUnusable(
            f"the assistant's first answer (item '{item.id}', before the run) failed: "
            f"{self.explain(error, status)}"
        )

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
        try:
            # httpx times each read separately; this deadline also stops an assistant that
            # trickles its answer a byte at a time.
            async with (
                asyncio.timeout(timeout_s),
                self._client.stream(
                    "POST", self._url, content=body, headers=self._headers, timeout=self._timeout
                ) as response,
            ):
                status = response.status_code
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
                raw = await self._read_capped(response)
                return self._outcome(raw, status, response.headers, elapsed_ms())
        except (TimeoutError, httpx.TimeoutException):
            return _Outcome(elapsed_ms(), error=f"timed out after {timeout_s:g} s", retryable=True)
        except httpx.ConnectError as exc:
            if _caused_by(exc, ConnectionRefusedError):
                return _Outcome(elapsed_ms(), error="connection refused", retryable=True)
            return _Outcome(
                elapsed_ms(), error=f"cannot connect ({_one_line(exc)})", retryable=True
            )
        except httpx.RemoteProtocolError as exc:
            return _Outcome(
                elapsed_ms(),
                error=f"the assistant closed the connection ({_one_line(exc)})",
                retryable=True,
            )
        except httpx.TransportError as exc:
            return _Outcome(elapsed_ms(), error=_one_line(exc), retryable=True)
        except httpx.HTTPError as exc:  # e.g. a body that fails to decompress: retrying won't help
            return _Outcome(elapsed_ms(), status=None, error=_one_line(exc))

    def _outcome(
        self, raw: bytes | None, status: int, headers: httpx.Headers, latency_ms: float
    ) -> _Outcome:
        """A 2xx response's answer, or why the body is not one (never retried: it won't change)."""
        if raw is None:
            limit = self.settings.max_body_bytes
            return _Outcome(latency_ms, status, error=f"response body exceeds {limit} bytes")
        try:
            text, sources, context, calls = self._parse(raw, headers.get("content-type", ""))
        except _BadResponse as exc:
            return _Outcome(latency_ms, status, error=str(exc))
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
            usage=self._usage(raw),
        )

    def _usage(self, raw: bytes) -> TokenUsage | None:
        """The token usage at usage_path; None without one. Read apart from the answer (a
        second parse, only when set) so the answer's reading stays as it is."""
        path = self.settings.usage_path
        if path is None:
            return None
        try:
            return read_usage(_lookup(jsontext.loads(raw, check_depth=False), path, what="usage"))
        except (ValueError, _BadResponse):
            return None  # a response that does not say is still an answer

    async def _read_capped(self, response: httpx.Response) -> bytes | None:
        """The body, or None once it passes the cap (the rest is never read)."""
        limit = self.settings.max_body_bytes
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            return None
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():  # counts decoded bytes: no gzip bombs
            size += len(chunk)
            if size > limit:
                return None
            chunks.append(chunk)
        return b"".join(chunks)

    def _parse(
        self, raw: bytes, content_type: str
    ) -> tuple[str, list[str] | None, str | None, list[tuple[str, object]] | None]:
        if not raw.strip():
            raise _BadResponse("response body is empty")
        try:
            document = jsontext.loads(raw, check_depth=False)  # only the answer is kept
        except ValueError:
            kind = content_type.split(";")[0].strip() or "no content type"
            excerpt = _one_line(raw[:_EXCERPT_CHARS].decode("utf-8", "replace"))
            raise _BadResponse(f"response is not JSON ({kind}, starts with {excerpt!r})") from None
        answer_path = self.settings.answer_path
        text = _lookup(document, answer_path, what="answer")
        if not isinstance(text, str):
            raise _BadResponse(
                f"answer at '{answer_path}' is not a string (got {_json_type(text)})"
            )
        self._note_model(document)
        return text, self._sources(document), self._context(document), self._tool_calls(document)

    def _tool_calls(self, document: Any) -> list[tuple[str, object]] | None:
        """The calls at `tools_path`: none when the response has no such key (an answer
        without tools); a value that is not tool calls is a bad response."""
        from golden_gate.evaluation.trajectory import BadToolCalls, read_calls

        path = self.settings.tools_path
        if path is None:
            return None
        try:
            value = _lookup(document, path, what="tool calls")
        except _BadResponse:
            return []
        try:
            return read_calls(value, path)
        except BadToolCalls as exc:
            raise _BadResponse(str(exc)) from None

    def _note_model(self, document: Any) -> None:
        """The model the response says answered (model_path), kept for the judge check."""
        path = self.settings.model_path
        if path is None or len(self.served_models) >= MAX_SERVED_MODELS:
            return
        try:
            value = _lookup(document, path, what="model")
        except _BadResponse:
            return  # a response that does not say is still an answer
        if isinstance(value, str) and value.strip():
            self.served_models.add(value.strip()[:200])

    def _context(self, document: Any) -> str | None:
        """Every string under `context_path` (passages, or objects holding them), joined."""
        path = self.settings.context_path
        if path is None:
            return None
        try:
            value = _lookup(document, path, what="context")
        except _BadResponse:
            return None  # no context: the evaluators that need one say so (evaluators.py)
        passages = [text.strip() for text in _strings(value) if text.strip()]
        return "\n\n".join(passages) if passages else None

    def _sources(self, document: Any) -> list[str] | None:
        path = self.settings.sources_path
        if path is None:
            return None
        try:
            value = _lookup(document, path, what="sources")
        except _BadResponse:
            return None  # an answer without sources (e.g. a refusal) is still an answer
        if value is None:
            return None
        if not isinstance(value, list):
            raise _BadResponse(f"sources at '{path}' is not a list (got {_json_type(value)})")
        return [source for entry in value if (source := _source_name(entry)) is not None]

    def _scrub(self, message: str) -> str:
        # A proxy or echoing server could put a header value in a message, registered or not.
        return redaction.scrub(message, also=self._secrets)


def _strings(node: Any) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, list):
        return [text for child in node for text in _strings(child)]
    if isinstance(node, dict):
        return [text for child in node.values() for text in _strings(child)]
    return []


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


def _lookup(document: Any, path: str, *, what: str) -> Any:
    """Follow a dotted path; integer segments index arrays (`choices.0.message.content`)."""
    node = document
    for segment in path.split("."):
        if isinstance(node, dict):
            if segment not in node:
                raise _BadResponse(f"no {what} at '{path}' (no key '{segment}')")
            node = node[segment]
        elif isinstance(node, list):
            try:
                index = int(segment)
            except ValueError:
                raise _BadResponse(
                    f"no {what} at '{path}' ('{segment}' is not an index into an array)"
                ) from None
            if not -len(node) <= index < len(node):
                raise _BadResponse(
                    f"no {what} at '{path}' (index {index} out of range, array of {len(node)})"
                )
            node = node[index]
        else:
            raise _BadResponse(
                f"no {what} at '{path}' (cannot look up '{segment}' in {_json_type(node)})"
            )
    return node


def _source_name(entry: Any) -> str | None:
    """A source as a string: itself, or the first of url/source/path/id in it or its metadata."""
    if isinstance(entry, str):
        return entry
    if not isinstance(entry, dict):
        return None
    for fields in (entry, entry.get("metadata")):
        if not isinstance(fields, dict):
            continue
        for key in _SOURCE_KEYS:
            value = fields.get(key)
            if isinstance(value, str) and value:
                return value
            if isinstance(value, int) and not isinstance(value, bool):
                return str(value)
    return None


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


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


async def _read_excerpt(response: httpx.Response) -> str:
    """The start of an error body: often says exactly what was wrong with the request."""
    data = b""
    async for chunk in response.aiter_bytes():
        data += chunk
        if len(data) >= _EXCERPT_CHARS:
            break
    return _one_line(data[:_EXCERPT_CHARS].decode("utf-8", "replace"))


def _caused_by(exc: BaseException, kind: type[BaseException]) -> bool:
    seen: set[int] = set()
    pending: list[BaseException | None] = [exc]
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, kind):
            return True
        pending += [current.__cause__, current.__context__]
        if isinstance(current, BaseExceptionGroup):
            pending += list(current.exceptions)
    return False


def _one_line(value: object) -> str:
    text = " ".join(str(value).split())
    if not text and isinstance(value, BaseException):
        return type(value).__name__  # e.g. a bare httpx.ReadError()
    return text
