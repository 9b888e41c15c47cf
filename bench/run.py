"""Benchmarks, all measured in this one run (`make bench`) and printed as Markdown tables.

1. Throughput: 1,000 items through `evaluate` against the fake assistant (its own process,
   fixed latency) at concurrency 1, 8, 32 and 64, with the offline keypoints judge and with
   the LLM judge (openevals -> golden-gate's Chat Completions client) against the fake
   OpenAI-compatible judge (its own process, fixed latency). Efficiency = ideal wall time /
   measured wall time. Then the LLM judge's two ways of calling the model (openevals through
   golden-gate's own client, as shipped, and over LangChain's model,
   GOLDEN_GATE_JUDGE_LANGCHAIN=1)
   with the judge at 200 ms, at concurrency 8 and 32: efficiency and CPU per judged item.
2. The same workload through a thread pool of 8 workers written as teams write it by hand.
3. The pure core on a 100,000-item report: load, save, gate, comment, summary (bench/core_scale.py,
   in processes of their own); and `golden-gate gate` on the 100k pair with the comment and the
   job summary, wall and peak RSS (bench/core_speed.py).
4. The cost of a skipped run (the Action's entrypoint, a pull request touching only README.md,
   against the fake GitHub) and of importing the judge stack, as medians of fresh processes;
   start-up to the first request of `eval` and `gate` on a small pair (bench/core_speed.py).
5. The verdict-cache archive (bench/cache_bench.py), when it is there.
`--before REF`: the figures of bench/core_speed.py for a git ref too, checked out beside this
tree (`git worktree add`), in the same run.

    .venv/bin/python bench/run.py [--quick] [--only throughput,judge,threadpool,core,startup,cache]
                                  [--before REF]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from golden_gate.core.golden import GoldenItem
from golden_gate.evaluation.cache import VerdictCache
from golden_gate.evaluation.evaluate import EvalSettings, evaluate
from golden_gate.evaluation.judge import Judge, JudgeSettings, make_judge
from golden_gate.evaluation.response import AssistantSettings
from golden_gate.evaluation.target import AssistantClient

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
SERVE = BENCH / "serve.py"
LATENCY = 0.1  # seconds, the fake assistant's and the fake judge's, per request
ITEMS = 1_000
C1_ITEMS = 100  # concurrency 1 runs this many (10 s) instead of 1,000 (100 s); scaled below
LEVELS = (1, 8, 32, 64)
JUDGE_MODEL = "openai:gpt-4.1-mini"
DUMMY_KEY = "sk-bench-not-a-real-key"
JUDGE_LATENCY = 0.2  # the stand-in judge of the judge-path table: slower than the assistant
JUDGE_LEVELS = (8, 32)
JUDGE_PATHS = {"sdk": "", "langchain": "1"}  # GOLDEN_GATE_JUDGE_LANGCHAIN for each path


# -- the fakes, each in a process of its own ---------------------------------------------------


class Fake:
    """A fake assistant or judge served by bench/serve.py in another process."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        assert proc.stdout is not None
        self.url = proc.stdout.readline().strip()

    def stats(self) -> dict[str, Any]:
        """Requests, the most in flight and the server's CPU seconds since the last call."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("stats\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())


@contextlib.contextmanager
def serve(kind: str, latency: float, answers: dict[str, str] | None = None) -> Iterator[Fake]:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(answers or {}, handle)
    proc = subprocess.Popen(
        [sys.executable, str(SERVE), kind, "--latency", str(latency), "--answers", handle.name],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        yield Fake(proc)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=10)
        os.unlink(handle.name)


def golden(n: int) -> list[GoldenItem]:
    return [
        GoldenItem(
            id=f"q{i:05d}",
            question=f"Question {i}: what does the handbook say about topic {i}?",
            reference_key_points=[f"fact {i}"],
            tags=["smoke"],
        )
        for i in range(n)
    ]


def answers(items: list[GoldenItem]) -> dict[str, str]:
    return {
        it.question: f"The handbook states fact {i}, with details." for i, it in enumerate(items)
    }


# -- 1. throughput -------------------------------------------------------------------------------


async def _evaluate(items, url: str, judge: Judge, *, concurrency: int, cache_dir: Path):
    target = AssistantSettings(url=url, concurrency=concurrency)
    async with AssistantClient(target) as assistant:
        try:
            return await evaluate(
                items,
                client=assistant,
                judge=judge,
                cache=VerdictCache(cache_dir),
                settings=EvalSettings(judge_concurrency=concurrency, rerun_failures=0),
            )
        finally:
            await judge.aclose()


async def _observed_latency(url: str, samples: int = 20) -> float:
    """The fake assistant's latency as a client sees it, one request at a time."""
    target = AssistantSettings(url=url, concurrency=1)
    async with AssistantClient(target) as client:
        replies = [await client.ask(item) for item in golden(samples)]
    return statistics.median(a.latency_ms for a in replies) / 1000


