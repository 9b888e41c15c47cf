"""Shared fixtures.

`github_server`: a fresh fake GitHub (tests/fakes/github_server.py) on 127.0.0.1 for one test.
Every request and answer is checked against GitHub's OpenAPI description; any violation fails
the test at teardown (a test that provokes one on purpose takes it with `take_violations()`).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.github_server import GitHubServer


@pytest.fixture
def github_server() -> Iterator[GitHubServer]:
    with GitHubServer() as server:
        yield server
    violations = server.take_violations()
    assert not violations, (
        "the fake GitHub saw requests or answers that GitHub's OpenAPI description does not "
        "allow:\n" + "\n".join(violations)
    )
