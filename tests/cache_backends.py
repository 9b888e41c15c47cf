"""Both cache services in tests, behind one face: a running fake, a client of it, the runner's
environment that points at it, and its operations by what they do (so one test covers both);
and the verdict directories those tests save and restore."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from golden_gate.action.cache import entries as ac
from golden_gate.action.cache.entries import ServiceChoice
from golden_gate.action.cache.service import CacheService
from golden_gate.core.item_result import TokenUsage, Verdict
from golden_gate.evaluation.cache import VerdictCache
from tests.fakes.cache_server import CacheServer
from tests.fakes.legacy_cache_server import LegacyCacheServer

KINDS = ("v2", "v1")
# What each operation is called on each fake (its fault target and `ops()` name).
OPS = {
    "v2": {
        "lookup": "GetCacheEntryDownloadURL",
        "create": "CreateCacheEntry",
        "upload": "PutBlob",
        "commit": "FinalizeCacheEntryUpload",
        "download": "GetBlob",
    },
    "v1": {
        "lookup": "getCacheEntry",
        "create": "reserveCache",
        "upload": "uploadChunk",
        "commit": "commitCache",
        "download": "downloadCache",
    },
}
URL_ENV = {"v2": "ACTIONS_RESULTS_URL", "v1": "ACTIONS_CACHE_URL"}
PREFIX = ac.key_prefix("a" * 16)
GZIP = ac.cache_version("gzip")


@dataclass
class Backend:
    kind: str
    server: CacheServer | LegacyCacheServer

    def op(self, what: str) -> str:
        """The operation that does `what` (lookup, create, upload, commit, download)."""
        return OPS[self.kind][what]

    @property
    def url(self) -> str:
        server = self.server
        return server.results_url if isinstance(server, CacheServer) else server.cache_url

    def env(self) -> dict[str, str]:
        """What the runner sets for a step when it exposes this service."""
        return self.server.runner_env()

    def service(
        self, *, url: str | None = None, token: str | None = None, timeout_s: float = 2.0, **options
    ) -> CacheService:
        choice = ServiceChoice(
            self.kind,  # type: ignore[arg-type]
            URL_ENV[self.kind],
            url=url or self.url,
            token=self.server.token if token is None else token,
        )
        return choice.open(timeout_s=timeout_s, backoff_s=0.01, **options)


@contextmanager
def running(kind: str, **server_options: Any) -> Iterator[Backend]:
    server_class = CacheServer if kind == "v2" else LegacyCacheServer
    with server_class(**server_options) as server:
        yield Backend(kind, server)


def write_verdicts(directory: Path, count: int, *, start: int = 0) -> list[str]:
    cache = VerdictCache(directory)
    keys = []
    for i in range(start, start + count):
        key = cache.key(judge_identity="j", question=f"q{i}", answer=f"a{i}", reference="r")
        verdict = Verdict(
            passed=i % 3 != 0,
            score=i % 3 != 0,
            comment=f"Missing: the key point number {i}. Thus, the score should be: false.",
            tokens=TokenUsage(input_tokens=100 + i, output_tokens=20),
            latency_ms=500.0 + i,
        )
        cache.put(key, verdict)
        keys.append(key.hex)
    return keys


def snapshot(directory: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(directory)): path.read_bytes()
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


def assert_safe_warning(warning: str | None, token: str) -> None:
    assert warning, "expected a warning"
    assert token not in warning
    assert "\n" not in warning and "\r" not in warning
    assert "sig=" not in warning or "sig=***" in warning
