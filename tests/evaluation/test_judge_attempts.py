"""What a judge really costs: every HTTP request to it is counted (`stats.judge_attempts`), and
its retries are one bounded layer (evaluation/retry.py), not the SDK's on top of ours."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from golden_gate.core.report_file import load_report
from golden_gate.evaluation.judge import JudgeError
from golden_gate.evaluation.retry import DOWN_AFTER
from golden_gate.example_assistant import golden_path, start
from tests.evaluation.test_judge import CORRECT, ITEM, MODEL, llm_judge
from tests.fakes.judge_server import Behaviour, JudgeServer

DUMMY = "sk-test-attempts-0000000000000000"


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", DUMMY)
    for name in ("OPENAI_BASE_URL", "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server() -> Any:
    with JudgeServer() as running:
        yield running


def _eval(server: JudgeServer, url: str, out: Path, *extra: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    env["OPENAI_API_KEY"] = DUMMY
    command = [sys.executable, "-m", "golden_gate", "eval", str(golden_path())]
    command += ["--assistant-url", url, "--judge-model", MODEL, "--judge-base-url"]
    command += [server.base_url, "-o", str(out), "--quiet", "--cache", "off", *extra]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)


def test_against_a_judge_answering_500_every_request_is_counted_and_retries_stop(tmp_path):
    with JudgeServer() as server, start("candidate") as assistant:
        server.default = Behaviour.server_error(500, retry_after=0.01)
        out = tmp_path / "report.json"
        # One call at a time, so the count is exact; judge-retries 6, the default.
        done = _eval(server, assistant.url, out, "--judge-concurrency", "1")
        sent = server.calls
        proved = server.preflights  # the judge preflight's request (answered: a verdict)

    assert done.returncode == 3, done.stdout + done.stderr
    report = load_report(out)
    stats = report.stats
    assert stats is not None and stats.judge_calls > DOWN_AFTER
    # What the report says was sent is what the server received, retries included ...
    assert proved == 1 and stats.judge_attempts == sent + proved
    # ... and the SDK adds none of its own: the first DOWN_AFTER calls are tried 1 + 6 times,
    # then the judge is down and each later call is tried once (not 7 times each).
    assert sent == DOWN_AFTER * 7 + (stats.judge_calls - DOWN_AFTER)
    assert sent < stats.judge_calls * 7
    errors = [run.error for r in report.results for run in r.run_results if run.error]
    assert any("HTTP 500 after 6 retries" in e for e in errors)
    assert any(e.endswith("HTTP 500: fake judge says 500") for e in errors)  # tried once


def test_a_success_ends_the_down_state_and_retries_resume(server: JudgeServer) -> None:
    judge = llm_judge(server, max_retries=2, concurrency=1)

    async def run() -> list[Any]:
        outcomes: list[Any] = []
        try:
            for _ in range(DOWN_AFTER + 3):
                try:
                    verdict = await judge.judge(
                        question=ITEM.question, answer=CORRECT, reference=ITEM.reference
                    )
                    outcomes.append(("verdict", verdict.attempts))
                except JudgeError as exc:
                    outcomes.append(("error", exc.attempts))
                if len(outcomes) == DOWN_AFTER + 1:
                    server.default = Behaviour.verdict()  # the judge comes back
                if len(outcomes) == DOWN_AFTER + 2:
                    server.default = Behaviour.server_error(500, retry_after=0.01)
        finally:
            await judge.aclose()
        return outcomes

    server.default = Behaviour.server_error(500, retry_after=0.01)
    outcomes = asyncio.run(run())

    assert outcomes == [
        *[("error", 3)] * DOWN_AFTER,  # three calls with every try failed: down
        ("error", 1),  # tried once while down
        ("verdict", 1),  # back: a verdict
        ("error", 3),  # and a failing call is retried again
    ]


def test_a_retried_call_counts_its_attempts_beside_its_verdict(server: JudgeServer) -> None:
    server.enqueue(Behaviour.rate_limited(retry_after=0.01), Behaviour.server_error(503))
    judge = llm_judge(server, max_retries=3)

    async def run() -> Any:
        try:
            return await judge.judge(
                question=ITEM.question, answer=CORRECT, reference=ITEM.reference
            )
        finally:
            await judge.aclose()

    verdict = asyncio.run(run())
    assert verdict.passed and verdict.attempts == 3 == server.calls
    assert json.loads(verdict.model_dump_json())["attempts"] == 3
