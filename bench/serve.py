"""Serve a fake assistant or judge in its own process, so the harness is measured alone.

Prints the URL on the first line of stdout, then serves until stdin closes. Each line `stats`
on stdin is answered with one JSON line: requests served, the most in flight at once and the
CPU seconds this process spent, all since the previous `stats` (which resets them); for the
assistant also `first_request_at`, the time.time() of the first request since then.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
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
    server: AssistantServer | JudgeServer
    if args.kind == "assistant":
        answers = json.loads(args.answers.read_text()) if args.answers else {}
        server = AssistantServer(answers=answers, latency_s=args.latency)
    else:
        server = JudgeServer(latency_s=args.latency)

    def served() -> int:
        return server.request_count if isinstance(server, AssistantServer) else server.calls

    with server:
        url = server.url if isinstance(server, AssistantServer) else server.base_url
        print(url, flush=True)
        requests, cpu = 0, time.process_time()
        for line in sys.stdin:
            if line.strip() != "stats":
                continue
            with server._lock:
                peak, server.max_in_flight = server.max_in_flight, 0
            now_requests, now_cpu = served(), time.process_time()
            stats = {"requests": now_requests - requests, "max_in_flight": peak}
            if isinstance(server, AssistantServer):  # when the first request since came in
                with server._lock:
                    stats["first_request_at"], server.first_request_at = (
                        server.first_request_at,
                        None,
                    )
            stats["cpu_s"] = round(now_cpu - cpu, 3)
            print(json.dumps(stats), flush=True)
            requests, cpu = now_requests, now_cpu


if __name__ == "__main__":
    main()
