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
