"""golden-gate side by side with promptfoo and a hand-written harness, on the same stand-ins.

    .venv/bin/python bench/peers.py [--items 1000] [--concurrency 8]

One golden set of `--items` questions; the fake assistant (100 ms) and the fake OpenAI-compatible
judge (200 ms) each in a process of their own (bench/serve.py); every tool asks each question
once and has each answer judged once, `--concurrency` requests in flight:

- **golden-gate**: `golden-gate eval` (a fresh process, start-up included) with the LLM judge,
  its verdict cache cold, then again with the cache warm (a re-run of unchanged answers);
- **promptfoo**: `promptfoo eval` (npm `promptfoo`, installed into .tools/ on first use) with
  its HTTP provider and an `llm-rubric` assertion graded by the same judge, its caches off.

(The hand-written harness of teams, a thread pool asking then judging item by item, is
bench/run.py §2.)

Prints one Markdown table: wall time, ideal = items × (assistant + judge latency) /
concurrency, efficiency = ideal / wall, and the judge calls each made. No timing is asserted
anywhere; run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import ROOT, answers, golden, serve  # bench/run.py

PROMPTFOO_VERSION = "0.121.0"
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


def timed(command: list[str], env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 1, 100):  # promptfoo exits 100 when an assertion failed
        raise SystemExit(f"{command[0]} exited {done.returncode}:\n{done.stderr[-3000:]}")
    return elapsed


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
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    items = golden(args.items)
    ideal = args.items * (ASSISTANT_LATENCY + JUDGE_LATENCY) / args.concurrency
    rows: list[tuple[str, float, int]] = []
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
        gate = [
            cli, "eval", str(golden_file), "--url", assistant.url, "--quiet",
            "--concurrency", str(args.concurrency), "--judge-concurrency", str(args.concurrency),
            "--judge-model", f"openai:{JUDGE_MODEL}", "--judge-base-url", judge.url,
            "--cache-dir", str(work / "cache"), "-o", str(work / "report.json"),
        ]  # fmt: skip
        for label in ("golden-gate, cache cold", "golden-gate, re-run (cache warm)"):
            judge.stats()
            wall = timed(gate, base_env, work)
            rows.append((label, wall, judge.stats()["requests"]))

        config = work / "promptfooconfig.json"
        config.write_text(json.dumps(promptfoo_config(items, assistant.url, judge.url)))
        command = [
            str(promptfoo()), "eval", "-c", str(config), "--no-cache", "--no-table",
            "--no-progress-bar", "-j", str(args.concurrency), "-o", str(work / "pf.json"),
        ]  # fmt: skip
        env = {**base_env, "PROMPTFOO_CONFIG_DIR": str(work / "promptfoo-home")}
        judge.stats()
        wall = timed(command, env, work)
        rows.append((f"promptfoo {PROMPTFOO_VERSION}", wall, judge.stats()["requests"]))

    print(
        f"{args.items} items, assistant {ASSISTANT_LATENCY * 1000:.0f} ms, judge "
        f"{JUDGE_LATENCY * 1000:.0f} ms, concurrency {args.concurrency}; ideal {ideal:.1f} s\n"
    )
    print("| tool | wall (s) | efficiency | judge calls |")
    print("| --- | ---: | ---: | ---: |")
    for label, wall, calls in rows:
        print(f"| {label} | {wall:.1f} | {ideal / wall:.2f} | {calls} |")
    if shutil.which("node") is None:
        print("\n(node is missing: promptfoo was not run)")


if __name__ == "__main__":
    main()
