"""A small, deterministic documentation Q&A service: the assistant `golden-gate demo` gates.

It answers questions about a fictional product ("Acme Vault") from the Markdown pages bundled
next to this module: it splits the pages into `##` sections, scores every section against the
question with BM25 (section titles weigh more) and answers with the best section, citing its
page as `docs/<page>.md`. Questions that match nothing well enough are refused.

Its `sources` are every page, ranked by its best section (the retriever's order). Variants
play "main" and "a pull request":

- `baseline` answers as described above;
- `candidate` simulates a prompt change ("answer more concisely") that regressed: on some pages
  it keeps only the first sentence of the section, on others it drops the citation (and its
  sources); and a re-built index that ranks the install page last among the sources (the
  answers do not change). The rest of its answers are those of the baseline, and all are
  deterministic;
- `retriever` is that index change alone: every answer as the baseline's, the sources not.

HTTP: `POST /ask` with `{"text": question}` -> `{"answer": str, "sources": [str], "usage"}`;
`GET /health` -> `{"status": "ok"}` (plus `index_snapshot` when one is set). Standard library
only, so it runs anywhere the package does, including a bare container.

The answers (the index, BM25, the variants) are answers.py; this module serves them. Both run
with the standard library alone, so a user can read and copy them.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import threading
from collections.abc import Sequence
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, Self
from urllib.parse import urlsplit

from golden_gate.example_assistant.answers import (
    MAX_BODY_BYTES,
    MIN_SCORE,
    VARIANTS,
    answer,
    check_variant,
    default_index,
    usage,
)

# -- HTTP ------------------------------------------------------------------------------------


class _BadRequest(Exception):
    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status


def read_variant(path: Path) -> str:
    """The `variant` a settings file names (`golden-gate init --example`'s assistant.toml)."""
    import tomllib  # only here: the server alone needs no TOML

    try:
        value = tomllib.loads(path.read_text(encoding="utf-8")).get("variant", "baseline")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{path}: cannot read the example assistant's settings ({exc})") from None
    if value not in VARIANTS:
        raise ValueError(f"{path}: variant must be one of {', '.join(VARIANTS)}, not {value!r}")
    return str(value)


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a hung client must not keep the process (or a test) alive

    def __init__(
        self,
        address: tuple[str, int],
        variant: str,
        index_snapshot: str | None,
        settings: Path | None = None,
    ):
        self._variant = variant
        self.settings = settings
        self.index_snapshot = index_snapshot
        self.index = default_index()  # built before serving: the first request is not slow
        from golden_gate.example_assistant.agent import Conversations

        self.conversations = Conversations()  # the stateful chat's (agent.py)
        super().__init__(address, _Handler)

    @property
    def variant(self) -> str:
        """Read again on every request when a settings file names it: editing the file is the
        example's pull request, with no restart."""
        if self.settings is not None:
            # A half-written file: the last good answer style.
            with contextlib.suppress(ValueError):
                self._variant = read_variant(self.settings)
        return self._variant


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    server_version = "AcmeVaultAssistant/1.0"
    # Headers and body go out in separate writes: without TCP_NODELAY the client's delayed
    # ACK adds ~40 ms to every response.
    disable_nagle_algorithm = True
    timeout = 30  # drop clients that connect and never send a request

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: a demo prints its own progress, and stderr is not a request log

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if path == "/health":
            body: dict[str, Any] = {"status": "ok"}
            if self.server.index_snapshot:
                body["index_snapshot"] = self.server.index_snapshot
            self._send(HTTPStatus.OK, body)
        elif path == "/ask":
            self._send(HTTPStatus.METHOD_NOT_ALLOWED, {"error": "use POST"}, allow="POST")
        else:
            self._send(HTTPStatus.NOT_FOUND, {"error": f"no such path: {path}"})

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        if path == "/health":
            self._send(HTTPStatus.METHOD_NOT_ALLOWED, {"error": "use GET"}, allow="GET")
            return
        if path not in ("/ask", "/agent", "/chat"):
            self._send(HTTPStatus.NOT_FOUND, {"error": f"no such path: {path}"})
            return
        try:
            question = self._question()
        except _BadRequest as exc:
            self._send(exc.status, {"error": str(exc)})
            return
        if path != "/ask":  # the agent and chat modes (agent.py)
            self._send(HTTPStatus.OK, self._agent_or_chat(path, question))
            return
        body = answer(question, self.server.variant, self.server.index)
        self._send(HTTPStatus.OK, {**body, "usage": usage(question, body["answer"])})

    def _agent_or_chat(self, path: str, question: str) -> dict[str, Any]:
        from golden_gate.example_assistant import agent

        variant, index = self.server.variant, self.server.index

        def respond(text: str, style: str) -> dict[str, Any]:
            return answer(text, style, index)

        if path == "/agent":
            return agent.agent_answer(question, variant, index, respond, MIN_SCORE)
        conversation = self._document.get("conversation_id")
        if isinstance(conversation, str) and conversation:
            history = self.server.conversations.history(conversation)
        else:
            conversation, history = None, agent.read_history(self._document)
        body = agent.chat_answer(question, history, variant, index, respond, MIN_SCORE)
        if conversation is not None:
            said = [
                {"role": "user", "content": question},
                {"role": "assistant", "content": body["answer"]},
            ]
            self.server.conversations.add(conversation, said)
            body["conversation_id"] = conversation
        return body

    def _question(self) -> str:
        length_header = self.headers.get("Content-Length")
        if length_header is None:
            raise _BadRequest(HTTPStatus.LENGTH_REQUIRED, "Content-Length is required")
        try:
            length = int(length_header)
        except ValueError:
            raise _BadRequest(HTTPStatus.BAD_REQUEST, "Content-Length is not a number") from None
        if length < 0:
            raise _BadRequest(HTTPStatus.BAD_REQUEST, "Content-Length is negative")
        if length > MAX_BODY_BYTES:
            raise _BadRequest(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"body over {MAX_BODY_BYTES} bytes"
            )
        raw = self.rfile.read(length)
        try:
            document = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise _BadRequest(HTTPStatus.BAD_REQUEST, f"body is not JSON: {exc}") from None
        self._document = document if isinstance(document, dict) else {}
        text = document.get("text") if isinstance(document, dict) else None
        if not isinstance(text, str) or not text.strip():
            raise _BadRequest(
                HTTPStatus.BAD_REQUEST, 'expected a JSON object with a non-empty string "text"'
            )
        return text

    def _send(self, status: HTTPStatus, body: dict[str, Any], allow: str | None = None) -> None:
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        if allow:
            self.send_header("Allow", allow)
        self.end_headers()
        self.wfile.write(data)


def _make_server(
    host: str, port: int, variant: str, index_snapshot: str | None, settings: Path | None = None
) -> _Server:
    check_variant(variant)
    if index_snapshot is None:
        index_snapshot = os.environ.get("INDEX_SNAPSHOT") or None
    return _Server((host, port), variant, index_snapshot, settings)


class RunningAssistant:
    """A server running in a daemon thread; `stop()` (or leaving the `with`) shuts it down."""

    def __init__(self, server: _Server) -> None:
        self._server = server
        # A short poll keeps stop() quick: shutdown() waits for the loop's next poll.
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.02},
            name="example-assistant",
            daemon=True,
        )
        self._thread.start()
        self._stopped = False

    @property
    def variant(self) -> str:
        return self._server.variant

    @property
    def conversations(self) -> dict[str, list[dict[str, str]]]:
        """The stateful chat's conversations by id (agent.py)."""
        return self._server.conversations.messages

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def host(self) -> str:
        host = str(self._server.server_address[0])
        # A wildcard bind is reachable on loopback; the wildcard itself is not an address.
        return "127.0.0.1" if host in ("0.0.0.0", "") else host

    @property
    def url(self) -> str:
        """The base URL, without a trailing slash: POST `{url}/ask`, GET `{url}/health`."""
        return f"http://{self.host}:{self.port}"

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def start(
    variant: str = "baseline",
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    index_snapshot: str | None = None,
) -> RunningAssistant:
    """Start the assistant in this process (port 0: any free port; see `.url`).

    `index_snapshot` defaults to the `INDEX_SNAPSHOT` environment variable; when set, `/health`
    echoes it so a run can record which index it was served from.
    """
    return RunningAssistant(_make_server(host, port, variant, index_snapshot))


