"""An HTTP transport that keeps each connection pool small.

httpcore 1.0's `AsyncConnectionPool` walks all of its connections once per idle connection on
every request start and end: O(connections²) a request. At 32-64 connections to one assistant
that is most of the client's CPU (see BENCHMARKS.md; encode/httpcore#1035 is the open fix).
`ShardedTransport` spreads the same number of connections over pools of at most `shard` (16:
the best of 8, 16 and 32 at 64 connections in BENCHMARKS.md), each
request going to the least busy pool, so every pool stays small.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Callable

import httpx


class _Tracked(httpx.AsyncByteStream):
    """A response body that tells its pool when it is done."""

    def __init__(self, stream: httpx.AsyncByteStream, done: Callable[[], None]) -> None:
        self._stream, self._done = stream, done

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._stream:
            yield chunk

    async def aclose(self) -> None:
        try:
            await self._stream.aclose()
        finally:
            self._done()


class ShardedTransport(httpx.AsyncBaseTransport):
    """`connections` connections as pools of at most `shard`, least busy first."""

    def __init__(self, connections: int, shard: int = 16) -> None:
        count = max(1, math.ceil(connections / shard))
        size = math.ceil(connections / count)
        limits = httpx.Limits(max_connections=size, max_keepalive_connections=size)
        self._pools = [httpx.AsyncHTTPTransport(limits=limits) for _ in range(count)]
        self._busy = [0] * count

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        index = min(range(len(self._pools)), key=self._busy.__getitem__)
        self._busy[index] += 1

        def done() -> None:
            self._busy[index] -= 1

        try:
            response = await self._pools[index].handle_async_request(request)
        except BaseException:
            done()
            raise
        assert isinstance(response.stream, httpx.AsyncByteStream)
        response.stream = _Tracked(response.stream, done)
        return response

    async def aclose(self) -> None:
        for pool in self._pools:
            await pool.aclose()
