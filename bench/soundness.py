"""Soundness of the gate by simulation: false alarms and power, through the real gate code.

Each simulated pull request draws a golden set of n items whose per-run probability of a
correct answer follows a realistic flaky mix (80 % of items right ~97 % of the time, 15 % ~70 %,
5 % ~20 %), answers every item in the baseline and in the candidate under a run scheme, builds
the two reports and calls `golden_gate.core.gate.evaluate_gate` on them. Systems:

- identical: the candidate is the baseline system (every failure is a false alarm);
- concentrated: 10 % of the items (all from the reliable group) drop by 50 points: −5 points;
- spread: every item drops by 5 points.

Run schemes: `1 run` and `3 runs` (the rule since 0.2: per-item score = passes / runs, exact
paired sign-flip test); `majority of 3` (each item reduced to pass/fail by majority, then the
sign test: what 0.1 did with `--runs 3`); `1 + 2 re-runs` (0.1's default: a failure re-run twice
and every run counted, then the majority). Beside them a naive point gate: fail when the
candidate's pass rate is 2 points below the baseline's.

    .venv/bin/python bench/soundness.py [--reps 2000] [--write BENCHMARKS.md]

It prints a Markdown table (and with --write, replaces the section between the soundness
markers in that file). Monte-Carlo standard errors are printed beside it.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path
from statistics import NormalDist

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from golden_gate.core.comparison import undeclared_clusters
from golden_gate.core.gate import evaluate_gate
from golden_gate.core.power import planned_power
from golden_gate.core.report import Report, RunSettings
from golden_gate.core.slim import ItemColumns, SlimReport
from golden_gate.core.stats import floor_bound, wilson_lower_bound
from golden_gate.core.verdict import GateSettings

MIX = ((0.80, 0.97), (0.15, 0.70), (0.05, 0.20))  # (share of items, per-run pass probability)
MIX_MEAN = sum(share * p for share, p in MIX)
DROP = 0.05
NAIVE_DROP = 0.02


def draw_items(rng: np.random.Generator, n: int) -> np.ndarray:
    shares = np.array([s for s, _ in MIX])
    probs = np.array([p for _, p in MIX])
    return probs[rng.choice(len(MIX), size=n, p=shares)]


def degrade(rng: np.random.Generator, p: np.ndarray, system: str, drop: float = DROP) -> np.ndarray:
    if system == "identical":
        return p
    if system == "spread":
        return np.clip(p - drop, 0.0, 1.0)
    if system == "concentrated":
        # Items of the reliable group lose 50 points each, as many as make the mean drop:
        # for 5 points, 10 % of the items.
        reliable = np.flatnonzero(p >= 0.9)
        # (rounded at random, so that the drop is the one asked for on average)
        share = len(p) * drop / 0.5
        k = min(len(reliable), int(share) + int(rng.random() < share - int(share)))
        hit = rng.choice(reliable, size=k, replace=False)
        q = p.copy()
        q[hit] -= 0.5
        return q
    raise ValueError(system)


@dataclass(frozen=True)
class Scheme:
    name: str
    runs: int
    reruns: int = 0  # 0.1's counted re-runs of failures
    majority: bool = False  # reduce each item to its majority outcome (0.1's item rule)
    base_runs: int | None = None  # the baseline's runs an item, when not the pull request's


SCHEMES = {
    "1 run": Scheme("1 run", 1),
    "3 runs": Scheme("3 runs", 3),
    "majority of 3": Scheme("majority of 3", 3, majority=True),
    "1 + 2 re-runs": Scheme("1 + 2 re-runs", 1, reruns=2, majority=True),
    # `mode: baseline`'s default since step 18: three runs an item in the baseline.
    "1 run, baseline 3": Scheme("1 run, baseline 3", 1, base_runs=3),
}


def outcomes(
    rng: np.random.Generator, p: np.ndarray, scheme: Scheme
) -> tuple[np.ndarray, np.ndarray]:
    """(passes, runs) per item, as the scheme counts them."""
    passes = rng.binomial(scheme.runs, p)
    runs = np.full(len(p), scheme.runs)
    if scheme.reruns:
        failed = passes * 2 <= runs
        extra = rng.binomial(scheme.reruns, p)
        passes = np.where(failed, passes + extra, passes)
        runs = np.where(failed, runs + scheme.reruns, runs)
    if scheme.majority:
        passes = (passes * 2 > runs).astype(int)
        runs = np.ones(len(p), dtype=int)
    return passes, runs


IDS = [f"q{i:05d}" for i in range(100_000)]


def build_report(
    passes: np.ndarray,
    runs: np.ndarray,
    runs_setting: int,
    clusters: np.ndarray | None = None,
) -> SlimReport:
    """The report as the gate reads it: its items' counts as columns (golden_gate/core/slim.py);
    `clusters`: each item's cluster number, recorded as its `cluster` field."""
    n = len(passes)
    items = ItemColumns(
        clusters={} if clusters is None else {IDS[i]: f"page{c}" for i, c in enumerate(clusters)},
        ids=IDS[:n],
        tags=[()] * n,
        passes=passes.tolist(),
        runs=runs.tolist(),
        errors=[0] * n,
        unanswered=[0] * n,
        hashes=[None] * n,
    )
    header = Report(judge="sim", results=[], run_settings=RunSettings(runs=runs_setting))
    return SlimReport(header, items)


