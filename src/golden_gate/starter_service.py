"""How the repository's assistant runs, as `init` finds it, and the workflow steps that start
the pull request's own code for the gate.

In order: a compose file (golden-gate starts it: starter_workflows.py); a Dockerfile at the
root (built and run on the runner, its port published); a server command of a Python or Node
project (a Procfile's `web:` line, package.json's `start` script, a FastAPI or Flask app). The
last two are started by a `run:` step on the runner, listening on all interfaces, waited for,
and reached by the Action at `http://runner-host:PORT` (the gateway of its container's network).
None of these: the deployed service at the repository variable ASSISTANT_URL.
"""

from __future__ import annotations

import json
import re
import shlex
import textwrap
from pathlib import Path
from typing import NamedTuple

from golden_gate.files import read_text

NAME = "golden-gate-assistant"  # the image, container and log file the steps use
PYTHON_PORT, NODE_PORT, FLASK_PORT = 8000, 3000, 5000
# Folders searched for a Python app (and never: environments, dependencies, tests).
APP_FOLDERS = (".", "app", "src", "api", "server", "backend")
SKIPPED = {".venv", "venv", "node_modules", "tests", "test", ".git", "site-packages"}
FASTAPI = re.compile(r"^(\w+)\s*(?::[^=]+)?=\s*(?:fastapi\.)?FastAPI\(", re.M)
FLASK = re.compile(r"^(\w+)\s*(?::[^=]+)?=\s*(?:flask\.)?Flask\(", re.M)
PORT_WORDS = re.compile(r"(?:--port[= ]|-p |PORT=|:)(\d{2,5})\b")


class Service(NamedTuple):
    """How the assistant is started on the runner: `setup` then `start` (shell lines), listening
    on `port` on all interfaces; `found` says what it was found from."""

    found: str
    port: int
    start: str
    setup: str = ""
    env: tuple[tuple[str, str], ...] = ()
    logs: str = f"tail -n 50 {NAME}.log"  # shown when it never answers


def _port(text: str, default: int) -> int:
    match = PORT_WORDS.search(text)
    port = int(match.group(1)) if match else default
    return port if 0 < port < 65536 else default


def from_dockerfile(root: Path) -> Service | None:
    path = root / "Dockerfile"
    if not path.is_file():
        return None
    text = read_text(path, what="Dockerfile")
    exposed = re.search(r"^\s*EXPOSE\s+(\d+)", text, re.M | re.I)
    port = int(exposed.group(1)) if exposed else PYTHON_PORT
    return Service(
        found=f"Dockerfile (EXPOSE {port})" if exposed else "Dockerfile (no EXPOSE: port 8000)",
        port=port,
        setup=f"docker build --tag {NAME} .",
        # A published port listens on all of the runner's interfaces.
        start=f"docker run --detach --name {NAME} --publish {port}:{port} {NAME}",
        logs=f"docker logs --tail 50 {NAME}",
    )


def from_procfile(root: Path) -> Service | None:
    path = root / "Procfile"
    if not path.is_file():
        return None
    web = re.search(r"^web:\s*(.+)$", read_text(path, what="Procfile"), re.M)
    if web is None:
        return None
    command = web.group(1).strip()
    if "${{" in command:  # a workflow would evaluate it as an expression: not copied there
        return None
    port = _port(command, PYTHON_PORT)
    # The servers' own variables for all interfaces (uvicorn, flask run and gunicorn listen on
    # 127.0.0.1 unless told otherwise; a flag in the command still wins).
    listen = (
        ("UVICORN_HOST", "0.0.0.0"),
        ("FLASK_RUN_HOST", "0.0.0.0"),
        ("GUNICORN_CMD_ARGS", f"--bind 0.0.0.0:{port}"),
    )
    return Service(
        found="Procfile (web)",
        port=port,
        setup=(
            _python_setup(root)
            if _is_python(root)
            else _node_setup(root)
            if (root / "package.json").is_file()
            else ""
        ),
        start=command,
        env=(("PORT", str(port)), ("HOST", "0.0.0.0"), *listen),
    )


