"""What the fake cache services share: entries, recorded requests, injected faults, and a request
handler that reads, records and answers.

Faults are queued with `inject(...)`: each names its target (an operation of that server, see
its `targets`) and is used up by the first request to it. Every request is recorded in
`requests` (see `ops()`).
"""

from __future__ import annotations

import json
import secrets
import threading
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, Literal

from tests.fakes.background import BackgroundServer

TWIRP_STATUS = {
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

FaultKind = Literal["status", "slow", "corrupt", "reject", "hostile"]


@dataclass(frozen=True)
class Fault:
    """What the server does instead, once, for the next request to `target`."""

    target: str
    kind: FaultKind = "status"
    status: int = 500
    code: str = "internal"  # the Twirp error code (v2); the v1 service has none
    delay_s: float = 0.0
    retry_after: float | None = None
    message: str = ""
    behaviour: Any = None  # a judge_server.Behaviour for a `hostile` fault

    @classmethod
    def hostile(cls, target: str, behaviour: Any) -> Fault:
        """A 200 whose body is hostile (judge_server's trickle, gzip bomb or huge body)."""
        return cls(target, "hostile", behaviour=behaviour)

    @classmethod
    def error(cls, target: str, status: int = 500, *, code: str | None = None) -> Fault:
        """An error status: an error body in the target's own format."""
        if code is None:
            code = next((c for c, s in TWIRP_STATUS.items() if s == status), "internal")
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
        """Serve the archive with bytes flipped in its middle."""
        return cls(target, "corrupt")

    @classmethod
    def reject(cls, target: str, message: str = "refused by the fake") -> Fault:
        """200 with `ok: false` and a message (a Twirp method only)."""
        return cls(target, "reject", status=200, message=message)


@dataclass(frozen=True)
class Request:
    op: str  # an operation of the server, or "?" for an unknown route
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
    blocks: dict[str, bytes] = field(default_factory=dict)  # v2: staged blocks by id
    chunks: dict[int, bytes] = field(default_factory=dict)  # v1: uploaded chunks by offset
    reserved_size: int | None = None  # v1: the cacheSize given when reserved


def corrupted(data: bytes) -> bytes:
    """`data` with 32 bytes flipped in its middle."""
    middle = len(data) // 2
    span = slice(max(0, middle - 16), middle + 16)
    return data[: span.start] + bytes(b ^ 0xFF for b in data[span]) + data[span.stop :]


class FakeCacheService(BackgroundServer):
    """Entries, requests and faults of a fake cache service; subclasses give the protocol."""

    targets: tuple[str, ...] = ()
    fault_kinds: tuple[FaultKind, ...] = ("status", "slow", "corrupt", "reject", "hostile")

    def __init__(self, *, token: str | None = None) -> None:
        super().__init__()
        self.token = token or f"fake-runtime-token-{secrets.token_hex(8)}"
        self.requests: list[Request] = []
        self.entries: list[Entry] = []
        self._faults: list[Fault] = []
        self._lock = threading.Lock()

    # -- scripting and inspection ---------------------------------------------------------

    def inject(self, *faults: Fault) -> None:
        """Faults for the next requests to their targets, each used once, in order."""
        for fault in faults:
            if fault.target not in self.targets:
                raise ValueError(f"unknown fault target {fault.target!r}")
            if fault.kind not in self.fault_kinds:
                raise ValueError(f"{type(self).__name__} has no {fault.kind!r} faults")
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
            entry = self._new_entry(key, version)
            entry.data, entry.size_bytes, entry.finalized = data, len(data), True
            return entry

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError(f"the {self.thread_name} is not running")
        return self._httpd.server_address[1]

    # -- state (server threads, under the lock) -------------------------------------------

    def _new_entry(self, key: str, version: str) -> Entry:
        entry = Entry(len(self.entries) + 1, key, version, len(self.entries) + 1)
        self.entries.append(entry)
        return entry

    def _newest(self, key: str, prefixes: list[str], version: str) -> Entry | None:
        """The exact key's newest finalized entry of `version`, else each prefix's in order."""
        ready = [e for e in self.entries if e.finalized and e.version == version]
        groups = [[e for e in ready if e.key == key]]
        groups += [[e for e in ready if e.key.startswith(p)] for p in prefixes]
        return next((max(g, key=lambda e: e.created) for g in groups if g), None)

    def _record(self, request: Request) -> Fault | None:
        with self._lock:
            self.requests.append(request)
            for index, fault in enumerate(self._faults):
                if fault.target == request.op:
                    return self._faults.pop(index)
        return None


class CacheHandler(BaseHTTPRequestHandler):
    """Reads a request, records it, applies a `slow` fault, then calls `handle_request`."""

    owner: FakeCacheService
    protocol_version = "HTTP/1.1"  # keep-alive, as httpx's pooled client expects
    # Headers and body go out in separate writes: without TCP_NODELAY the client's delayed
    # ACK adds ~40 ms to every response.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def do_PUT(self) -> None:
        self._dispatch()

    def do_PATCH(self) -> None:
        self._dispatch()

    def operation(self, path: str, query: dict[str, str]) -> str:
        """The request's operation (a fault target), or "?"."""
        raise NotImplementedError

    def handle_request(self, request: Request, fault: Fault | None) -> None:
        raise NotImplementedError

    @staticmethod
    def retry_after(fault: Fault) -> dict[str, str]:
        """The Retry-After header a status fault carries, if any."""
        return {} if fault.retry_after is None else {"Retry-After": f"{fault.retry_after:g}"}

    def refuse_chunked(self) -> None:
        self.send_json(411, {"message": "a body needs a Content-Length"})

    def _dispatch(self) -> None:
        parts = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(parts.query, keep_blank_values=True))
        headers = {name.lower(): value for name, value in self.headers.items()}
        if "chunked" in headers.get("transfer-encoding", "").lower():
            self._read_chunked()  # drained, then refused
            self.refuse_chunked()
            return
        body = self.rfile.read(int(headers.get("content-length") or 0))
        op = self.operation(parts.path, query)
        request = Request(op, self.command, parts.path, query, headers, body)
        owner = self.owner
        fault = owner._record(request)
        if fault is not None and fault.kind == "slow":
            if owner._stopping.wait(fault.delay_s):
                return
            fault = None
        if fault is not None and fault.kind == "hostile":
            self._send_hostile(fault.behaviour)
            return
        self.handle_request(request, fault)

    def _send_hostile(self, behaviour: Any) -> None:
        from tests.fakes.judge_server import hostile_body

        self.close_connection = True
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            if behaviour.kind == "gzip_bomb":
                self.send_header("Content-Encoding", "gzip")
            self.end_headers()  # no length: the body ends when the connection does
            for piece in hostile_body(behaviour):
                if self.owner._stopping.is_set():
                    return
                self.wfile.write(piece)
                self.wfile.flush()
                if behaviour.kind == "trickle" and self.owner._stopping.wait(behaviour.delay_s):
                    return
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client hung up: what it should do

    # -- sending --------------------------------------------------------------------------

    def _read_chunked(self) -> None:
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            self.rfile.read(size + 2)
            if size == 0:
                return

    def send_json(
        self, status: int, payload: dict[str, Any] | None, headers: dict[str, str] | None = None
    ) -> None:
        headers = {"Content-Type": "application/json", **(headers or {})}
        data = b"" if payload is None else json.dumps(payload).encode()
        self.send(status, data, headers)

    def send(self, status: int, data: bytes, headers: dict[str, str]) -> None:
        try:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            if status not in (204, 304):
                self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if status not in (204, 304):
                self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout): nothing to tell it
