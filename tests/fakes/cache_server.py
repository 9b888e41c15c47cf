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

Faults are queued with `inject(...)`: each names its target (a Twirp method, or `PutBlob`,
`PutBlock`, `PutBlockList`, `GetBlob`) and is used up by the first request to it. Every request
is recorded in `requests` (see `ops()`).

    with CacheServer() as server:
        server.results_url  # http://127.0.0.1:PORT/  (ends with "/", like ACTIONS_RESULTS_URL)
        server.token
        server.inject(Fault.status("CreateCacheEntry", 500), Fault.corrupt())
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import secrets
import threading
import urllib.parse
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, Literal

from tests.fakes.background import BackgroundServer

SERVICE = "/twirp/github.actions.results.api.v1.CacheService/"
METHODS = ("GetCacheEntryDownloadURL", "CreateCacheEntry", "FinalizeCacheEntryUpload")
BLOB_OPS = ("PutBlob", "PutBlock", "PutBlockList", "GetBlob")
_HEX64 = re.compile(r"[0-9a-f]{64}")
_TWIRP_STATUS = {
    "invalid_argument": 400,
    "malformed": 400,
    "unauthenticated": 401,
    "permission_denied": 403,
    "bad_route": 404,
    "not_found": 404,
    "already_exists": 409,
    "failed_precondition": 412,
    "resource_exhausted": 429,
    "internal": 500,
    "unavailable": 503,
}

FaultKind = Literal["status", "slow", "corrupt", "reject"]


@dataclass(frozen=True)
class Fault:
    """What the server does instead, once, for the next request to `target`."""

    target: str
    kind: FaultKind = "status"
    status: int = 500
    code: str = "internal"
    delay_s: float = 0.0
    retry_after: float | None = None
    message: str = ""

    def __post_init__(self) -> None:
        if self.target not in METHODS + BLOB_OPS:
            raise ValueError(f"unknown fault target {self.target!r}")

    @classmethod
    def error(cls, target: str, status: int = 500, *, code: str | None = None) -> Fault:
        """An error status: a Twirp error JSON on a method, an Azure error XML on a blob."""
        if code is None:
            code = next((c for c, s in _TWIRP_STATUS.items() if s == status), "internal")
        return cls(target, "status", status=status, code=code)

    @classmethod
    def rate_limited(cls, target: str, retry_after: float | None = 0.01) -> Fault:
        return cls(target, "status", status=429, code="resource_exhausted", retry_after=retry_after)

    @classmethod
    def conflict(cls, target: str = "CreateCacheEntry") -> Fault:
        """409 `already_exists`, as when another job created the key first."""
        return cls(target, "status", status=409, code="already_exists")

    @classmethod
    def slow(cls, target: str, delay_s: float) -> Fault:
        """Wait `delay_s` before answering normally (longer than the client timeout: a timeout)."""
        return cls(target, "slow", delay_s=delay_s)

    @classmethod
    def corrupt(cls, target: str = "GetBlob") -> Fault:
        """Serve the blob with bytes flipped in its middle."""
        return cls(target, "corrupt")

    @classmethod
    def reject(cls, target: str, message: str = "refused by the fake") -> Fault:
        """200 with `ok: false` and a message (a Twirp method only)."""
        return cls(target, "reject", status=200, message=message)


@dataclass(frozen=True)
class Request:
    op: str  # a Twirp method, a blob op, or "?" for an unknown route
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # names lowercased
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Entry:
    id: int
    key: str
    version: str
    created: int  # order of creation: the newest wins a prefix match
    finalized: bool = False
    size_bytes: int = 0
    data: bytes | None = None
    blocks: dict[str, bytes] = field(default_factory=dict)


class CacheServer(BackgroundServer):
    """The server, run in a background thread; use as a context manager."""

    def __init__(self, *, token: str | None = None, camel_case_replies: bool = False) -> None:
        """`camel_case_replies`: answer in lowerCamel JSON names (also valid proto3 JSON)."""
        super().__init__()
        self.token = token or f"fake-runtime-token-{secrets.token_hex(8)}"
        self.camel_case_replies = camel_case_replies
        self.requests: list[Request] = []
        self.entries: list[Entry] = []
        self._faults: list[Fault] = []
        self._secret = secrets.token_bytes(16)
        self._lock = threading.Lock()

    # -- scripting and inspection ---------------------------------------------------------

    def inject(self, *faults: Fault) -> None:
        """Faults for the next requests to their targets, each used once, in order."""
        with self._lock:
            self._faults.extend(faults)

    @property
    def pending_faults(self) -> list[Fault]:
        with self._lock:
            return list(self._faults)

    def ops(self) -> list[str]:
        """The operation of every request, in arrival order."""
        with self._lock:
            return [r.op for r in self.requests]

    def finalized(self) -> list[Entry]:
        with self._lock:
            return [e for e in self.entries if e.finalized]

    def put_entry(self, key: str, version: str, data: bytes) -> Entry:
        """Store a finalized entry directly (e.g. a hand-made malicious archive)."""
        with self._lock:
            entry = Entry(len(self.entries) + 1, key, version, len(self.entries) + 1)
            entry.data, entry.size_bytes, entry.finalized = data, len(data), True
            self.entries.append(entry)
            return entry

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the cache server is not running")
        return self._httpd.server_address[1]

    @property
    def results_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    thread_name = "cache-server"

    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        return _Handler

    # -- lifecycle --------------------------------------------------------------------------

    # -- state (server threads) -------------------------------------------------------------

    def _record(self, request: Request) -> Fault | None:
        with self._lock:
            self.requests.append(request)
            for index, fault in enumerate(self._faults):
                if fault.target == request.op:
                    return self._faults.pop(index)
        return None

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
                entry = Entry(len(self.entries) + 1, key, version, len(self.entries) + 1)
                self.entries.append(entry)
                url = self._blob_url(entry, "cw")
                return 200, self._reply({"ok": True, "signed_upload_url": url})
            return self._finalize(key, version, body)

    def _lookup(self, key: str, restore_keys: list[str], version: str) -> dict[str, Any]:
        ready = [e for e in self.entries if e.finalized and e.version == version]
        exact = [e for e in ready if e.key == key]
        candidates = [exact] + [[e for e in ready if e.key.startswith(p)] for p in restore_keys]
        for group in candidates:
            if group:
                newest = max(group, key=lambda e: e.created)
                url = self._blob_url(newest, "r")
                return {"ok": True, "signed_download_url": url, "matched_key": newest.key}
        return {"ok": False, "signed_download_url": "", "matched_key": ""}

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
    return _TWIRP_STATUS[code], {"code": code, "msg": msg}


