"""Judge calibration, the run: the configured judge judges every labelled answer (through the
verdict cache, exactly as a gate run does), and the outcomes become a `CalibrationReport`
(`core.calibration`). `golden-gate calibrate` and the Action's `mode: calibrate` call
`run_calibration`.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from golden_gate import process
from golden_gate.core.calibration import (
    DEFAULT_MAX_ERROR_RATE,
    DEFAULT_MIN_KAPPA,
    CalibrationReport,
    Label,
    Outcome,
    build_report,
    check_min_kappa,
    labels_fingerprint,
    load_labels,
    save_calibration,
)
from golden_gate.core.golden import GoldenItem, fingerprint, load_golden
from golden_gate.errors import InputError
from golden_gate.evaluation.cache import VerdictCache
from golden_gate.evaluation.judge import Judge, JudgeError, JudgeSettings, make_judge


@dataclass
class _Counts:
    judge_calls: int = 0
    cache_hits: int = 0
    cache_misses: int = 0


async def _judge_label(
    label: Label,
    item: GoldenItem,
    *,
    judge: Judge,
    cache: VerdictCache,
    slots: asyncio.Semaphore,
    counts: _Counts,
) -> Outcome:
    # The same key evaluate.py uses: a verdict from a gate run is reused here and back.
    key = cache.key(
        judge_identity=judge.identity(),
        question=item.question,
        answer=label.answer,
        reference=item.reference,
    )
    cached = cache.get(key)
    if cached is not None:
        counts.cache_hits += 1
        return Outcome(label, verdict=cached)
    counts.cache_misses += 1
    async with slots:
        counts.judge_calls += 1
        try:
            verdict = await judge.judge(
                question=item.question, answer=label.answer, reference=item.reference
            )
        except JudgeError as exc:
            return Outcome(label, error=str(exc))  # an error, never a "fail", never cached
    cache.put(key, verdict)
    return Outcome(label, verdict=verdict)


async def calibrate(
    labels: Sequence[Label],
    golden_items: Sequence[GoldenItem],
    *,
    judge: Judge,
    cache: VerdictCache,
    concurrency: int,
    min_kappa: float = DEFAULT_MIN_KAPPA,
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE,
) -> CalibrationReport:
    """Judge every labelled answer (cache first, at most `concurrency` calls at once) and
    compare with the human labels. The caller closes the judge (`await judge.aclose()`)."""
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    check_min_kappa(min_kappa)
    items = {item.id: item for item in golden_items}
    # load_labels reports these per line; a caller building labels in code gets one sentence.
    unknown = sorted({label.id for label in labels} - items.keys())
    if unknown:
        raise InputError(f"label id '{unknown[0]}' is not in the golden set")
    bare = sorted(x.id for x in labels if not items[x.id].reference_key_points)
    if bare:
        raise InputError(f"item '{bare[0]}' has no reference_key_points to judge against")
    slots = asyncio.Semaphore(concurrency)
    counts = _Counts()
    outcomes = await asyncio.gather(
        *(
            _judge_label(
                label, items[label.id], judge=judge, cache=cache, slots=slots, counts=counts
            )
            for label in labels
        )
    )
    return build_report(
        outcomes,
        judge_name=judge.name,
        judge_prompt_hash=judge.prompt_hash,
        judge_identity_hash=hashlib.sha256(judge.identity().encode("utf-8")).hexdigest(),
        min_kappa=min_kappa,
        max_error_rate=max_error_rate,
        judge_calls=counts.judge_calls,
        cache_hits=counts.cache_hits,
        cache_misses=counts.cache_misses,
        golden_fingerprint=fingerprint(golden_items),
        labels_fingerprint=labels_fingerprint(labels),
    )


def run_calibration(
    labels_path: str | Path,
    golden_path: str | Path,
    judge_settings: JudgeSettings,
    *,
    cache_dir: Path | None,
    min_kappa: float = DEFAULT_MIN_KAPPA,
    output: str | Path | None = None,
    cache: VerdictCache | None = None,
    judge: Judge | None = None,
) -> CalibrationReport:
    """The `calibrate` command: load and check everything, judge, save `output`, return.

    Inputs are checked before the judge is built, so bad input costs nothing. `cache` is the
    Action's cache carried between runs; by default one on `cache_dir`. `judge`: one the caller
    already built from `judge_settings`, else one is built here.
    """
    check_min_kappa(min_kappa)
    golden_items = load_golden(golden_path)
    labels = load_labels(labels_path, golden_items)
    judge = judge if judge is not None else make_judge(judge_settings)
    cache = cache if cache is not None else VerdictCache(cache_dir)

    async def go() -> CalibrationReport:
        try:
            return await calibrate(
                labels,
                golden_items,
                judge=judge,
                cache=cache,
                concurrency=judge_settings.concurrency,
                min_kappa=min_kappa,
            )
        finally:
            await judge.aclose()  # its HTTP client belongs to this event loop

    report = process.run(go())
    if output is not None:
        save_calibration(report, output)
    return report