def run_level(
    items,
    assistant: Fake,
    judge_fake: Fake | None,
    concurrency: int,
    latency: float,
    *,
    judge_latency: float | None = None,
    path: str = "sdk",
) -> dict:
    settings = JudgeSettings(
        model=JUDGE_MODEL if judge_fake else "keypoints",
        base_url=judge_fake.url if judge_fake else None,
        concurrency=concurrency,
    )
    # The path is chosen when the judge is built (providers/openai.py).
    os.environ["GOLDEN_GATE_JUDGE_LANGCHAIN"] = JUDGE_PATHS[path]
    judge = make_judge(settings)  # built (and its stack imported) before the clock starts
    os.environ.pop("GOLDEN_GATE_JUDGE_LANGCHAIN")
    assistant.stats()
    if judge_fake:
        judge_fake.stats()
    with tempfile.TemporaryDirectory(prefix="golden-gate-bench-cache-") as cache_dir:
        cpu, started = time.process_time(), time.perf_counter()
        # The verdict cache is on, as in a real run: a file a verdict.
        report = asyncio.run(
            _evaluate(
                items, assistant.url, judge, concurrency=concurrency, cache_dir=Path(cache_dir)
            )
        )
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    n = len(items)
    # Pipelined: the assistant's batches, plus one judge call after the last answer; with a
    # slower judge, its batches plus the first answer.
    ideal = n * latency / concurrency + (latency if judge_fake else 0.0)
    if judge_fake and judge_latency is not None and judge_latency > latency:
        ideal = n * judge_latency / concurrency + latency
    row = {
        "concurrency": concurrency,
        "items": n,
        "latency_s": latency,
        "judge_latency_s": judge_latency,
        "path": path,
        "wall_s": wall,
        "ideal_s": ideal,
        "efficiency": ideal / wall,
        "cpu_s": cpu,
        "passed": sum(r.passed for r in report.results),
        "errors": sum(r.errors for r in report.results),
        "assistant": assistant.stats(),
        "judge_calls": report.stats.judge_calls if report.stats else 0,
    }
    if judge_fake:
        row["judge"] = judge_fake.stats()
    return row


def throughput(quick: bool) -> dict[str, Any]:
    os.environ.setdefault("OPENAI_API_KEY", DUMMY_KEY)
    n = 200 if quick else ITEMS
    items = golden(n)
    out: dict[str, Any] = {"latency_s": LATENCY, "items": n}
    with serve("assistant", LATENCY, answers(items)) as assistant, serve("judge", LATENCY) as judge:
        out["observed_latency_s"] = asyncio.run(_observed_latency(assistant.url))
        assistant.stats()
        for name, judge_fake in (("keypoints", None), ("llm", judge)):
            rows = []
            for level in LEVELS:
                subset = items[: min(n, C1_ITEMS)] if level == 1 else items
                rows.append(run_level(subset, assistant, judge_fake, level, LATENCY))
            out[name] = rows
    return out


