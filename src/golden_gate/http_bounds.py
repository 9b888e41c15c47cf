"""Bounds on the synchronous HTTP exchanges (the cache services over httpx, the GitHub API over
PyGithub's requests): one deadline on each exchange, and a cap on a reply's decoded body.

A per-read timeout is no deadline: a server that sends a byte every half second never trips
a 30 s read timeout. Here every socket operation of an exchange is given at most the time left
until the exchange's deadline (httpx: a network backend; requests: a timer that shuts the
connection's socket at the deadline, as urllib3 times a head's reads only one by one). A reply
is read through a counter of decoded bytes, so a gzip bomb is cut off at the cap. The async
clients (the assistant's, the judge's) have theirs in evaluation/http_session.py and
evaluation/transport.py. Nothing here imports an HTTP library until a client is built.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from typing import Any, cast

# The exchange in progress: when it must end (time.monotonic()), for the httpx backend.
_deadline: ContextVar[float | None] = ContextVar("golden_gate_http_deadline", default=None)
STREAMED = "golden_gate_streamed"  # a request extension: its body is the caller's to cap
DEADLINE_S = "golden_gate_deadline_s"  # a request extension: its own deadline (a transfer)


class ReplyTooLarge(Exception):
    """A reply passed its body cap, counted decoded; never retried (it would come again)."""

    def __init__(self, limit: int, note: str = "") -> None:
        super().__init__(f"the reply is larger than {limit} bytes{note}")
        self.limit = limit


class DeadlinePassed(Exception):
    """An exchange took longer than its deadline, however steadily its bytes came."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"no complete answer within {seconds:g} s")
        self.seconds = seconds


# -- httpx (the cache services) ----------------------------------------------------------------


def httpx_client(*, timeout_s: float, deadline_s: float, max_reply_bytes: int) -> Any:
    """An `httpx.Client` whose every exchange ends within `deadline_s` (each phase also within
    `timeout_s`) and whose replies are read at most `max_reply_bytes` decoded, except requests
    marked `extensions={STREAMED: True}` (a download the caller streams to a file and caps)."""
    import httpx

    client = httpx.Client(
        timeout=httpx.Timeout(timeout_s),
        event_hooks={"response": [_capped_read(max_reply_bytes)]},
    )
    # The transport and those of the proxies the environment names (HTTPS_PROXY, ...) alike.
    client._transport = cast("httpx.BaseTransport", _bounded(client._transport, deadline_s))
    client._mounts = {
        pattern: None
        if transport is None
        else cast("httpx.BaseTransport", _bounded(transport, deadline_s))
        for pattern, transport in client._mounts.items()
    }
    return client


def _bounded(transport: Any, deadline_s: float) -> _Deadlined:
    pool = transport._pool  # httpx takes no network backend: given to the pool it built
    pool._network_backend = _backend_class()(pool._network_backend)
    return _Deadlined(transport, deadline_s)


def _capped_read(limit: int) -> Any:
    def read(response: Any) -> None:
        if response.request.extensions.get(STREAMED):
            return
        # What `read()` returns from now on.
        response._content = _gathered(response.iter_bytes(), limit, response.close)

    return read


def _gathered(chunks: Iterable[bytes], limit: int, close: Callable[[], None]) -> bytes:
    """A body read decoded chunk by chunk, at most `limit` bytes; past it the connection is
    closed and ReplyTooLarge raised, with no chunk kept (the traceback holds this frame)."""
    kept: list[bytes] = []
    size = 0
    for chunk in chunks:
        size += len(chunk)
        if size > limit:
            kept.clear()
            close()
            raise ReplyTooLarge(limit)
        kept.append(chunk)
    return b"".join(kept)


class _Deadlined:
    """An httpx transport that sets each exchange's deadline before handing it on."""

    def __init__(self, inner: Any, deadline_s: float) -> None:
        self._inner = inner
        self.deadline_s = deadline_s

    def handle_request(self, request: Any) -> Any:
        # Not reset on return: the body is read after, under the same deadline.
        seconds = request.extensions.get(DEADLINE_S, self.deadline_s)
        _deadline.set(time.monotonic() + seconds)
        return self._inner.handle_request(request)

    def close(self) -> None:
        self._inner.close()

    def __enter__(self) -> _Deadlined:
        return self

    def __exit__(self, *args: object) -> None:
        self.close()


