"""The judge preflight (golden_gate/evaluation/preflight.py): only a definite answer stops a run.

A name can resolve to several addresses (localhost to ::1 and 127.0.0.1 on many machines); the
calls would try each, so the preflight stops the run only when every one of them refuses. The
resolver is replaced by one that answers with loopback addresses (127.0.0.2 is loopback too).
"""

from __future__ import annotations

import asyncio
import socket

import pytest

from golden_gate.evaluation.preflight import JudgeUnreachable, judge_endpoint


def _closed_port() -> int:
    with socket.socket() as probe:  # bound, never listening: a connection is refused
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def resolves_to(monkeypatch):
    """Make `judge.test` resolve to the given IPv4 addresses, in that order."""

    def install(*addresses: str) -> None:
        real = socket.getaddrinfo

        def fake(host, port, *args, **kwargs):
            if host != "judge.test":
                return real(host, port, *args, **kwargs)
            return [
                (socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, int(port)))
                for address in addresses
            ]

        monkeypatch.setattr(socket, "getaddrinfo", fake)

    return install


def test_a_name_whose_every_address_refuses_stops_the_run(resolves_to):
    port = _closed_port()
    resolves_to("127.0.0.1", "127.0.0.2")
    with pytest.raises(JudgeUnreachable) as caught:
        asyncio.run(judge_endpoint(f"http://judge.test:{port}/v1"))
    assert str(caught.value) == (
        f"the judge at http://judge.test:{port}/v1 cannot be reached (connection refused): "
        "is it running? check judge-base-url"
    )


def test_a_name_with_one_address_listening_is_left_to_the_calls(resolves_to):
    with socket.socket() as server:
        server.bind(("127.0.0.2", 0))
        server.listen()
        port = server.getsockname()[1]
        resolves_to("127.0.0.1", "127.0.0.2")  # the first refuses, the second listens
        asyncio.run(judge_endpoint(f"http://judge.test:{port}/v1"))


def test_a_single_address_that_refuses_stops_the_run():
    port = _closed_port()
    with pytest.raises(JudgeUnreachable, match=r"\(connection refused\)"):
        asyncio.run(judge_endpoint(f"http://127.0.0.1:{port}/v1"))


def test_a_name_that_does_not_resolve_says_so(monkeypatch):
    def unknown(*args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", unknown)
    with pytest.raises(JudgeUnreachable, match="its host name does not resolve"):
        asyncio.run(judge_endpoint("http://judge.test:8080/v1"))


def test_no_base_url_or_another_scheme_is_not_checked():
    asyncio.run(judge_endpoint(None))
    asyncio.run(judge_endpoint("unix:///tmp/judge.sock"))
