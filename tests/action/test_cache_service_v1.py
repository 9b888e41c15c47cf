"""The legacy cache service v1 client, on the wire: what it sends, how it uploads in chunks, and
how it copes with act's server (no token, keys lowercased, no 409, a secret in the URL path).
What it shares with the v2 client is tested on both in test_cache_services.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from golden_gate.action.cache import entries as ac
from golden_gate.action.cache.service import CacheServiceError, EntryExists
from golden_gate.action.cache.service_v1 import ACCEPT, CacheServiceV1
from tests.cache_backends import GZIP, PREFIX, assert_safe_warning, snapshot, write_verdicts
from tests.fakes.cache_common import Fault
from tests.fakes.legacy_cache_server import LegacyCacheServer


@pytest.fixture
def server() -> Iterator[LegacyCacheServer]:
    with LegacyCacheServer() as server:
        yield server


def make_service(server: LegacyCacheServer, **options) -> CacheServiceV1:
    options.setdefault("token", server.token)
    return CacheServiceV1(cache_url=server.cache_url, timeout_s=2.0, backoff_s=0.01, **options)


@pytest.fixture
def service(server: LegacyCacheServer) -> Iterator[CacheServiceV1]:
    with make_service(server) as service:
        yield service


def test_what_goes_on_the_wire(
    tmp_path: Path, server: LegacyCacheServer, service: CacheServiceV1
) -> None:
    write_verdicts(tmp_path / "a", 3)
    saved = ac.save(service, directory=tmp_path / "a", key=PREFIX + "7-1", version=GZIP)
    ac.restore(service, directory=tmp_path / "b", prefix=PREFIX, version=GZIP)

    by_op = {r.op: r for r in server.requests}
    assert list(by_op) == [
        "reserveCache",
        "uploadChunk",
        "commitCache",
        "getCacheEntry",
        "downloadCache",
    ]
    for request in server.requests:
        if request.op == "downloadCache":  # a plain GET: neither the token nor the API's Accept
            assert "authorization" not in request.headers
            assert request.path.endswith(f"/artifacts/{server.finalized()[0].id}")
        else:
            assert request.headers["authorization"] == f"Bearer {server.token}"
            assert request.headers["accept"] == ACCEPT
            assert request.path.startswith(f"/{server.path_token}/_apis/artifactcache/")
    assert by_op["reserveCache"].json() == {
        "key": PREFIX + "7-1",
        "version": GZIP,
        "cacheSize": saved.bytes,
    }
    chunk = by_op["uploadChunk"]
    assert chunk.method == "PATCH"
    assert chunk.headers["content-type"] == "application/octet-stream"
    assert chunk.headers["content-range"] == f"bytes 0-{saved.bytes - 1}/*"
    assert by_op["commitCache"].json() == {"size": saved.bytes}
    assert by_op["getCacheEntry"].query == {"keys": PREFIX, "version": GZIP}


def test_a_large_archive_goes_up_in_contiguous_chunks(
    tmp_path: Path, server: LegacyCacheServer
) -> None:
    write_verdicts(tmp_path / "a", 60)
    with make_service(server, chunk_bytes=1024) as service:
        saved = ac.save(service, directory=tmp_path / "a", key=PREFIX + "1-1", version=GZIP)
        restored = ac.restore(service, directory=tmp_path / "b", prefix=PREFIX, version=GZIP)

    assert saved.saved and saved.bytes > 2048
    ranges = [r.headers["content-range"] for r in server.requests if r.op == "uploadChunk"]
    assert len(ranges) == -(-saved.bytes // 1024)
    starts = range(0, saved.bytes, 1024)
    assert ranges == [f"bytes {s}-{min(s + 1024, saved.bytes) - 1}/*" for s in starts]
    assert restored.entries == 60
    assert snapshot(tmp_path / "b") == snapshot(tmp_path / "a")


def test_a_chunk_that_failed_is_sent_again(tmp_path: Path, server: LegacyCacheServer) -> None:
    write_verdicts(tmp_path / "a", 30)
    server.inject(Fault.error("uploadChunk", 500))
    with make_service(server, chunk_bytes=512) as service:
        saved = ac.save(service, directory=tmp_path / "a", key=PREFIX + "1-1", version=GZIP)

    assert saved.saved
    chunks = [r.headers["content-range"] for r in server.requests if r.op == "uploadChunk"]
    assert chunks[0] == chunks[1]  # the first, again


def test_the_fake_refuses_overlaps_gaps_and_a_wrong_size(service: CacheServiceV1) -> None:
    cache_id = service.reserve_cache(PREFIX + "1-1", GZIP, 8)
    service.upload_chunk(cache_id, b"abcd", 0)
    service.upload_chunk(cache_id, b"abcd", 0)  # the same range again: a retry, not an overlap
    with pytest.raises(CacheServiceError, match="overlap"):
        service.upload_chunk(cache_id, b"cdef", 2)
    with pytest.raises(CacheServiceError, match="gap"):
        service.upload_chunk(cache_id, b"gh", 6)
        service.commit_cache(cache_id, 8)
    other = service.reserve_cache(PREFIX + "2-1", GZIP, 8)
    service.upload_chunk(other, b"abcd", 0)
    with pytest.raises(CacheServiceError, match="broken file") as caught:
        service.commit_cache(other, 4)  # what was reserved was 8
    assert caught.value.status == 400


def test_a_second_reserve_of_a_key_is_a_conflict(service: CacheServiceV1) -> None:
    service.reserve_cache(PREFIX + "1-1", GZIP, 8)
    with pytest.raises(EntryExists) as caught:
        service.reserve_cache(PREFIX + "1-1", GZIP, 8)
    assert caught.value.status == 409


def test_acts_server_needs_no_token_and_takes_a_key_twice(tmp_path: Path) -> None:
    """act's server: no runtime token at all, and a second save of a key is a newer entry."""
    write_verdicts(tmp_path / "first", 2)
    write_verdicts(tmp_path / "second", 3, start=10)
    with (
        LegacyCacheServer(check_token=False, conflicts=False) as server,
        make_service(server, token="") as service,
    ):
        for name in ("first", "second"):
            saved = ac.save(service, directory=tmp_path / name, key=PREFIX + "1-1", version=GZIP)
            assert saved.saved
        restored = ac.restore(service, directory=tmp_path / "b", prefix=PREFIX, version=GZIP)

    assert (restored.status, restored.entries) == ("restored", 3)
    assert all("authorization" not in r.headers for r in server.requests)