class _Handler(BaseHTTPRequestHandler):
    owner: CacheServer
    protocol_version = "HTTP/1.1"  # keep-alive, as httpx's pooled client expects
    # Headers and body go out in separate writes: without TCP_NODELAY the client's delayed
    # ACK adds ~40 ms to every response.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self._dispatch()

    def do_PUT(self) -> None:
        self._dispatch()

    def do_GET(self) -> None:
        self._dispatch()

    # -- routing --------------------------------------------------------------------------

    def _dispatch(self) -> None:
        parts = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(parts.query, keep_blank_values=True))
        headers = {name.lower(): value for name, value in self.headers.items()}
        if "chunked" in headers.get("transfer-encoding", "").lower():
            self._read_chunked()  # drained, then refused like Azure does
            self._xml(411, "MissingContentLengthHeader")
            return
        body = self.rfile.read(int(headers.get("content-length") or 0))
        op = self._op(parts.path, query)
        request = Request(op, self.command, parts.path, query, headers, body)
        owner = self.owner
        fault = owner._record(request)
        if fault is not None and fault.kind == "slow":
            if owner._stopping.wait(fault.delay_s):
                return
            fault = None
        if op in METHODS:
            self._twirp_call(request, fault)
        elif op in BLOB_OPS:
            self._blob_call(request, fault)
        elif parts.path.startswith(SERVICE) or self.command == "POST":
            self._json(*_twirp_error("bad_route", f"no route {self.command} {parts.path}"))
        else:
            self._xml(404, "ResourceNotFound")

    def _op(self, path: str, query: dict[str, str]) -> str:
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
            extra = {} if fault.retry_after is None else {"Retry-After": f"{fault.retry_after:g}"}
            self._json(fault.status, {"code": fault.code, "msg": "injected by the fake"}, extra)
            return
        sent = request.headers.get("authorization", "")
        if sent != f"Bearer {owner.token}":
            token = sent.removeprefix("Bearer ")
            self._json(401, {"code": "unauthenticated", "msg": f"invalid runtime token {token}"})
            return
        if not request.headers.get("content-type", "").startswith("application/json"):
            self._json(*_twirp_error("bad_route", "unexpected Content-Type"))
            return
        try:
            body = request.json()
        except ValueError:
            self._json(*_twirp_error("malformed", "the body is not JSON"))
            return
        if not isinstance(body, dict):
            self._json(*_twirp_error("malformed", "the body is not a JSON object"))
            return
        if fault is not None and fault.kind == "reject":
            self._json(200, owner._reply({"ok": False, "message": fault.message}))
            return
        self._json(*owner._twirp(request.op, body))

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
                self._send(201, b"", {})
            return
        if data is None:
            self._xml(404, "BlobNotFound")
            return
        if fault is not None and fault.kind == "corrupt":
            middle = len(data) // 2
            span = slice(max(0, middle - 16), middle + 16)
            data = data[: span.start] + bytes(b ^ 0xFF for b in data[span]) + data[span.stop :]
        self._send(200, data, {"Content-Type": "application/octet-stream"})

    # -- sending --------------------------------------------------------------------------

    def _read_chunked(self) -> None:
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            self.rfile.read(size + 2)
            if size == 0:
                return

    def _json(
        self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        headers = {"Content-Type": "application/json", **(headers or {})}
        self._send(status, json.dumps(payload).encode(), headers)

    def _xml(self, status: int, code: str) -> None:
        body = (
            '<?xml version="1.0" encoding="utf-8"?>'
            f"<Error><Code>{code}</Code><Message>fake blob store: {code}</Message></Error>"
        ).encode()
        self._send(status, body, {"Content-Type": "application/xml"})

    def _send(self, status: int, data: bytes, headers: dict[str, str]) -> None:
        try:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout): nothing to tell it


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
