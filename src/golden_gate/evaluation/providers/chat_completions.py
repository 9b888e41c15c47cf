"""A Chat Completions client of our own for the judge: one POST, no SDK.

The judge asks one kind of request (judge_client.py builds its body). Importing the OpenAI SDK
for it costs about 0.7 s of CPU (its type models) before the first verdict, and each call
through it about a millisecond of request building; LangChain's model on top of it a second
more. This client sends the body the SDK would send, byte for byte, over aiohttp (a fifth of
httpx's CPU a request), and reads the variables the SDK and LangChain read:
the key from the provider's variable, OPENAI_ORG_ID (or OPENAI_ORGANIZATION) and
OPENAI_PROJECT_ID, the endpoint from the judge base URL, else OPENAI_API_BASE, else
OPENAI_BASE_URL. Retries are the judge's (retry.py); an error status is a `StatusError` worded
as the SDK words it, so a failed call reads the same on either path.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from golden_gate import __version__, redaction
from golden_gate.http_bounds import ReplyTooLarge
from golden_gate.limits import MAX_JUDGE_REPLY_BYTES

OPENAI_URL = "https://api.openai.com/v1"  # the OpenAI SDK's own default
VERDICT_NOTE = " (a verdict is a few KB)"  # said with the judge's ReplyTooLarge


class StatusError(Exception):
    """The server answered with an error status."""

    def __init__(self, response: Any) -> None:
        self.response = response  # its headers say how long to wait (retry.retry_after)
        self.status_code = int(response.status_code)
        words = f"Error code: {self.status_code}"
        try:
            body = json.loads(response.text)
        except ValueError:
            body = None
        # The SDK's words: the body's error message only, never the rest of the body.
        error = body.get("error", body) if isinstance(body, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        if isinstance(message, str) and message:
            words += f" - {message}"
        elif 300 <= self.status_code < 400:
            words += (
                " - a redirect, not followed (the judge's key is sent to judge-base-url only): "
                "set judge-base-url to where it points"
            )
        super().__init__(words)


def base_url(configured: str | None) -> str:
    """Where requests go: the configured URL, else the variables LangChain and the SDK read."""
    for url in (configured, os.environ.get("OPENAI_API_BASE"), os.environ.get("OPENAI_BASE_URL")):
        if url:
            return url
    return OPENAI_URL


def too_large(exc: BaseException) -> ReplyTooLarge | None:
    """The ReplyTooLarge `exc` is or was raised from (an SDK wraps what its transport raised)."""
    from golden_gate.errors import causes

    return next((c for c in causes(exc, implicit=True) if isinstance(c, ReplyTooLarge)), None)


class TransportError(Exception):
    """No response was read: the connection failed, was lost, or timed out (retried)."""


class Timeout(TransportError):
    """The server took longer than the judge timeout to connect or to answer."""


class Response:
    """A response read whole: what StatusError, retry.py and judge_client.py read of it."""

    __slots__ = ("content", "headers", "status_code")

    def __init__(self, status_code: int, headers: Any, content: bytes) -> None:
        self.status_code = status_code
        self.headers = headers  # case-insensitive (`.get("retry-after")`)
        self.content = content

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")

    @property
    def is_success(self) -> bool:
        return 200 <= self.status_code < 300


class Client:
    """POSTs Chat Completions bodies to `url`/chat/completions over aiohttp (a fifth of httpx's
    CPU a request: BENCHMARKS.md), holding at most `connections` connections; `aclose()` closes
    them.

    The session is opened on the first call, in the event loop that makes it (the judge is
    built on another thread: deferred_judge.py), shaped as the assistant's (http_session.py).
    Unlike the SDK, no redirect is followed (secret_env.py); the proxy is OPENAI_PROXY; TLS trusts
    certifi's bundle, or SSL_CERT_FILE/SSL_CERT_DIR (tls.py).
    """

    def __init__(self, *, url: str, api_key: str, timeout_s: float, connections: int) -> None:
        import aiohttp
        from yarl import URL

        from golden_gate.evaluation import http_session, tls

        self.base_url = url
        self._url = URL(url.rstrip("/") + "/chat/completions")  # parsed once
        self._connections = connections
        self._timeout_s = timeout_s
        self._tls = tls.context()  # built here, on the thread that builds the judge
        # OPENAI_PROXY only, as the SDK path (an httpx client given a transport reads no
        # HTTP(S)_PROXY) and main's client did: both paths reach the same place.
        self._proxy = os.environ.get("OPENAI_PROXY") or None
        if self._proxy and (problem := redaction.url_problem(self._proxy)):
            # Said once, as the judge is set up, not by every call (aiohttp reads it per call).
            shown = redaction.without_credentials(self._proxy)
            raise ValueError(f"OPENAI_PROXY {shown!r} is not a usable proxy URL ({problem})")
        self._session: Any = None
        self._errors = (TimeoutError, aiohttp.ClientError)  # what transport_error maps
        headers = {
            "Accept": "application/json",
            "Content-Type": "application/json",
            "User-Agent": f"golden-gate/{__version__}",
            "Authorization": f"Bearer {api_key}",
        }
        organization = os.environ.get("OPENAI_ORG_ID") or os.environ.get("OPENAI_ORGANIZATION")
        if organization:
            headers["OpenAI-Organization"] = organization
        if project := os.environ.get("OPENAI_PROJECT_ID"):
            headers["OpenAI-Project"] = project
        self._url = http_session.credentials_as_header(self._url, headers)
        self._headers = headers

    async def post(self, body: dict[str, Any]) -> Response:
        """The response to `body` (read whole); StatusError when it is not a success,
        TransportError (Timeout) when none was read."""
        # The SDK's serialisation (httpx's defaults): the bytes, and so the cache, are the same.
        from golden_gate.evaluation import http_session

        content = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        if self._session is None:
            self._session = http_session.session(
                connections=self._connections, timeout_s=self._timeout_s, ssl=self._tls
            )
        try:
            async with self._session.post(
                self._url,
                data=content.encode(),
                headers=self._headers,
                proxy=self._proxy,
                allow_redirects=False,  # the key goes to the judge's endpoint and nowhere else
            ) as reply:
                raw = await http_session.read_capped(reply, MAX_JUDGE_REPLY_BYTES)
                if raw is None:
                    raise ReplyTooLarge(MAX_JUDGE_REPLY_BYTES, VERDICT_NOTE)
                response = Response(reply.status, reply.headers, raw)
        except self._errors as exc:
            raise transport_error(exc) from exc
        if not response.is_success:
            raise StatusError(response)
        return response

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()


def transport_error(exc: Exception) -> TransportError:
    """aiohttp's error (or asyncio's timeout) as ours.

    The one place aiohttp's errors are read: base.transport_error words ours as httpx's were
    ("timed out after ...", "cannot connect (...)"), and retry.py retries them.
    """
    import aiohttp

    if isinstance(exc, TimeoutError):  # aiohttp's timeouts are TimeoutErrors too
        return Timeout(str(exc) or "timed out")
    if isinstance(exc, aiohttp.ClientConnectorError):  # refused, unreachable, unknown host
        return TransportError(str(exc.os_error) or str(exc))
    # A lost connection, a malformed reply, a bad URL (httpx's TransportErrors, retried alike).
    return TransportError(str(exc) or type(exc).__name__)


def transport_fault(exc: BaseException) -> TransportError | None:
    """`exc` as a TransportError when it is one: ours, or aiohttp's raised through an SDK
    (google-genai asks over aiohttp when it is installed); None for any other error."""
    if isinstance(exc, TransportError):
        return exc
    aiohttp = sys.modules.get("aiohttp")  # never imported to read an error
    if isinstance(exc, TimeoutError) or (
        aiohttp is not None
        and isinstance(exc, aiohttp.ClientError)
        and not isinstance(exc, aiohttp.ClientResponseError)  # a status, read by the SDK
    ):
        return transport_error(exc)
    return None
