"""The verdict cache carried by a cache service, against real local fakes of both services:
the Actions cache service v2 and the legacy v1 REST service (act, Gitea, older GHES). What they
share is tested on both (`backend`); what only one has, on that one."""

from __future__ import annotations

import gzip
import io
import os
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from golden_gate.action.cache import archive as ca
from golden_gate.action.cache import entries as ac
from golden_gate.action.cache.service import CacheServiceError
from golden_gate.action.cache.service_v2 import CacheServiceV2
from golden_gate.errors import InputError
from tests import bombs
from tests.cache_backends import (
    GZIP,
    KINDS,
    PREFIX,
    Backend,
    assert_safe_warning,
    running,
    snapshot,
    write_verdicts,
)
from tests.fakes.cache_server import CacheServer, Fault

ZSTD = ac.cache_version("zstd")
HAS_ZSTD = ca.available_compression() == "zstd"
MISS = ac.RestoreResult("miss")


@pytest.fixture(params=KINDS)
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    with running(request.param) as backend:
        yield backend


@pytest.fixture
def server() -> Iterator[CacheServer]:
    with CacheServer() as server:
        yield server


def make_service(
    server: CacheServer,
    *,
    results_url: str | None = None,
    token: str | None = None,
    timeout_s: float = 2.0,
    **options: int,
) -> CacheServiceV2:
    return CacheServiceV2(
        results_url=results_url or server.results_url,
        token=token or server.token,
        timeout_s=timeout_s,
        backoff_s=0.01,
        **options,
    )


@pytest.fixture
def service(server: CacheServer) -> Iterator[CacheServiceV2]:
    with make_service(server) as service:
        yield service


# -- round trips ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "compression",
    ["gzip", pytest.param("zstd", marks=pytest.mark.skipif(not HAS_ZSTD, reason="no zstd"))],
)
def test_save_then_restore_into_an_empty_directory_gives_identical_files(
    tmp_path: Path, backend: Backend, compression: str
) -> None:
    source, target = tmp_path / "source", tmp_path / "target"
    write_verdicts(source, 25)
    key = ac.save_key(PREFIX, 1234, 1)
    version = ac.cache_version(compression)

    with backend.service() as service:
        saved = ac.save(service, directory=source, key=key, version=version)
        restored = ac.restore(service, directory=target, prefix=PREFIX, version=version)

    assert saved == ac.SaveResult(saved=True, bytes=saved.bytes, entries=25)
    assert restored == ac.RestoreResult("restored", restored_key=key, entries=25, bytes=saved.bytes)
    assert snapshot(target) == snapshot(source)
    steps = ["create", "upload", "commit", "lookup", "download"]
    assert backend.server.ops() == [backend.op(step) for step in steps]
    magic = backend.server.finalized()[0].data or b""
    assert magic.startswith(b"\x28\xb5\x2f\xfd" if compression == "zstd" else b"\x1f\x8b")


def test_the_runtime_token_goes_to_the_service_and_never_to_the_blob_store(
    tmp_path: Path, server: CacheServer, service: CacheServiceV2
) -> None:
    write_verdicts(tmp_path / "a", 3)
    ac.save(service, directory=tmp_path / "a", key=PREFIX + "1-1", version=GZIP)
    ac.restore(service, directory=tmp_path / "b", prefix=PREFIX, version=GZIP)

    for request in server.requests:
        if request.op.startswith(("Put", "Get")) and "Blob" in request.op:
            assert "authorization" not in request.headers
        else:
            assert request.headers["authorization"] == f"Bearer {server.token}"
            assert request.headers["content-type"] == "application/json"
    create = next(r for r in server.requests if r.op == "CreateCacheEntry").json()
    finalize = next(r for r in server.requests if r.op == "FinalizeCacheEntryUpload").json()
    get = next(r for r in server.requests if r.op == "GetCacheEntryDownloadURL").json()
    assert create == {"key": PREFIX + "1-1", "version": GZIP}
    assert int(finalize["size_bytes"]) == len(server.finalized()[0].data or b"")
    assert get == {"key": PREFIX, "restore_keys": [PREFIX], "version": GZIP}


def test_a_service_url_without_trailing_slash_works(tmp_path: Path, backend: Backend) -> None:
    write_verdicts(tmp_path / "a", 2)
    with backend.service(url=backend.url.rstrip("/")) as service:
        assert ac.save(service, directory=tmp_path / "a", key=PREFIX + "1-1", version=GZIP).saved
        restored = ac.restore(service, directory=tmp_path / "b", prefix=PREFIX, version=GZIP)
    assert restored.status == "restored"