def print_throughput(result: dict[str, Any]) -> None:
    lat_ms = result["latency_s"] * 1000
    observed = result["observed_latency_s"]
    print(
        f"\n## 1. Throughput: {result['items']:,} items, runs 1, assistant and judge "
        f"{lat_ms:.0f} ms each (fakes in their own processes)\n"
    )
    print(
        "Ideal = items × runs × latency / concurrency (+ one judge latency with the LLM judge: "
        "judging is pipelined behind the answers). The fake assistant answers a lone request "
        f"in {observed * 1000:.1f} ms as the client sees it ({lat_ms:.0f} ms of sleep plus its "
        "own HTTP handling); the efficiency against that ideal is in parentheses. CPU = this "
        "process's CPU time during the run, per item (one interpreter: the wall time can never "
        "be below the total). Every run's verdict cache is on and cold, as in a real first run. "
        "The clients are as shipped (the assistant's and the judge's over aiohttp).\n"
    )
    for name, title in (("keypoints", "offline keypoints judge"), ("llm", "LLM judge")):
        judged = name == "llm"
        print(f"**{title}**\n")
        print(
            "| concurrency | items | wall | ideal | efficiency | CPU an item | peak in flight "
            "(assistant) | fake assistant CPU |"
            + (" judge calls | peak in flight (judge) |" if judged else "")
        )
        print("|---:" * (8 + 2 * judged) + "|")
        for row in result[name]:
            c = row["concurrency"]
            ideal_observed = row["items"] * observed / c + (observed if judged else 0)
            scale = ITEMS // row["items"]
            items = f"{row['items']:,}" + (f" (×{scale})" if scale > 1 else "")
            cells = [
                str(c),
                items,
                f"{row['wall_s']:.2f} s",
                f"{row['ideal_s']:.2f} s",
                f"**{row['efficiency']:.2f}** ({ideal_observed / row['wall_s']:.2f})",
                f"{row['cpu_s'] / row['items'] * 1000:.1f} ms",
                str(row["assistant"]["max_in_flight"]),
                f"{row['assistant']['cpu_s']:.2f} s",
            ]
            if judged:
                cells += [f"{row['judge_calls']:,}", str(row["judge"]["max_in_flight"])]
            print("| " + " | ".join(cells) + " |")
            if row["passed"] != row["items"] or row["errors"]:
                print(f"<!-- {row['passed']} passed, {row['errors']} errors: expected all -->")
        print()
    c1 = next(r for r in result["keypoints"] if r["concurrency"] == 1)
    scale = ITEMS // c1["items"]
    if scale > 1:
        print(
            f"Concurrency 1 ran {c1['items']} items: 1,000 would take {scale} × "
            f"{c1['wall_s']:.1f} s = {scale * c1['wall_s']:.0f} s at the same efficiency.\n"
        )


def judge_paths(quick: bool) -> dict[str, Any]:
    """Both ways of calling the LLM judge at 200 ms, and the keypoints judge beside them (the
    CPU an item spends besides the judge), interleaved so drifting load hits both paths."""
    os.environ.setdefault("OPENAI_API_KEY", DUMMY_KEY)
    n = 200 if quick else ITEMS
    items = golden(n)
    rows: list[dict[str, Any]] = []
    with (
        serve("assistant", LATENCY, answers(items)) as assistant,
        serve("judge", JUDGE_LATENCY) as judge,
    ):
        assistant.stats()
        for level in JUDGE_LEVELS:
            rows.append(run_level(items, assistant, None, level, LATENCY))
            for path in JUDGE_PATHS:
                rows.append(
                    run_level(
                        items,
                        assistant,
                        judge,
                        level,
                        LATENCY,
                        judge_latency=JUDGE_LATENCY,
                        path=path,
                    )
                )
        alone = {path: judge_alone(judge, path, n) for path in JUDGE_PATHS}
    return {"items": n, "rows": rows, "alone": alone}


def judge_alone(judge_fake: Fake, path: str, n: int, concurrency: int = 32) -> float:
    """CPU milliseconds a judge call on `path`, `n` calls `concurrency` at a time, nothing else
    running (no assistant, no cache)."""
    os.environ["GOLDEN_GATE_JUDGE_LANGCHAIN"] = JUDGE_PATHS[path]
    settings = JudgeSettings(model=JUDGE_MODEL, base_url=judge_fake.url, concurrency=concurrency)
    judge = make_judge(settings)
    os.environ.pop("GOLDEN_GATE_JUDGE_LANGCHAIN")
    items = golden(n)

    async def calls() -> float:
        async def one(item: GoldenItem) -> None:  # the judge holds `concurrency` in flight
            await judge.judge(
                question=item.question, answer=f"It says {item.question}", reference="- x"
            )

        try:
            await one(items[0])  # connections and the SDK's first-call work, off the clock
            cpu = time.process_time()
            await asyncio.gather(*(one(item) for item in items))
            return (time.process_time() - cpu) / n * 1000
        finally:
            await judge.aclose()

    return asyncio.run(calls())


