"""golden-gate side by side with promptfoo and a hand-written harness, on the same stand-ins.

    .venv/bin/python bench/peers.py [--items 1000] [--concurrency 8,32]

One golden set of `--items` questions; the fake assistant (100 ms) and the fake OpenAI-compatible
judge (200 ms) each in a process of their own (bench/serve.py); every tool asks each question
once and has each answer judged once, `--concurrency` requests in flight:

- **golden-gate**: `golden-gate eval` (a fresh process, start-up included) with the LLM judge,
  its verdict cache cold, then again with the cache warm (a re-run of unchanged answers);
- **promptfoo**: `promptfoo eval` (npm `promptfoo`, installed into .tools/ on first use) with
  its HTTP provider and an `llm-rubric` assertion graded by the same judge, its caches off.

(The hand-written harness of teams, a thread pool asking then judging item by item, is
bench/run.py §2.)

Prints one Markdown table a concurrency level: wall time, efficiency = ideal / wall with ideal
= items × (assistant + judge latency) / concurrency, the judge calls each made, the CPU its
processes used (per judged item: the whole tool's CPU over the calls, the assistant side
included), and the seconds from spawning it to its first request at the assistant. No timing
is asserted anywhere; run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import ROOT, answers, golden, serve  # bench/run.py

PROMPTFOO_VERSION = "0.121.1"  # 0.121.0 is not on the registry (any more)
TOOLS = ROOT / ".tools"
ASSISTANT_LATENCY = 0.1
JUDGE_LATENCY = 0.2
JUDGE_MODEL = "gpt-4.1-mini"
DUMMY_KEY = "sk-bench-not-a-real-key"


def promptfoo() -> Path:
    binary = TOOLS / "node_modules" / ".bin" / "promptfoo"
    if not binary.exists():
        subprocess.run(
            ["npm", "install", "--prefix", str(TOOLS), "--no-audit", "--no-fund",
             "--loglevel=error", "--save-exact", f"promptfoo@{PROMPTFOO_VERSION}"],
            check=True,
        )  # fmt: skip
    return binary


class Measured:
    """One tool's run: wall time, its processes' CPU, and when its first request came in."""

    def __init__(self, wall: float, cpu: float, first_request: float | None, calls: int) -> None:
        self.wall, self.cpu, self.first_request, self.calls = wall, cpu, first_request, calls


def timed(command: list[str], env: dict[str, str], cwd: Path, assistant, judge) -> Measured:
    """Run `command` to its end; its CPU is what it and the children it waited for used."""
    assistant.stats()
    judge.stats()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    spawned = time.time()
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1, 100):  # promptfoo exits 100 when an assertion failed
        raise SystemExit(f"{command[0]} exited {done.returncode}:\n{done.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    first_at = assistant.stats().get("first_request_at")
    first = first_at - spawned if first_at is not None else None
    return Measured(elapsed, cpu, first, judge.stats()["requests"])


def promptfoo_config(items, assistant_url: str, judge_url: str) -> dict:
    return {
        "description": "golden-gate peers bench",
        "prompts": ["{{question}}"],
        "providers": [
            {
                "id": f"{assistant_url}/ask",
                "config": {
                    "method": "POST",
                    "headers": {"Content-Type": "application/json"},
                    "body": {"text": "{{question}}"},
                    "transformResponse": "json.answer",
                },
            }
        ],
        "defaultTest": {
            "options": {
                "provider": {
                    "id": f"openai:chat:{JUDGE_MODEL}",
                    "config": {"apiBaseUrl": judge_url, "apiKey": DUMMY_KEY},
                }
            }
        },
        "tests": [
            {
                "vars": {"question": item.question},
                "assert": [
                    {
                        "type": "llm-rubric",
                        "value": "The answer states: " + "; ".join(item.reference_key_points),
                    }
                ],
            }
            for item in items
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--concurrency", default="8,32", help="comma-separated levels")
    args = parser.parse_args()
    items = golden(args.items)
    levels = [int(c) for c in args.concurrency.split(",")]
    rows: list[tuple[int, str, Measured]] = []
    base_env = {
        **os.environ,
        "OPENAI_API_KEY": DUMMY_KEY,
        "LANGSMITH_TRACING": "false",
        "PROMPTFOO_DISABLE_TELEMETRY": "1",
        "PROMPTFOO_DISABLE_UPDATE": "1",
        "PROMPTFOO_CACHE_ENABLED": "false",
        "PROMPTFOO_DISABLE_SHARING": "1",
    }
    with (
        tempfile.TemporaryDirectory(prefix="golden-gate-peers-") as work_dir,
        serve("assistant", ASSISTANT_LATENCY, answers(items)) as assistant,
        serve("judge", JUDGE_LATENCY) as judge,
    ):
        work = Path(work_dir)
        golden_file = work / "golden.jsonl"
        golden_file.write_text("".join(item.model_dump_json() + "\n" for item in items))
        cli = str(Path(sys.executable).with_name("golden-gate"))
        config = work / "promptfooconfig.json"
        config.write_text(json.dumps(promptfoo_config(items, assistant.url, judge.url)))
        for level in levels:
            cache = work / f"cache-{level}"
            gate = [
                cli, "eval", str(golden_file), "--url", assistant.url, "--quiet",
                "--concurrency", str(level),
                "--judge-model", f"openai:{JUDGE_MODEL}", "--judge-base-url", judge.url,
                "--cache-dir", str(cache), "-o", str(work / "report.json"),
            ]  # fmt: skip
            for label in ("golden-gate, cache cold", "golden-gate, re-run (cache warm)"):
                rows.append((level, label, timed(gate, base_env, work, assistant, judge)))
            command = [
                str(promptfoo()), "eval", "-c", str(config), "--no-cache", "--no-table",
                "--no-progress-bar", "-j", str(level), "-o", str(work / "pf.json"),
            ]  # fmt: skip
            env = {**base_env, "PROMPTFOO_CONFIG_DIR": str(work / "promptfoo-home")}
            measured = timed(command, env, work, assistant, judge)
            rows.append((level, f"promptfoo {PROMPTFOO_VERSION}", measured))

    print(
        f"{args.items} items, assistant {ASSISTANT_LATENCY * 1000:.0f} ms, judge "
        f"{JUDGE_LATENCY * 1000:.0f} ms; ideal = items × (assistant + judge) / concurrency\n"
    )
    print(
        "| concurrency | tool | wall (s) | efficiency | judge calls | CPU (s) "
        "| CPU per judged item (ms) | first request after (s) |"
    )
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for level, label, m in rows:
        ideal = args.items * (ASSISTANT_LATENCY + JUDGE_LATENCY) / level
        per_item = f"{m.cpu / m.calls * 1000:.1f}" if m.calls else "n/a (no judge call)"
        first = f"{m.first_request:.2f}" if m.first_request is not None else "n/a"
        efficiency = f"{ideal / m.wall:.2f}" if m.calls else "n/a"
        print(
            f"| {level} | {label} | {m.wall:.1f} | {efficiency} | {m.calls} | {m.cpu:.1f} "
            f"| {per_item} | {first} |"
        )
    if shutil.which("node") is None:
        print("\n(node is missing: promptfoo was not run)")


if __name__ == "__main__":
    main()
