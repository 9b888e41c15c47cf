"""A real fake of the legacy cache service v1 (REST), on 127.0.0.1, behaving like act's.

act's built-in cache server (pkg/artifactcache), Gitea/Forgejo act_runner and older GitHub
Enterprise Server speak this; so does this fake, at `cache_url` (`http://127.0.0.1:PORT/<path
token>/`: act keeps its secret in the path, and answers 404 anywhere else):

- every API call needs `Accept: application/json;api-version=6.0-preview.1` (400 otherwise) and
  `Authorization: Bearer <token>` (401, whose message echoes the token sent); act checks no
  bearer token, and neither does `CacheServer(check_token=False)`;
- `GET _apis/artifactcache/cache?keys=k1,k2&version=V`: the keys split on commas and lowercased
  (as act does), each tried exactly and then as a prefix, the newest committed entry of that
  version winning: 200 `{cacheKey, archiveLocation, scope}`, or 204 with no body;
- `POST _apis/artifactcache/caches` `{key, version, cacheSize}`: `{cacheId}`; 409 when the key
  and version are taken, reserved or committed (act instead reserves a newer entry:
  `conflicts=False`);
- `PATCH _apis/artifactcache/caches/{id}` with `Content-Type: application/octet-stream` and
  `Content-Range: bytes a-b/*` (b - a + 1 bytes): a chunk, stored by offset; the same range sent
  again replaces it, an overlapping one is refused (400);
- `POST _apis/artifactcache/caches/{id}` `{size}`: the chunks must cover 0..size-1 without a gap,
  and `size` must be what was reserved as `cacheSize` (act checks that one: "broken file");
- `GET _apis/artifactcache/artifacts/{id}` (the `archiveLocation`, on this same host, as act's):
  the archive; a request that carries `Authorization` is refused (403), as a storage URL would.

Faults are injected as for the v2 fake (see `cache_common`); the targets are the operations, by
actions/toolkit's names: `getCacheEntry`, `reserveCache`, `uploadChunk`, `commitCache`,
`downloadCache`.

    with LegacyCacheServer() as server:
        server.cache_url  # like ACTIONS_CACHE_URL, ending with "/"
        server.inject(Fault.error("reserveCache", 500), Fault.corrupt("downloadCache"))
"""

from __future__ import annotations

import re
import secrets
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.fakes.cache_common import (
    CacheHandler,
    Entry,
    FakeCacheService,
    Fault,
    FaultKind,
    Request,
    corrupted,
)

__all__ = ["ACCEPT", "OPS", "Fault", "LegacyCacheServer"]

ACCEPT = "application/json;api-version=6.0-preview.1"
OPS = ("getCacheEntry", "reserveCache", "uploadChunk", "commitCache", "downloadCache")
_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(?:\*|\d+)")
_API = "/_apis/artifactcache/"


class LegacyCacheServer(FakeCacheService):
    """The server, run in a background thread; use as a context manager."""

    targets = OPS
    fault_kinds: tuple[FaultKind, ...] = ("status", "slow", "corrupt", "hostile")
    thread_name = "legacy-cache-server"

    def __init__(
        self, *, token: str | None = None, check_token: bool = True, conflicts: bool = True
    ) -> None:
        super().__init__(token=token)
        self.check_token = check_token
        self.conflicts = conflicts
        self.path_token = secrets.token_hex(16)

    @property
    def cache_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/{self.path_token}/"

    def runner_env(self) -> dict[str, str]:
        """What a runner that offers this service sets for a step (act sets no token)."""
        token = {"ACTIONS_RUNTIME_TOKEN": self.token} if self.check_token else {}
        return {"ACTIONS_CACHE_URL": self.cache_url, **token}

    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        return _Handler

    # -- state (server threads, under the lock) -------------------------------------------

    def _lookup(self, keys: list[str], version: str) -> dict[str, Any] | None:
        for key in keys:
            newest = self._newest(key, [key], version)
            if newest is not None:
                return {
                    "cacheKey": newest.key,
                    "archiveLocation": f"{self.cache_url}_apis/artifactcache/artifacts/{newest.id}",
                    "scope": "refs/heads/main",
                }
        return None

    def _reserve(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        key, version, size = body.get("key"), body.get("version"), body.get("cacheSize")
        if not isinstance(key, str) or not key or len(key) > 512 or "," in key:
            return 400, {"error": f"invalid key: {str(key)[:60]!r}"}
        if not isinstance(version, str) or not version:
            return 400, {"error": "a version is required"}
        if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size < 0):
            return 400, {"error": "cacheSize must be a whole number"}
        key = key.lower()  # cache keys are case-insensitive, as act has it
        if self.conflicts and any(e.key == key and e.version == version for e in self.entries):
            return 409, {"message": f"Cache already exists. Key: {key}, Version: {version}"}
        entry = self._new_entry(key, version)
        entry.reserved_size = size or None
        return 200, {"cacheId": entry.id}

    def _upload(self, entry: Entry, request: Request) -> tuple[int, dict[str, Any] | None]:
        if request.headers.get("content-type") != "application/octet-stream":
            return 400, {"error": "Content-Type must be application/octet-stream"}
        match = _CONTENT_RANGE.fullmatch(request.headers.get("content-range", ""))
        if match is None:
            return 400, {"error": "Content-Range must be 'bytes a-b/*'"}
        start, end = int(match.group(1)), int(match.group(2))
        if end < start or end - start + 1 != len(request.body):
            return 400, {"error": f"Content-Range {start}-{end} for {len(request.body)} bytes"}
        for other, data in entry.chunks.items():
            other_end = other + len(data) - 1
            same = other == start and other_end == end
            if not same and start <= other_end and other <= end:
                return 400, {"error": f"bytes {start}-{end} overlap {other}-{other_end}"}
        entry.chunks[start] = request.body
        return 200, None

    def _commit(self, entry: Entry, body: dict[str, Any]) -> tuple[int, dict[str, Any] | None]:
        size = body.get("size")
        if not isinstance(size, int) or isinstance(size, bool):
            return 400, {"error": "size must be a whole number"}
        assembled, offset = b"", 0
        for start in sorted(entry.chunks):
            if start != offset:
                return 400, {"error": f"a gap or overlap at byte {offset} (next chunk: {start})"}
            assembled += entry.chunks[start]
            offset += len(entry.chunks[start])
        for expected in (size, entry.reserved_size):
            if expected is not None and expected != len(assembled):
                return 400, {"error": f"broken file: {len(assembled)} != {expected}"}
        entry.data, entry.size_bytes, entry.chunks = assembled, len(assembled), {}
        entry.finalized = True
        return 200, None