def from_package_json(root: Path) -> Service | None:
    path = root / "package.json"
    if not path.is_file():
        return None
    try:
        scripts = json.loads(read_text(path, what="package.json")).get("scripts") or {}
    except (ValueError, AttributeError):
        return None
    script = scripts.get("start") if isinstance(scripts, dict) else None
    if not isinstance(script, str) or not script.strip():
        return None
    port = _port(script, NODE_PORT)
    return Service(
        found="package.json (scripts.start)",
        port=port,
        setup=_node_setup(root),
        start="npm start",
        env=(("PORT", str(port)), ("HOST", "0.0.0.0")),
    )


def _node_setup(root: Path) -> str:
    return "npm ci" if (root / "package-lock.json").is_file() else "npm install"


def _is_python(root: Path) -> bool:
    return any((root / name).is_file() for name in ("pyproject.toml", "requirements.txt"))


def _python_setup(root: Path) -> str:
    install = (
        ".venv/bin/pip install -r requirements.txt"
        if (root / "requirements.txt").is_file()
        else ".venv/bin/pip install ."
    )
    return f"python3 -m venv .venv\n{install}"


def from_python_app(root: Path) -> Service | None:
    """A FastAPI or Flask app in a module of the usual folders (not in tests or environments)."""
    if not _is_python(root):
        return None
    for folder in APP_FOLDERS:
        base = root / folder
        if not base.is_dir():
            continue
        for path in sorted(base.glob("*.py")) + sorted(base.glob("*/*.py")):
            relative = path.relative_to(root)
            if SKIPPED & set(relative.parts) or path.name.startswith("test"):
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            in_src = relative.parts[0] == "src"
            module_path = relative.relative_to("src") if in_src else relative
            module = ".".join(module_path.with_suffix("").parts)
            if not all(part.isidentifier() for part in module.split(".")):
                continue
            app_dir = " --app-dir src" if in_src else ""
            if match := FASTAPI.search(text):
                return Service(
                    found=f"{relative.as_posix()} (FastAPI)",
                    port=PYTHON_PORT,
                    setup=_python_setup(root) + "\n.venv/bin/pip install uvicorn",
                    start=f".venv/bin/uvicorn{app_dir} {module}:{match.group(1)} "
                    f"--host 0.0.0.0 --port {PYTHON_PORT}",
                )
            if match := FLASK.search(text):
                app = f"{module}:{match.group(1)}"
                where = "PYTHONPATH=src " if in_src else ""
                return Service(
                    found=f"{relative.as_posix()} (Flask)",
                    port=FLASK_PORT,
                    setup=_python_setup(root),
                    start=f"{where}.venv/bin/flask --app {app} run --host 0.0.0.0 "
                    f"--port {FLASK_PORT}",
                )
    return None


def detect(root: Path) -> Service | None:
    """How the assistant at `root` is started on the runner, or None (no compose file is looked
    for here: a compose file, found first, is started by golden-gate itself)."""
    for finder in (from_dockerfile, from_procfile, from_package_json, from_python_app):
        if (service := finder(root)) is not None:
            return service
    return None


def start_steps(service: Service) -> str:
    """The workflow steps (YAML, indented for `steps:`) that start the pull request's own
    assistant on the runner and wait until its port answers."""
    env = "".join(f"          {key}: {json.dumps(value)}\n" for key, value in service.env)
    setup = "".join(f"          {line}\n" for line in service.setup.splitlines())
    url = f"http://127.0.0.1:{service.port}/"
    said = textwrap.wrap(
        f"The pull request's own assistant, started on the runner from this checkout (found "
        f"by golden-gate init: {service.found}), with no secret of the gate's. It listens on "
        "all interfaces (0.0.0.0): the Action runs in a container of its own and reaches the "
        f"runner at http://runner-host:{service.port}, where a server bound to 127.0.0.1 "
        "alone is not seen.",
        width=88,
        break_on_hyphens=False,
        break_long_words=False,
    )
    return (
        "".join(f"      # {line}\n" for line in said)
        + "      - name: Start the pull request's assistant\n"
        + (f"        env:\n{env}" if env else "")
        + "        run: |\n"
        + setup
        + f"          nohup {service.start} > {NAME}.log 2>&1 &\n"
        + "      - name: Wait until it answers\n"
        + "        run: |\n"
        + "          curl --silent --output /dev/null --max-time 5 --retry 120 --retry-delay 1 \\\n"
        + f"            --retry-connrefused {shlex.quote(url)} || {{\n"
        + f"            echo '::error::the assistant did not answer at {url}'\n"
        + f"            {service.logs}; exit 1; }}\n"
        + "\n"
    )
