"""Scale of the pure core: a 100,000-item report through load, gate, render and save.

Run by bench/run.py in a subprocess of its own (so its peak memory is its own); alone:

    .venv/bin/python bench/core_scale.py [--items 100000] [--regressions 2000]

The reports are realistic in shape: one run an item (three for a failure: the two re-runs),
answers of about 300 characters, the three deterministic checks, a judge verdict with a
comment of about 150 characters, token usage and latencies.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from golden_gate.gate import evaluate_gate
from golden_gate.render import render_comment, render_summary
from golden_gate.report import load_report, new_report, report_json, save_report

TAGS = ["smoke", "billing", "auth", "search", "onboarding", "api", "limits", "security"]
WORDS = [
    "the",
    "refund",
    "window",
    "is",
    "fourteen",
    "days",
    "after",
    "purchase",
    "and",
    "requests",
    "go",
    "through",
    "the",
    "billing",
    "page",
    "where",
    "an",
    "administrator",
    "approves",
    "them",
    "within",
    "two",
    "business",
    "days",
    "unless",
    "the",
    "plan",
    "is",
    "annual",
    "in",
    "which",
    "case",
    "support",
    "handles",
    "it",
    "manually",
    "see",
    "docs",
    "billing",
    "refunds",
    "for",
    "details",
    "tokens",
    "expire",
    "after",
    "one",
    "hour",
    "rotate",
    "keys",
    "from",
    "the",
    "settings",
    "page",
    "rate",
    "limits",
    "apply",
    "per",
    "organisation",
    "and",
    "reset",
    "every",
    "minute",
    "search",
    "indexes",
    "rebuild",
    "nightly",
]


def text(rng: random.Random, chars: int) -> str:
    words: list[str] = []
    size = 0
    while size < chars:
        word = rng.choice(WORDS)
        words.append(word)
        size += len(word) + 1
    return " ".join(words)[:chars].rstrip() + "."


def run_result(rng: random.Random, i: int, passed: bool, *, rerun: bool = False) -> dict:
    answer = text(rng, 300) + f" See https://docs.example.com/item/{i}."
    checks = [
        {"name": "citations", "passed": True},
        {"name": "length", "passed": True},
        {"name": "forbidden", "passed": True},
    ]
    comment = text(rng, 140) + (
        " Thus, the score should be: true."
        if passed
        else f' Missing: "fact {i}". Thus, the score should be: false.'
    )
    return {
        "status": "pass" if passed else "fail",
        "rerun": rerun,
        "answer": answer,
        "sources": [f"docs/item-{i}.md"],
        "checks": checks,
        "verdict": {
            "passed": passed,
            "score": passed,
            "comment": comment,
            "tokens": {"input_tokens": 350 + i % 200, "output_tokens": 60 + i % 40},
            "latency_ms": round(400 + (i * 37) % 900 + 0.25, 2),
        },
        "http_status": 200,
        "latency_ms": round(80 + (i * 13) % 400 + 0.5, 1),
    }


def item(rng: random.Random, i: int, outcome: str) -> dict:
    """`outcome`: pass, fail, unstable (1 of 3 runs passed... then 2 of 3) or error."""
    question = f"Question {i}: " + text(rng, 70).capitalize().rstrip(".") + "?"
    base = {
        "id": f"item-{i:06d}",
        "tags": [TAGS[i % len(TAGS)], TAGS[(i // 7) % len(TAGS)]],
        "question": question,
        "item_hash": f"{i:064x}",
    }
    if outcome == "error":
        runs = [{"status": "error", "error": "HTTP 502 after 4 attempts", "http_status": 502}] * 1
        return {**base, "passes": 0, "runs": 0, "errors": 1, "run_results": runs}
    if outcome == "pass":
        runs = [run_result(rng, i, True)]
    elif outcome == "fail":
        runs = [run_result(rng, i, False, rerun=r > 0) for r in range(3)]
    else:  # unstable: failed, then the re-runs disagreed
        runs = [run_result(rng, i, r == 1, rerun=r > 0) for r in range(3)]
    passes = sum(r["status"] == "pass" for r in runs)
    return {**base, "passes": passes, "runs": len(runs), "errors": 0, "run_results": runs}


def make_reports(n: int, regressions: int, seed: int = 7) -> tuple[dict, dict]:
    """A baseline and a candidate sharing every id; `regressions` pass -> fail changes."""
    rng = random.Random(seed)
    base_fail = set(rng.sample(range(n), n // 10))  # a 90 % baseline
    ids = [i for i in range(n) if i not in base_fail]
    regressed = set(rng.sample(ids, regressions))
    improved = set(rng.sample(sorted(base_fail), regressions // 4))
    errored = set(rng.sample(ids, n // 1000))
    unstable = set(rng.sample(ids, n // 500))
    base_items, cand_items = [], []
    for i in range(n):
        base_items.append(item(rng, i, "fail" if i in base_fail else "pass"))
        if i in errored:
            outcome = "error"
        elif i in regressed:
            outcome = "fail"
        elif i in improved:
            outcome = "pass"
        elif i in unstable:
            outcome = "unstable"
        else:
            outcome = "fail" if i in base_fail else "pass"
        cand_items.append(item(rng, i, outcome))
    common = {
        "judge": "openai:gpt-4.1-mini",
        "judge_prompt_hash": "0" * 64,
        "dataset": {"path": "evals/golden.jsonl", "fingerprint": "f" * 64, "items": n},
        "stats": {"judge_calls": n, "cache_hits": 0, "assistant_calls": n, "elapsed_s": 812.5},
    }
    baseline = new_report(results=[], **common).model_dump(exclude_none=True)
    candidate = dict(baseline)
    baseline["results"], candidate["results"] = base_items, cand_items
    return baseline, candidate


def peak_mib() -> float:
    """This process's peak resident set so far (VmHWM)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def reset_peak() -> bool:
    """Reset VmHWM to the current RSS (Linux); False where that is not allowed."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def timed(fn, *args, **kwargs):
    started = time.perf_counter()
    value = fn(*args, **kwargs)
    return value, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--regressions", type=int, default=2_000)
    parser.add_argument("--json", action="store_true", help="one JSON line, for bench/run.py")
    args = parser.parse_args()
    out: dict[str, object] = {"items": args.items}
    with tempfile.TemporaryDirectory(prefix="golden-gate-core-") as tmp:
        base_path, cand_path, saved_path = (
            Path(tmp) / "baseline.json",
            Path(tmp) / "report.json",
            Path(tmp) / "saved.json",
        )
        baseline_doc, candidate_doc = make_reports(args.items, args.regressions)
        base_path.write_text(json.dumps(baseline_doc, indent=1))
        cand_path.write_text(json.dumps(candidate_doc, indent=1))
        out["report_mib"] = cand_path.stat().st_size / 2**20
        del baseline_doc, candidate_doc
        import gc

        gc.collect()
        out["rss_before_load_mib"] = rss_mib()

        baseline, out["load_baseline_s"] = timed(load_report, base_path)
        candidate, out["load_s"] = timed(load_report, cand_path)
        out["peak_after_load_mib"] = peak_mib()
        out["rss_loaded_mib"] = rss_mib()
        _, out["save_s"] = timed(save_report, candidate, saved_path)
        out["peak_after_save_mib"] = peak_mib()
        reset_peak()
        out["rss_before_core_mib"] = rss_mib()

        started = time.perf_counter()
        gate = evaluate_gate(candidate, baseline)
        out["gate_s"] = time.perf_counter() - started
        comment, out["comment_s"] = timed(render_comment, candidate, gate, baseline=baseline)
        summary, out["summary_s"] = timed(render_summary, candidate, gate, baseline=baseline)
        out["core_s"] = time.perf_counter() - started
        out["peak_core_mib"] = peak_mib()
        out["comment_chars"] = len(comment)
        out["summary_chars"] = len(summary)
        out["verdict"] = gate.verdict
        out["regressions"] = gate.comparison.b if gate.comparison else 0
        out["report_json_equal"] = report_json(candidate) == saved_path.read_text()
    out["peak_total_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if args.json:
        print(json.dumps(out))
    else:
        for key, value in out.items():
            print(f"{key}: {value:.3f}" if isinstance(value, float) else f"{key}: {value}")


if __name__ == "__main__":
    main()
