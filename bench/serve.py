"""Serve a fake assistant or judge in its own process, so the harness is measured alone.

Prints the URL on the first line of stdout, then serves until stdin closes.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fakes.assistant_server import AssistantServer
from tests.fakes.judge_server import JudgeServer


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("kind", choices=["assistant", "judge"])
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--answers", type=Path, help="JSON object question -> answer")
    args = parser.parse_args()
    if args.kind == "assistant":
        answers = json.loads(args.answers.read_text()) if args.answers else {}
        server = AssistantServer(answers=answers, latency_s=args.latency)
        url_of = lambda: server.url  # noqa: E731
    else:
        server = JudgeServer(latency_s=args.latency)
        url_of = lambda: server.base_url  # noqa: E731
    with server:
        print(url_of(), flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main()
