"""Coverage of the human-basis floor by simulation, through the real code.

Each simulated run has N items whose answers people pass with probability `rate` (the true
human pass rate), judged by a judge with a known false-pass and false-fail rate; a labelled
sample of n answers drawn the same way has both the human label and the judge's verdict (the
calibration's confusion table). For each run the bench computes, with the gate's own functions,

- the judge-basis floor: `core.stats.wilson_lower_bound` of the judge's verdicts (what the
  gate's floor is on by default), and
- the human-basis floor: `core.human_basis.from_confusion` (prediction-powered inference), as
  the gate computes it (with its small-sample corrections) and as ppi_py does (without),

and counts how often each lower bound is at or below the true human pass rate (coverage; the
two-sided 95 % interval's lower end should cover at least 97.5 % of the time).

    nice -n 10 .venv/bin/python bench/human_basis.py [--reps 2000] [--write BENCHMARKS.md]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from golden_gate.core.human_basis import from_confusion
from golden_gate.core.stats import wilson_lower_bound

RATES = (0.7, 0.8, 0.9, 0.95)
FALSE_PASS = (0.0, 0.15, 0.30)
FALSE_FAIL = 0.05
SIZES = ((30, 200), (50, 200), (200, 1000))  # (labelled answers n, run items N)
START, END = "<!-- human-basis:start -->", "<!-- human-basis:end -->"


def judged(rng: np.random.Generator, human: np.ndarray, false_pass: float) -> np.ndarray:
    noise = rng.random(human.shape)
    return np.where(human, noise >= FALSE_FAIL, noise < false_pass)


def cell(rng, rate, false_pass, n, big_n, reps):
    judge_cover = plain_cover = human_cover = 0
    lowers = []
    for _ in range(reps):
        labelled = rng.random(n) < rate
        verdicts = judged(rng, labelled, false_pass)
        run = judged(rng, rng.random(big_n) < rate, false_pass)
        k = int(run.sum())
        judge_cover += wilson_lower_bound(k, big_n) <= rate
        table = (
            int((labelled & verdicts).sum()),
            int((labelled & ~verdicts).sum()),
            int((~labelled & verdicts).sum()),
            int((~labelled & ~verdicts).sum()),
        )
        scores = [1.0] * k + [0.0] * (big_n - k)
        gated = from_confusion(*table, scores)
        plain = from_confusion(*table, scores, corrected=False)
        assert gated is not None and plain is not None
        human_cover += gated.lower <= rate
        plain_cover += plain.lower <= rate
        lowers.append(gated.lower)
    return judge_cover / reps, plain_cover / reps, human_cover / reps, float(np.median(lowers))


def table(reps: int, seed: int) -> str:
    rng = np.random.default_rng(seed)
    rows = [
        "| human pass rate | judge false-pass | n labels | N items | judge pass rate | "
        "judge-basis (Wilson) coverage | PPI as ppi_py | human basis (the gate's) | "
        "median human-basis bound |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for n, big_n in SIZES:
        for rate in RATES:
            for false_pass in FALSE_PASS:
                judge_rate = rate * (1 - FALSE_FAIL) + (1 - rate) * false_pass
                jc, pc, hc, median = cell(rng, rate, false_pass, n, big_n, reps)
                rows.append(
                    f"| {rate:.2f} | {false_pass:.2f} | {n} | {big_n} | {judge_rate:.3f} | "
                    f"{jc:.1%} | {pc:.1%} | {hc:.1%} | {median:.3f} |"
                )
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--write", type=Path, help="replace the section in this Markdown file")
    args = parser.parse_args()
    started = time.perf_counter()
    body = table(args.reps, args.seed)
    took = time.perf_counter() - started
    text = (
        f"{body}\n\n{args.reps} simulated runs a cell (seed {args.seed}; Monte-Carlo standard "
        f"error at most 1.1 points, 0.35 near 97.5 %), false-fail rate {FALSE_FAIL:.0%}; "
        f"{took:.0f} s."
    )
    print(text)
    if args.write:
        doc = args.write.read_text()
        section = f"{START}\n{text}\n{END}"
        pattern = re.compile(re.escape(START) + ".*?" + re.escape(END), re.DOTALL)
        if not pattern.search(doc):
            raise SystemExit(f"{args.write}: no {START} ... {END} section")
        args.write.write_text(pattern.sub(lambda _: section, doc))


if __name__ == "__main__":
    main()
