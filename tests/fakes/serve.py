"""Run a fake as a process of its own, e.g. as a container on a Docker network.

    python -m tests.fakes.serve github --host 0.0.0.0 --port 8000 \\
        --public-url http://github:8000 --scenario scenario.json
    python -m tests.fakes.serve judge --host 0.0.0.0 --port 8001 [--latency 0.05]

Each prints one line, `ready: <kind> listening on HOST:PORT`, once it accepts connections, and
serves until SIGTERM or SIGINT (so `docker stop` ends it at once). Nothing is read from stdin.

The GitHub fake is set up from a scenario (JSON), applied in this order through the same API
the in-process tests use:

    {
      "actions_tokens": [{"token": "ghs_...", "read_only": false}],
      "users": [{"login": "contributor", "token": null, "read_only": false}],
      "repos": [{"name": "acme/docs", "files": {"evals/baseline.json": "..."},
                 "default_branch": "main", "private": false}],
      "commits": [{"repo": "acme/docs", "branch": "change-1", "files": {"a.txt": "a"},
                   "start": "main", "message": "commit"}],
      "pulls": [{"repo": "acme/docs", "files": ["prompts/answer.txt"], "head": "change-1",
                 "base": null, "user": null, "title": "Change things", "body": null}]
    }

Every key is optional. Pull requests are numbered 1, 2, ... in the order given; their head and
base commits are read back through the API (`GET /repos/{owner}/{repo}/pulls/{number}`).

Besides GitHub's own paths, each fake answers a few GET paths of its own, outside any real API:

- GitHub: `/_fake/violations` (`{"violations": [...]}`: requests or answers that GitHub's OpenAPI
  description does not allow; a test fails on any) and `/_fake/requests` (what was served);
- judge: `/_fake/stats` (`{"calls", "paths", "models", "max_in_flight"}`).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from tests.fakes.github_server import GitHubServer
from tests.fakes.judge_server import JudgeServer

SCENARIO_KEYS = frozenset({"actions_tokens", "users", "repos", "commits", "pulls"})


class ScenarioError(ValueError):
    """A scenario file that does not say what the fake should hold."""


def _entries(scenario: dict[str, Any], key: str) -> list[dict[str, Any]]:
    entries = scenario.get(key, [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise ScenarioError(f"scenario: {key!r} must be a list of objects")
    return entries


def apply_scenario(server: GitHubServer, scenario: Any) -> None:
    """Set up `server` as `scenario` says (see the module docstring)."""
    if not isinstance(scenario, dict):
        raise ScenarioError("scenario: the top level must be an object")
    unknown = set(scenario) - SCENARIO_KEYS
    if unknown:
        raise ScenarioError(f"scenario: unknown keys {sorted(unknown)}")
    try:
        for entry in _entries(scenario, "actions_tokens"):
            server.add_actions_token(entry["token"], read_only=entry.get("read_only", False))
        for entry in _entries(scenario, "users"):
            server.add_user(
                entry["login"],
                token=entry.get("token"),
                read_only=entry.get("read_only", False),
            )
        for entry in _entries(scenario, "repos"):
            server.add_repo(
                entry["name"],
                files=entry.get("files"),
                default_branch=entry.get("default_branch", "main"),
                private=entry.get("private", False),
            )
        for entry in _entries(scenario, "commits"):
            server.commit(
                entry["repo"],
                entry["branch"],
                entry.get("files", {}),
                message=entry.get("message", "commit"),
                start=entry.get("start"),
            )
        for entry in _entries(scenario, "pulls"):
            server.add_pull(
                entry["repo"],
                files=entry.get("files", []),
                head=entry.get("head", "feature"),
                base=entry.get("base"),
                user=entry.get("user"),
                title=entry.get("title", "Change things"),
                body=entry.get("body"),
            )
    except KeyError as exc:
        raise ScenarioError(f"scenario: an entry lacks {exc}") from exc


def github_control(server: GitHubServer) -> dict[str, Callable[[], Any]]:
    return {
        "/_fake/violations": lambda: {"violations": list(server.violations)},
        "/_fake/requests": lambda: {
            "requests": [
                {"method": r.method, "path": r.path, "status": r.status, "login": r.login}
                for r in server.requests
            ]
        },
    }


def judge_control(server: JudgeServer) -> dict[str, Callable[[], Any]]:
    def stats() -> dict[str, Any]:
        with server._lock:
            return {
                "calls": len(server.requests),
                "paths": list(server.paths),
                "models": sorted({str(body.get("model")) for body in server.requests}),
                "max_in_flight": server.max_in_flight,
            }

    return {"/_fake/stats": stats}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fakes.serve", description=__doc__)
    parser.add_argument("kind", choices=["github", "judge"])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: any free port")
    parser.add_argument("--scenario", type=Path, help="github: the scenario (JSON)")
    parser.add_argument(
        "--public-url", help="github: the base URL clients use (default: 127.0.0.1 and the port)"
    )
    parser.add_argument("--latency", type=float, default=0.0, help="judge: seconds per answer")
    args = parser.parse_args(argv)

    server: GitHubServer | JudgeServer
    if args.kind == "github":
        server = GitHubServer(host=args.host, port=args.port, public_url=args.public_url)
        try:
            if args.scenario is not None:
                apply_scenario(server, json.loads(args.scenario.read_text(encoding="utf-8")))
        except (OSError, ValueError) as exc:
            print(f"serve: {exc}", file=sys.stderr)
            return 2
        server.control.update(github_control(server))
    else:
        server = JudgeServer(host=args.host, port=args.port, latency_s=args.latency)
        server.control.update(judge_control(server))

    stopping = threading.Event()

    def stop(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    with server:
        address = server._httpd.server_address if server._httpd else (args.host, args.port)
        print(f"ready: {args.kind} listening on {address[0]}:{address[1]}", flush=True)
        while not stopping.wait(1):
            pass
    print(f"stopped: {args.kind}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
