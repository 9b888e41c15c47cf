"""A real HTTP assistant on 127.0.0.1 for tests: canned answers, scripted faults, full records.

`POST /ask` with `{"text": question}` answers `{"answer": ..., "sources": [...]}`, the answer
taken from `answers` (keyed by question) or `default_answer`. Answers may be any JSON value, so
a non-string answer (object, number, null) is just `answers={"q": {"nested": 1}}`. `shape`
builds a different response document (e.g. OpenAI-style `choices`), `question_path` finds the
question in a different request document. `GET /health` answers 200.

Faults, all plain attributes that may be changed while the server runs:

- `latency_s`: sleep before every POST (interruptible: stopping the server cuts it short);
- `hold_until`: hold the first requests until this many are in flight together (5 s at most),
  then let everything through: proves a client reaches its concurrency without timing luck;
- `fail_first` + `fail_status` (+ `retry_after`): the first N requests for each question fail;
- `failing_questions` (+ `fail_status`): every request for these questions fails;
- `flap`: requests for a question alternate `fail_status`, 200, `fail_status`, 200, ...;
- `status` (+ `retry_after`): every POST answers this status (500, 429, 404, ...);
- `error_body`: the body of those failures instead of `{"error": "fake assistant says N"}`;
- `mode`: "answer" (default), "html" (200 text/html), "empty" (200, empty body), "huge"
  (`huge_bytes` of JSON streamed in chunks, chunked encoding unless `huge_content_length`),
  "slow" (sleep `slow_s` first: past the client's timeout), "close" (read the request, then
  close the connection without a response);
- `encoded`: (Content-Encoding, bytes) sent as a 200's body as they are (gzip, a bomb, junk).

`ssl_context` serves HTTPS (`url` then says https).

Records: `requests` (path, lower-cased headers, body, parsed JSON), `request_count`,
`count(question)`, `max_in_flight`, `huge_completed` (huge bodies sent in full).

    with AssistantServer(answers={"What is X?": "X is Y."}, latency_s=0.05) as server:
        server.url  # http://127.0.0.1:PORT
"""

from __future__ import annotations

import contextlib
import json
import socket
import ssl
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal, Self

from tests.fakes.background import TLSMixIn

Mode = Literal["answer", "html", "empty", "huge", "slow", "close"]
Shape = Callable[[Any, list[Any]], Any]

HTML = b"<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
_CHUNK = 64 * 1024


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: bytes
    json: Any  # None when the body is not JSON
    header_lines: tuple[tuple[str, str], ...] = ()  # as sent: repeats and case kept

    def all(self, name: str) -> list[str]:
        """Every value sent under `name`, whatever its case."""
        return [value for key, value in self.header_lines if key.lower() == name.lower()]


def default_shape(answer: Any, sources: list[Any]) -> Any:
    return {"answer": answer, "sources": sources}