def _left(timeout: float | None, error: type[Exception]) -> float | None:
    end = _deadline.get()
    if end is None:
        return timeout
    left = end - time.monotonic()
    if left <= 0:
        raise error("the exchange passed its deadline")
    return left if timeout is None else min(timeout, left)


_backend: type | None = None


def _backend_class() -> type:
    global _backend
    if _backend is not None:
        return _backend
    import httpcore

    class Stream(httpcore.NetworkStream):
        def __init__(self, inner: Any) -> None:
            self._inner = inner

        def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            data: bytes = self._inner.read(max_bytes, _left(timeout, httpcore.ReadTimeout))
            return data

        def write(self, buffer: bytes, timeout: float | None = None) -> None:
            self._inner.write(buffer, _left(timeout, httpcore.WriteTimeout))

        def close(self) -> None:
            self._inner.close()

        def start_tls(self, ssl_context: Any, server_hostname: Any = None, timeout: Any = None):
            left = _left(timeout, httpcore.ConnectTimeout)
            return Stream(self._inner.start_tls(ssl_context, server_hostname, left))

        def get_extra_info(self, info: str) -> Any:
            return self._inner.get_extra_info(info)

    class Backend(httpcore.NetworkBackend):
        def __init__(self, inner: Any) -> None:
            self._inner = inner

        def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
            left = _left(timeout, httpcore.ConnectTimeout)
            return Stream(self._inner.connect_tcp(host, port, left, local_address, socket_options))

        def connect_unix_socket(self, path, timeout=None, socket_options=None):
            left = _left(timeout, httpcore.ConnectTimeout)
            return Stream(self._inner.connect_unix_socket(path, left, socket_options))

        def sleep(self, seconds: float) -> None:
            self._inner.sleep(seconds)

    _backend = Backend
    return Backend


# -- requests (PyGithub) -----------------------------------------------------------------------

# The timers of the exchange in progress (one per try: urllib3 retries inside one send).
_timers: ContextVar[list[threading.Timer] | None] = ContextVar(
    "golden_gate_http_timers", default=None
)
_limits: ContextVar[float] = ContextVar("golden_gate_http_deadline_s", default=0.0)


BLOB_PATH = "/git/blobs/"  # GitHub's git blobs: a file over 1 MB is read there


def bound_github(
    requester: Any,
    *,
    deadline_s: float,
    max_reply_bytes: int,
    max_blob_bytes: int,
    blob_deadline_s: float,
) -> None:
    """Make PyGithub's `requester` (one client's) send through bounded adapters: a reply at
    most `max_reply_bytes` in `deadline_s`, a git blob's at most `max_blob_bytes` in
    `blob_deadline_s`."""
    from github import Requester

    def bounded(base: type) -> type:
        class Bounded(base):
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **kwargs)
                self.adapter = _adapter_class()(
                    (deadline_s, max_reply_bytes),
                    (blob_deadline_s, max_blob_bytes),
                    max_retries=self.retry,
                    pool_connections=self.pool_size,
                    pool_maxsize=self.pool_size,
                )
                self.session.mount("https://", self.adapter)
                self.session.mount("http://", self.adapter)

        return Bounded

    http = bounded(Requester.HTTPRequestsConnectionClass)
    https = bounded(Requester.HTTPSRequestsConnectionClass)
    # This client's only (PyGithub's own hook, injectConnectionClasses, is process-wide).
    requester._Requester__httpConnectionClass = http
    requester._Requester__httpsConnectionClass = https
    scheme = getattr(requester, "_Requester__connectionClass", None)
    if scheme is not None:
        is_https = issubclass(scheme, Requester.HTTPSRequestsConnectionClass)
        requester._Requester__connectionClass = https if is_https else http


def _cut(sock: socket.socket, fired: list[bool]) -> None:
    fired.append(True)
    with contextlib.suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)  # the blocked read returns at once