@dataclass
class Cell:
    n: int
    system: str
    scheme: str
    reps: int
    gate_fails: int = 0
    regression_fails: int = 0
    naive_fails: int = 0
    floor_passes: int = 0
    detectable: list[float] | None = None  # the stated drop, spread over every item
    concentrated: list[float] = field(default_factory=list)  # and concentrated

    def rate(self, count: int) -> float:
        return count / self.reps

    def se(self, count: int) -> float:
        p = self.rate(count)
        return math.sqrt(max(p * (1 - p), 1 / self.reps) / self.reps)


def simulate(
    n: int,
    system: str,
    scheme_name: str,
    reps: int,
    *,
    seed: int,
    settings: GateSettings,
    population_mean: float | None = None,
    drop: float = DROP,
) -> Cell:
    scheme = SCHEMES[scheme_name]
    rng = np.random.default_rng(seed)
    cell = Cell(n=n, system=system, scheme=scheme_name, reps=reps, detectable=[])
    for _ in range(reps):
        p = draw_items(rng, n)
        if population_mean is not None:
            # Scaled in the population, not in the draw: the golden set is a sample of questions.
            p = np.clip(p * population_mean / MIX_MEAN, 0, 1)
        q = degrade(rng, p, system, drop)
        base_scheme = scheme if scheme.base_runs is None else Scheme("base", scheme.base_runs)
        base = outcomes(rng, p, base_scheme)
        cand = outcomes(rng, q, scheme)
        gate = evaluate_gate(
            build_report(*cand, scheme.runs), build_report(*base, base_scheme.runs), settings
        )
        cell.gate_fails += not gate.passed
        cell.regression_fails += any(r.code == "significant-regression" for r in gate.reasons)
        cell.floor_passes += gate.lower_bound is not None and gate.lower_bound >= settings.floor
        base_rate = float((base[0] / base[1]).mean())
        cand_rate = float((cand[0] / cand[1]).mean())
        cell.naive_fails += cand_rate < base_rate - NAIVE_DROP
        if gate.power is not None and gate.power.detectable_drop is not None:
            cell.detectable.append(gate.power.detectable_drop)
        if gate.power is not None and gate.power.detectable_concentrated is not None:
            cell.concentrated.append(gate.power.detectable_concentrated)
    return cell


# Clustered golden sets: questions about the same page, 5–10 a page.
CLUSTER_SIZES = (5, 10)
BREAK_RATE = 0.08  # a page's retrieval breaks for one run: every question on it fails that run


def draw_clusters(rng: np.random.Generator, n: int) -> np.ndarray:
    """Each item's cluster number: consecutive pages of 5–10 questions."""
    sizes = []
    while sum(sizes) < n:
        sizes.append(int(rng.integers(CLUSTER_SIZES[0], CLUSTER_SIZES[1] + 1)))
    return np.repeat(np.arange(len(sizes)), sizes)[:n]


