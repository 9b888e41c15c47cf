"""Benchmarks, measured in one run and printed as ratios (`make bench`).

Against a real HTTP assistant with fixed latency and, where a judge is involved, the
OpenAI-compatible judge server with fixed latency, both on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from golden_gate.cache import VerdictCache
from golden_gate.evaluate import EvalSettings, evaluate
from golden_gate.golden import GoldenItem
from golden_gate.judge import JudgeSettings, make_judge
from golden_gate.target import AssistantClient, TargetSettings

SERVE = Path(__file__).with_name("serve.py")


@contextlib.contextmanager
def serve(kind: str, latency: float, answers: dict[str, str] | None = None):
    """A fake server in its own process: its threads do not share our interpreter lock."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(answers or {}, handle)
    proc = subprocess.Popen(
        [sys.executable, str(SERVE), kind, "--latency", str(latency), "--answers", handle.name],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        yield proc.stdout.readline().strip()
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)
        os.unlink(handle.name)


def golden(n: int) -> list[GoldenItem]:
    return [
        GoldenItem(
            id=f"q{i:05d}",
            question=f"Question {i}?",
            reference_key_points=[f"fact {i}"],
            tags=["smoke"],
        )
        for i in range(n)
    ]


def answers(items: list[GoldenItem]) -> dict[str, str]:
    return {it.question: f"The answer states fact {i}." for i, it in enumerate(items)}


async def _evaluate(items, url, judge, *, concurrency, judge_concurrency, cache_dir=None):
    target = TargetSettings(url=url, concurrency=concurrency)
    async with AssistantClient(target) as client:
        report = await evaluate(
            items,
            client=client,
            judge=judge,
            cache=VerdictCache(cache_dir),
            settings=EvalSettings(judge_concurrency=judge_concurrency, rerun_failures=0),
        )
    if judge is not None:
        await judge.aclose()
    return report


async def _observed_latency(url: str, samples: int = 10) -> float:
    """The assistant's own latency, one request at a time (server overhead included)."""
    target = TargetSettings(url=url, concurrency=1)
    async with AssistantClient(target) as client:
        answers = [await client.ask(item) for item in golden(samples)]
    return sum(a.latency_ms for a in answers) / samples / 1000


def bench_assistant(n: int = 200, concurrency: int = 16, latency: float = 0.1) -> None:
    items = golden(n)
    with serve("assistant", latency, answers(items)) as url:
        observed = asyncio.run(_observed_latency(url))
        judge = make_judge(JudgeSettings(model="keypoints"))
        started = time.perf_counter()
        report = asyncio.run(
            _evaluate(items, url, judge, concurrency=concurrency, judge_concurrency=16)
        )
        wall = time.perf_counter() - started
    ideal = math.ceil(n / concurrency) * latency
    ideal_observed = math.ceil(n / concurrency) * observed
    passed = sum(r.passed for r in report.results)
    print(
        f"assistant only: {n} items, {latency * 1000:.0f} ms latency, concurrency {concurrency}: "
        f"wall {wall:.3f} s; ideal {ideal:.3f} s -> efficiency {ideal / wall:.2f}; "
        f"with the server's observed {observed * 1000:.1f} ms a request, ideal "
        f"{ideal_observed:.3f} s -> efficiency {ideal_observed / wall:.2f} ({passed} passed)"
    )


def bench_with_judge(n: int = 200, concurrency: int = 16, latency: float = 0.1) -> None:
    items = golden(n)
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-not-a-real-key")
    with (
        serve("assistant", latency, answers(items)) as url,
        serve("judge", latency) as judge_url,
        tempfile.TemporaryDirectory() as cache_dir,
    ):
        settings = JudgeSettings(
            model="openai:gpt-4.1-mini", base_url=judge_url, concurrency=concurrency
        )
        timings, reports = [], []
        for _ in ("cold", "warm"):  # the same answers twice: the second run is all cache hits
            started = time.perf_counter()
            reports.append(
                asyncio.run(
                    _evaluate(
                        items,
                        url,
                        make_judge(settings),
                        concurrency=concurrency,
                        judge_concurrency=concurrency,
                        cache_dir=Path(cache_dir),
                    )
                )
            )
            timings.append(time.perf_counter() - started)
        (cold, warm), (wall_cold, wall_warm) = reports, timings
        calls_cold, calls_warm = cold.stats.judge_calls, warm.stats.judge_calls
    # Assistant and judge are pipelined: the ideal is one stage's batches plus one judge call.
    ideal = math.ceil(n / concurrency) * latency + latency
    print(
        f"assistant + judge: {n} items, both {latency * 1000:.0f} ms, concurrency {concurrency} "
        f"each: cold wall {wall_cold:.3f} s vs ideal {ideal:.3f} s, efficiency "
        f"{ideal / wall_cold:.2f}; {calls_cold} judge calls"
    )
    print(
        f"re-run of unchanged answers: {calls_warm} judge calls, {warm.stats.cache_hits} cache "
        f"hits, wall {wall_warm:.3f} s ({wall_warm / wall_cold:.2f} of the cold run); "
        f"{sum(r.passed for r in cold.results)} passed"
    )


if __name__ == "__main__":
    bench_assistant()
    bench_with_judge()
