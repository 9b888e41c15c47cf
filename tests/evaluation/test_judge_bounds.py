"""Every judge exchange is bounded, through the command as a user runs it against real hostile
servers on 127.0.0.1: a judge that trickles its reply a byte at a time (each read well inside
the timeout), a gzip bomb, a reply of 200 MB. Each ends as an incomplete run (exit 3) with
report.json written and one sentence naming the cause; none passes, none ends in a traceback.
And a budget stop at any moment (before the judge is even built, mid-run) writes the report.

The memory figure (a 2 GB gzip bomb under 300 MiB peak) is bench/judge_bounds.py's.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from golden_gate.core.report_file import load_report
from golden_gate.example_assistant import golden_path, start
from golden_gate.limits import MAX_JUDGE_REPLY_BYTES
from tests.fakes.anthropic_server import AnthropicServer
from tests.fakes.judge_server import Behaviour, JudgeServer, _gzip_bomb

KEY = "sk-test-bounds-000000000000000000"
TOO_LARGE = f"the reply is larger than {MAX_JUDGE_REPLY_BYTES} bytes"
BOMB = 128 * 1024 * 1024  # 16 times the cap, in 128 KiB


@pytest.fixture(autouse=True, scope="module")
def _bomb_made() -> None:
    _gzip_bomb(BOMB)  # compressed once, before any judge timeout runs


def _eval(
    judge_args: list[str], out: Path, url: str, *extra: str, command: str = "eval", **env_extra: str
) -> Any:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GITHUB_", "INPUT_", "OPENAI_", "ANTHROPIC_", "GOOGLE_", "GEMINI_"))
        and k.lower() not in ("http_proxy", "https_proxy", "all_proxy")
    }
    env.update(OPENAI_API_KEY=KEY, ANTHROPIC_API_KEY=KEY, GOOGLE_API_KEY=KEY, **env_extra)
    argv = [sys.executable, "-m", "golden_gate", command, str(golden_path())]
    argv += ["--assistant-url", url, *judge_args, "-o", str(out), "--cache", "off"]
    argv += ["--judge-timeout", "2", "--judge-retries", "1", "--quiet", "--subset-tags", "smoke"]
    argv += extra
    # In the test's directory: `run` writes its comment.md where it runs.
    return subprocess.run(
        argv, capture_output=True, text=True, env=env, timeout=300, cwd=out.parent
    )


def _incomplete(done: Any, out: Path, cause: str) -> None:
    assert done.returncode == 3, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "unexpected" not in done.stderr, done.stderr
    report = load_report(out)  # written, and whole
    assert not report.complete
    assert cause in (report.incomplete_reason or ""), report.incomplete_reason
    said = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(said) == 1 and cause in said[0], done.stderr  # one sentence, with the cause
    errors = [run.error for r in report.results for run in r.run_results if run.error]
    assert errors and all(cause in e for e in errors if "judge" in e)
    assert not any(r.passed for r in report.results if r.runs == 0)


HOSTILE = {
    "trickle": (Behaviour.trickle(0.25), "timed out after 2s"),
    "gzip bomb": (Behaviour.gzip_bomb(BOMB), TOO_LARGE),
    "200 MB": (Behaviour.huge(200 * 1024 * 1024), TOO_LARGE),
}


@pytest.mark.parametrize("kind", list(HOSTILE))
@pytest.mark.parametrize("path", ["own client", "LangChain and the SDK"])
def test_a_hostile_openai_judge_ends_as_an_incomplete_run(tmp_path, kind, path):
    behaviour, cause = HOSTILE[kind]
    env = {"GOLDEN_GATE_JUDGE_LANGCHAIN": "1"} if path != "own client" else {}
    with JudgeServer(default=behaviour) as judge, start("candidate") as assistant:
        args = ["--judge-model", "openai:gpt-4.1-mini", "--judge-base-url", judge.base_url]
        done = _eval(args, tmp_path / "report.json", assistant.url, **env)
    _incomplete(done, tmp_path / "report.json", cause)


@pytest.mark.parametrize("kind", list(HOSTILE))
def test_golden_gate_run_against_a_hostile_judge_is_incomplete_not_a_verdict(tmp_path, kind):
    behaviour, cause = HOSTILE[kind]
    with JudgeServer(default=behaviour) as judge, start("candidate") as assistant:
        args = ["--judge-model", "openai:gpt-4.1-mini", "--judge-base-url", judge.base_url]
        done = _eval(args, tmp_path / "report.json", assistant.url, "--floor", "0.5", command="run")
    _incomplete(done, tmp_path / "report.json", cause)
    assert "regress" not in done.stdout.lower() and "passed" not in done.stdout.lower()


@pytest.mark.parametrize("kind", list(HOSTILE))
def test_a_hostile_anthropic_judge_ends_as_an_incomplete_run(tmp_path, kind):
    behaviour, cause = HOSTILE[kind]
    with AnthropicServer(default=behaviour) as judge, start("candidate") as assistant:
        args = ["--judge-model", "anthropic:claude-sonnet-4-5", "--judge-base-url"]
        done = _eval([*args, judge.base_url], tmp_path / "report.json", assistant.url)
    _incomplete(done, tmp_path / "report.json", cause)


def test_one_hostile_reply_among_good_ones_is_one_error_not_a_verdict(tmp_path):
    with JudgeServer() as judge, start("candidate") as assistant:
        judge.enqueue(Behaviour.gzip_bomb(BOMB))
        args = ["--judge-model", "openai:gpt-4.1-mini", "--judge-base-url", judge.base_url]
        done = _eval([*args, "--judge-concurrency", "1"], tmp_path / "r.json", assistant.url)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    report = load_report(tmp_path / "r.json")
    # Not retried (the same server sends the same again); asked again at the end of the run
    # (rejudge.py), where the server's default is a verdict.
    assert report.complete
    assert judge.calls >= 2


# -- a budget stop at any moment writes the report ---------------------------------------------


def _budget(tmp_path: Path, prices: list[str]) -> tuple[Any, Path]:
    out = tmp_path / "report.json"
    with JudgeServer() as judge, start("baseline") as assistant:
        args = ["--judge-model", "openai:gpt-4.1-mini", "--judge-base-url", judge.base_url]
        args += ["--usage-path", "usage", "--max-cost-usd", "0.01", *prices]
        done = _eval(args, out, assistant.url)
    return done, out


@pytest.mark.parametrize(
    "prices",
    [
        # The first answer passes the budget while the judge is still being built.
        ["--assistant-prices", "100000,100000"],
        # The first verdict passes it while other calls are in flight.
        ["--judge-prices", "100000,100000"],
    ],
    ids=["before the first verdict", "mid-run"],
)
def test_a_budget_stop_at_any_moment_writes_the_report(tmp_path, prices):
    done, out = _budget(tmp_path, prices)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "CancelledError" not in done.stderr and "Traceback" not in done.stderr
    report = load_report(out)
    assert not report.complete
    assert report.incomplete_reason.startswith("stopped at max-cost-usd 0.01")
    assert report.not_asked and len(report.results) + len(report.not_asked) == 14  # smoke
    assert "stopped at max-cost-usd" in done.stderr


@pytest.mark.parametrize("kind", list(HOSTILE))
def test_a_hostile_gemini_judge_ends_as_an_incomplete_run(tmp_path, kind):
    from tests.fakes.gemini_server import GeminiServer

    behaviour, cause = HOSTILE[kind]
    with GeminiServer(default=behaviour) as judge, start("candidate") as assistant:
        args = ["--judge-model", "google_genai:gemini-2.5-flash", "--judge-base-url"]
        done = _eval([*args, judge.base_url], tmp_path / "report.json", assistant.url)
    _incomplete(done, tmp_path / "report.json", cause)


@pytest.mark.parametrize("langchain", [False, True], ids=["own client", "LangChain"])
def test_a_huge_reply_through_openai_proxy_is_capped(monkeypatch, langchain):
    import asyncio

    from golden_gate.evaluation.judge import JudgeError, JudgeSettings, LLMJudge

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    if langchain:
        monkeypatch.setenv("GOLDEN_GATE_JUDGE_LANGCHAIN", "1")

    class Proxy(JudgeServer):
        def accepts(self, path: str) -> bool:  # any URL, in a proxy's absolute form
            return True

    with JudgeServer() as judge, Proxy(default=Behaviour.huge(64 * 1024 * 1024)) as proxy:
        monkeypatch.setenv("OPENAI_PROXY", proxy.base_url.removesuffix("/v1"))
        settings = JudgeSettings(model="openai:gpt-4.1-mini", base_url=judge.base_url)
        settings = settings.model_copy(update={"max_retries": 0, "timeout_s": 30})

        async def ask() -> str:
            llm = LLMJudge(settings)
            try:
                await llm.judge(question="q", answer="a", reference="- r")
            except JudgeError as exc:
                return str(exc)
            finally:
                await llm.aclose()
            return "a verdict"

        said = asyncio.run(ask())
        assert proxy.seen  # the reply came through the proxy
    assert TOO_LARGE in said