def clustered_world(
    rng: np.random.Generator, n: int, *, breaks: bool, mean: float
) -> tuple[np.ndarray, np.ndarray]:
    """(per-run pass probability, cluster) per item: a page's questions share its difficulty
    (the page draws one group of the flaky mix for all of them), scaled so that the population's
    mean per-run pass rate, breaks included, is `mean`."""
    cluster = draw_clusters(rng, n)
    shares = np.array([s for s, _ in MIX])
    probs = np.array([p for _, p in MIX])
    page = probs[rng.choice(len(MIX), size=cluster[-1] + 1, p=shares)]
    scale = mean / MIX_MEAN / (1 - BREAK_RATE if breaks else 1)
    return np.clip(page[cluster] * scale, 0, 1), cluster


def clustered_outcomes(
    rng: np.random.Generator, p: np.ndarray, cluster: np.ndarray, runs: int, *, breaks: bool
) -> np.ndarray:
    """Passed runs per item; with breaks, each run breaks each page with BREAK_RATE."""
    passes = np.zeros(len(p), dtype=int)
    for _ in range(runs):
        ok = rng.random(len(p)) < p
        if breaks:
            ok &= rng.random(cluster[-1] + 1)[cluster] >= BREAK_RATE
        passes += ok
    return passes


def floor_coverage(
    n: int, runs: int, reps: int, *, seed: int, breaks: bool, settings: GateSettings
) -> dict[str, int]:
    """How often the floor passes an assistant whose true mean is exactly the floor, clustered
    by page: the gate as it is (clusters recorded in the report), and, on the same draws, the
    plain Wilson bound (clusters ignored) and the design effect without the t correction."""
    rng = np.random.default_rng(seed)
    counts = {"gate": 0, "wilson": 0, "deff": 0}
    for _ in range(reps):
        p, cluster = clustered_world(rng, n, breaks=breaks, mean=settings.floor)
        passes = clustered_outcomes(rng, p, cluster, runs, breaks=breaks)
        report = build_report(passes, np.full(n, runs), runs, clusters=cluster)
        gate = evaluate_gate(report, None, settings)
        counts["gate"] += gate.lower_bound is not None and gate.lower_bound >= settings.floor
        scores = (passes / runs).tolist()
        counts["wilson"] += (
            wilson_lower_bound(float(sum(scores)), n, confidence=settings.confidence)
            >= settings.floor
        )
        deff = floor_bound(
            scores,
            [str(c) for c in cluster],
            confidence=settings.confidence,
            df_correction=False,
        )
        counts["deff"] += deff.lower >= settings.floor
    return counts


def floor_section(reps: int, settings: GateSettings) -> list[str]:
    lines = [
        "",
        *textwrap.wrap(
            "The floor with clustered questions (pages of 5–10 questions sharing the page's "
            f"difficulty; with breaks, each run each page's retrieval breaks with probability "
            f"{BREAK_RATE:.0%}, failing all its questions), for an assistant whose true mean is "
            f"exactly the floor ({settings.floor}): how often the floor wrongly passes (should "
            f"be ≤ 5 %, nominally 2.5 %). {reps} simulated golden sets a cell; ± is one "
            "Monte-Carlo standard error. The gate's bound (`core/stats.floor_bound`: Wilson on "
            "the Kish effective sample size with the Korn–Graubard t correction) beside the two "
            "it was chosen over, on the same draws.",
            96,
        ),
        "",
        "| n | runs | world | the gate (deff + t) | plain Wilson (clusters ignored) | deff, no t |",
        "|---|---|---|---|---|---|",
    ]
    seed = 500
    for n in (200, 1000):
        for runs in (1, 3):
            for breaks in (False, True):
                seed += 1
                counts = floor_coverage(n, runs, reps, seed=seed, breaks=breaks, settings=settings)

                def fmt(count: int) -> str:
                    rate = count / reps
                    return f"{rate:.1%} ± {math.sqrt(max(rate * (1 - rate), 1 / reps) / reps):.1%}"

                world = "shared difficulty + breaks" if breaks else "shared difficulty"
                lines.append(
                    f"| {n} | {runs} | {world} | {fmt(counts['gate'])} | "
                    f"{fmt(counts['wilson'])} | {fmt(counts['deff'])} |"
                )
                print(lines[-1], flush=True)
    return lines


POWER_SCHEMES = ("1 run", "3 runs", "1 run, baseline 3")


