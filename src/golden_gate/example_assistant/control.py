"""`golden-gate example-assistant start|stop|serve`: the example of `init --example`, run from
its folder.

`start` runs the assistant as a process of its own and returns once it answers, so a quickstart
needs no second terminal and no `&`; its process id goes to `.example-assistant.pid` for `stop`.
Host, port and the answer style come from `assistant.toml`, which `init --example` wrote beside
golden-gate.toml (the same port as golden-gate.toml's assistant URL).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import tomllib
import urllib.error
import urllib.request
from pathlib import Path

SETTINGS = "assistant.toml"
PID_FILE = ".example-assistant.pid"
LOG_FILE = ".example-assistant.log"
START_TIMEOUT = 20.0


class ControlError(Exception):
    """One sentence for the user; the command exits 2."""


def _address(settings: Path) -> tuple[str, int]:
    try:
        data = tomllib.loads(settings.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ControlError(
            f"{settings}: not found; run this in the folder `golden-gate init --example` wrote"
        ) from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ControlError(f"{settings}: cannot read it ({exc})") from None
    host, port = data.get("host", "127.0.0.1"), data.get("port", 8080)
    if not isinstance(host, str) or not isinstance(port, int) or not 0 < port < 65536:
        raise ControlError(f"{settings}: host must be a string and port a number from 1 to 65535")
    return host, port


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=1) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def _command(settings: Path, host: str, port: int) -> list[str]:
    return [
        sys.executable, "-m", "golden_gate.example_assistant",
        "--host", host, "--port", str(port), "--settings", str(settings.resolve()),
    ]  # fmt: skip


def serve(folder: Path) -> int:
    """In the foreground, until Ctrl-C."""
    settings = folder / SETTINGS
    host, port = _address(settings)
    return subprocess.call(_command(settings, host, port))


def start(folder: Path) -> str:
    """Start it in the background; returns its URL once it answers."""
    settings = folder / SETTINGS
    host, port = _address(settings)
    url = f"http://{host}:{port}"
    if _answers(url):
        raise ControlError(
            f"something already answers at {url}: `golden-gate example-assistant stop`, or "
            f"change port in {settings} and assistant url in golden-gate.toml"
        )
    log = (folder / LOG_FILE).open("ab")
    with log:
        process = subprocess.Popen(
            _command(settings, host, port),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,  # outlives this command and a Ctrl-C in its terminal
        )
    (folder / PID_FILE).write_text(f"{process.pid}\n", encoding="utf-8")
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            (folder / PID_FILE).unlink(missing_ok=True)
            raise ControlError(
                f"the example assistant stopped at once (exit {process.returncode}); "
                f"see {folder / LOG_FILE}"
            )
        if _answers(url):
            return url
        time.sleep(0.1)
    process.terminate()
    (folder / PID_FILE).unlink(missing_ok=True)
    raise ControlError(f"the example assistant did not answer at {url} within {START_TIMEOUT:g} s")


def stop(folder: Path) -> bool:
    """Stop the one `start` left running; False when none was."""
    pid_file = folder / PID_FILE
    try:
        pid = int(pid_file.read_text(encoding="utf-8").strip())
    except (FileNotFoundError, ValueError):
        return False
    pid_file.unlink(missing_ok=True)
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    return True
