"""What `entries.restore` and `save` need of a cache service, and the HTTP both clients share.

Two services carry a cache entry between workflow runs: the Actions cache service v2 (Twirp at
`ACTIONS_RESULTS_URL`, `service_v2`) and the legacy v1 REST service (`ACTIONS_CACHE_URL`,
`service_v1`), which is all that act, Gitea/Forgejo act_runner and older GitHub Enterprise
Server offer. Both are a `CacheService`: `find` an entry by key or key prefix, `download` it,
`store` a new one. Every failure is a `CacheServiceError` whose message is safe to log once the
`secrets` are blanked; 429, 5xx and connection failures are retried first.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import httpx

from golden_gate import http_bounds
from golden_gate.action.cache.archive import UNPACKED_MAX_BYTES, ArchiveError
from golden_gate.limits import (
    MAX_SERVICE_REPLY_BYTES,
    SERVICE_DEADLINE_S,
    transfer_deadline_s,
)


def transfer(size_bytes: int, *, streamed: bool = False) -> dict[str, object]:
    """The request extensions of an archive transfer of at most `size_bytes`: its deadline,
    and (`streamed`, a download) a body its caller caps."""
    extensions: dict[str, object] = {http_bounds.DEADLINE_S: transfer_deadline_s(size_bytes)}
    if streamed:
        extensions[http_bounds.STREAMED] = True
    return extensions


class CacheServiceError(Exception):
    """A failed call to a cache service or the storage behind it; the message is safe to log
    once the service's `secrets` are blanked out."""

    def __init__(self, message: str, *, status: int | None = None, code: str | None = None):
        super().__init__(message)
        self.status = status
        self.code = code


class EntryExists(CacheServiceError):
    """The key is taken: entries are immutable, and another job saved under it first."""


@dataclass(frozen=True)
class CacheEntry:
    """A saved entry a lookup found: where to download it, and its key."""

    download_url: str
    key: str


class CacheService(ABC):
    """A client of one cache service. Calls raise `CacheServiceError` for any failure.

    429, 5xx and connection failures are retried `retries` times (Retry-After is honoured up to
    `max_retry_wait_s`); a timeout is not, since it has already cost `timeout_s`.
    """

    def __init__(
        self,
        *,
        token: str,
        timeout_s: float = 30,
        client: httpx.Client | None = None,
        retries: int = 1,
        backoff_s: float = 1.0,
        max_retry_wait_s: float = 5.0,
        deadline_s: float = SERVICE_DEADLINE_S,
    ) -> None:
        self.token = token
        self.timeout_s = timeout_s
        self.retries = retries
        self.backoff_s = backoff_s
        self.max_retry_wait_s = max_retry_wait_s
        # What a message must never show: the token, and whatever else the service names.
        self.secrets: tuple[str, ...] = (token,) if token else ()
        self._owns_client = client is None
        # Each exchange ends by a deadline, its reply read at most so much (http_bounds.py).
        self._client = client or http_bounds.httpx_client(
            timeout_s=timeout_s,
            deadline_s=deadline_s,
            max_reply_bytes=MAX_SERVICE_REPLY_BYTES,
        )

    @abstractmethod
    def find(self, key: str, restore_keys: Sequence[str], version: str) -> CacheEntry | None:
        """The entry saved under `key`, else the newest whose key starts with a restore key
        (tried in order); None when there is none (a miss, not a failure)."""

    @abstractmethod
    def store(self, key: str, version: str, archive: Path) -> None:
        """Save `archive` as a new entry; `EntryExists` when the key is taken."""

    def download(self, url: str, path: Path, *, max_bytes: int | None = None) -> int:
        """Stream a found entry to `path` with a plain GET (no token: the URL is all it takes);
        returns its size. Past `max_bytes` it is refused (`ArchiveError`)."""

        def get() -> httpx.Response:
            written = 0
            size = max_bytes if max_bytes is not None else UNPACKED_MAX_BYTES
            with self._client.stream(
                "GET", url, extensions=transfer(size, streamed=True)
            ) as response:
                if response.status_code >= 300:
                    response.read()
                    return response
                with path.open("wb") as handle:
                    for chunk in response.iter_bytes(1024 * 1024):
                        written += len(chunk)
                        if max_bytes is not None and written > max_bytes:
                            too_big = f"the cache archive is larger than {max_bytes} bytes"
                            raise ArchiveError(too_big)
                        handle.write(chunk)
            if written == 0:
                raise CacheServiceError("the cache archive download was empty")
            return response

        response = self._retrying(self.download_what, get)
        if response.status_code >= 300:
            raise CacheServiceError(
                f"{self.download_what}: HTTP {response.status_code}"
                f"{self._download_error(response)}",
                status=response.status_code,
            )
        return path.stat().st_size

    # -- what each service names its own way ----------------------------------------------

    download_what = "archive download"

    def _download_error(self, response: httpx.Response) -> str:
        """What a failed download's body says, briefly (e.g. " BlobNotFound")."""
        return ""

    # -- plumbing -------------------------------------------------------------------------

    def close(self) -> None:
        if self._owns_client:
            self._client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _retrying(self, what: str, call: Callable[[], httpx.Response]) -> httpx.Response:
        attempt = 0
        while True:
            try:
                response = call()
            except httpx.TimeoutException:
                raise CacheServiceError(f"{what}: timed out after {self.timeout_s:g} s") from None
            except httpx.TransportError as exc:
                if attempt >= self.retries:
                    raise CacheServiceError(f"{what}: {type(exc).__name__}: {exc}") from None
                wait = self.backoff_s * 2**attempt
            else:
                retryable = response.status_code == 429 or response.status_code >= 500
                if not retryable or attempt >= self.retries:
                    return response
                wait = _retry_after(response) or self.backoff_s * 2**attempt
            time.sleep(min(wait, self.max_retry_wait_s))
            attempt += 1


def json_object(what: str, response: httpx.Response) -> dict[str, Any]:
    """A successful reply's JSON object; anything else is a `CacheServiceError`."""
    try:
        reply = response.json()
    except ValueError:
        raise CacheServiceError(f"{what}: the reply is not JSON") from None
    if not isinstance(reply, dict):
        raise CacheServiceError(f"{what}: the reply is not a JSON object")
    return reply


def error_reply(response: httpx.Response) -> dict[str, Any]:
    """An error reply's JSON object, or {} when it has none."""
    try:
        data = response.json()
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _retry_after(response: httpx.Response) -> float | None:
    try:
        return max(0.0, float(response.headers.get("Retry-After", "")))
    except ValueError:
        return None