def print_judge_paths(result: dict[str, Any]) -> None:
    rows = result["rows"]
    print("### The LLM judge: golden-gate's own client against LangChain's model\n")
    print(
        f"{result['items']:,} items, assistant "
        f"{LATENCY * 1000:.0f} ms, judge {JUDGE_LATENCY * 1000:.0f} ms, judge concurrency = "
        "concurrency (the default now). Ideal = items × judge latency / concurrency + one "
        "assistant latency (the judge is the slower side). `sdk`: openevals through "
        "golden-gate's own Chat Completions client (shipped); `langchain`: openevals over "
        "LangChain's chat model (`GOLDEN_GATE_JUDGE_LANGCHAIN=1`). CPU a judged item = this "
        "process's CPU over the run / judge calls; the judge's share = that minus the "
        "keypoints run's CPU an item at the same concurrency (assistant, checks, verdict "
        "cache).\n"
    )
    print(
        "| concurrency | path | wall | ideal | efficiency | CPU a judged item | "
        "the judge's share | judge calls | peak in flight (judge) |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for level in JUDGE_LEVELS:
        base = next(r for r in rows if r["concurrency"] == level and "judge" not in r)
        base_ms = base["cpu_s"] / base["items"] * 1000
        print(
            f"| {level} | keypoints (no judge calls) | {base['wall_s']:.2f} s | "
            f"{base['ideal_s']:.2f} s | **{base['efficiency']:.2f}** | "
            f"{base_ms:.1f} ms an item | — | 0 | — |"
        )
        for row in (r for r in rows if r["concurrency"] == level and "judge" in r):
            calls = max(row["judge_calls"], 1)
            per_call = row["cpu_s"] / calls * 1000
            share = (row["cpu_s"] - base["cpu_s"] * row["items"] / base["items"]) / calls * 1000
            print(
                f"| {level} | {row['path']} | {row['wall_s']:.2f} s | {row['ideal_s']:.2f} s | "
                f"**{row['efficiency']:.2f}** | {per_call:.1f} ms | {share:.1f} ms | "
                f"{row['judge_calls']:,} | {row['judge']['max_in_flight']} |"
            )
            if row["passed"] != row["items"] or row["errors"]:
                print(f"<!-- {row['passed']} passed, {row['errors']} errors: expected all -->")
    print()
    alone = result["alone"]
    print(
        f"Judge calls alone ({result['items']:,} calls, 32 at a time, nothing else running): "
        + ", ".join(f"{path} {ms:.1f} ms of CPU a call" for path, ms in alone.items())
        + ".\n"
    )


# -- 2. the hand-written thread pool --------------------------------------------------------

PROMPT = """You are grading an answer against reference key points.
<input>{question}</input>
<output>{answer}</output>
<reference_outputs>{reference}</reference_outputs>
Reply with a JSON object {{"reasoning": "...", "score": true or false}}."""


def thread_pool(quick: bool, workers: int = 8) -> dict[str, Any]:
    """1,000 items as teams write it: requests.post per item, then the judge, 8 threads."""
    import openai
    import requests

    n = 200 if quick else ITEMS
    items = golden(n)
    with serve("assistant", LATENCY, answers(items)) as assistant, serve("judge", LATENCY) as judge:
        client = openai.OpenAI(base_url=judge.url, api_key=DUMMY_KEY, timeout=60)

        def one(item: GoldenItem) -> bool:
            reply = requests.post(f"{assistant.url}/ask", json={"text": item.question}, timeout=60)
            reply.raise_for_status()
            answer = reply.json()["answer"]
            completion = client.chat.completions.create(
                model="gpt-4.1-mini",
                temperature=0,
                response_format={"type": "json_object"},
                messages=[
                    {
                        "role": "user",
                        "content": PROMPT.format(
                            question=item.question, answer=answer, reference=item.reference
                        ),
                    }
                ],
            )
            return json.loads(completion.choices[0].message.content or "{}")["score"] is True

        one(items[0])  # imports and connections warm, as for ours
        assistant.stats()
        judge.stats()
        cpu, started = time.process_time(), time.perf_counter()
        with ThreadPoolExecutor(workers) as pool:
            passed = sum(pool.map(one, items))
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        client.close()
        stats = {"assistant": assistant.stats(), "judge": judge.stats()}
    ideal = n * 2 * LATENCY / workers  # answer, then judge, one after the other per worker
    return {"items": n, "workers": workers, "wall_s": wall, "cpu_s": cpu, "ideal_s": ideal,
            "passed": passed, **stats}  # fmt: skip


def print_thread_pool(pool: dict[str, Any], ours: dict[str, Any] | None) -> None:
    print(
        f"\n## 2. Thread-pool baseline: {pool['items']:,} items, {pool['workers']} threads, "
        "`requests.post` per item then the OpenAI SDK judge, same fakes\n"
    )
    print("| harness | wall | CPU | passed | ratio to ours |")
    print("|---|---:|---:|---:|---:|")
    print(
        f"| thread pool, {pool['workers']} workers (its own ideal {pool['ideal_s']:.2f} s) | "
        f"{pool['wall_s']:.2f} s | {pool['cpu_s']:.2f} s | {pool['passed']:,} | — |"
    )
    if not ours:
        return
    llm = [r for r in ours["llm"] if r["items"] == pool["items"]]
    at8 = next(r for r in llm if r["concurrency"] == 8)
    best = min(llm, key=lambda r: r["wall_s"])
    for label, row in (("concurrency 8", at8), (f"best: concurrency {best['concurrency']}", best)):
        print(
            f"| golden-gate, LLM judge, {label} | {row['wall_s']:.2f} s | {row['cpu_s']:.2f} s | "
            f"{row['passed']:,} | **{pool['wall_s'] / row['wall_s']:.2f}×** |"
        )
    kp = [r for r in ours["keypoints"] if r["items"] == pool["items"]]
    kbest = min(kp, key=lambda r: r["wall_s"])
    print(
        f"| golden-gate, keypoints judge (no judge calls), concurrency {kbest['concurrency']} | "
        f"{kbest['wall_s']:.2f} s | {kbest['cpu_s']:.2f} s | {kbest['passed']:,} | "
        f"({pool['wall_s'] / kbest['wall_s']:.1f}×) |"
    )
    print()


# -- 3. the pure core at scale ------------------------------------------------------------------


def core(quick: bool, trees: list[tuple[str, Path]]) -> list[dict[str, Any]]:
    """bench/core_scale.py a size; on the largest, `golden-gate gate` in each tree."""
    from bench import core_speed

    sizes = [(2_000, 40), (10_000, 200)] if quick else [(10_000, 200), (100_000, 2_000)]
    rows = []
    script = str(BENCH / "core_scale.py")
    for items, regressions in sizes:
        with tempfile.TemporaryDirectory(prefix="golden-gate-core-") as tmp:
            subprocess.run(
                [sys.executable, script, "write", tmp, "--items", str(items),
                 "--regressions", str(regressions)],
                check=True,
            )  # fmt: skip
            done = subprocess.run(
                [sys.executable, script, "measure", tmp], check=True, capture_output=True, text=True
            )
            row = json.loads(done.stdout)
            if (items, regressions) == sizes[-1]:
                runs = 3 if quick else 5
                large = core_speed.gate_large([tree for _, tree in trees], Path(tmp), runs)
                row["gate_command"] = list(zip([label for label, _ in trees], large, strict=True))
        rows.append(row)
    return rows


def print_core(rows: list[dict[str, Any]]) -> None:
    print("\n## 3. The pure core on a large report (a fresh process per size)\n")
    print(
        "| items | report.json | load baseline + report | save | gate | comment | summary "
        "| gate + renders | + scipy.special import (once) | memory the core adds | process peak |"
    )
    print("|---:" * 11 + "|")
    for r in rows:
        for label, core_row in (
            ("", r["with_baseline"]),
            (" (no baseline)", r["without_baseline"]),
        ):
            first = not label
            cells = [
                f"{r['items']:,}{label}",
                f"{r['report_mib']:.0f} MiB" if first else "",
                f"{r['load_baseline_s']:.2f} + {r['load_s']:.2f} s" if first else "",
                f"{r['save_s']:.2f} s" if first else "",
                f"{core_row['gate_s']:.2f} s",
                f"{core_row['comment_s']:.2f} s",
                f"{core_row['summary_s']:.2f} s",
                f"**{core_row['core_s']:.2f} s**",
                f"{core_row['core_s'] + r['scipy_import_s']:.2f} s",
                f"{r['core_rss_added_mib']:.0f} MiB RSS, {r['core_traced_peak_mib']:.0f} MiB traced"
                if first
                else "",
                f"{r['maxrss_mib']:,.0f} MiB" if first else "",
            ]
            print("| " + " | ".join(cells) + " |")
    big = rows[-1]
    print(
        f"\nAt {big['items']:,} items: verdict {big['verdict']}, {big['regressions']:,} "
        f"regressions; the comment lists {big['with_baseline']['comment_rows']} rows in "
        f"{big['with_baseline']['comment_chars']:,} characters, the summary "
        f"{big['with_baseline']['summary_chars']:,}; the two reports as loaded hold "
        f"{big['rss_loaded_mib'] - big['rss_start_mib']:,.0f} MiB "
        f"({(big['rss_loaded_mib'] - big['rss_start_mib']) * 1024 / (2 * big['items']):.1f} KiB "
        f"an item); the saved report.json is byte-identical to `report_json`: "
        f"{big['saved_identical']}.\n"
    )
    commands = big.get("gate_command") or []
    if commands:
        print(
            "`golden-gate gate report.json baseline.json --comment-file … --summary-file …` "
            f"on the "
            f"{big['items']:,}-item pair, a fresh process each time (median of "
            f"{len(commands[0][1]['large_walls'])}, the trees' runs alternating; peak RSS: "
            "`os.wait4`'s, the largest of the process and the copy it forks to read the report):\n"
        )
        print("| tree | wall | peak RSS |")
        print("|---|---:|---:|")
        for label, r in commands:
            print(f"| {label} | **{r['large_s']:.2f} s** | {r['large_peak_mib']:,.0f} MiB |")
        same = len({tuple(r["outputs"]) for _, r in commands}) == 1
        same = same and all(len(r["outputs"]) == 1 for _, r in commands)
        print(
            "\nStdout, comment and summary byte-identical across runs and trees: "
            f"{'yes' if same else 'NO'}.\n"
        )


# -- 4. start-up costs --------------------------------------------------------------------------


def _median_run(argv: list[str], *, env: dict[str, str] | None = None, cwd=None, runs: int = 7):
    walls, outs = [], []
    for _ in range(runs):
        started = time.perf_counter()
        done = subprocess.run(
            argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=120, check=False
        )
        walls.append(time.perf_counter() - started)
        outs.append(done)
    return statistics.median(walls), walls, outs


def skipped_run(runs: int) -> dict[str, Any]:
    """`python entrypoint.py` on a pull request touching only README.md, as
    tests/action/test_action.py runs it."""
    import yaml

    from golden_gate.action.yardstick import env_name
    from tests.fakes.github_server import GitHubServer

    repo, token = "acme/docs-assistant", "ghs_benchTOKENbenchTOKENbench0001"
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    defaults = {
        env_name(name): str(spec.get("default", ""))
        for name, spec in action["inputs"].items()
        if "${{" not in str(spec.get("default", ""))
    }
    # Not validated against GitHub's OpenAPI description: that is the tests' job, and its cost
    # would be the fake's, not ours.
    with GitHubServer(validate=False) as github, tempfile.TemporaryDirectory() as tmp:
        github.add_actions_token(token)
        github.add_repo(repo, files={"README.md": "# docs\n"})
        github.commit(repo, "change-1", {"README.md": "# docs, edited\n"}, start="main")
        pull = github.add_pull(repo, files=["README.md"], head="change-1")
        payload = json.loads((ROOT / "tests" / "payloads" / "pull_request.opened.json").read_text())
        payload["repository"]["full_name"], payload["repository"]["name"] = repo, "docs-assistant"
        pr = payload["pull_request"]
        payload["number"] = pr["number"] = pull.number
        pr["base"]["ref"], pr["base"]["sha"] = pull.base_ref, pull.base_sha
        pr["head"]["ref"], pr["head"]["sha"] = pull.head_ref, pull.head_sha
        pr["base"]["repo"]["full_name"] = pr["head"]["repo"]["full_name"] = repo
        tmp_path = Path(tmp)
        event = tmp_path / "event.json"
        event.write_text(json.dumps(payload))
        workspace = tmp_path / "workspace"
        workspace.mkdir()
        for name in ("output", "summary", "state"):
            (tmp_path / name).touch()
        env = {
            **defaults,
            "PATH": os.environ["PATH"],
            "HOME": tmp,
            "GITHUB_ACTIONS": "true",
            "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_EVENT_PATH": str(event),
            "GITHUB_REPOSITORY": repo,
            "GITHUB_API_URL": github.api_url,
            "GITHUB_WORKSPACE": str(workspace),
            "GITHUB_SHA": "0" * 40,
            "GITHUB_RUN_ID": "1001",
            "GITHUB_OUTPUT": str(tmp_path / "output"),
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary"),
            "GITHUB_STATE": str(tmp_path / "state"),
            "RUNNER_TEMP": tmp,
            "INPUT_GITHUB-TOKEN": token,
            "INPUT_GOLDEN": "evals/golden.jsonl",
            "INPUT_BASELINE": "evals/baseline.json",
            "INPUT_ASSISTANT-URL": "http://127.0.0.1:9",
        }
        median, walls, outs = _median_run(
            [sys.executable, str(ROOT / "entrypoint.py")], env=env, cwd=workspace, runs=runs
        )
        ok = all(o.returncode == 0 for o in outs)
        outputs = (tmp_path / "output").read_text()
        requests = len(github.requests)
    return {
        "median_s": median,
        "walls": walls,
        "ok": ok and "verdict=skipped" in outputs,
        "api_requests": requests / runs,
        "stderr": outs[-1].stderr[-500:] if not ok else "",
    }


IMPORT_JUDGE = f"""
import time
started = time.perf_counter()
import openevals
from golden_gate.evaluation.judge import JudgeSettings, make_judge
make_judge(JudgeSettings(model={JUDGE_MODEL!r}, base_url="http://127.0.0.1:9/v1"))
print(time.perf_counter() - started)
"""


def startup(quick: bool, trees: list[tuple[str, Path]]) -> dict[str, Any]:
    from bench import core_speed

    runs = 3 if quick else 7
    env = {**os.environ, "OPENAI_API_KEY": DUMMY_KEY}
    paths = [tree for _, tree in trees]
    firsts, smalls = core_speed.first_request(paths, runs), core_speed.gate_small(paths, runs)
    per_tree = [
        (label, {**first, **small})
        for (label, _), first, small in zip(trees, firsts, smalls, strict=True)
    ]
    python, _, _ = _median_run([sys.executable, "-c", "pass"], runs=runs)
    gg, _, _ = _median_run([sys.executable, "-c", "import golden_gate.action.main"], runs=runs)
    judge_wall, _, outs = _median_run([sys.executable, "-c", IMPORT_JUDGE], env=env, runs=runs)
    inside = statistics.median(float(o.stdout.strip() or "nan") for o in outs)
    return {
        "python_s": python,
        "import_action_s": gg,
        "judge_process_s": judge_wall,
        "judge_import_s": inside,
        "skipped": skipped_run(runs),
        "runs": runs,
        "trees": per_tree,
    }


def print_startup(s: dict[str, Any]) -> None:
    sk = s["skipped"]
    print(f"\n## 4. Start-up costs (median of {s['runs']} fresh processes)\n")
    print("| what | median |")
    print("|---|---:|")
    print(
        f"| skipped run: `python entrypoint.py`, pull request touching only README.md, start "
        f"to exit ({sk['api_requests']:.0f} API requests) | **{sk['median_s']:.2f} s** |"
    )
    print(
        f"| `import openevals` + building an LLMJudge (inside the process) | "
        f"**{s['judge_import_s']:.2f} s** |"
    )
    print(f"| the same, whole process | {s['judge_process_s']:.2f} s |")
    print(f"| for scale: `python -c pass` | {s['python_s']:.2f} s |")
    importing = "`python -c 'import golden_gate.action.main'`"
    print(f"| for scale: {importing} | {s['import_action_s']:.2f} s |")
    if not sk["ok"]:
        print(f"\n**The skipped run did not skip cleanly**: {sk['stderr']}")
    print()
    print(
        "Start-up to the first request: `golden-gate eval` of 20 items with the LLM judge "
        "(the stand-in judge), from the process's spawn to the first request reaching the "
        "bench's stand-in assistant. `gate` on a small pair: the demo's report against its "
        f"baseline (14 items), start to exit. Medians of {s['runs']} fresh processes, the "
        "trees' runs alternating.\n"
    )
    print("| tree | start-up to first request | `eval` to exit | `gate`, small pair |")
    print("|---|---:|---:|---:|")
    for label, r in s["trees"]:
        print(
            f"| {label} | **{r['first_request_s']:.2f} s** | {r['eval_s']:.2f} s | "
            f"**{r['small_s']:.2f} s** |"
        )
    print()


# -- 5. the verdict-cache archive ----------------------------------------------------------------


def cache_archive() -> str | None:
    script = BENCH / "cache_bench.py"
    if not script.is_file():
        return None
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=600, check=False
    )
    return done.stdout + (
        f"(exit {done.returncode}) {done.stderr[-500:]}" if done.returncode else ""
    )