def test_camel_case_replies_are_understood(tmp_path: Path) -> None:
    with CacheServer(camel_case_replies=True) as server, make_service(server) as service:
        write_verdicts(tmp_path / "a", 4)
        assert ac.save(service, directory=tmp_path / "a", key=PREFIX + "1-1", version=GZIP).saved
        restored = ac.restore(service, directory=tmp_path / "b", prefix=PREFIX, version=GZIP)
        assert (restored.restored_key, restored.entries) == (PREFIX + "1-1", 4)


def test_restore_by_prefix_picks_the_newest_save(tmp_path: Path, backend: Backend) -> None:
    with backend.service() as service:
        first = write_verdicts(tmp_path / "run1", 3)
        run1 = ac.save_key(PREFIX, 1, 1)
        ac.save(service, directory=tmp_path / "run1", key=run1, version=GZIP)
        write_verdicts(tmp_path / "run2", 3, start=100)
        run2 = ac.save_key(PREFIX, 2, 1)
        ac.save(service, directory=tmp_path / "run2", key=run2, version=GZIP)
        other = ac.key_prefix("b" * 16)  # another judge, saved last: not a match
        write_verdicts(tmp_path / "other", 1, start=500)
        ac.save(service, directory=tmp_path / "other", key=ac.save_key(other, 3, 1), version=GZIP)

        restored = ac.restore(service, directory=tmp_path / "target", prefix=PREFIX, version=GZIP)

    assert restored.restored_key == ac.save_key(PREFIX, 2, 1)
    assert snapshot(tmp_path / "target") == snapshot(tmp_path / "run2")
    assert not (tmp_path / "target" / first[0][:2] / f"{first[0]}.json").exists()


def test_restore_merges_with_what_is_there(tmp_path: Path, backend: Backend) -> None:
    write_verdicts(tmp_path / "saved", 3)
    local = write_verdicts(tmp_path / "target", 2, start=50)
    with backend.service() as service:
        ac.save(service, directory=tmp_path / "saved", key=PREFIX + "1-1", version=GZIP)
        restored = ac.restore(service, directory=tmp_path / "target", prefix=PREFIX, version=GZIP)

    assert restored.entries == 3
    assert snapshot(tmp_path / "target") == snapshot(tmp_path / "saved") | {
        f"{k[:2]}/{k}.json": (tmp_path / "target" / k[:2] / f"{k}.json").read_bytes() for k in local
    }


def test_restore_keeps_a_local_entry_and_carries_ages(tmp_path: Path, backend: Backend) -> None:
    keys = write_verdicts(tmp_path / "saved", 2)
    old = time.time() - 3 * 86400
    os.utime(tmp_path / "saved" / keys[1][:2] / f"{keys[1]}.json", (old, old))
    local = tmp_path / "target" / keys[0][:2] / f"{keys[0]}.json"
    local.parent.mkdir(parents=True)
    local.write_text('{"passed": false}')
    with backend.service() as service:
        ac.save(service, directory=tmp_path / "saved", key=PREFIX + "1-1", version=GZIP)
        ac.restore(service, directory=tmp_path / "target", prefix=PREFIX, version=GZIP)

    assert local.read_text() == '{"passed": false}'
    restored = tmp_path / "target" / keys[1][:2] / f"{keys[1]}.json"
    assert int(restored.stat().st_mtime) == int(old)


def test_another_version_restores_nothing(tmp_path: Path, backend: Backend) -> None:
    write_verdicts(tmp_path / "a", 3)
    with backend.service() as service:
        assert ac.save(service, directory=tmp_path / "a", key=PREFIX + "1-1", version=ZSTD).saved
        restored = ac.restore(service, directory=tmp_path / "b", prefix=PREFIX, version=GZIP)

    assert restored == MISS
    assert not (tmp_path / "b").exists() or not any((tmp_path / "b").iterdir())


def test_a_miss_is_cold_without_a_warning(tmp_path: Path, backend: Backend) -> None:
    with backend.service() as service:
        assert ac.restore(service, directory=tmp_path, prefix=PREFIX, version=GZIP) == MISS
    assert backend.server.ops() == [backend.op("lookup")]


