"""The Actions cache service v2: Twirp JSON at `ACTIONS_RESULTS_URL`, blobs behind signed URLs.

`POST {ACTIONS_RESULTS_URL}twirp/github.actions.results.api.v1.CacheService/<Method>` with the
runtime token, for `GetCacheEntryDownloadURL`, `CreateCacheEntry` and `FinalizeCacheEntryUpload`;
the archive itself goes to and comes from Azure blob storage through the signed URLs those hand
out, which must never see the token.
"""

from __future__ import annotations

import base64
import re
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
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

SINGLE_PUT_MAX_BYTES = 128 * 1024 * 1024  # one Put Blob above this is refused or unreliable
BLOCK_BYTES = 32 * 1024 * 1024

_SERVICE_PATH = "twirp/github.actions.results.api.v1.CacheService/"


@dataclass(frozen=True)
class DownloadURL:
    ok: bool
    signed_download_url: str = ""
    matched_key: str = ""


@dataclass(frozen=True)
class UploadURL:
    ok: bool
    signed_upload_url: str = ""
    message: str = ""


@dataclass(frozen=True)
class Finalized:
    ok: bool
    entry_id: int = 0
    message: str = ""


class CacheServiceV2(CacheService):
    """A client of the Actions cache service v2 (Twirp JSON) and of the blob store behind it."""

    download_what = "blob download"

    def __init__(
        self,
        *,
        results_url: str,
        token: str,
        single_put_max_bytes: int = SINGLE_PUT_MAX_BYTES,
        block_bytes: int = BLOCK_BYTES,
        **options: Any,
    ) -> None:
        if block_bytes <= 0 or single_put_max_bytes < 0:
            raise ValueError("block_bytes must be positive and single_put_max_bytes not negative")
        super().__init__(token=token, **options)
        # ACTIONS_RESULTS_URL ends with "/", but a hand-set one may not.
        self.base_url = results_url.rstrip("/") + "/" + _SERVICE_PATH
        self.single_put_max_bytes = single_put_max_bytes
        self.block_bytes = block_bytes

    # -- the interface --------------------------------------------------------------------

    def find(self, key: str, restore_keys: Sequence[str], version: str) -> CacheEntry | None:
        found = self.get_cache_entry_download_url(key, restore_keys, version)
        if not found.ok:
            return None
        if not found.signed_download_url:
            raise CacheServiceError("GetCacheEntryDownloadURL: a hit without a download URL")
        return CacheEntry(download_url=found.signed_download_url, key=found.matched_key)

    def store(self, key: str, version: str, archive: Path) -> None:
        size = archive.stat().st_size
        try:
            created = self.create_cache_entry(key, version)
        except CacheServiceError as exc:
            if exc.status == 409 or exc.code == "already_exists":
                raise EntryExists(str(exc), status=exc.status, code=exc.code) from None
            raise
        if not created.ok or not created.signed_upload_url:
            why = created.message or "the service refused to create the entry"
            raise CacheServiceError(f"CreateCacheEntry: {why}")
        self.upload(created.signed_upload_url, archive)
        finalized = self.finalize_cache_entry_upload(key, version, size)
        if not finalized.ok:
            why = finalized.message or "the service refused to finalize the entry"
            raise CacheServiceError(f"FinalizeCacheEntryUpload: {why}")

    # -- Twirp methods --------------------------------------------------------------------

    def get_cache_entry_download_url(
        self, key: str, restore_keys: Sequence[str], version: str
    ) -> DownloadURL:
        body = {"key": key, "restore_keys": list(restore_keys), "version": version}
        reply = self._twirp("GetCacheEntryDownloadURL", body)
        return DownloadURL(
            ok=bool(reply.get("ok", False)),
            signed_download_url=str(_field(reply, "signed_download_url") or ""),
            matched_key=str(_field(reply, "matched_key") or ""),
        )

    def create_cache_entry(self, key: str, version: str) -> UploadURL:
        reply = self._twirp("CreateCacheEntry", {"key": key, "version": version})
        return UploadURL(
            ok=bool(reply.get("ok", False)),
            signed_upload_url=str(_field(reply, "signed_upload_url") or ""),
            message=str(reply.get("message") or ""),
        )

    def finalize_cache_entry_upload(self, key: str, version: str, size_bytes: int) -> Finalized:
        # int64 goes as a string in proto3 JSON; the service accepts both forms.
        body = {"key": key, "version": version, "size_bytes": str(size_bytes)}
        reply = self._twirp("FinalizeCacheEntryUpload", body)
        try:
            entry_id = int(_field(reply, "entry_id") or 0)
        except (TypeError, ValueError):
            entry_id = 0
        return Finalized(
            ok=bool(reply.get("ok", False)),
            entry_id=entry_id,
            message=str(reply.get("message") or ""),
        )

    # -- blobs ----------------------------------------------------------------------------

    def upload(self, signed_url: str, path: Path) -> None:
        """Put the file at the signed URL: one Put Blob when small, else staged blocks."""
        size = path.stat().st_size
        if size <= self.single_put_max_bytes:

            def put_blob() -> httpx.Response:
                with path.open("rb") as handle:
                    return self._client.put(
                        signed_url,
                        content=handle,
                        headers={"x-ms-blob-type": "BlockBlob", "Content-Length": str(size)},
                        extensions=transfer(size),
                    )

            self._blob("upload", put_blob)
            return
        ids: list[str] = []
        with path.open("rb") as handle:
            while chunk := handle.read(self.block_bytes):
                # Azure wants every block id of a blob to have the same length.
                block_id = base64.b64encode(f"golden-gate-{len(ids):08d}".encode()).decode()
                ids.append(block_id)
                url = _with_query(signed_url, f"comp=block&blockid={_quote(block_id)}")
                self._blob(
                    "upload a block",
                    partial(self._client.put, url, content=chunk, extensions=transfer(len(chunk))),
                )
        xml = '<?xml version="1.0" encoding="utf-8"?><BlockList>'
        xml += "".join(f"<Latest>{block_id}</Latest>" for block_id in ids) + "</BlockList>"
        url = _with_query(signed_url, "comp=blocklist")
        self._blob(
            "commit the block list",
            lambda: self._client.put(
                url, content=xml.encode(), headers={"Content-Type": "application/xml"}
            ),
        )

    def _download_error(self, response: httpx.Response) -> str:
        return _azure_error(response)

    # -- plumbing -------------------------------------------------------------------------

    def _twirp(self, method: str, body: dict[str, Any]) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"}

        def call() -> httpx.Response:
            return self._client.post(self.base_url + method, json=body, headers=headers)

        response = self._retrying(method, call)
        if response.status_code >= 300:
            raise CacheServiceError(
                f"{method}: HTTP {response.status_code}{_twirp_error(response)}",
                status=response.status_code,
                code=_twirp_code(response),
            )
        return json_object(method, response)

    def _blob(self, what: str, call: Callable[[], httpx.Response]) -> None:
        response = self._retrying(what, call)
        if response.status_code >= 300:
            raise CacheServiceError(
                f"blob {what}: HTTP {response.status_code}{_azure_error(response)}",
                status=response.status_code,
            )


def _field(reply: Mapping[str, Any], name: str) -> Any:
    """A field by its proto name or its JSON (lowerCamel) name: both are valid proto3 JSON."""
    if name in reply:
        return reply[name]
    head, *rest = name.split("_")
    camel = head + "".join(part[:1].upper() + part[1:] for part in rest)
    # Go's protojson spells "URL" fields as written in the .proto, e.g. signedDownloadUrl.
    return reply.get(camel)


def _twirp_code(response: httpx.Response) -> str | None:
    code = error_reply(response).get("code")
    return code if isinstance(code, str) else None


def _twirp_error(response: httpx.Response) -> str:
    data = error_reply(response)
    code, msg = data.get("code"), data.get("msg")
    return "".join(f" {part}" for part in (code, msg) if isinstance(part, str) and part)


def _azure_error(response: httpx.Response) -> str:
    match = re.search(r"<Code>([^<]{1,100})</Code>", response.text)
    return f" {match.group(1)}" if match else ""


def _with_query(url: str, query: str) -> str:
    # Appended as text: re-encoding the signed query could break its signature.
    return f"{url}{'&' if '?' in url else '?'}{query}"


def _quote(value: str) -> str:
    return urllib.parse.quote(value, safe="")
