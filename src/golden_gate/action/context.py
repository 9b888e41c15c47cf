"""The run's environment as the runner sets it for a container step: workspace and event."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from golden_gate.action.scope import PULL_REQUEST_EVENTS
from golden_gate.errors import InputError


class Context:
    """The run's environment as the runner sets it for a container step.

    A wrong environment (no checkout, no or a garbled event payload) is bad input: one sentence
    naming the variable, exit 2, never a silent guess such as "not a pull request".
    """

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = env
        self.event_name = env.get("GITHUB_EVENT_NAME", "")
        self.repository = env.get("GITHUB_REPOSITORY", "")
        self.api_url = env.get("GITHUB_API_URL", "https://api.github.com")
        workspace = env.get("GITHUB_WORKSPACE")
        if workspace and not Path(workspace).is_dir():
            raise InputError(
                f"GITHUB_WORKSPACE ({workspace}) is not a directory: the checkout is missing"
            )
        self.workspace = Path(workspace or os.getcwd())
        self.event = read_event(env.get("GITHUB_EVENT_PATH", ""), self.event_name)
        # Set once report, comment file, summary and outputs are written: an interrupt after
        # that (the cache save, the comment post) keeps this exit code instead of "incomplete".
        self.results_code: int | None = None

    @property
    def pull_request(self) -> dict[str, Any] | None:
        pr = self.event.get("pull_request")
        return pr if isinstance(pr, dict) else None

    @property
    def pr_number(self) -> int | None:
        number = (self.pull_request or {}).get("number")
        return number if _is_pr_number(number) else None

    @property
    def base_ref(self) -> str | None:
        base = (self.pull_request or {}).get("base")
        return base.get("ref") if isinstance(base, dict) else None

    @property
    def is_fork(self) -> bool:
        head = (self.pull_request or {}).get("head")
        repo = head.get("repo") if isinstance(head, dict) else None
        if not isinstance(repo, dict):
            return False
        return bool(repo.get("fork")) or repo.get("full_name") not in (None, self.repository)


def _is_pr_number(value: object) -> bool:
    return type(value) is int and value > 0


def read_event(path: str, event_name: str) -> dict[str, Any]:
    """The event payload at GITHUB_EVENT_PATH; a pull request event must carry its PR."""
    from golden_gate import jsontext

    pull_request = event_name in PULL_REQUEST_EVENTS
    if not path:
        if pull_request:
            raise InputError(
                f"GITHUB_EVENT_PATH is not set: a {event_name} event needs its payload "
                "(the pull request's number, base and head)"
            )
        return {}
    try:
        event = jsontext.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise InputError(
            f"GITHUB_EVENT_PATH ({path}): cannot read the event payload ({reason})"
        ) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: the event payload is not JSON ({exc})") from None
    if not isinstance(event, dict):
        raise InputError(
            f"{path}: the event payload is a JSON {type(event).__name__}, not an object"
        )
    pr = event.get("pull_request")
    if pull_request:
        if not isinstance(pr, dict):
            raise InputError(f"{path}: a {event_name} event's payload has no pull_request object")
        if not _is_pr_number(pr.get("number")):
            got = json.dumps(pr.get("number"))[:40]
            raise InputError(
                f"{path}: pull_request.number must be a positive whole number, got {got}"
            )
        for side in ("base", "head"):
            if not isinstance(pr.get(side), dict):
                raise InputError(f"{path}: pull_request.{side} is not an object")
    return event
