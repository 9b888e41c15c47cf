"""The pools' connections: a request leaves in one send, a hang-up is seen with one poll.

`stream_class` wraps a connection of httpcore's (`AsyncNetworkStream`); here the wrapped
connection is a recording stand-in of that interface, or a real socket pair.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import httpcore
import httpx
import httpx2
import pytest

from golden_gate.evaluation.transport import FLUSH_BYTES, sharded, stream_class
from tests.fakes.assistant_server import AssistantServer


class Recorded(httpcore.AsyncNetworkStream):
    """A connection that records what is sent and answers reads from a script."""

    def __init__(self, sock: socket.socket | None = None, fail_writes: bool = False) -> None:
        self.sent: list[bytes] = []
        self.reads = 0
        self.sock = sock
        self.fail_writes = fail_writes

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if self.fail_writes:
            raise httpcore.WriteError("the server closed the connection")
        self.sent.append(buffer)

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        self.reads += 1
        return b"HTTP/1.1 413 Content Too Large\r\n\r\n"

    async def aclose(self) -> None:
        pass

    def get_extra_info(self, info: str) -> Any:
        return self.sock if info == "socket" else None


def wrapped(inner: Recorded) -> Any:
    return stream_class(httpcore)(inner)


def test_a_request_head_and_body_leave_in_one_send_before_the_response_is_read() -> None:
    inner = Recorded()
    stream = wrapped(inner)

    async def request() -> bytes:
        await stream.write(b"POST /ask HTTP/1.1\r\nContent-Length: 4\r\n\r\n")
        await stream.write(b"body")
        assert inner.sent == []  # nothing sent until the response is read
        return bytes(await stream.read(65536))

    assert asyncio.run(request()).startswith(b"HTTP/1.1 413")
    assert inner.sent == [b"POST /ask HTTP/1.1\r\nContent-Length: 4\r\n\r\nbody"]


def test_a_long_body_leaves_in_pieces_as_it_is_written() -> None:
    inner = Recorded()
    stream = wrapped(inner)
    piece = b"x" * (FLUSH_BYTES // 2)

    async def request() -> None:
        for _ in range(5):
            await stream.write(piece)
        await stream.read(65536)

    asyncio.run(request())
    assert b"".join(inner.sent) == piece * 5
    assert len(inner.sent) == 3 and all(len(chunk) <= FLUSH_BYTES for chunk in inner.sent)


def test_a_failed_send_still_reads_the_servers_early_answer() -> None:
    # httpcore goes on to read the response after a failed write, and so does the stream.
    inner = Recorded(fail_writes=True)
    stream = wrapped(inner)

    async def request() -> bytes:
        await stream.write(b"POST /upload HTTP/1.1\r\n\r\n")
        return bytes(await stream.read(65536))

    assert asyncio.run(request()).startswith(b"HTTP/1.1 413")
    assert inner.reads == 1


def test_an_idle_connection_is_readable_only_once_the_server_sends_or_hangs_up() -> None:
    ours, server = socket.socketpair()
    try:
        stream = wrapped(Recorded(sock=ours))
        assert stream.get_extra_info("is_readable") is False
        server.close()
        assert stream.get_extra_info("is_readable") is True
    finally:
        ours.close()
    assert wrapped(Recorded(sock=None)).get_extra_info("is_readable") is True


@pytest.mark.parametrize("http", [httpx, httpx2])
def test_requests_go_through_the_pools_of_either_library(http: Any) -> None:
    with AssistantServer(answers={"Q?": "A."}) as server:

        async def ask() -> list[Any]:
            transport = sharded(40, shard=16, http=http)
            async with http.AsyncClient(transport=transport) as client:
                replies = await asyncio.gather(
                    *(client.post(f"{server.url}/ask", json={"text": "Q?"}) for _ in range(40))
                )
            return [reply.json() for reply in replies]

        replies = asyncio.run(ask())

    assert all(reply["answer"] == "A." for reply in replies)
    assert [r.json for r in server.requests[:1]] == [{"text": "Q?"}]
