"""From the runs to the report's figures: an item's tally, its retrieval ranks, the judge's
warnings, who the errors were on, the assistant's latency and tokens."""

from __future__ import annotations

from collections.abc import Sequence

from golden_gate.core import retrieval
from golden_gate.core import trajectory as shown
from golden_gate.core.golden import GoldenItem, item_hash
from golden_gate.core.item_result import ItemResult, RunResult, counts, tally_runs
from golden_gate.core.report import RetrievalRecord, RunStats
from golden_gate.evaluation.eval_settings import SLOT_TIMEOUTS, EvalSettings
from golden_gate.evaluation.judge_identity import served


def any_failed(runs: Sequence[RunResult]) -> bool:
    return any(r.status != "pass" for r in runs if counts(r))


def aggregate(item: GoldenItem, runs: list[RunResult]) -> ItemResult:
    return ItemResult(
        id=item.id,
        tags=list(item.tags),
        **tally_runs(runs),
        cluster=item.cluster,
        question=item.question,
        item_hash=item_hash(item),
        expected_tools=expected_calls(item),
        run_results=runs,
    )


def retrieval_record(
    items: Sequence[GoldenItem], results: Sequence[ItemResult], k: int
) -> RetrievalRecord:
    """Ranks of each item's reference_urls among its answers' sources (core/retrieval.py).
    A run without an answer, or whose response had no sources at sources-path, is not a
    retrieval observation (the first already counts as a failed run)."""
    by_id = {r.id: r for r in results}
    return retrieval.record(
        (
            (
                item.id,
                item.tags,
                item.reference_urls,
                [
                    r.sources
                    for r in by_id[item.id].run_results
                    if not r.rerun and r.answer is not None
                ],
            )
            for item in items
            if item.id in by_id
        ),
        k,
    )


def expected_calls(item: GoldenItem) -> list[str] | None:
    """The expected calls as the comment shows them: the item's, or each turn's, named."""
    if item.expected_tools is not None:
        return shown.expected_text(item.expected_tools)
    lines = [
        f"turn {n}: {' → '.join(shown.expected_text(t.expected_tools)) or shown.NO_CALLS}"
        for n, t in enumerate(item.turns or (), start=1)
        if t.expected_tools is not None
    ]
    return lines or None


def judge_warnings(
    results: Sequence[ItemResult], stats: RunStats, settings: EvalSettings
) -> list[str]:
    """What the judge's behaviour in this run says about its set-up."""
    warnings = []
    verdicts = [r.verdict for item in results for r in item.run_results if r.verdict]
    judged = sum(not v.cached for v in verdicts)
    if stats.judge_timeouts >= SLOT_TIMEOUTS and judged:
        warnings.append(
            f"{stats.judge_timeouts} judge calls timed out while others succeeded: the server "
            "may have fewer parallel slots than judge-concurrency "
            f"({settings.judge_concurrency}); lower judge-concurrency or raise judge-timeout"
        )
    for models in served(results).values():
        if len(models) > 1:
            names = sorted(models)
            warnings.append(
                f"the verdicts in this report came from {len(names)} models behind one judge "
                f"name ({', '.join(names)}): the server's model changed, and verdicts of both "
                "(some from the cache) are mixed"
            )
    return warnings


def count_check_errors(results: Sequence[ItemResult]) -> int:
    """Counted-apart runs whose hand-written check hung or crashed: never the judge's doing."""
    return sum(
        not run.rerun and run.status == "error" and run.error_side == "check"
        for result in results
        for run in result.run_results
    )


def error_sides(results: Sequence[ItemResult]) -> str:
    """Who the errors were on: the assistant, the judge, the hand-written checks."""
    unanswered = sum(r.unanswered for r in results)
    checks = count_check_errors(results)
    judge = sum(r.errors for r in results) - checks
    text = f"{unanswered} unanswered by the assistant, {judge} not judged"
    return text + (f", {checks} with a hand-written check that failed to run" if checks else "")
