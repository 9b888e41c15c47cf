"""Scale of the pure core: a 100,000-item report through load, gate, render and save.

Two steps, each a process of its own, so the second one's peak memory is its own:

    .venv/bin/python bench/core_scale.py write DIR [--items 100000] [--regressions 2000]
    .venv/bin/python bench/core_scale.py measure DIR     # one JSON object on stdout

`write` makes a baseline and a candidate report, realistic in shape: one run an item (three
for a failure: the two re-runs), answers of about 300 characters, three deterministic checks,
a judge verdict with a comment of about 150 characters, token usage and latencies; 10 % of the
baseline fails, the candidate has `--regressions` items that regressed, a quarter as many
improved, 0.1 % errored and 0.2 % unstable (passing two runs of three) items.

`measure` loads both, saves the candidate, then times `evaluate_gate`, `render_comment` and
`render_summary` with the baseline and without it, the peak resident memory they add (VmHWM,
reset before them) and, in a second pass, the peak of what they allocate (tracemalloc).
"""

from __future__ import annotations

import argparse
import importlib
import json
import random
import resource
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from golden_gate.core import slim
from golden_gate.core.gate import evaluate_gate
from golden_gate.core.report import new_report
from golden_gate.core.report_file import load_report, report_json, save_report
from golden_gate.rendering.render import render_comment, render_summary

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
    """`outcome`: pass, fail, unstable (2 of 3 runs passed) or error."""
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
    else:  # unstable: failed once, then passed both re-runs
        runs = [run_result(rng, i, r > 0, rerun=r > 0) for r in range(3)]
    passes = sum(r["status"] == "pass" for r in runs)
    return {**base, "passes": passes, "runs": len(runs), "errors": 0, "run_results": runs}


def make_reports(n: int, regressions: int, seed: int = 7) -> tuple[dict, dict]:
    """A baseline and a candidate sharing every id; `regressions` pass -> fail changes."""
    rng = random.Random(seed)
    base_fail = set(rng.sample(range(n), n // 10))  # a 90 % baseline
    ids = [i for i in range(n) if i not in base_fail]
    picked = rng.sample(ids, regressions + n // 1000 + n // 500)
    regressed = set(picked[:regressions])
    errored = set(picked[regressions : regressions + n // 1000])
    unstable = set(picked[regressions + n // 1000 :])
    improved = set(rng.sample(sorted(base_fail), regressions // 4))
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


def write(directory: Path, items: int, regressions: int) -> None:
    baseline, candidate = make_reports(items, regressions)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "baseline.json").write_text(json.dumps(baseline, indent=1))
    (directory / "report.json").write_text(json.dumps(candidate, indent=1))


def core(candidate, baseline) -> dict[str, float]:
    """Gate and both renders, timed; the renders' lengths for a sanity check.

    As the pipeline does, each report is viewed once (its items' counts as columns, slim.py);
    the gate's time includes that."""
    out: dict[str, float] = {}
    started = time.perf_counter()
    candidate = slim.of(candidate)
    baseline = slim.of(baseline) if baseline is not None else None
    gate = evaluate_gate(candidate, baseline)
    out["gate_s"] = time.perf_counter() - started
    comment, out["comment_s"] = timed(render_comment, candidate, gate, baseline=baseline)
    summary, out["summary_s"] = timed(render_summary, candidate, gate, baseline=baseline)
    out["core_s"] = out["gate_s"] + out["comment_s"] + out["summary_s"]
    out["comment_chars"] = len(comment)
    out["summary_chars"] = len(summary)
    out["comment_rows"] = comment.count("\n| <code>")
    return out


def measure(directory: Path) -> dict[str, object]:
    out: dict[str, object] = {"report_mib": (directory / "report.json").stat().st_size / 2**20}
    out["rss_start_mib"] = rss_mib()
    baseline, out["load_baseline_s"] = timed(load_report, directory / "baseline.json")
    candidate, out["load_s"] = timed(load_report, directory / "report.json")
    out["items"] = len(candidate.results)
    out["rss_loaded_mib"] = rss_mib()
    out["peak_load_mib"] = peak_mib()
    saved = directory / "saved.json"
    _, out["save_s"] = timed(save_report, candidate, saved)
    out["saved_identical"] = saved.read_text() == (report_json(candidate))
    # The statistics import scipy.special on first use: a fixed cost, whatever the size.
    _, out["scipy_import_s"] = timed(importlib.import_module, "scipy.special")

    out["peak_reset"] = reset_peak()
    before = rss_mib()
    with_baseline = core(candidate, baseline)
    out["core_rss_added_mib"] = peak_mib() - before
    gate = evaluate_gate(candidate, baseline)
    out["verdict"] = gate.verdict
    out["regressions"] = gate.comparison.b if gate.comparison else 0
    out["with_baseline"] = with_baseline
    out["without_baseline"] = core(candidate, None)
    tracemalloc.start()
    core(candidate, baseline)
    out["core_traced_peak_mib"] = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    out["maxrss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("step", choices=["write", "measure"])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--regressions", type=int, default=2_000)
    args = parser.parse_args()
    if args.step == "write":
        write(args.directory, args.items, args.regressions)
    else:
        print(json.dumps(measure(args.directory)))


if __name__ == "__main__":
    main()