def _terminate(signum: int, frame: FrameType | None) -> None:
    # As PID 1 in a container, SIGTERM is ignored unless handled: `docker stop` would then
    # wait its full grace period and SIGKILL. Treat it like Ctrl-C.
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m golden_gate.example_assistant [--host H] [--port P] [--variant V]`."""
    parser = argparse.ArgumentParser(
        prog="python -m golden_gate.example_assistant",
        description="Serve the Acme Vault documentation assistant (the golden-gate demo target).",
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default: %(default)s)"
    )
    parser.add_argument("--port", type=int, default=8080, help="port (default: %(default)s)")
    parser.add_argument(
        "--variant",
        choices=VARIANTS,
        default=os.environ.get("ASSISTANT_VARIANT") or "baseline",
        help="baseline, or candidate (a simulated regression); default: $ASSISTANT_VARIANT "
        "or baseline",
    )
    parser.add_argument(
        "--settings",
        type=Path,
        default=None,
        help="a TOML file whose `variant` is read again on every request (it overrides --variant)",
    )
    args = parser.parse_args(argv)
    if args.variant not in VARIANTS:  # argparse does not check a default from the environment
        parser.error(f"ASSISTANT_VARIANT must be one of {', '.join(VARIANTS)}")
    if args.settings is not None:
        try:
            args.variant = read_variant(args.settings)
        except ValueError as exc:
            parser.error(str(exc))
    try:
        server = _make_server(args.host, args.port, args.variant, None, args.settings)
    except OSError as exc:
        print(f"error: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    if threading.current_thread() is threading.main_thread():  # signal() works only there
        signal.signal(signal.SIGTERM, _terminate)
    host, port = str(server.server_address[0]), server.server_address[1]
    print(f"example assistant ({args.variant}) listening on http://{host}:{port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
