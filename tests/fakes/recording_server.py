"""A server on 127.0.0.1 that records every request whole (method, path with query, headers,
body) and answers as an assistant, or redirects everything to `redirect_to`: what an attacker
runs to catch a secret. `leaked(secrets)` names each secret found anywhere in what arrived.

    with Recorder() as evil:
        ...
        assert evil.leaked(SECRETS) == []
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import quote, unquote


@dataclass(frozen=True)
class Arrived:
    method: str
    path: str
    headers: tuple[tuple[str, str], ...]
    body: bytes

    def text(self) -> str:
        lines = [f"{self.method} {self.path}", *(f"{k}: {v}" for k, v in self.headers)]
        return "\n".join(lines) + "\n\n" + self.body.decode("utf-8", "replace")


class Recorder:
    def __init__(self, *, answer: str = "I cannot say.", redirect_to: str | None = None) -> None:
        self.answer = answer
        self.redirect_to = redirect_to
        self.arrived: list[Arrived] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def leaked(self, secrets: Iterable[str]) -> list[str]:
        """The secrets found in any request: its line, headers or body, as sent or encoded."""
        with self._lock:
            texts = [a.text() for a in self.arrived]
        everything = "\n".join(texts)
        everything += "\n" + unquote(everything)
        return [s for s in secrets if s in everything or quote(s, safe="") in everything]

    def __enter__(self) -> Self:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _record(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                with owner._lock:
                    owner.arrived.append(
                        Arrived(self.command, self.path, tuple(self.headers.items()), body)
                    )
                if owner.redirect_to is not None:
                    self.send_response(307)
                    self.send_header("Location", owner.redirect_to + self.path)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                data = json.dumps({"answer": owner.answer, "sources": []}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _record

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()
