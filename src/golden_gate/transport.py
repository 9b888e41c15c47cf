"""HTTP transports that keep each connection pool small, and one TLS context for all of them.

httpcore's `AsyncConnectionPool` walks all of its connections once per idle connection on
every request start and end: O(connections²) a request. At 32-64 connections to one server
that is most of the client's CPU (see BENCHMARKS.md; encode/httpcore#1035 is the open fix).
`ShardedTransport` spreads the same number of connections over pools of at most `shard` (16:
the best of 8, 16 and 32 at 64 connections in BENCHMARKS.md), each request going to the least
busy pool, so every pool stays small. The assistant's client uses it over httpx, the OpenAI
judge's over httpx2 (the OpenAI SDK's fork of httpx, the same API): `sharded(..., http=...)`.

Every pool needs a TLS context, and building one loads the CA bundle (30-50 ms here): all
pools of one HTTP library share `tls_context(http)`, built on first use.
"""

from __future__ import annotations

import functools
import math
import ssl
from collections.abc import AsyncIterator, Callable
from types import ModuleType
from typing import Any

import httpx

SHARD = 16


@functools.cache
def tls_context(http: ModuleType = httpx) -> ssl.SSLContext:
    """The context `http` would build for `verify=True` (SSL_CERT_FILE and SSL_CERT_DIR
    included), built once."""
    return http.create_ssl_context()


def sharded(connections: int, *, shard: int = SHARD, http: ModuleType = httpx) -> Any:
    """A `ShardedTransport` for the HTTP library `http` (httpx or httpx2)."""
    return _transport_class(http)(connections, shard)


@functools.cache
def _transport_class(http: ModuleType) -> type:
    class Tracked(http.AsyncByteStream):  # type: ignore[name-defined,misc]
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

    class Sharded(http.AsyncBaseTransport):  # type: ignore[name-defined,misc]
        """`connections` connections as pools of at most `shard`, least busy first."""

        def __init__(self, connections: int, shard: int = SHARD) -> None:
            count = max(1, math.ceil(connections / shard))
            size = math.ceil(connections / count)
            limits = http.Limits(max_connections=size, max_keepalive_connections=size)
            context = tls_context(http)
            self._pools = [
                http.AsyncHTTPTransport(verify=context, limits=limits) for _ in range(count)
            ]
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