def test_keys_come_back_as_the_service_spells_them(tmp_path: Path, service: CacheServiceV1) -> None:
    """act lowercases keys when it stores them; the key restored is the one it names."""
    write_verdicts(tmp_path / "a", 1)
    assert ac.save(service, directory=tmp_path / "a", key=PREFIX + "Run-1", version=GZIP).saved
    restored = ac.restore(service, directory=tmp_path / "b", prefix=PREFIX.upper(), version=GZIP)
    assert restored.restored_key == PREFIX + "run-1"


def test_the_secret_in_the_url_path_never_reaches_a_warning(
    tmp_path: Path, server: LegacyCacheServer, service: CacheServiceV1
) -> None:
    assert server.path_token in service.secrets
    server.inject(
        *[Fault("getCacheEntry", "status", status=500, message=f"down: {server.cache_url}")] * 2
    )
    result = ac.restore(service, directory=tmp_path, prefix=PREFIX, version=GZIP)

    assert_safe_warning(result.warning, server.path_token)
    assert result.warning and "down: http://127.0.0.1" in result.warning


def test_a_wrong_url_is_a_failed_lookup_not_a_miss(
    tmp_path: Path, server: LegacyCacheServer
) -> None:
    url = f"http://127.0.0.1:{server.port}/not-the-token/"
    with CacheServiceV1(cache_url=url, token=server.token, backoff_s=0.01) as service:
        result = ac.restore(service, directory=tmp_path, prefix=PREFIX, version=GZIP)
    assert result.status == "failed"
    assert result.warning and "getCacheEntry: HTTP 404" in result.warning


REPLIES = {
    "a hit without an archiveLocation": (
        "GET",
        httpx.Response(200, json={"cacheKey": PREFIX + "1-1"}),
        "a hit without an archiveLocation",
    ),
    "a hit that is not JSON": ("GET", httpx.Response(200, text="<html>"), "not JSON"),
    "a reserve without a cacheId": ("POST", httpx.Response(200, json={}), "no cacheId"),
    "a reserve with a cacheId of true": (
        "POST",
        httpx.Response(200, json={"cacheId": True}),
        "no cacheId",
    ),
}


@pytest.mark.parametrize(("method", "reply", "says"), REPLIES.values(), ids=REPLIES.keys())
def test_a_malformed_reply_is_a_warning(
    tmp_path: Path, method: str, reply: httpx.Response, says: str
) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return reply if request.method == method else httpx.Response(204)

    client = httpx.Client(transport=httpx.MockTransport(answer))
    write_verdicts(tmp_path / "a", 1)
    url = "http://cache.invalid/x/"
    with CacheServiceV1(cache_url=url, token="t0ken", client=client) as service:
        result = (
            ac.restore(service, directory=tmp_path / "b", prefix=PREFIX, version=GZIP).warning
            if method == "GET"
            else ac.save(service, directory=tmp_path / "a", key=PREFIX + "1-1").warning
        )
    assert result and says in result