class _Handler(CacheHandler):
    owner: LegacyCacheServer

    def operation(self, path: str, query: dict[str, str]) -> str:
        base = f"/{self.owner.path_token}{_API}"
        if not path.startswith(base):
            return "?"
        resource, command = path.removeprefix(base), self.command
        if resource == "cache" and command == "GET":
            return "getCacheEntry"
        if resource == "caches" and command == "POST":
            return "reserveCache"
        if re.fullmatch(r"caches/\d+", resource) and command in ("PATCH", "POST"):
            return "uploadChunk" if command == "PATCH" else "commitCache"
        if re.fullmatch(r"artifacts/\d+", resource) and command == "GET":
            return "downloadCache"
        return "?"

    def handle_request(self, request: Request, fault: Fault | None) -> None:
        owner = self.owner
        if request.op == "?":
            self.send_json(404, {"error": f"no route {request.method} {request.path}"})
            return
        if fault is not None and fault.kind == "status":
            error = {"message": fault.message or "injected by the fake"}
            self.send_json(fault.status, error, self.retry_after(fault))
            return
        if request.op == "downloadCache":
            self._download(request, fault)
            return
        if request.headers.get("accept") != ACCEPT:
            self.send_json(400, {"message": f"Accept must be {ACCEPT}"})
            return
        sent = request.headers.get("authorization", "")
        if owner.check_token and sent != f"Bearer {owner.token}":
            token = sent.removeprefix("Bearer ")
            self.send_json(401, {"message": f"invalid runtime token {token}"})
            return
        body: Any = {}
        if request.op in ("reserveCache", "commitCache"):
            try:
                body = request.json()
            except ValueError:
                body = None
            if not isinstance(body, dict):
                self.send_json(400, {"error": "the body is not a JSON object"})
                return
        with owner._lock:
            status, reply = self._call(request, body)
        self.send_json(status, {} if reply is None and status == 200 else reply)

    def _call(self, request: Request, body: dict[str, Any]) -> tuple[int, dict[str, Any] | None]:
        owner = self.owner
        if request.op == "getCacheEntry":
            keys = [k.lower() for k in request.query.get("keys", "").split(",")]
            version = request.query.get("version", "")
            if not all(keys) or any(len(k) > 512 for k in keys) or not version:
                return 400, {"error": "keys and version are required, each key at most 512"}
            found = owner._lookup(keys, version)
            return (204, None) if found is None else (200, found)
        if request.op == "reserveCache":
            return owner._reserve(body)
        entry_id = int(request.path.rsplit("/", 1)[1])
        entry = next((e for e in owner.entries if e.id == entry_id), None)
        if entry is None:
            return 400, {"error": f"cache {entry_id}: not reserved"}
        if entry.finalized:
            return 400, {"error": f"cache {entry_id} {entry.key!r}: already complete"}
        if request.op == "uploadChunk":
            return owner._upload(entry, request)
        return owner._commit(entry, body)

    def _download(self, request: Request, fault: Fault | None) -> None:
        owner = self.owner
        if "authorization" in request.headers:
            self.send_json(403, {"message": "a storage URL takes no Authorization header"})
            return
        entry_id = int(request.path.rsplit("/", 1)[1])
        with owner._lock:
            entry = next((e for e in owner.entries if e.id == entry_id and e.finalized), None)
            data = entry.data if entry is not None else None
        if data is None:
            self.send_json(404, {"error": f"no artifact {entry_id}"})
            return
        if fault is not None and fault.kind == "corrupt":
            data = corrupted(data)
        self.send(200, data, {"Content-Type": "application/octet-stream"})
