"""Shared fixtures.

`github_server`: a fresh fake GitHub (tests/fakes/github_server.py) on 127.0.0.1 for one test.
Every request and answer is checked against GitHub's OpenAPI description; any violation fails
the test at teardown (a test that provokes one on purpose takes it with `take_violations()`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import settings

from golden_gate import redaction
from golden_gate.example_assistant import start
from tests.action_world import World
from tests.fakes.github_server import GitHubServer

# CI must not fail on an example no one has seen before: explore at random on a laptop,
# replay the same examples in CI (`CI=true`, as GitHub Actions and .ci/run set it).
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")

# The event a CI runs this suite for is not the tests' own: on a pull request's run the command
# would treat every test's golden-gate.toml as that pull request's (secret_env.py).
os.environ.pop("GITHUB_EVENT_NAME", None)


@pytest.fixture(autouse=True)
def _forget_secrets() -> Iterator[None]:
    """A secret one test registers (a CLI header value) is not scrubbed from the next test."""
    redaction.clear()
    yield
    redaction.clear()


@pytest.fixture
def github_server() -> Iterator[GitHubServer]:
    with GitHubServer() as server:
        yield server
    violations = server.take_violations()
    assert not violations, (
        "the fake GitHub saw requests or answers that GitHub's OpenAPI description does not "
        "allow:\n" + "\n".join(violations)
    )


# The Action's world and the example assistant, for tests/test_action*.py.


@pytest.fixture
def world(github_server, tmp_path):
    return World(github_server, tmp_path)


@pytest.fixture(scope="module")
def candidate():
    with start("candidate") as assistant:
        yield assistant.url


@pytest.fixture(scope="module")
def good_assistant():
    with start("baseline") as assistant:
        yield assistant.url