# -----------------------------------------------------------------------------------------------


def machine() -> str:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor() or "unknown CPU",
    )
    mem = next(
        (
            int(line.split()[1]) / 2**20
            for line in Path("/proc/meminfo").read_text().splitlines()
            if line.startswith("MemTotal")
        ),
        0.0,
    )
    return (
        f"{os.cpu_count()} cores ({cpu}), {mem:.0f} GiB, Linux {platform.release()}, "
        f"Python {platform.python_version()}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer items: a smoke run")
    parser.add_argument("--only", default="throughput,judge,threadpool,core,startup,cache")
    parser.add_argument(
        "--before", default=None, help="a git ref whose start-up and gate are measured too"
    )
    args = parser.parse_args()
    only = set(args.only.split(","))
    with _trees(args.before) as trees:
        _sections(args, only, trees)


@contextlib.contextmanager
def _trees(before: str | None) -> Iterator[list[tuple[str, Path]]]:
    """This tree, and `before` checked out beside it when given."""
    from bench import core_speed

    if before is None:
        yield [("this tree", ROOT)]
        return
    with core_speed.checkout(before) as tree:
        yield [(f"before (`{before}`)", tree), ("this tree", ROOT)]


def _sections(args: argparse.Namespace, only: set[str], trees: list[tuple[str, Path]]) -> None:
    started = time.perf_counter()
    load = os.getloadavg()
    print(f"# golden-gate benchmarks, {datetime.date.today().isoformat()}\n")
    print(f"Machine: {machine()}; load average at the start {load[0]:.2f}.")
    ours = None
    if "throughput" in only:
        ours = throughput(args.quick)
        print_throughput(ours)
    if "judge" in only:
        print_judge_paths(judge_paths(args.quick))
    if "threadpool" in only:
        print_thread_pool(thread_pool(args.quick), ours)
    if "core" in only:
        print_core(core(args.quick, trees))
    if "startup" in only:
        print_startup(startup(args.quick, trees))
    if "cache" in only:
        archive = cache_archive()
        if archive is not None:
            print("\n## 5. Verdict-cache archive (bench/cache_bench.py)\n")
            print("```\n" + archive.rstrip() + "\n```\n")
    minutes, seconds = divmod(time.perf_counter() - started, 60)
    print(
        f"Whole run: {minutes:.0f} min {seconds:.0f} s; load average at the end "
        f"{os.getloadavg()[0]:.2f}."
    )


if __name__ == "__main__":
    main()