def test_an_empty_directory_is_not_saved(tmp_path: Path, backend: Backend) -> None:
    (tmp_path / "ab").mkdir()
    (tmp_path / "ab" / ".abcdef01.x.tmp").write_text("partial")

    with backend.service() as service:
        assert ac.save(service, directory=tmp_path, key=PREFIX + "1-1") == ac.SaveResult()
        assert ac.save(service, directory=tmp_path / "missing", key=PREFIX + "1-1").saved is False
    assert backend.server.requests == []


def test_large_archives_go_up_in_blocks(tmp_path: Path, server: CacheServer) -> None:
    write_verdicts(tmp_path / "a", 60)
    with make_service(server, single_put_max_bytes=1024, block_bytes=1024) as service:
        saved = ac.save(service, directory=tmp_path / "a", key=PREFIX + "1-1", version=GZIP)
        restored = ac.restore(service, directory=tmp_path / "b", prefix=PREFIX, version=GZIP)

    assert saved.saved and saved.bytes > 2048
    ops = server.ops()
    assert "PutBlob" not in ops
    assert ops.count("PutBlock") == -(-saved.bytes // 1024)
    assert ops.index("PutBlockList") == len(ops) - 4  # then Finalize, Get, GetBlob
    block_list = next(r for r in server.requests if r.op == "PutBlockList").body.decode()
    assert block_list.startswith('<?xml version="1.0" encoding="utf-8"?><BlockList><Latest>')
    assert restored.entries == 60
    assert snapshot(tmp_path / "b") == snapshot(tmp_path / "a")


# -- faults: a warning, never an exception, never the token -----------------------------------


# Each by what it hits (see cache_backends.OPS), so that it applies to both services.
SAVE_FAULTS = {
    "500 on create": lambda b: [Fault.error(b.op("create"), 500)] * 2,
    "409 on create": lambda b: [Fault.conflict(b.op("create"))],
    "503 on the upload": lambda b: [Fault.error(b.op("upload"), 503)] * 2,
    "500 on commit": lambda b: [Fault.error(b.op("commit"), 500)] * 2,
    "timeout on create": lambda b: [Fault.slow(b.op("create"), 5.0)],
}


@pytest.mark.parametrize("faults", SAVE_FAULTS.values(), ids=SAVE_FAULTS.keys())
def test_a_failed_save_is_a_warning(tmp_path: Path, backend: Backend, faults) -> None:
    write_verdicts(tmp_path, 3)
    backend.server.inject(*faults(backend))
    with backend.service(timeout_s=0.3) as service:
        result = ac.save(service, directory=tmp_path, key=PREFIX + "1-1", version=GZIP)

    assert not result.saved
    assert_safe_warning(result.warning, backend.server.token)
    assert result.warning and result.warning.startswith("could not save the judge verdict cache: ")
    assert backend.server.pending_faults == []
    assert backend.server.finalized() == []


def test_a_create_the_service_refuses_is_a_warning(tmp_path: Path, server: CacheServer) -> None:
    write_verdicts(tmp_path, 3)
    server.inject(Fault.reject("CreateCacheEntry", "cache is read-only"))
    with make_service(server) as service:
        result = ac.save(service, directory=tmp_path, key=PREFIX + "1-1", version=GZIP)

    assert not result.saved and result.warning and "cache is read-only" in result.warning
    assert server.finalized() == []


def test_a_conflict_says_another_job_saved_first(tmp_path: Path, backend: Backend) -> None:
    write_verdicts(tmp_path, 3)
    with backend.service() as service:
        assert ac.save(service, directory=tmp_path, key=PREFIX + "1-1", version=GZIP).saved
        again = ac.save(service, directory=tmp_path, key=PREFIX + "1-1", version=GZIP)

    assert not again.saved
    assert again.warning == (
        f"could not save the judge verdict cache: the cache entry {PREFIX}1-1 already exists "
        "(another job saved it first); this run's verdicts are not kept."
    )


LOOKUP_FAULTS = {
    "500 on the lookup": lambda b: [Fault.error(b.op("lookup"), 500)] * 2,
    "404 on the lookup": lambda b: [Fault.error(b.op("lookup"), 404)],
    "timeout on the lookup": lambda b: [Fault.slow(b.op("lookup"), 5.0)],
}
DOWNLOAD_FAULTS = {
    "404 on the download": lambda b: [Fault.error(b.op("download"), 404)],
    "timeout on the download": lambda b: [Fault.slow(b.op("download"), 5.0)],
    "corrupt archive": lambda b: [Fault.corrupt(b.op("download"))],
}


@pytest.mark.parametrize(
    ("faults", "says"),
    [(f, "could not look up saved verdicts for ") for f in LOOKUP_FAULTS.values()]
    + [(f, "could not restore saved verdicts from ") for f in DOWNLOAD_FAULTS.values()],
    ids=[*LOOKUP_FAULTS, *DOWNLOAD_FAULTS],
)
def test_a_failed_restore_is_a_cold_start_with_a_warning(
    tmp_path: Path, backend: Backend, faults, says: str
) -> None:
    write_verdicts(tmp_path / "a", 40)
    with backend.service(timeout_s=0.3) as service:
        assert ac.save(service, directory=tmp_path / "a", key=PREFIX + "1-1", version=GZIP).saved
        backend.server.inject(*faults(backend))
        started = time.monotonic()
        result = ac.restore(service, directory=tmp_path / "b", prefix=PREFIX, version=GZIP)

    assert time.monotonic() - started < 2
    assert (result.status, result.restored_key, result.entries) == ("failed", None, 0)
    assert_safe_warning(result.warning, backend.server.token)
    assert result.warning and result.warning.startswith(says)
    assert result.warning.endswith("; continuing without them.")
    assert not (tmp_path / "b").exists() or snapshot(tmp_path / "b") == {}


@pytest.mark.parametrize("status", [404, 500])
def test_a_failed_lookup_says_so_with_its_status_not_that_nothing_was_saved(
    tmp_path: Path, backend: Backend, status: int
) -> None:
    backend.server.inject(*[Fault.error(backend.op("lookup"), status)] * 2)
    with backend.service() as service:
        result = ac.restore(service, directory=tmp_path, prefix=PREFIX, version=GZIP)

    assert result.status == "failed"
    assert result.warning and result.warning.startswith(
        f"could not look up saved verdicts for {PREFIX}*: {backend.op('lookup')}: HTTP {status}"
    )
    assert "no saved verdicts" not in result.warning


@pytest.mark.skipif(not HAS_ZSTD, reason="no zstd")
def test_a_corrupt_zstd_archive_is_a_warning(tmp_path: Path, backend: Backend) -> None:
    write_verdicts(tmp_path / "a", 40)
    with backend.service() as service:
        ac.save(service, directory=tmp_path / "a", key=PREFIX + "1-1", version=ZSTD)
        backend.server.inject(Fault.corrupt(backend.op("download")))
        result = ac.restore(service, directory=tmp_path / "b", prefix=PREFIX, version=ZSTD)

    assert result.status == "failed" and result.restored_key is None
    assert_safe_warning(result.warning, backend.server.token)


def test_a_truncated_archive_is_a_warning(tmp_path: Path, backend: Backend) -> None:
    write_verdicts(tmp_path / "a", 40)
    with backend.service() as service:
        ac.save(service, directory=tmp_path / "a", key=PREFIX + "1-1", version=GZIP)
        whole = backend.server.finalized()[0].data or b""
        backend.server.put_entry(PREFIX + "2-1", GZIP, whole[: len(whole) // 2])
        result = ac.restore(service, directory=tmp_path / "b", prefix=PREFIX, version=GZIP)

    assert result.restored_key is None
    assert result.warning and "corrupt" in result.warning
    assert result.warning.startswith(f"could not restore saved verdicts from {PREFIX}2-1: ")
    assert not (tmp_path / "b").exists()


def test_an_unwritable_directory_is_a_warning(tmp_path: Path, backend: Backend) -> None:
    write_verdicts(tmp_path / "a", 2)
    (tmp_path / "file").write_text("not a directory")
    with backend.service() as service:
        ac.save(service, directory=tmp_path / "a", key=PREFIX + "1-1", version=GZIP)
        result = ac.restore(service, directory=tmp_path / "file", prefix=PREFIX, version=GZIP)

    assert result.restored_key is None
    assert result.warning and "corrupt" not in result.warning


@pytest.mark.skipif(not HAS_ZSTD, reason="no zstd to save with")
def test_a_runner_without_zstd_never_sees_zstd_saves(
    tmp_path: Path, server: CacheServer, service: CacheServiceV2, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_verdicts(tmp_path / "a", 2)
    ac.save(service, directory=tmp_path / "a", key=PREFIX + "1-1", version=ZSTD)
    monkeypatch.setattr(ca.shutil, "which", lambda name: None)
    monkeypatch.setattr(ca, "_zstandard", lambda: None)

    assert ca.available_compression() == "gzip"
    assert ac.restore(service, directory=tmp_path / "b", prefix=PREFIX) == MISS
    forced = ac.restore(service, directory=tmp_path / "b", prefix=PREFIX, version=ZSTD)
    assert forced.warning and "zstd" in forced.warning
    assert ac.save(service, directory=tmp_path / "a", key=PREFIX + "2-1").saved
    assert (server.finalized()[-1].data or b"").startswith(b"\x1f\x8b")


def test_a_bad_token_is_a_warning_that_does_not_repeat_it(tmp_path: Path, backend: Backend) -> None:
    write_verdicts(tmp_path, 2)
    secret = "ghs_not-the-right-token-0123456789"
    with backend.service(token=secret) as service:
        saved = ac.save(service, directory=tmp_path, key=PREFIX + "1-1", version=GZIP)
        restored = ac.restore(service, directory=tmp_path / "b", prefix=PREFIX, version=GZIP)

    for warning in (saved.warning, restored.warning):
        assert_safe_warning(warning, secret)
        assert warning is not None and "401" in warning
    # The fake did echo it: the warning blanked it out.
    sent = [r.headers.get("authorization") for r in backend.server.requests]
    assert f"Bearer {secret}" in sent


def test_transient_errors_are_retried(tmp_path: Path, backend: Backend) -> None:
    write_verdicts(tmp_path / "a", 2)
    backend.server.inject(
        Fault.error(backend.op("create"), 502),
        Fault.rate_limited(backend.op("upload")),
        Fault.error(backend.op("lookup"), 500),
    )

    with backend.service() as service:
        assert ac.save(service, directory=tmp_path / "a", key=PREFIX + "1-1", version=GZIP).saved
        restored = ac.restore(service, directory=tmp_path / "b", prefix=PREFIX, version=GZIP)
    assert restored.entries == 2
    ops = backend.server.ops()
    assert ops.count(backend.op("create")) == 2
    assert ops.count(backend.op("upload")) == 2
    assert ops.count(backend.op("lookup")) == 2


@pytest.mark.parametrize("kind", KINDS)
def test_an_unreachable_service_is_a_warning(tmp_path: Path, kind: str) -> None:
    write_verdicts(tmp_path, 1)
    # Nothing listens on port 9 (discard) of 127.0.0.1: the connection is refused.
    choice = ac.ServiceChoice(kind, "test", url="http://127.0.0.1:9/", token="t0ken-xyz")  # type: ignore[arg-type]
    with choice.open(timeout_s=0.5, retries=0) as service:
        saved = ac.save(service, directory=tmp_path, key=PREFIX + "1-1")
        restored = ac.restore(service, directory=tmp_path / "b", prefix=PREFIX)
    assert_safe_warning(saved.warning, "t0ken-xyz")
    assert restored.status == "failed"
    assert restored.warning and restored.warning.startswith("could not look up saved verdicts")
    assert "ConnectError" in restored.warning


# -- keys -------------------------------------------------------------------------------------


def test_key_scheme() -> None:
    assert ac.key_prefix("abc123") == "golden-gate-judge-abc123-"
    assert ac.save_key("golden-gate-judge-abc123-", 987654321, 2) == (
        "golden-gate-judge-abc123-987654321-2"
    )


@pytest.mark.parametrize("key", ["", "a,b", "k" * 513])
def test_invalid_keys_are_refused(key: str) -> None:
    with pytest.raises(ValueError):
        ac.validate_key(key)


def test_a_512_character_key_is_fine() -> None:
    ac.validate_key("k" * 512)


def test_save_and_restore_with_an_invalid_key_warn_without_a_request(
    tmp_path: Path, backend: Backend
) -> None:
    write_verdicts(tmp_path, 1)

    with backend.service() as service:
        saved = ac.save(service, directory=tmp_path, key="a,b", version=GZIP)
        restored = ac.restore(service, directory=tmp_path, prefix="x" * 600, version=GZIP)

    assert not saved.saved and saved.warning and "comma" in saved.warning
    assert restored.status == "failed" and restored.warning and "512" in restored.warning
    assert backend.server.requests == []


def test_the_fake_enforces_the_key_rules(service: CacheServiceV2) -> None:
    with pytest.raises(CacheServiceError) as caught:
        service.create_cache_entry("a,b", GZIP)
    assert (caught.value.status, caught.value.code) == (400, "invalid_argument")
    with pytest.raises(CacheServiceError) as caught:
        service.get_cache_entry_download_url("k", ["x" * 513], GZIP)
    assert caught.value.code == "invalid_argument"


def test_versions_differ_by_compression() -> None:
    assert GZIP != ZSTD
    assert len(GZIP) == 64 and set(GZIP) <= set("0123456789abcdef")
    assert ac.cache_version() == ac.cache_version(ca.available_compression())


# -- prune ------------------------------------------------------------------------------------


def test_prune_keeps_used_keys_and_gets_under_the_cap(tmp_path: Path) -> None:
    keys = write_verdicts(tmp_path, 10)
    now = time.time()
    for age, key in enumerate(keys):  # keys[9] is the oldest
        os.utime(tmp_path / key[:2] / f"{key}.json", (now - age * 60, now - age * 60))
    size = (tmp_path / keys[0][:2] / f"{keys[0]}.json").stat().st_size
    keep = {keys[9], keys[0]}

    removed = ca.prune(tmp_path, keep=keep, cap_bytes=size * 5 + size // 2)

    left = {p.stem for p in tmp_path.rglob("*.json")}
    assert removed == 5
    assert keep <= left
    assert left == {keys[0], keys[1], keys[2], keys[3], keys[9]}  # the oldest others went
    assert sum(p.stat().st_size for p in tmp_path.rglob("*.json")) <= size * 5 + size // 2


def test_prune_marks_kept_keys_as_used_now(tmp_path: Path) -> None:
    keys = write_verdicts(tmp_path, 2)
    old = time.time() - 86400
    for key in keys:
        os.utime(tmp_path / key[:2] / f"{key}.json", (old, old))

    ca.prune(tmp_path, keep={keys[0]}, cap_bytes=10**9)

    assert (tmp_path / keys[0][:2] / f"{keys[0]}.json").stat().st_mtime > old + 3600
    assert (tmp_path / keys[1][:2] / f"{keys[1]}.json").stat().st_mtime == pytest.approx(old)


def test_prune_under_the_cap_removes_nothing(tmp_path: Path) -> None:
    write_verdicts(tmp_path, 3)
    assert ca.prune(tmp_path, keep=set(), cap_bytes=10**9) == 0
    assert len(list(tmp_path.rglob("*.json"))) == 3


def test_prune_never_removes_kept_keys_even_over_the_cap(tmp_path: Path) -> None:
    keys = write_verdicts(tmp_path, 4)
    assert ca.prune(tmp_path, keep=set(keys[:2]), cap_bytes=0) == 2
    assert {p.stem for p in tmp_path.rglob("*.json")} == set(keys[:2])


# -- malicious archives -----------------------------------------------------------------------


def tar_gz(*members: tuple[tarfile.TarInfo, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for info, data in members:
            info.size = len(data) if info.isreg() else 0
            tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return gzip.compress(buffer.getvalue())


def member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    return info


GOOD = "ab/ab" + "0" * 62 + ".json"
MALICIOUS = {
    "dot-dot": [member("../evil.json")],
    "dot-dot inside": [member("ab/../../evil.json")],
    "absolute": [member("/tmp/golden-gate-evil.json")],
    "symlink": [member(GOOD, tarfile.SYMTYPE, "/etc/passwd")],
    "symlinked shard": [member("ab", tarfile.SYMTYPE, "..")],
    "hard link": [member(GOOD, tarfile.LNKTYPE, "../../evil.json")],
    "device": [member(GOOD, tarfile.CHRTYPE)],
    "stranger": [member("ab/notes.txt")],
    "wrong shard": [member("cd/ab" + "0" * 62 + ".json")],
}


@pytest.mark.parametrize("members", MALICIOUS.values(), ids=MALICIOUS.keys())
def test_a_malicious_archive_is_refused_whole(
    tmp_path: Path, backend: Backend, members: list[tarfile.TarInfo]
) -> None:
    target = tmp_path / "work" / "cache"
    # A good member first: nothing at all may be written when any member is bad.
    backend.server.put_entry(
        PREFIX + "1-1", GZIP, tar_gz((member(GOOD), b"{}"), *((m, b"x") for m in members))
    )

    with backend.service() as service:
        result = ac.restore(service, directory=target, prefix=PREFIX, version=GZIP)

    assert result.restored_key is None
    assert_safe_warning(result.warning, backend.server.token)
    assert not (tmp_path / "work" / "evil.json").exists()
    assert not (tmp_path / "evil.json").exists()
    assert not target.exists() or snapshot(target) == {}


def test_an_archive_that_is_not_compressed_is_refused(
    tmp_path: Path, server: CacheServer, service: CacheServiceV2
) -> None:
    server.put_entry(PREFIX + "1-1", GZIP, b"plain text, not an archive")
    result = ac.restore(service, directory=tmp_path, prefix=PREFIX, version=GZIP)
    assert result.warning and "neither zstd nor gzip" in result.warning


def test_an_oversized_entry_is_refused(
    tmp_path: Path, server: CacheServer, service: CacheServiceV2
) -> None:
    big = b" " * (ca.ENTRY_MAX_BYTES + 1)
    server.put_entry(PREFIX + "1-1", GZIP, tar_gz((member(GOOD), big)))
    result = ac.restore(service, directory=tmp_path, prefix=PREFIX, version=GZIP)
    assert result.warning and "oversized" in result.warning


# -- which service, and mode --------------------------------------------------------------------

RUNNER = {"ACTIONS_RESULTS_URL": "https://results.example/", "ACTIONS_RUNTIME_TOKEN": "t"}
LEGACY = {"ACTIONS_CACHE_URL": "https://artifactcache.example/abc/", "ACTIONS_RUNTIME_TOKEN": "t"}
NEITHER = "the runner exposes no cache service (neither ACTIONS_RESULTS_URL nor ACTIONS_CACHE_URL)"


@pytest.mark.parametrize(
    ("env", "kind", "description"),
    [
        (RUNNER, "v2", "Actions cache service v2 (ACTIONS_RESULTS_URL)"),
        (LEGACY, "v1", "legacy cache service v1 (ACTIONS_CACHE_URL)"),
        (
            {"ACTIONS_CACHE_URL": "http://10.0.0.5:34567/0123456789abcdef/"},  # act: no token
            "v1",
            "legacy cache service v1 (ACTIONS_CACHE_URL, no ACTIONS_RUNTIME_TOKEN)",
        ),
        ({**RUNNER, **LEGACY}, "v2", "Actions cache service v2 (ACTIONS_RESULTS_URL)"),
        (
            {**RUNNER, **LEGACY, "GITHUB_SERVER_URL": "https://acme.ghe.com"},
            "v2",
            "Actions cache service v2 (ACTIONS_RESULTS_URL)",
        ),
        (
            {**RUNNER, **LEGACY, "ACT": "true"},
            "v1",
            "legacy cache service v1 (ACTIONS_CACHE_URL; under act, ACTIONS_RESULTS_URL is its "
            "artifact server)",
        ),
        (
            {**RUNNER, **LEGACY, "GITHUB_SERVER_URL": "https://gitea.example:3000"},
            "v1",
            "legacy cache service v1 (ACTIONS_CACHE_URL; GITHUB_SERVER_URL is gitea.example, "
            "where actions/cache speaks v1)",
        ),
        (
            {"ACTIONS_RESULTS_URL": "https://results.example/"},
            None,
            "ACTIONS_RUNTIME_TOKEN is missing, and the v2 service at ACTIONS_RESULTS_URL needs it",
        ),
        ({"ACTIONS_RUNTIME_TOKEN": "t"}, None, NEITHER),
        ({}, None, NEITHER),
    ],
    ids=[
        "v2",
        "v1",
        "v1 without a token",
        "both on github.com",
        "both on ghe.com",
        "both under act",
        "both on gitea",
        "v2 without a token",
        "only a token",
        "nothing",
    ],
)
def test_the_service_is_the_one_the_runner_exposes(
    env: dict[str, str], kind: str | None, description: str
) -> None:
    choice = ac.choose_service(env)
    assert (choice.kind, choice.description) == (kind, description)
    if kind is not None:
        assert choice.url in env.values() and choice.token == env.get("ACTIONS_RUNTIME_TOKEN", "")


@pytest.mark.parametrize(
    ("env", "requested", "mode"),
    [
        (RUNNER, "auto", "actions"),
        (RUNNER, "", "actions"),
        (RUNNER, "actions", "actions"),
        (RUNNER, "directory", "directory"),
        (RUNNER, "off", "off"),
        (LEGACY, "auto", "actions"),
        (LEGACY, "actions", "actions"),
        (LEGACY, "directory", "directory"),
        ({}, "auto", "directory"),
        ({"ACTIONS_RESULTS_URL": "https://results.example/"}, "auto", "directory"),
        ({"ACTIONS_RUNTIME_TOKEN": "t"}, "actions", "directory"),
        ({}, "off", "off"),
        (RUNNER, " Auto ", "actions"),
    ],
)
def test_mode_from_env(env: dict[str, str], requested: str, mode: str) -> None:
    assert ac.mode_from_env(env, requested) == mode


def test_an_unknown_mode_is_an_input_error() -> None:
    with pytest.raises(InputError) as caught:
        ac.mode_from_env({}, "s3")
    assert str(caught.value) == (
        "input 'cache' must be one of auto, actions, directory, off, got 's3'"
    )


def test_no_service_cannot_be_opened() -> None:
    with pytest.raises(ValueError, match="no cache service"):
        ac.choose_service({}).open()


# -- decompression bombs ----------------------------------------------------------------------

SMALL = ca.UnpackLimits(max_bytes=1024 * 1024, max_members=1000)


def _zstd_module_only(monkeypatch: pytest.MonkeyPatch) -> None:
    real = ca.shutil.which
    monkeypatch.setattr(ca.shutil, "which", lambda name: None if name == "zstd" else real(name))


BOMBS = {
    "gzip": (GZIP, lambda: bombs.gzip_bomb(16 * 1024 * 1024), None),
    "zstd binary": (ZSTD, lambda: bombs.zstd_bomb(16 * 1024 * 1024), None),
    "zstd module": (ZSTD, lambda: bombs.zstd_bomb(16 * 1024 * 1024), _zstd_module_only),
}


@pytest.mark.parametrize(("version", "make", "setup"), BOMBS.values(), ids=BOMBS.keys())
def test_a_decompression_bomb_is_refused_at_the_cap(
    tmp_path: Path,
    server: CacheServer,
    service: CacheServiceV2,
    monkeypatch: pytest.MonkeyPatch,
    version: str,
    make,
    setup,
) -> None:
    if version == ZSTD and not HAS_ZSTD:
        pytest.skip("no zstd")
    if setup:
        setup(monkeypatch)
    bomb = make()
    assert len(bomb) < 64 * 1024  # a few KiB that would expand to 16 MiB
    server.put_entry(PREFIX + "1-1", version, bomb)

    limited = ac.restore(
        service, directory=tmp_path / "limited", prefix=PREFIX, version=version, limits=SMALL
    )

    assert limited.restored_key is None
    assert_safe_warning(limited.warning, server.token)
    assert "expands beyond 1048576 bytes" in (limited.warning or "")
    assert not (tmp_path / "limited").exists()


def test_an_archive_of_too_many_entries_is_refused(
    tmp_path: Path, server: CacheServer, service: CacheServiceV2
) -> None:
    server.put_entry(PREFIX + "1-1", GZIP, bombs.many_members(1500))
    limits = ca.UnpackLimits(max_bytes=16 * 1024 * 1024, max_members=1000)

    result = ac.restore(service, directory=tmp_path, prefix=PREFIX, version=GZIP, limits=limits)

    assert result.warning and "more than 1000 members" in result.warning
    assert snapshot(tmp_path) == {}


def test_a_download_larger_than_the_cap_is_refused(tmp_path: Path, backend: Backend) -> None:
    backend.server.put_entry(PREFIX + "1-1", GZIP, os.urandom(2 * 1024 * 1024))

    with backend.service() as service:
        result = ac.restore(service, directory=tmp_path, prefix=PREFIX, version=GZIP, limits=SMALL)

    assert result.status == "failed"
    assert result.warning and "larger than 1048576 bytes" in result.warning


def test_a_sparse_member_is_refused(
    tmp_path: Path, server: CacheServer, service: CacheServiceV2
) -> None:
    # A sparse member carries little data but unpacks to its full declared size.
    server.put_entry(PREFIX + "1-1", GZIP, tar_gz((member(GOOD, tarfile.GNUTYPE_SPARSE), b"{}")))

    result = ac.restore(service, directory=tmp_path, prefix=PREFIX, version=GZIP)

    assert result.warning and "special file" in result.warning


def test_unpack_limits_follow_the_cache_cap() -> None:
    assert ca.unpack_limits(50 * 1024 * 1024).max_bytes == 200 * 1024 * 1024
    assert ca.unpack_limits(1).max_bytes == 16 * 1024 * 1024  # a floor for tiny caps