def power_section(reps: int, settings: GateSettings) -> list[str]:
    """Each power statement checked at the drop it states: the gate's own statement (the
    median over identical pull requests), then spread and concentrated drops of exactly that
    size through the gate; and `plan`'s "a 5-point drop needs about N items" at N."""
    statements = max(100, reps // 5)
    lines = [
        "",
        *textwrap.wrap(
            'Each power statement at the drop it states. The comment says "catch a drop of '
            'X–Y points 80 % of the time": X for a drop spread over every item, Y for one '
            "concentrated on the most reliable items. Each figure's median (and 10–90 % range) "
            f"of what the gate says over {statements} identical pull requests; then pull "
            "requests dropping exactly that much in that shape (spread: every item loses X "
            "points; concentrated: reliable items losing 50 points each), each cell "
            f"{reps} pull requests through `evaluate_gate`; the power should be 80 % "
            "(within 5 points). ± is one Monte-Carlo standard error.",
            96,
        ),
        "",
        "| n | runs | stated X (spread) | over PRs (10–90 %) | caught: spread −X "
        "| stated Y (concentrated) | over PRs (10–90 %) | caught: concentrated −Y |",
        "|---|---|---|---|---|---|---|---|",
    ]
    seed = 900
    for n in (30, 200, 1000):
        for scheme in POWER_SCHEMES:
            seed += 1
            same = simulate(n, "identical", scheme, statements, seed=seed, settings=settings)
            row = f"| {n} | {scheme} |"
            for system, said in (("spread", same.detectable), ("concentrated", same.concentrated)):
                stated = float(np.median(said))
                low, high = np.percentile(said, [10, 90])
                seed += 1
                cell = simulate(n, system, scheme, reps, seed=seed, settings=settings, drop=stated)
                caught = cell.rate(cell.regression_fails)
                row += (
                    f" {stated * 100:.1f} | {low * 100:.1f}–{high * 100:.1f} | "
                    f"{caught:.1%} ± {cell.se(cell.regression_fails):.1%} |"
                )
            lines.append(row)
            print(lines[-1], flush=True)
    lines += [
        "",
        *textwrap.wrap(
            '`plan`\'s statement, "a 5-point drop needs about N–M items" (N spread over every '
            "item, M concentrated), from a baseline of 200 items of the same mix with as many "
            "runs as planned (one run a side: the baseline cannot show the items' own "
            "variability, so `plan` takes the cautious case), checked with a 5-point drop of "
            "each shape at its own number:",
            96,
        ),
        "",
        "| runs | N stated (spread) | caught: spread −5 | M stated (concentrated) "
        "| caught: concentrated −5 |",
        "|---|---|---|---|---|",
    ]
    for scheme in POWER_SCHEMES:
        runs = SCHEMES[scheme].runs
        base_runs = SCHEMES[scheme].base_runs or runs
        rng = np.random.default_rng(seed)
        p = draw_items(rng, 200)
        baseline = build_report(*outcomes(rng, p, Scheme("base", base_runs)), base_runs)
        note = planned_power(n=200, runs=runs, baseline=baseline, settings=settings)
        row = f"| {scheme} |"
        for system, needed in (
            ("spread", note.items_for_drop),
            ("concentrated", note.items_for_concentrated),
        ):
            assert needed is not None
            seed += 1
            cell = simulate(needed, system, scheme, reps, seed=seed, settings=settings)
            row += (
                f" {needed} | {cell.rate(cell.regression_fails):.1%} ± "
                f"{cell.se(cell.regression_fails):.1%} |"
            )
        lines.append(row)
        print(lines[-1], flush=True)
    return lines


def undeclared_clusters_section(reps: int, settings: GateSettings) -> list[str]:
    """Questions about one page, with and without `cluster` declared: false alarms of
    identical pull requests in a clustered world (shared difficulty and breaks), and what
    declaring pages as clusters costs in power where questions are independent after all."""
    lines = [
        "",
        *textwrap.wrap(
            "Undeclared clusters. Identical pull requests in the clustered world above (pages "
            "of 5–10 questions sharing difficulty; each run each page breaks with probability "
            f"{BREAK_RATE:.0%}), gated with the pages undeclared and declared as `cluster`; "
            "and, in the independent flaky mix, the power against a spread 5-point drop when "
            "the same page grouping is declared though the questions are independent (what "
            "clustering by page by default would cost); and how often the gate warns that the "
            "changes look clustered by page (pages undeclared), identical pull requests in "
            f"either world. {reps} pull requests a cell; ± is "
            "one Monte-Carlo standard error.",
            96,
        ),
        "",
        "| n | runs | false alarms: pages undeclared | declared | power −5 spread, "
        "independent questions: undeclared | declared | warned: clustered | warned: independent |",
        "|---|---|---|---|---|---|---|---|",
    ]
    seed = 1500
    for n, runs in ((200, 1), (200, 3), (1000, 1)):
        counts = {"undeclared": 0, "declared": 0, "power_plain": 0, "power_paged": 0}
        counts |= {"warned": 0, "warned_independent": 0}
        seed += 1
        rng = np.random.default_rng(seed)
        for _ in range(reps):
            p, cluster = clustered_world(rng, n, breaks=True, mean=MIX_MEAN)
            base = clustered_outcomes(rng, p, cluster, runs, breaks=True)
            cand = clustered_outcomes(rng, p, cluster, runs, breaks=True)
            total = np.full(n, runs)
            # The warning the gate gives (pipeline: from the golden set's first pages).
            page_of = {IDS[i]: f"page{c}" for i, c in enumerate(cluster)}
            counts["warned"] += (
                undeclared_clusters(
                    build_report(cand, total, runs), build_report(base, total, runs), page_of
                )
                is not None
            )
            for key, pages in (("undeclared", None), ("declared", cluster)):
                gate = evaluate_gate(
                    build_report(cand, total, runs, clusters=pages),
                    build_report(base, total, runs, clusters=pages),
                    settings,
                )
                counts[key] += any(r.code == "significant-regression" for r in gate.reasons)
            # Independent questions, grouped in pages only on paper.
            q = draw_items(rng, n)
            pages = draw_clusters(rng, n)
            scheme = SCHEMES["1 run" if runs == 1 else "3 runs"]
            base_i = outcomes(rng, q, scheme)
            cand_i = outcomes(rng, degrade(rng, q, "spread"), scheme)
            page_of = {IDS[i]: f"page{c}" for i, c in enumerate(pages)}
            same = outcomes(rng, q, scheme)
            counts["warned_independent"] += (
                undeclared_clusters(build_report(*same, runs), build_report(*base_i, runs), page_of)
                is not None
            )
            for key, grouping in (("power_plain", None), ("power_paged", pages)):
                gate = evaluate_gate(
                    build_report(*cand_i, runs, clusters=grouping),
                    build_report(*base_i, runs, clusters=grouping),
                    settings,
                )
                counts[key] += any(r.code == "significant-regression" for r in gate.reasons)

        def fmt(count: int) -> str:
            rate = count / reps
            return f"{rate:.1%} ± {math.sqrt(max(rate * (1 - rate), 1 / reps) / reps):.1%}"

        lines.append(
            f"| {n} | {runs} | {fmt(counts['undeclared'])} | {fmt(counts['declared'])} | "
            f"{fmt(counts['power_plain'])} | {fmt(counts['power_paged'])} | "
            f"{fmt(counts['warned'])} | {fmt(counts['warned_independent'])} |"
        )
        print(lines[-1], flush=True)
    return lines


def baseline_spread_section(baselines: int, prs: int, settings: GateSettings) -> list[str]:
    """A committed baseline is one sample: the false-alarm rate of identical pull requests
    given one baseline, over many baselines (n = 200), for three ways to make the baseline."""
    lines = [
        "",
        *textwrap.wrap(
            "A baseline is one noisy sample. For each of "
            f"{baselines} baselines (n = 200, the flaky mix), {prs} identical pull requests "
            "gated against it: the false-alarm rate given that baseline, its mean over the "
            "baselines, the worst baseline's, and the share of baselines above 10 %. Ways to "
            "make the baseline: as the pull request (1 run an item, or 3), and with 3, 5 or 10 "
            "runs an item against one-run pull requests (`baseline-runs`; `mode: baseline`'s "
            "default is 3 since step 18).",
            96,
        ),
        "",
        "| baseline / pull request | mean false alarms | worst baseline | baselines above 10 % |",
        "|---|---|---|---|",
    ]
    for label, base_runs, pr_runs in (
        ("1 run / 1 run", 1, 1),
        ("3 runs / 3 runs", 3, 3),
        ("3 runs (the default) / 1 run", 3, 1),
        ("5 runs / 1 run", 5, 1),
        ("10 runs / 1 run", 10, 1),
    ):
        rng = np.random.default_rng(1700 + base_runs * 10 + pr_runs)
        rates = []
        for _ in range(baselines):
            p = draw_items(rng, 200)
            base = build_report(rng.binomial(base_runs, p), np.full(200, base_runs), base_runs)
            alarms = 0
            for _ in range(prs):
                cand = build_report(rng.binomial(pr_runs, p), np.full(200, pr_runs), pr_runs)
                gate = evaluate_gate(cand, base, settings)
                alarms += any(r.code == "significant-regression" for r in gate.reasons)
            rates.append(alarms / prs)
        worst = max(rates)
        lines.append(
            f"| {label} | {np.mean(rates):.1%} | {worst:.1%} | "
            f"{sum(r > 0.10 for r in rates)} of {baselines} |"
        )
        print(lines[-1], flush=True)
    return lines


def within_variance_section(reps: int, settings: GateSettings) -> list[str]:
    """Issue 29, point 8: would a test that uses the within-item variance of repeated runs
    close the gap to a z-test that knows the null variance? On the same draws: the gate's
    exact sign-flip test, that oracle z-test (true p per item), and a studentized test on the
    per-item variance pooled from both sides' runs (what the gate could estimate)."""
    z = NormalDist().inv_cdf(1 - settings.alpha)
    lines = [
        "",
        *textwrap.wrap(
            "Within-item variance (issue 29, point 8). Three runs a side, the flaky mix; on the "
            "same draws: the gate's exact sign-flip test; a z-test that knows each item's true "
            "null variance p(1 − p)(1/3 + 1/3) (an oracle: no gate can know it); and a "
            "studentized z-test on each item's variance pooled from its six runs (what the "
            "gate could estimate). Each also needs a net drop above min-drop. "
            f"{reps} pull requests a cell; ± is one Monte-Carlo standard error.",
            96,
        ),
        "",
        "| n | system | the gate (sign-flip) | oracle z-test | studentized, pooled runs |",
        "|---|---|---|---|---|",
    ]
    seed = 2900
    runs = 3
    for n in (30, 200, 1000):
        for system in ("identical", "spread", "concentrated"):
            seed += 1
            rng = np.random.default_rng(seed)
            fails = np.zeros(3, dtype=int)
            for _ in range(reps):
                p = draw_items(rng, n)
                q = degrade(rng, p, system)
                base, cand = rng.binomial(runs, p), rng.binomial(runs, q)
                d = (cand - base) / runs
                net = -d.mean() > settings.min_drop
                gate = evaluate_gate(
                    build_report(cand, np.full(n, runs), runs),
                    build_report(base, np.full(n, runs), runs),
                    settings,
                )
                fails[0] += any(r.code == "significant-regression" for r in gate.reasons)
                oracle = np.sum(p * (1 - p) * 2 / runs)
                fails[1] += net and d.sum() < -z * math.sqrt(oracle)
                pooled = (base + cand) / (2 * runs)
                within = pooled * (1 - pooled) * (2 * runs) / (2 * runs - 1)
                estimate = np.sum(within * 2 / runs)
                fails[2] += net and estimate > 0 and d.sum() < -z * math.sqrt(estimate)

            def fmt(count: int) -> str:
                rate = count / reps
                return f"{rate:.1%} ± {math.sqrt(max(rate * (1 - rate), 1 / reps) / reps):.1%}"

            lines.append(f"| {n} | {system} | " + " | ".join(fmt(int(c)) for c in fails) + " |")
            print(lines[-1], flush=True)
    return lines


MAX_ERROR_RATE = 0.10  # EvalSettings' default: above it the report itself is incomplete


def judge_error_outcomes(
    rng: np.random.Generator, p: np.ndarray, runs: int, error_rate: float, asked_again: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(passes, counted runs, judge errors) per item when each judge call fails with
    `error_rate`, independently; `asked_again`: each failed run is judged once more at the end
    (evaluate.py's judge_again, within its bound of 10 % of the runs, at least 10)."""
    n = len(p)
    failed = rng.random((n, runs)) < error_rate
    if asked_again:
        limit = max(10, math.ceil(n * runs * 0.10))
        again = np.flatnonzero(failed.ravel())[:limit]
        still = rng.random(len(again)) < error_rate
        flat = failed.ravel()
        flat[again] = still
        failed = flat.reshape(n, runs)
    passed = (rng.random((n, runs)) < p[:, None]) & ~failed
    return passed.sum(axis=1), runs - failed.sum(axis=1), failed.sum(axis=1)


def judge_error_section(reps: int, settings: GateSettings) -> list[str]:
    """Identical pull requests whose judge fails now and then: how many end with no result
    (the pessimistic re-gate, or more than max-error-rate of the runs in error)."""
    lines = [
        "",
        *textwrap.wrap(
            "Identical pull requests (the flaky mix, baseline without errors) whose judge "
            "fails each call independently at a given rate: the share that ends with no "
            "result (exit 3: the unjudged runs could flip the gate, or more than "
            f"max-error-rate {MAX_ERROR_RATE:.0%} of the runs are in error), before and after "
            "asking the judge again at the end of the run. "
            f"{reps} pull requests a cell, through `evaluate_gate`; ± is one Monte-Carlo "
            "standard error.",
            96,
        ),
        "",
        "| n | runs | judge errors | no result, before | no result, asked again |",
        "|---|---|---|---|---|",
    ]
    seed = 1300
    for n, runs in ((200, 1), (200, 3), (1000, 1)):
        for error_rate in (0.02, 0.05):
            cells = []
            for asked_again in (False, True):
                seed += 1
                rng = np.random.default_rng(seed)
                none = 0
                for _ in range(reps):
                    p = draw_items(rng, n)
                    base = rng.binomial(runs, p), np.full(n, runs)
                    passes, counted, errors = judge_error_outcomes(
                        rng, p, runs, error_rate, asked_again
                    )
                    report = build_report(passes, counted, runs)
                    report.items.errors = errors.tolist()
                    gate = evaluate_gate(report, build_report(*base, runs), settings)
                    share = errors.sum() / (n * runs)
                    none += gate.inconclusive is not None or share > MAX_ERROR_RATE
                rate = none / reps
                cells.append(
                    f"{rate:.1%} ± {math.sqrt(max(rate * (1 - rate), 1 / reps) / reps):.1%}"
                )
            lines.append(f"| {n} | {runs} | {error_rate:.0%} | {cells[0]} | {cells[1]} |")
            print(lines[-1], flush=True)
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--sizes", default="30,200,1000")
    parser.add_argument(
        "--only",
        choices=["baseline-spread", "power", "within-variance"],
        help="measure one block alone",
    )
    parser.add_argument("--baselines", type=int, default=30, help="baseline-spread's baselines")
    parser.add_argument("--floor-reps", type=int, default=2000, help="clustered floor cells")
    parser.add_argument("--power-reps", type=int, default=1000, help="power statement cells")
    parser.add_argument(
        "--other-reps", type=int, default=400, help="undeclared clusters, judge errors"
    )
    parser.add_argument("--write", type=Path, help="replace the soundness section of this file")
    args = parser.parse_args(argv)
    settings = GateSettings()
    blocks = {  # blocks of their own, measured apart: (lines, the command's own flags)
        "baseline-spread": (
            lambda: baseline_spread_section(args.baselines, 150, settings),
            f"--baselines {args.baselines}",
        ),
        "within-variance": (
            lambda: within_variance_section(args.other_reps, settings),
            f"--other-reps {args.other_reps}",
        ),
    }
    if args.only in blocks:
        measure, flags = blocks[args.only]
        started = time.monotonic()
        lines = measure()[1:]
        lines += [
            "",
            f"Measured in one run of `bench/soundness.py --only {args.only} {flags}` "
            f"({time.monotonic() - started:.0f} s).",
        ]
        text = "\n".join(lines) + "\n"
        print(text)
        if args.write:
            _write_block(args.write, args.only, text)
        return 0
    if args.only == "power":  # printed, not written: the full run writes it
        power_section(args.power_reps, settings)
        return 0
    sizes = [int(s) for s in args.sizes.split(",")]
    started = time.monotonic()
    lines = [
        f"Gate defaults: alpha {settings.alpha}, min-drop {settings.min_drop}, floor "
        f"{settings.floor} (the floor is left out of 'regression test fails'). {args.reps} "
        f"simulated pull requests a cell; ± is one Monte-Carlo standard error.",
        "",
        "| n | scheme | false alarms (identical) | caught: concentrated −5 | caught: spread −5 "
        "| naive 2-point gate: false alarms / spread caught | predicted 80 %-power drop |",
        "|---|---|---|---|---|---|---|",
    ]
    seed = 1
    for n in sizes:
        for scheme in SCHEMES:
            cells = {}
            for system in ("identical", "concentrated", "spread"):
                seed += 1
                cells[system] = simulate(n, system, scheme, args.reps, seed=seed, settings=settings)
            same, conc, spread = cells["identical"], cells["concentrated"], cells["spread"]

            def fmt(cell: Cell, count: int) -> str:
                return f"{cell.rate(count):.1%} ± {cell.se(count):.1%}"

            spread_said = np.median(same.detectable) if same.detectable else float("nan")
            conc_said = np.median(same.concentrated) if same.concentrated else float("nan")
            lines.append(
                f"| {n} | {scheme} | {fmt(same, same.regression_fails)} | "
                f"{fmt(conc, conc.regression_fails)} | {fmt(spread, spread.regression_fails)} | "
                f"{same.rate(same.naive_fails):.1%} / {spread.rate(spread.naive_fails):.1%} | "
                f"{_span(spread_said, conc_said)} points |"
            )
            print(lines[-1], flush=True)
    lines += [
        "",
        "The floor on the mean per-item score, for an assistant whose true per-run pass rate is",
        "exactly the floor (0.80) or 70 %: how often the floor wrongly passes (should be ≤ 2.5 %).",
        "",
        "| n | scheme | floor passes at a true 80 % | floor passes at a true 70 % |",
        "|---|---|---|---|",
    ]
    for n in [s for s in sizes if s >= 200]:
        for scheme in ("1 run", "3 runs", "1 + 2 re-runs"):
            seed += 1
            at = simulate(
                n,
                "identical",
                scheme,
                args.reps,
                seed=seed,
                settings=settings,
                population_mean=0.80,
            )
            seed += 1
            low = simulate(
                n,
                "identical",
                scheme,
                args.reps,
                seed=seed,
                settings=settings,
                population_mean=0.70,
            )
            lines.append(
                f"| {n} | {scheme} | {at.rate(at.floor_passes):.1%} ± {at.se(at.floor_passes):.1%} "
                f"| {low.rate(low.floor_passes):.1%} ± {low.se(low.floor_passes):.1%} |"
            )
            print(lines[-1], flush=True)
    lines += floor_section(args.floor_reps, settings)
    lines += power_section(args.power_reps, settings)
    lines += undeclared_clusters_section(args.other_reps, settings)
    lines += judge_error_section(args.other_reps, settings)
    lines += [
        "",
        f"Measured in one run of `bench/soundness.py --reps {args.reps} --floor-reps "
        f"{args.floor_reps} --power-reps {args.power_reps} --other-reps {args.other_reps}` "
        f"({time.monotonic() - started:.0f} s).",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        _write_block(args.write, "soundness", text)
    return 0


def _span(low: float, high: float) -> str:
    """Two stated drops in points, one figure when they agree to 0.1."""
    a, b = f"{low * 100:.1f}", f"{high * 100:.1f}"
    return a if a == b else f"{a}–{b}"


def _write_block(path: Path, name: str, text: str) -> None:
    """Replace the text between this block's markers in `path` (appended when absent)."""
    doc = path.read_text(encoding="utf-8")
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    block = f"{start}\n{text}{end}"
    if start in doc:
        doc = re.sub(re.escape(start) + ".*?" + re.escape(end), lambda _: block, doc, flags=re.S)
    elif name == "soundness":
        doc += f"\n## 6. Soundness of the gate\n\n{block}\n"
    else:
        doc += f"\n{block}\n"
    path.write_text(doc, encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
