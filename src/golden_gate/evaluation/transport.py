"""HTTP transports that keep each connection pool small, and one TLS context for all of them.

httpcore's `AsyncConnectionPool` walks all of its connections once per idle connection on
every request start and end: O(connections²) a request. At 32-64 connections to one server
that is most of the client's CPU (see BENCHMARKS.md; encode/httpcore#1035 is the open fix).
`ShardedTransport` spreads the same number of connections over pools of at most `shard`, each
request going to the least busy pool, so every pool stays small. 4 a pool: with the
connections below, 4 spends less CPU a request than 8 or 16 at 32 and 64 connections
(0.85 against 0.92-1.09 ms, measured side by side in one process; BENCHMARKS.md §1). The
judge's SDK clients use it (the OpenAI SDK's over httpx2, its fork of httpx with the same API);
the assistant's client and the judge's own are over aiohttp (a fifth of the CPU a request).

Every pool needs a TLS context, and building one loads the CA bundle (30-50 ms here): all
pools of one HTTP library share `tls_context(http)`, built on first use.

The pools' connections (`stream_class`) also spend fewer system calls a request: httpcore writes a
request's head and its body separately, two sends and two wake-ups of the server where one
does (Go's and aiohttp's clients send them together), and checks every idle connection for a
hang-up through anyio's socket attributes, which rebuild a table and ask the kernel for the
peer's address each time, where one `poll` does.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import math
import select
import socket
import ssl
from collections.abc import AsyncIterator, Callable
from types import ModuleType
from typing import Any

SHARD = 4
FLUSH_BYTES = 64 * 1024  # a longer body goes out in pieces of about this size
_CORE = {"httpx": "httpcore", "httpx2": "httpcore2"}  # each HTTP library's connection layer


def capped_reads(limit: int, note: str = "") -> dict[str, list[Callable[[Any], Any]]]:
    """`event_hooks` for an httpx/httpx2 client whose every response body is read here, at
    most `limit` bytes decoded (ReplyTooLarge past it), before the SDK reads it (it would read
    any size whole). A raw chunk is decoded at once: a gzip bomb costs at most ~1,000 times a
    64 KiB read before it is cut off."""
    from golden_gate.http_bounds import ReplyTooLarge

    async def read(response: Any) -> None:
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > limit:
                # Emptied first: the error's traceback keeps this frame, and an SDK keeps the
                # error (29 failed calls held 8 MiB each).
                chunks.clear()
                await response.aclose()
                raise ReplyTooLarge(limit, note)
            chunks.append(chunk)
        response._content = b"".join(chunks)  # what `aread()` returns from now on

    return {"response": [read]}


@functools.cache
def tls_context(http: ModuleType) -> ssl.SSLContext:
    """The context `http` would build for `verify=True` (SSL_CERT_FILE and SSL_CERT_DIR
    included), built once."""
    return http.create_ssl_context()


def sharded(connections: int, *, http: ModuleType, shard: int = SHARD) -> Any:
    """A `ShardedTransport` for the HTTP library `http` (httpx or httpx2)."""
    return _transport_class(http)(connections, shard)


@functools.cache
def _transport_class(http: ModuleType) -> type:
    byte_stream: Any = http.AsyncByteStream  # httpx's or httpx2's, chosen at run time

    class Tracked(byte_stream):
        """A response body that tells its pool when it is done."""

        def __init__(self, stream: Any, done: Callable[[], None]) -> None:
            self._stream, self._done = stream, done

        async def __aiter__(self) -> AsyncIterator[bytes]:
            async for chunk in self._stream:
                yield chunk

        async def aclose(self) -> None:
            try:
                await self._stream.aclose()
            finally:
                self._done()

    base_transport: Any = http.AsyncBaseTransport  # httpx's or httpx2's, chosen at run time

    class Sharded(base_transport):
        """`connections` connections as pools of at most `shard`, least busy first."""

        def __init__(self, connections: int, shard: int = SHARD) -> None:
            count = max(1, math.ceil(connections / shard))
            size = math.ceil(connections / count)
            limits = http.Limits(max_connections=size, max_keepalive_connections=size)
            self._pools = [_transport(http, limits) for _ in range(count)]
            self._busy = [0] * count

        async def handle_async_request(self, request: Any) -> Any:
            index = min(range(len(self._pools)), key=self._busy.__getitem__)
            self._busy[index] += 1

            def done() -> None:
                self._busy[index] -= 1

            try:
                response = await self._pools[index].handle_async_request(request)
            except BaseException:
                done()
                raise
            assert isinstance(response.stream, http.AsyncByteStream)
            response.stream = Tracked(response.stream, done)
            return response

        async def aclose(self) -> None:
            for pool in self._pools:
                await pool.aclose()

    Sharded.__name__ = Sharded.__qualname__ = "ShardedTransport"
    return Sharded


def _transport(http: ModuleType, limits: Any) -> Any:
    """`http.AsyncHTTPTransport(limits=limits)`, its connections made by `_backend_class`."""
    core = importlib.import_module(_CORE[http.__name__])
    context = tls_context(http)
    transport = http.AsyncHTTPTransport(verify=context, limits=limits)
    # httpx takes no network backend: its pool, built as httpx builds it, with ours.
    transport._pool = core.AsyncConnectionPool(
        ssl_context=context,
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        network_backend=_backend_class(core)(),
    )
    return transport


def _readable(sock: socket.socket | None) -> bool:
    """Whether a read would not wait: on an idle connection, the server hung up."""
    if sock is None or sock.fileno() < 0:
        return True
    if not hasattr(select, "poll"):  # pragma: no cover - Windows
        return bool(select.select([sock], [], [], 0)[0])
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    return bool(poller.poll(0))


@functools.cache
def stream_class(core: ModuleType) -> type:
    """The connection of `core` (httpcore or httpcore2) that `sharded` pools use."""

    base: Any = core.AsyncNetworkStream  # httpcore's or httpcore2's, chosen at run time

    class Stream(base):
        """A connection whose writes wait for its next read, up to FLUSH_BYTES: a client reads
        after every request, so a request's head and body leave in one send."""

        def __init__(self, inner: Any) -> None:
            self._inner = inner
            self._pending = bytearray()
            self._timeout: float | None = None
            self._socket = inner.get_extra_info("socket")

        async def write(self, buffer: bytes, timeout: float | None = None) -> None:
            self._pending += buffer
            self._timeout = timeout
            if len(self._pending) >= FLUSH_BYTES:
                await self._flush()

        async def _flush(self) -> None:
            data = bytes(self._pending)
            self._pending.clear()
            await self._inner.write(data, self._timeout)

        async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            if self._pending:
                # As httpcore does with a failed write: the server may have answered already.
                with contextlib.suppress(core.WriteError):
                    await self._flush()
            data: bytes = await self._inner.read(max_bytes, timeout)
            return data

        async def aclose(self) -> None:
            self._pending.clear()
            await self._inner.aclose()

        async def start_tls(
            self,
            ssl_context: ssl.SSLContext,
            server_hostname: str | None = None,
            timeout: float | None = None,
        ) -> Any:
            if self._pending:
                await self._flush()
            return Stream(await self._inner.start_tls(ssl_context, server_hostname, timeout))

        def get_extra_info(self, info: str) -> Any:
            if info == "is_readable":
                return _readable(self._socket)
            return self._inner.get_extra_info(info)

    return Stream


@functools.cache
def _backend_class(core: ModuleType) -> type:
    Stream = stream_class(core)

    base: Any = core.AsyncNetworkBackend  # httpcore's or httpcore2's, chosen at run time

    class Backend(base):
        """anyio's connections (httpcore's own under asyncio), as `Stream`s."""

        def __init__(self) -> None:
            self._inner = core.AnyIOBackend()

        async def connect_tcp(
            self,
            host: str,
            port: int,
            timeout: float | None = None,
            local_address: str | None = None,
            socket_options: Any = None,
        ) -> Any:
            inner = await self._inner.connect_tcp(
                host, port, timeout, local_address, socket_options
            )
            return Stream(inner)

        async def connect_unix_socket(
            self, path: str, timeout: float | None = None, socket_options: Any = None
        ) -> Any:
            return Stream(await self._inner.connect_unix_socket(path, timeout, socket_options))

        async def sleep(self, seconds: float) -> None:
            await self._inner.sleep(seconds)

    return Backend