def _last_fired(timers: list[threading.Timer]) -> bool:
    """Whether the last try was cut at its deadline (an earlier try's end is not this one's)."""
    return bool(timers) and bool(getattr(timers[-1], "fired", None))


_adapter: type | None = None


def _adapter_class() -> type:
    global _adapter
    if _adapter is not None:
        return _adapter
    import requests
    from urllib3 import connection, connectionpool

    def watched(base: type) -> type:
        class Watched(base):
            def getresponse(self, *args: Any, **kwargs: Any) -> Any:
                timers = _timers.get()
                if timers:
                    # Its try ended (a retry, a rate limit's wait): neither its timer nor
                    # whether it fired concerns this one, which may reuse its connection.
                    for earlier in timers:
                        earlier.cancel()
                    timers.clear()
                if timers is not None and self.sock is not None:
                    fired: list[bool] = []
                    timer = threading.Timer(_limits.get(), _cut, (self.sock, fired))
                    timer.daemon = True
                    timer.fired = fired  # type: ignore[attr-defined]
                    timer.start()
                    timers.append(timer)
                    self.deadline_timer = timer
                return super().getresponse(*args, **kwargs)

        return Watched

    def put_back(base: type, connection_class: type) -> type:
        class Pool(base):
            ConnectionCls = connection_class

            def _put_conn(self, conn: Any) -> None:
                # Its answer was read whole: its try is over, before any wait for the next.
                timer = getattr(conn, "deadline_timer", None)
                if timer is not None:
                    timer.cancel()
                super()._put_conn(conn)

        return Pool

    HTTPPool = put_back(connectionpool.HTTPConnectionPool, watched(connection.HTTPConnection))
    HTTPSPool = put_back(connectionpool.HTTPSConnectionPool, watched(connection.HTTPSConnection))

    class BoundedAdapter(requests.adapters.HTTPAdapter):
        def __init__(
            self, bounds: tuple[float, int], blob_bounds: tuple[float, int], **kwargs: Any
        ) -> None:
            self.bounds, self.blob_bounds = bounds, blob_bounds
            super().__init__(**kwargs)

        def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
            super().init_poolmanager(*args, **kwargs)
            self.poolmanager.pool_classes_by_scheme = {"http": HTTPPool, "https": HTTPSPool}
            self.poolmanager.key_fn_by_scheme = dict(self.poolmanager.key_fn_by_scheme)

        def proxy_manager_for(self, proxy: str, **kwargs: Any) -> Any:
            manager = super().proxy_manager_for(proxy, **kwargs)
            if not proxy.lower().startswith("socks"):  # SOCKS has connection classes of its own
                manager.pool_classes_by_scheme = {"http": HTTPPool, "https": HTTPSPool}
            return manager

        def send(  # requests' own signature: its callers pass these by keyword
            self,
            request: Any,
            stream: bool = False,
            timeout: Any = None,
            verify: Any = True,
            cert: Any = None,
            proxies: Any = None,
        ) -> Any:
            kwargs = {"timeout": timeout, "verify": verify, "cert": cert, "proxies": proxies}
            blob = BLOB_PATH in (request.path_url or "")
            deadline_s, max_bytes = self.blob_bounds if blob else self.bounds
            timers: list[threading.Timer] = []
            token, limit = _timers.set(timers), _limits.set(deadline_s)
            try:
                try:
                    response = super().send(request, stream=True, **kwargs)
                    if not stream:
                        _read(response, max_bytes)
                except Exception as exc:
                    if _last_fired(timers):
                        raise DeadlinePassed(deadline_s) from exc
                    raise
                # A body that ends with its connection ends alike when the deadline shut it.
                if _last_fired(timers):
                    response.close()
                    raise DeadlinePassed(deadline_s)
                return response
            finally:
                for timer in timers:
                    timer.cancel()
                _timers.reset(token)
                _limits.reset(limit)

    def _read(response: Any, limit: int) -> None:
        stream = response.raw.stream(64 * 1024, decode_content=True)
        response._content = _gathered(stream, limit, response.close)
        response._content_consumed = True

    _adapter = BoundedAdapter
    return BoundedAdapter
