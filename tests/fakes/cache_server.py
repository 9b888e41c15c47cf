"""A real fake of the GitHub Actions cache service (v2) and its blob store, on 127.0.0.1.

One HTTP server plays both parts, so clients are exercised through their real stack:

- Twirp JSON at `POST /twirp/github.actions.results.api.v1.CacheService/<Method>` for
  `GetCacheEntryDownloadURL`, `CreateCacheEntry` and `FinalizeCacheEntryUpload`, with a bearer
  token (401 otherwise, whose message echoes the token sent, as real services partly do), the
  key rules (at most 512 characters, no commas: 400 `invalid_argument`), a 64-hex version,
  immutable entries (409 `already_exists` for a second create of a key and version), and
  restore like actions/cache: the exact key first, then each restore key as a prefix in order,
  the newest finalized entry of the same version winning.
- An Azure-like blob store at the signed URLs it hands out (`/blob/<id>?sp=..&sig=..`, the
  signature checked): `PUT` with `x-ms-blob-type: BlockBlob` (one shot), `PUT ..&comp=block&
  blockid=..` (same-length base64 ids) then `PUT ..&comp=blocklist` with the XML block list,
  and `GET`. Like Azure with a SAS, it refuses a request that also carries `Authorization`
  (the runtime token must never reach storage) and a body without `Content-Length`.

Faults are queued with `inject(...)` (see `cache_common`): each names its target (a Twirp
method, or `PutBlob`, `PutBlock`, `PutBlockList`, `GetBlob`) and is used up by the first request
to it. Every request is recorded in `requests` (see `ops()`). The legacy v1 service has a fake
of its own beside this one (`legacy_cache_server`).

    with CacheServer() as server:
        server.results_url  # http://127.0.0.1:PORT/  (ends with "/", like ACTIONS_RESULTS_URL)
        server.token
        server.inject(Fault.error("CreateCacheEntry", 500), Fault.corrupt())
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import secrets
import xml.etree.ElementTree as ET
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.fakes.cache_common import (
    TWIRP_STATUS,
    CacheHandler,
    Entry,
    FakeCacheService,
    Fault,
    Request,
    corrupted,
)

__all__ = ["CacheServer", "Entry", "Fault", "Request"]

SERVICE = "/twirp/github.actions.results.api.v1.CacheService/"
METHODS = ("GetCacheEntryDownloadURL", "CreateCacheEntry", "FinalizeCacheEntryUpload")
BLOB_OPS = ("PutBlob", "PutBlock", "PutBlockList", "GetBlob")
_HEX64 = re.compile(r"[0-9a-f]{64}")


class CacheServer(FakeCacheService):
    """The server, run in a background thread; use as a context manager."""

    targets = METHODS + BLOB_OPS
    thread_name = "cache-server"

    def __init__(self, *, token: str | None = None, camel_case_replies: bool = False) -> None:
        """`camel_case_replies`: answer in lowerCamel JSON names (also valid proto3 JSON)."""
        super().__init__(token=token)
        self.camel_case_replies = camel_case_replies
        self._secret = secrets.token_bytes(16)

    @property
    def results_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def runner_env(self) -> dict[str, str]:
        """What a runner that offers this service sets for a step."""
        return {"ACTIONS_RESULTS_URL": self.results_url, "ACTIONS_RUNTIME_TOKEN": self.token}

    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        return _Handler

    # -- state (server threads) -------------------------------------------------------------

    def _sign(self, entry_id: int, permission: str) -> str:
        message = f"{entry_id}|{permission}".encode()
        return hmac.new(self._secret, message, hashlib.sha256).hexdigest()

    def _blob_url(self, entry: Entry, permission: str) -> str:
        sig = self._sign(entry.id, permission)
        return (
            f"http://127.0.0.1:{self.port}/blob/{entry.id}?sv=2024-11-04&sp={permission}&sig={sig}"
        )

    def _reply(self, payload: dict[str, Any]) -> dict[str, Any]:
        if not self.camel_case_replies:
            return payload
        return {_camel(name): value for name, value in payload.items()}

    def _twirp(self, method: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """(status, JSON) for an authenticated Twirp call."""
        key = body.get("key")
        version = body.get("version")
        if not isinstance(key, str) or not isinstance(version, str):
            return _twirp_error("invalid_argument", "key and version are required")
        keys = [key]
        if method == "GetCacheEntryDownloadURL":
            restore_keys = body.get("restore_keys", body.get("restoreKeys", []))
            if not isinstance(restore_keys, list) or not all(
                isinstance(k, str) for k in restore_keys
            ):
                return _twirp_error("invalid_argument", "restore_keys must be a list of strings")
            keys += restore_keys
        for k in keys:
            if not k or len(k) > 512 or "," in k:
                return _twirp_error("invalid_argument", f"invalid key: {k[:60]!r}")
        if not _HEX64.fullmatch(version):
            return _twirp_error("invalid_argument", "version must be 64 hex characters")
        with self._lock:
            if method == "GetCacheEntryDownloadURL":
                return 200, self._reply(self._lookup(key, keys[1:], version))
            if method == "CreateCacheEntry":
                if any(e.key == key and e.version == version for e in self.entries):
                    return _twirp_error("already_exists", f"cache entry {key} already exists")
                entry = self._new_entry(key, version)
                url = self._blob_url(entry, "cw")
                return 200, self._reply({"ok": True, "signed_upload_url": url})
            return self._finalize(key, version, body)

    def _lookup(self, key: str, restore_keys: list[str], version: str) -> dict[str, Any]:
        newest = self._newest(key, restore_keys, version)
        if newest is None:
            return {"ok": False, "signed_download_url": "", "matched_key": ""}
        url = self._blob_url(newest, "r")
        return {"ok": True, "signed_download_url": url, "matched_key": newest.key}

    def _finalize(self, key: str, version: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        raw_size = body.get("size_bytes", body.get("sizeBytes"))
        try:
            size = int(raw_size)  # int64: a string or a number in proto3 JSON
        except (TypeError, ValueError):
            return _twirp_error("invalid_argument", "size_bytes must be an integer")
        entry = next((e for e in self.entries if e.key == key and e.version == version), None)
        if entry is None:
            return _twirp_error("not_found", f"no cache entry {key} was created")
        if entry.finalized:
            return _twirp_error("already_exists", f"cache entry {key} is already finalized")
        if entry.data is None:
            return _twirp_error("failed_precondition", "nothing was uploaded")
        if size != len(entry.data):
            return _twirp_error(
                "invalid_argument", f"size_bytes {size} != uploaded {len(entry.data)}"
            )
        entry.finalized, entry.size_bytes = True, size
        return 200, self._reply({"ok": True, "entry_id": str(entry.id)})


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _twirp_error(code: str, msg: str) -> tuple[int, dict[str, Any]]:
    return TWIRP_STATUS[code], {"code": code, "msg": msg}


class _Handler(CacheHandler):
    owner: CacheServer

    def refuse_chunked(self) -> None:
        self._xml(411, "MissingContentLengthHeader")  # as Azure does

    def handle_request(self, request: Request, fault: Fault | None) -> None:
        if request.op in METHODS:
            self._twirp_call(request, fault)
        elif request.op in BLOB_OPS:
            self._blob_call(request, fault)
        elif request.path.startswith(SERVICE) or self.command == "POST":
            self.send_json(*_twirp_error("bad_route", f"no route {self.command} {request.path}"))
        else:
            self._xml(404, "ResourceNotFound")

    def operation(self, path: str, query: dict[str, str]) -> str:
        if self.command == "POST" and path.startswith(SERVICE):
            method = path.removeprefix(SERVICE)
            return method if method in METHODS else "?"
        if re.fullmatch(r"/blob/\d+", path):
            if self.command == "GET":
                return "GetBlob"
            if self.command == "PUT":
                comp = query.get("comp")
                return {None: "PutBlob", "block": "PutBlock", "blocklist": "PutBlockList"}.get(
                    comp, "?"
                )
        return "?"

    # -- Twirp ----------------------------------------------------------------------------

    def _twirp_call(self, request: Request, fault: Fault | None) -> None:
        owner = self.owner
        if fault is not None and fault.kind == "status":
            error = {"code": fault.code, "msg": "injected by the fake"}
            self.send_json(fault.status, error, self.retry_after(fault))
            return
        sent = request.headers.get("authorization", "")
        if sent != f"Bearer {owner.token}":
            token = sent.removeprefix("Bearer ")
            error = {"code": "unauthenticated", "msg": f"invalid runtime token {token}"}
            self.send_json(401, error)
            return
        if not request.headers.get("content-type", "").startswith("application/json"):
            self.send_json(*_twirp_error("bad_route", "unexpected Content-Type"))
            return
        try:
            body = request.json()
        except ValueError:
            self.send_json(*_twirp_error("malformed", "the body is not JSON"))
            return
        if not isinstance(body, dict):
            self.send_json(*_twirp_error("malformed", "the body is not a JSON object"))
            return
        if fault is not None and fault.kind == "reject":
            self.send_json(200, owner._reply({"ok": False, "message": fault.message}))
            return
        self.send_json(*owner._twirp(request.op, body))

    # -- blobs ----------------------------------------------------------------------------

    def _blob_call(self, request: Request, fault: Fault | None) -> None:
        owner = self.owner
        if fault is not None and fault.kind == "status":
            self._xml(fault.status, "InjectedByTheFake")
            return
        if "authorization" in request.headers:
            # A SAS request with a bearer token is refused by Azure: and it would leak the token.
            self._xml(403, "AuthenticationFailed")
            return
        entry_id = int(request.path.rsplit("/", 1)[1])
        permission = "r" if request.op == "GetBlob" else "cw"
        expected = owner._sign(entry_id, permission)
        if request.query.get("sp") != permission or not hmac.compare_digest(
            request.query.get("sig", ""), expected
        ):
            self._xml(403, "AuthenticationFailed")
            return
        with owner._lock:
            entry = next((e for e in owner.entries if e.id == entry_id), None)
            data = entry.data if entry is not None else None
            status, error = (
                (0, "") if entry is None or request.op == "GetBlob" else _put(entry, request)
            )
        if entry is None:
            self._xml(404, "BlobNotFound")
            return
        if request.op != "GetBlob":
            if error:
                self._xml(status, error)
            else:
                self.send(201, b"", {})
            return
        if data is None:
            self._xml(404, "BlobNotFound")
            return
        if fault is not None and fault.kind == "corrupt":
            data = corrupted(data)
        self.send(200, data, {"Content-Type": "application/octet-stream"})

    # -- sending --------------------------------------------------------------------------

    def _xml(self, status: int, code: str) -> None:
        body = (
            '<?xml version="1.0" encoding="utf-8"?>'
            f"<Error><Code>{code}</Code><Message>fake blob store: {code}</Message></Error>"
        ).encode()
        self.send(status, body, {"Content-Type": "application/xml"})


def _put(entry: Entry, request: Request) -> tuple[int, str]:
    """Apply a blob PUT to `entry` (under the owner's lock); (status, Azure error code or "")."""
    if entry.finalized:
        return 409, "BlobImmutable"
    if "content-length" not in request.headers:
        return 411, "MissingContentLengthHeader"
    if request.op == "PutBlob":
        if request.headers.get("x-ms-blob-type") != "BlockBlob":
            return 400, "MissingRequiredHeader"
        entry.data, entry.blocks = request.body, {}
        return 201, ""
    if request.op == "PutBlock":
        block_id = request.query.get("blockid", "")
        try:
            decoded = base64.b64decode(block_id, validate=True)
        except (binascii.Error, ValueError):
            return 400, "InvalidQueryParameterValue"
        if not decoded or len(decoded) > 64:
            return 400, "InvalidQueryParameterValue"
        if any(len(other) != len(block_id) for other in entry.blocks):
            return 400, "InvalidBlobOrBlock"  # Azure: all block ids of a blob, same length
        entry.blocks[block_id] = request.body
        return 201, ""
    try:
        root = ET.fromstring(request.body)
    except ET.ParseError:
        return 400, "InvalidXmlDocument"
    if root.tag != "BlockList":
        return 400, "InvalidXmlDocument"
    ids = [child.text or "" for child in root if child.tag in ("Latest", "Uncommitted")]
    if any(block_id not in entry.blocks for block_id in ids):
        return 400, "InvalidBlockList"
    entry.data = b"".join(entry.blocks[block_id] for block_id in ids)
    entry.blocks = {}
    return 201, ""
