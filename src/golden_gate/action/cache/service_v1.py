"""The legacy cache service v1: REST at `ACTIONS_CACHE_URL`, as actions/cache spoke it before v2.

This is the only cache service of act's built-in server, Gitea/Forgejo act_runner and older
GitHub Enterprise Server. With `Accept: application/json;api-version=6.0-preview.1` and, when
the runner gives one, the runtime token as a bearer token:

- `GET {url}_apis/artifactcache/cache?keys=k1,k2&version=V`: 200 `{cacheKey, archiveLocation}`
  or 204 for none (each key tried in order, exactly and then as a prefix, newest first);
- `POST {url}_apis/artifactcache/caches` `{key, version, cacheSize}`: `{cacheId}`, 409 when the
  key exists;
- `PATCH {url}_apis/artifactcache/caches/{id}` per chunk, `Content-Range: bytes a-b/*`;
- `POST {url}_apis/artifactcache/caches/{id}` `{size}` to commit;
- a plain GET of `archiveLocation`, without the token (as actions/toolkit does).

act's server keeps its secret in the URL's path (`http://host:port/<token>/`), checks no bearer
token, lowercases keys, never answers 409 (a second save of a key is a newer entry) and checks a
commit against the `cacheSize` given when the entry was reserved; all of that works here.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

from golden_gate.action.cache.service import (
    CacheEntry,
    CacheService,
    CacheServiceError,
    EntryExists,
    error_reply,
    json_object,
    transfer,
)

CHUNK_BYTES = 32 * 1024 * 1024  # what actions/cache uploads a request
ACCEPT = "application/json;api-version=6.0-preview.1"
# A path this long in ACTIONS_CACHE_URL is a secret (act's server keeps its token there).
_SECRET_PATH_MIN_CHARS = 8
_ERROR_MAX_CHARS = 200


class CacheServiceV1(CacheService):
    """A client of the legacy cache service v1 (REST JSON); `token` may be empty (act)."""

    download_what = "downloadCache"

    def __init__(
        self, *, cache_url: str, token: str, chunk_bytes: int = CHUNK_BYTES, **options: Any
    ) -> None:
        if chunk_bytes <= 0:
            raise ValueError("chunk_bytes must be positive")
        super().__init__(token=token, **options)
        # ACTIONS_CACHE_URL ends with "/", but a hand-set one may not.
        self.base_url = cache_url.rstrip("/") + "/_apis/artifactcache/"
        self.chunk_bytes = chunk_bytes
        path = urllib.parse.urlsplit(cache_url).path.strip("/")
        if len(path) >= _SECRET_PATH_MIN_CHARS:
            self.secrets += (path,)

    # -- the interface --------------------------------------------------------------------

    def find(self, key: str, restore_keys: Sequence[str], version: str) -> CacheEntry | None:
        keys = list(dict.fromkeys([key, *restore_keys]))  # the same key twice is one lookup
        return self.get_cache_entry(keys, version)

    def store(self, key: str, version: str, archive: Path) -> None:
        size = archive.stat().st_size
        # act checks the committed size against this one, not against the commit's own.
        cache_id = self.reserve_cache(key, version, size)
        with archive.open("rb") as handle:
            start = 0
            while chunk := handle.read(self.chunk_bytes):
                self.upload_chunk(cache_id, chunk, start)
                start += len(chunk)
        self.commit_cache(cache_id, size)

    # -- REST calls -----------------------------------------------------------------------

    def get_cache_entry(self, keys: Sequence[str], version: str) -> CacheEntry | None:
        """The entry the first matching key finds; None on 204 (no entry)."""
        params = {"keys": ",".join(keys), "version": version}
        response = self._call("getCacheEntry", "GET", "cache", params=params)
        if response.status_code == 204:
            return None
        reply = json_object("getCacheEntry", response)
        location = reply.get("archiveLocation")
        if not isinstance(location, str) or not location:
            raise CacheServiceError("getCacheEntry: a hit without an archiveLocation")
        matched = reply.get("cacheKey")
        return CacheEntry(download_url=location, key=matched if isinstance(matched, str) else "")

    def reserve_cache(self, key: str, version: str, size: int) -> int:
        body = {"key": key, "version": version, "cacheSize": size}
        response = self._call("reserveCache", "POST", "caches", json=body)
        cache_id = json_object("reserveCache", response).get("cacheId")
        if isinstance(cache_id, bool) or not isinstance(cache_id, int | str):
            raise CacheServiceError("reserveCache: the reply has no cacheId")
        try:
            return int(cache_id)
        except ValueError:
            raise CacheServiceError("reserveCache: the reply has no cacheId") from None

    def upload_chunk(self, cache_id: int, chunk: bytes, start: int) -> None:
        headers = {
            "Content-Type": "application/octet-stream",
            "Content-Range": f"bytes {start}-{start + len(chunk) - 1}/*",
        }
        self._call(
            "uploadChunk",
            "PATCH",
            f"caches/{cache_id}",
            content=chunk,
            headers=headers,
            extensions=transfer(len(chunk)),
        )

    def commit_cache(self, cache_id: int, size: int) -> None:
        self._call("commitCache", "POST", f"caches/{cache_id}", json={"size": size})

    def _download_error(self, response: httpx.Response) -> str:
        return _error_detail(response)

    # -- plumbing -------------------------------------------------------------------------

    def _call(
        self,
        what: str,
        method: str,
        resource: str,
        *,
        headers: dict[str, str] | None = None,
        **request: Any,
    ) -> httpx.Response:
        """A successful (2xx) response; any other is a `CacheServiceError` (409: `EntryExists`)."""
        sent = {"Accept": ACCEPT, **(headers or {})}
        if self.token:
            sent["Authorization"] = f"Bearer {self.token}"
        url = self.base_url + resource

        def call() -> httpx.Response:
            return self._client.request(method, url, headers=sent, **request)

        response = self._retrying(what, call)
        if response.status_code >= 300:
            error = EntryExists if response.status_code == 409 else CacheServiceError
            message = f"{what}: HTTP {response.status_code}{_error_detail(response)}"
            raise error(message, status=response.status_code)
        return response


def _error_detail(response: httpx.Response) -> str:
    """What an error reply says: act answers `{"error": …}`, GitHub's service `{"message": …}`."""
    data = error_reply(response)
    for name in ("message", "error"):
        text = data.get(name)
        if isinstance(text, str) and text.strip():
            text = " ".join(text.split())
            cut = text[:_ERROR_MAX_CHARS] + ("…" if len(text) > _ERROR_MAX_CHARS else "")
            return f": {cut}"
    return ""
