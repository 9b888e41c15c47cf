"""Debian's headless Chromium, driven over its DevTools protocol (a small websocket client).

No browser download: the `chromium` that scripts/setup-mermaid.sh installs for the chart tests.
The browser runs on 127.0.0.1 with a throwaway profile, no network but file:// pages.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from websockets.sync.client import ClientConnection, connect

CHROMIUM = shutil.which("chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-sync",
    "--disable-background-networking",
    "--disable-component-update",
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
]


class Page:
    """One tab: evaluate JavaScript in it, navigate it, take a screenshot."""

    def __init__(self, socket: ClientConnection) -> None:
        self.socket = socket
        self.ids = itertools.count(1)
        self.errors: list[str] = []  # uncaught exceptions in the page's script

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        number = next(self.ids)
        self.socket.send(json.dumps({"id": number, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv(timeout=60))
            if message.get("method") == "Runtime.exceptionThrown":
                details = message["params"]["exceptionDetails"]
                self.errors.append(details.get("exception", {}).get("description") or str(details))
            if message.get("id") == number:
                assert "error" not in message, message["error"]
                return message["result"]

    def eval(self, expression: str) -> Any:
        result = self.send(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        assert "exceptionDetails" not in result, result["exceptionDetails"]
        return result["result"].get("value")

    def open(self, url: str) -> None:
        """Load `url` and wait until its document (not the one before it) has loaded."""
        self.eval("window.__left = true")
        self.send("Page.navigate", url=url)
        self.wait("!window.__left && document.readyState === 'complete' && document.body !== null")

    def reload(self) -> None:
        self.eval("window.__left = true")
        self.send("Page.reload")
        self.wait("!window.__left && document.readyState === 'complete' && document.body !== null")

    def wait(self, condition: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not self.eval(f"!!({condition})"):
            assert time.monotonic() < deadline, f"timed out waiting for {condition}"
            time.sleep(0.05)

    def screenshot(self, path: Path, width: int = 1400, height: int = 1100) -> None:
        import base64

        self.send(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        shot = self.send("Page.captureScreenshot", format="png")
        path.write_bytes(base64.b64decode(shot["data"]))


@contextmanager
def browser() -> Iterator[Page]:
    assert CHROMIUM, "Debian's chromium is missing: run scripts/setup-mermaid.sh"
    # Chromium's helpers may still be writing the profile as it is removed.
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as profile:
        process = subprocess.Popen(
            [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its own process group: its helpers end with it
        )
        try:
            port_file = Path(profile) / "DevToolsActivePort"
            deadline = time.monotonic() + 60
            while not (port_file.is_file() and port_file.read_text().strip()):
                assert process.poll() is None, "chromium exited at start"
                assert time.monotonic() < deadline, "chromium did not open its DevTools port"
                time.sleep(0.05)
            port = port_file.read_text().split()[0]
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30) as r:
                targets = json.load(r)
            page = next(t for t in targets if t["type"] == "page")
            with connect(page["webSocketDebuggerUrl"], max_size=None) as socket:
                tab = Page(socket)
                tab.send("Page.enable")
                tab.send("Runtime.enable")
                yield tab
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