class AssistantServer:
    """The fake assistant, serving from background threads; use as a context manager."""

    def __init__(
        self,
        answers: Mapping[str, Any] | None = None,
        *,
        default_answer: Any = "I don't know.",
        sources: Sequence[Any] = ("docs/index.md",),
        shape: Shape = default_shape,
        question_path: str = "text",
        latency_s: float = 0.0,
        hold_until: int = 0,
        mode: Mode = "answer",
        status: int | None = None,
        retry_after: str | None = None,
        error_body: bytes | None = None,
        fail_first: int = 0,
        fail_status: int = 502,
        flap: bool = False,
        failing_questions: Sequence[str] = (),
        slow_s: float = 10.0,
        huge_bytes: int = 50_000_000,
        huge_content_length: bool = False,
        set_cookie: str | None = None,
        encoded: tuple[str, bytes] | None = None,
        ssl_context: ssl.SSLContext | None = None,
        host: str = "127.0.0.1",  # another loopback address stands for a runner's gateway
    ) -> None:
        self.host = host
        self.answers = dict(answers or {})
        self.default_answer = default_answer
        self.sources = list(sources)
        self.shape = shape
        self.question_path = question_path
        self.latency_s = latency_s
        self.hold_until = hold_until
        self.mode: Mode = mode
        self.status = status
        self.retry_after = retry_after
        self.error_body = error_body
        self.fail_first = fail_first
        self.fail_status = fail_status
        self.flap = flap
        self.failing_questions = set(failing_questions)
        self.slow_s = slow_s
        self.huge_bytes = huge_bytes
        self.huge_content_length = huge_content_length
        self.set_cookie = set_cookie  # sent with every answer (a session the client must not keep)
        self.encoded = encoded  # (Content-Encoding, body): sent as it is instead of an answer
        self.ssl_context = ssl_context  # serve HTTPS with it (fixed once started)

        self.requests: list[RecordedRequest] = []
        self.first_request_at: float | None = None  # time.time() of the first POST (benches)
        self.health_checks = 0
        self.max_in_flight = 0
        self.huge_completed = 0
        self.errors: list[BaseException] = []  # unexpected handler errors (not client hang-ups)
        self._in_flight = 0
        self._per_question: Counter[str | None] = Counter()
        self._lock = threading.Lock()
        self._crowd = threading.Condition(self._lock)  # notified whenever in-flight grows
        self._gate_open = False
        self._stopping = threading.Event()
        self._httpd: _Httpd | None = None
        self._thread: threading.Thread | None = None

    # -- inspection -------------------------------------------------------------------------

    @property
    def url(self) -> str:
        scheme = "https" if self.ssl_context is not None else "http"
        return f"{scheme}://{self.host}:{self.port}"

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the assistant server is not running")
        return self._httpd.server_address[1]

    @property
    def request_count(self) -> int:
        """POST requests received, on any path."""
        with self._lock:
            return len(self.requests)

    def count(self, question: str) -> int:
        with self._lock:
            return self._per_question[question]

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> Self:
        self._stopping.clear()
        self._httpd = _Httpd((self.host, 0), _Handler, self)
        self._httpd.ssl_context = self.ssl_context
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.01},
            name="assistant-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        httpd, thread = self._httpd, self._thread
        self._httpd = self._thread = None
        self._stopping.set()  # cuts short latency and slow sleeps, and huge bodies
        if httpd is None:
            return
        httpd.shutdown()  # no new connections
        httpd.close_connections()  # wakes handlers waiting on idle keep-alive connections
        httpd.join_workers(timeout=5)
        httpd.server_close()
        if thread is not None:
            thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- request handling (server threads) --------------------------------------------------

    def _record(self, request: RecordedRequest) -> tuple[str | None, int]:
        question = _question(request.json, self.question_path)
        with self._lock:
            if self.first_request_at is None:
                self.first_request_at = time.time()
            self.requests.append(request)
            self._per_question[question] += 1
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            self._crowd.notify_all()
            return question, self._per_question[question]

    def _done(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _hold(self) -> None:
        """Wait until `hold_until` requests are in flight together (at most 5 s), once."""
        with self._crowd:
            if self._gate_open or self.hold_until <= 0:
                return
            self._crowd.wait_for(
                lambda: self._in_flight >= self.hold_until or self._stopping.is_set(), timeout=5
            )
            self._gate_open = True

    def _sleep(self, seconds: float) -> bool:
        """Wait; False when the server is stopping."""
        return seconds <= 0 or not self._stopping.wait(seconds)

    def _failure_status(self, number: int, question: str | None) -> int | None:
        """The error status for the `number`th request for a question, or None to answer."""
        if self.status is not None:
            return self.status
        if question in self.failing_questions:
            return self.fail_status
        if number <= self.fail_first:
            return self.fail_status
        if self.flap and number % 2 == 1:
            return self.fail_status
        return None


class _Httpd(TLSMixIn, ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # a burst of 64 concurrent connects must not be refused
    allow_reuse_address = True

    def __init__(
        self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], owner: Any
    ) -> None:
        self.owner: AssistantServer = owner
        self._connections: set[socket.socket] = set()
        self._workers: set[threading.Thread] = set()
        self._tracking = threading.Lock()
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        # Like ThreadingMixIn, but remembering every worker and socket so stop() can end them.
        worker = threading.Thread(
            target=self._work, args=(request, client_address), name="assistant-worker", daemon=True
        )
        with self._tracking:
            self._connections.add(request)
            self._workers.add(worker)
        worker.start()

    def _work(self, request: Any, client_address: Any) -> None:
        try:
            self.process_request_thread(request, client_address)
        finally:
            with self._tracking:
                self._connections.discard(request)
                self._workers.discard(threading.current_thread())

    def close_connections(self) -> None:
        with self._tracking:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):  # already closed by the client
                # The plain socket's shutdown, also under TLS: SSLSocket.shutdown would drop
                # its TLS state under a handler thread still reading.
                socket.socket.shutdown(connection, socket.SHUT_RDWR)

    def join_workers(self, timeout: float) -> None:
        with self._tracking:
            workers = list(self._workers)
        for worker in workers:
            worker.join(timeout)

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        if isinstance(error, OSError):
            return  # the client hung up (timeout, body cap) or the server is stopping
        if error is not None:
            self.owner.errors.append(error)


