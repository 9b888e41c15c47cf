"""A fake server's lifecycle: a ThreadingHTTPServer on a background thread, started and stopped
cleanly, its handlers reaching their owner through `owner`; HTTPS when given an `ssl_context`."""

from __future__ import annotations

import socket
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class TLSMixIn:
    """Serves HTTPS when `ssl_context` is set: each accepted connection is wrapped, and its
    handshake is made on the connection's own thread (in the accepting thread, a client that
    connects and says nothing would stall every other)."""

    ssl_context: ssl.SSLContext | None = None

    def get_request(self) -> tuple[socket.socket, Any]:
        connection, address = super().get_request()  # type: ignore[misc]
        if self.ssl_context is not None:
            connection = self.ssl_context.wrap_socket(
                connection, server_side=True, do_handshake_on_connect=False
            )
        return connection, address

    def finish_request(self, request: Any, client_address: Any) -> None:
        if isinstance(request, ssl.SSLSocket):
            try:
                request.do_handshake()
            except (ssl.SSLError, OSError):
                return  # a client that does not trust the certificate hangs up: a test's point
        super().finish_request(request, client_address)  # type: ignore[misc]


class QuietServer(TLSMixIn, ThreadingHTTPServer):
    daemon_threads = True
    # The default backlog of 5 drops a burst of 32 connects, and a dropped SYN is retried only
    # after a second: a stall that looks like a slow client.
    request_queue_size = 128

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that timed out and hung up is part of the tests, not a server bug.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class BackgroundServer:
    """Subclasses give `handler_class` (with an `owner` attribute) and may override `address`."""

    thread_name = "fake-server"

    def __init__(self, *, ssl_context: ssl.SSLContext | None = None) -> None:
        self.ssl_context = ssl_context  # serve HTTPS with it
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    def address(self) -> tuple[str, int]:
        return ("127.0.0.1", 0)

    @property
    def scheme(self) -> str:
        return "https" if self.ssl_context is not None else "http"

    def start(self) -> Self:
        handler = type("Handler", (self.handler_class(),), {"owner": self})
        self._stopping.clear()
        self._httpd = QuietServer(self.address(), handler)
        self._httpd.ssl_context = self.ssl_context
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.02},  # shutdown() waits up to one poll
            name=self.thread_name,
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # cuts short any delay in progress
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
