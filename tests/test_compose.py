"""The pure parts of the compose lifecycle; the real engine is exercised in tests/container/."""

import pytest

from golden_gate.compose import ComposeSettings, _container_port, _map_binds, down_from_state
from golden_gate.errors import InputError


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
