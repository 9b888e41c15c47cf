"""Peak memory of `golden-gate eval` against a hostile judge: a 2 GB gzip bomb and a 200 MB
reply, on each path a judge reply is read by (our Chat Completions client over aiohttp, the
OpenAI SDK's httpx2 client under LangChain, Anthropic's SDK, google-genai's). Before the
judge's replies were capped, a 2 GB bomb or a 200 MB reply took 4.2 GB. The target is under
300 MiB peak.

The command runs in a child process (the real CLI, the example assistant, a judge stand-in on
127.0.0.1 serving the bomb); its peak resident set is the child's `ru_maxrss`.

    .venv/bin/python bench/judge_bounds.py [--bomb-gb 2] [--huge-mb 200]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from golden_gate.example_assistant import golden_path, start  # noqa: E402
from tests.fakes.anthropic_server import AnthropicServer  # noqa: E402
from tests.fakes.gemini_server import GeminiServer  # noqa: E402
from tests.fakes.judge_server import Behaviour, JudgeServer, _gzip_bomb  # noqa: E402

TARGET_MIB = 300
KEY = "sk-bench-bounds-0000000000000000"


def _peak_mib(command: list[str], env: dict[str, str]) -> tuple[int, float, int]:
    """(exit code, peak RSS in MiB, seconds) of `command` in a child of its own."""
    started = time.monotonic()
    # A fresh child per measure: ru_maxrss of RUSAGE_CHILDREN is the peak over all children,
    # so each measure runs in a process of its own that reports its only child's peak.
    probe = (
        "import resource, subprocess, sys; "
        "code = subprocess.run(sys.argv[1:]).returncode; "
        "print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, *command], capture_output=True, text=True, env=env
    )
    code, kib = done.stdout.split()[-2:]
    return int(code), int(kib) / 1024, round(time.monotonic() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bomb-gb", type=float, default=2.0)
    parser.add_argument("--huge-mb", type=int, default=200)
    args = parser.parse_args()
    bomb_bytes = int(args.bomb_gb * 1024**3)
    made = time.monotonic()
    compressed = len(_gzip_bomb(bomb_bytes))  # made once, before any judge timeout runs
    print(
        f"gzip bomb: {bomb_bytes / 1024**3:g} GiB expanded in {compressed / 1024**2:.1f} MiB "
        f"(made in {time.monotonic() - made:.0f} s)"
    )
    replies = {
        f"{args.bomb_gb:g} GB gzip bomb": Behaviour.gzip_bomb(bomb_bytes),
        f"{args.huge_mb} MB reply": Behaviour.huge(args.huge_mb * 1024 * 1024),
    }
    paths = {
        "own client (aiohttp)": ("openai:gpt-4.1-mini", JudgeServer, {}),
        "OpenAI SDK (LangChain)": (
            "openai:gpt-4.1-mini",
            JudgeServer,
            {"GOLDEN_GATE_JUDGE_LANGCHAIN": "1"},
        ),
        "Anthropic SDK": ("anthropic:claude-sonnet-4-5", AnthropicServer, {}),
        "google-genai SDK": ("google_genai:gemini-2.5-flash", GeminiServer, {}),
    }
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    env.update(OPENAI_API_KEY=KEY, ANTHROPIC_API_KEY=KEY, GOOGLE_API_KEY=KEY)
    worst = 0.0
    with start("candidate") as assistant:
        for reply_name, behaviour in replies.items():
            for path_name, (model, server_class, extra) in paths.items():
                with server_class(default=behaviour) as judge:
                    out = ROOT / "bench" / ".judge_bounds_report.json"
                    command = [sys.executable, "-m", "golden_gate", "eval", str(golden_path())]
                    command += ["--assistant-url", assistant.url, "--judge-model", model]
                    command += ["--judge-base-url", judge.base_url, "-o", str(out)]
                    command += ["--cache", "off", "--quiet", "--subset-tags", "smoke"]
                    command += ["--judge-timeout", "30", "--judge-retries", "0"]
                    code, peak, seconds = _peak_mib(command, {**env, **extra})
                    out.unlink(missing_ok=True)
                worst = max(worst, peak)
                print(
                    f"{reply_name:>20} · {path_name:<24} exit {code}, peak {peak:6.0f} MiB, "
                    f"{judge.calls} judge calls, {seconds} s"
                )
    verdict = "under" if worst < TARGET_MIB else "OVER"
    print(f"worst peak {worst:.0f} MiB: {verdict} the {TARGET_MIB} MiB target")


if __name__ == "__main__":
    main()