class _Handler(BaseHTTPRequestHandler):
    server: _Httpd
    protocol_version = "HTTP/1.1"  # keep-alive, as httpx's pooled client expects
    # Headers and body go out in separate writes: without TCP_NODELAY the client's delayed
    # ACK adds ~40 ms to every response.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        if self.path.split("?", 1)[0] == "/health":
            with self.server.owner._lock:
                self.server.owner.health_checks += 1
            self._send_json(200, {"status": "ok"})
        else:
            self._send_json(404, {"error": f"no route GET {self.path}"})

    def do_POST(self) -> None:
        owner = self.server.owner
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        try:
            document = json.loads(body)
        except ValueError:
            document = None
        path = self.path.split("?", 1)[0]
        headers = {name.lower(): value for name, value in self.headers.items()}
        recorded = RecordedRequest(
            "POST", path, headers, body, document, tuple(self.headers.items())
        )
        question, number = owner._record(recorded)
        try:
            self._answer(owner, path, question, number)
        finally:
            owner._done()

    def _answer(self, owner: AssistantServer, path: str, question: str | None, number: int) -> None:
        owner._hold()
        if not owner._sleep(owner.latency_s):
            return
        if path != "/ask":
            self._send_json(404, {"error": f"no route POST {path}"})
            return
        if owner.mode == "close":
            self.close_connection = True  # and nothing sent: the client sees a dropped connection
            return
        failure = owner._failure_status(number, question)
        if failure is not None:
            extra = {"Retry-After": owner.retry_after} if owner.retry_after is not None else {}
            if owner.error_body is not None:
                self._send(failure, "application/json", owner.error_body, extra)
            else:
                self._send_json(failure, {"error": f"fake assistant says {failure}"}, extra)
            return
        if owner.mode == "slow" and not owner._sleep(owner.slow_s):
            return
        if owner.mode == "html":
            self._send(200, "text/html; charset=utf-8", HTML)
        elif owner.mode == "empty":
            self._send(200, "application/json", b"")
        elif owner.mode == "huge":
            self._send_huge(owner)
        elif owner.encoded is not None:
            encoding, data = owner.encoded
            self._send(200, "application/json", data, {"Content-Encoding": encoding})
        else:
            known = question is not None and question in owner.answers
            answer = owner.answers[question] if known else owner.default_answer
            cookie = {"Set-Cookie": owner.set_cookie} if owner.set_cookie else None
            self._send_json(200, owner.shape(answer, list(owner.sources)), cookie)

    def _send_json(
        self, status: int, payload: Any, headers: Mapping[str, str] | None = None
    ) -> None:
        try:
            data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:  # half an emoji: sent as JSON spells it, "\ud83d"
            data = json.dumps(payload).encode("ascii")
        self._send(status, "application/json", data, headers)

    def _send(
        self, status: int, content_type: str, data: bytes, headers: Mapping[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _send_huge(self, owner: AssistantServer) -> None:
        """A valid-looking JSON answer of `huge_bytes`, written a chunk at a time."""
        head, tail = b'{"answer": "', b'"}'
        filler = owner.huge_bytes - len(head) - len(tail)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        chunked = not owner.huge_content_length
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(owner.huge_bytes))
        self.end_headers()

        def write(data: bytes) -> None:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data) if chunked else data)

        write(head)
        block = b"x" * _CHUNK
        while filler > 0:
            if owner._stopping.is_set():
                self.close_connection = True
                return
            write(block[: min(filler, _CHUNK)])
            filler -= _CHUNK
        write(tail)
        if chunked:
            self.wfile.write(b"0\r\n\r\n")
        with owner._lock:
            owner.huge_completed += 1


def _question(document: Any, path: str) -> str | None:
    node = document
    for segment in path.split(".") if path else []:  # "" means the whole document
        if isinstance(node, dict):
            node = node.get(segment)
        elif isinstance(node, list) and segment.lstrip("-").isdigit():
            index = int(segment)
            node = node[index] if -len(node) <= index < len(node) else None
        else:
            return None
    return node if isinstance(node, str) else None
