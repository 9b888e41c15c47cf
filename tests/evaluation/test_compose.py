"""The pure parts of the compose lifecycle; the real engine is exercised in tests/container/."""

import pytest

from golden_gate.errors import InputError
from golden_gate.evaluation.compose import (
    ComposeSettings,
    _container_port,
    _map_binds,
    down_from_state,
    project_to_tear_down,
)


def config():
    return {
        "services": {
            "assistant": {
                "ports": [{"target": 8080, "published": "0"}],
                "volumes": [
                    {"type": "bind", "source": "/github/workspace/pages", "target": "/srv"},
                    {"type": "bind", "source": "/etc/hosts", "target": "/h"},
                    {"type": "volume", "source": "data", "target": "/data"},
                ],
            },
            "db": {"expose": ["5432/tcp"]},
            "worker": {},
        }
    }


def test_binds_under_the_workspace_map_to_the_host_path():
    mapped = _map_binds(config(), "/home/runner/work/repo/repo")
    volumes = mapped["services"]["assistant"]["volumes"]
    assert volumes[0]["source"] == "/home/runner/work/repo/repo/pages"
    assert volumes[1]["source"] == "/etc/hosts"  # outside the workspace: left alone
    assert volumes[2]["source"] == "data"


def test_container_port_from_ports_or_expose():
    assert _container_port(config(), "assistant") == 8080
    assert _container_port(config(), "db") == 5432
    with pytest.raises(InputError, match="publishes or exposes no port"):
        _container_port(config(), "worker")
    with pytest.raises(InputError, match="no service 'api' \\(services: assistant, db, worker\\)"):
        _container_port(config(), "api")


def test_project_names_are_made_valid():
    assert ComposeSettings(file="c.yml", project="Golden Gate/123").project == "golden-gate-123"


def test_post_step_without_state_does_nothing():
    down_from_state({})  # no compose project was saved: no docker call at all


def test_post_step_takes_the_project_from_state_else_from_the_inputs():
    state = {"STATE_compose-project": "golden-gate-7", "INPUT_COMPOSE-FILE": "c.yml"}
    assert project_to_tear_down(state)[0] == "golden-gate-7"
    # act passes no saved state to a Docker action's post step: the inputs name the project.
    inputs = {"INPUT_COMPOSE-FILE": "c.yml", "GITHUB_RUN_ID": "42"}
    assert project_to_tear_down(inputs)[0] == "golden-gate-42"
    named = {**inputs, "INPUT_COMPOSE-PROJECT": "Eval Run"}
    assert project_to_tear_down(named)[0] == "eval-run"
    # No compose file, or a name with nothing valid in it: nothing to take down.
    assert project_to_tear_down({"GITHUB_RUN_ID": "42"})[0] is None
    assert project_to_tear_down({**inputs, "INPUT_COMPOSE-PROJECT": "///"})[0] is None


def _health_server(head_byte_every_s: float):
    """A health endpoint (the pull request's own service) that sends its response head a
    byte at a time: each read well inside any read timeout."""
    import threading
    import time
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Trickle(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            try:
                for byte in b"HTTP/1.1 200 OK\r\n" + b"X-Pad: " + b"a" * 10_000:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(head_byte_every_s)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Trickle)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_a_health_check_that_trickles_is_stopped_within_its_deadline(tmp_path):
    import time

    from golden_gate.errors import IncompleteError
    from golden_gate.evaluation.compose import Compose

    server = _health_server(0.2)
    try:
        settings = ComposeSettings(file=tmp_path / "compose.yml", project="p", wait_timeout_s=1)
        url = f"http://127.0.0.1:{server.server_address[1]}"
        started = time.monotonic()
        with pytest.raises(IncompleteError) as caught:
            Compose(settings)._wait_healthy(url, time.monotonic() + 1)
        # One try, cut at its 5 s deadline (the head is 10 kB at 5 bytes a second).
        assert time.monotonic() - started < 30
        assert "was not healthy within 1 s (last: ReadTimeout)" in str(caught.value)
    finally:
        server.shutdown()


# -- a docker without its compose plugin, or none -----------------------------------------

# What docker 24 says without the plugin: `compose -f` is read as docker's own flag.
_NO_PLUGIN = """#!/bin/sh
if [ "$1" = compose ] && [ "$2" = version ]; then
  echo "docker: 'compose' is not a docker command." >&2; echo "See 'docker --help'" >&2; exit 1
fi
if [ "$1" = compose ]; then
  echo "unknown shorthand flag: 'f' in -f" >&2; echo "See 'docker --help'." >&2; exit 125
fi
exit 1
"""
# A docker with the plugin, given a file that is not a compose file.
_BAD_FILE = """#!/bin/sh
if [ "$1" = compose ] && [ "$2" = version ]; then echo "Docker Compose version v2.29.1"; exit 0; fi
if [ "$1" = compose ]; then
  echo "services.web Additional property imagex is not allowed" >&2; exit 15
fi
exit 1
"""


def _eval_with_docker(tmp_path, monkeypatch, script):
    """`golden-gate eval --compose-file` with `script` as the only `docker` (None: no docker)."""
    from tests.helpers import golden_gate

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    if script is not None:
        docker = bin_dir / "docker"
        docker.write_text(script)
        docker.chmod(0o755)
    (tmp_path / "compose.yml").write_text("services:\n  web:\n    imagex: nginx\n")
    (tmp_path / "g.jsonl").write_text('{"id": "a", "question": "q?", "must_refuse": true}\n')
    # Nothing else on PATH: no other docker (the script's shell is named by its full path).
    monkeypatch.setenv("PATH", str(bin_dir))
    return golden_gate(
        "eval", tmp_path / "g.jsonl", "--compose-file", tmp_path / "compose.yml", "--quiet",
        "-o", tmp_path / "r.json", cwd=tmp_path,
    )  # fmt: skip


def test_a_missing_compose_plugin_is_named_not_read_as_a_bad_file(tmp_path, monkeypatch):
    done = _eval_with_docker(tmp_path, monkeypatch, _NO_PLUGIN)
    assert done.returncode == 2, done.stderr
    said = [line for line in done.stderr.splitlines() if "error" in line]
    assert len(said) == 1 and "not a valid compose file" not in said[0], done.stderr
    assert "compose-file needs Docker's compose plugin" in said[0]
    assert "docker-compose-plugin" in said[0]


def test_a_bad_compose_file_is_still_a_bad_file(tmp_path, monkeypatch):
    done = _eval_with_docker(tmp_path, monkeypatch, _BAD_FILE)
    assert done.returncode == 2, done.stderr
    assert "compose.yml: not a valid compose file (services.web Additional property" in done.stderr


def test_no_docker_at_all_is_one_sentence(tmp_path, monkeypatch):
    done = _eval_with_docker(tmp_path, monkeypatch, None)
    assert done.returncode == 2, done.stderr
    assert "there is no `docker` on PATH" in done.stderr
