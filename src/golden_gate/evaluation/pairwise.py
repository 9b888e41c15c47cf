"""Pairwise comparison, the run: for each item whose answer changed since the baseline, a model
judge compares the two answers in both orders (core/pairwise.py decides). Both answers are
untrusted and each is fenced apart (the run's or the baseline's as `outputs`, the other as
`context`); verdicts are cached like any other, keyed by both answers and their order.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence

from golden_gate.core.golden import GoldenItem
from golden_gate.core.pairwise import Pairwise, PairwiseItem, Preference, decide, tally
from golden_gate.core.report import Report
from golden_gate.errors import InputError
from golden_gate.evaluation.cache import VerdictCache
from golden_gate.evaluation.judge import KEYPOINTS, JudgeError, JudgeSettings

PAIRWISE_PROMPT = """You are comparing two answers to the same question, A and B, against the \
reference key points a correct answer must say.

<question>
{inputs}
</question>

<answer_a>
{outputs}
</answer_a>

<answer_b>
{context}
</answer_b>

<reference_outputs>
{reference_outputs}
</reference_outputs>

Which answer is better: more of the key points said correctly, nothing false added? Score 1 if \
A is better, 0 if B is better, 0.5 if neither is.
"""
SCORES: dict[float, Preference] = {1.0: "A", 0.0: "B", 0.5: "tie"}


def changed(report: Report, baseline: Report) -> list[tuple[str, str, str]]:
    """(id, run's answer, baseline's answer) of the items both answered, differently, in their
    first counted run (excerpts as the reports keep them)."""
    base = baseline.by_id()
    pairs = []
    for item in report.results:
        before = base.get(item.id)
        if before is None:
            continue
        now = next((r.answer for r in item.run_results if r.answer is not None), None)
        then = next((r.answer for r in before.run_results if r.answer is not None), None)
        if now is not None and then is not None and now != then:
            pairs.append((item.id, now, then))
    return pairs


async def compare(
    pairs: Sequence[tuple[str, str, str]],
    items: Sequence[GoldenItem],
    settings: JudgeSettings,
    cache: VerdictCache,
) -> Pairwise:
    """Both orders of every pair, at most `settings.concurrency` calls at once."""
    from golden_gate.evaluation.judge import LLMJudge

    if settings.model.strip().lower() == KEYPOINTS or "," in settings.model:
        raise InputError("pairwise needs one model judge (--judge-model provider:model)")
    judge = LLMJudge(
        settings.model_copy(update={"choices": [0.0, 0.5, 1.0]}), prompt=PAIRWISE_PROMPT
    )
    golden = {item.id: item for item in items}
    slots = asyncio.Semaphore(settings.concurrency)

    async def ask(item: GoldenItem, a: str, b: str) -> tuple[Preference, str]:
        material = json.dumps(["pairwise", item.reference, b])
        key = cache.key(
            judge_identity=judge.identity(), question=item.question, answer=a, reference=material
        )
        verdict = cache.get(key)
        if verdict is None:
            async with slots:
                verdict = await judge.judge(
                    question=item.question, answer=a, reference=item.reference, context=b
                )
            cache.put(key, verdict)
        return SCORES[float(verdict.score or 0.0)], verdict.comment

    async def one(item_id: str, now: str, then: str) -> PairwiseItem:
        item = golden.get(item_id)
        if item is None:
            return PairwiseItem(id=item_id, error="not in the golden set")
        try:
            (first, why_first), (swapped, why_swapped) = await asyncio.gather(
                ask(item, now, then), ask(item, then, now)
            )
        except JudgeError as exc:
            return PairwiseItem(id=item_id, error=str(exc))
        return PairwiseItem(
            id=item_id,
            outcome=decide(first, swapped),
            first=first,
            swapped=swapped,
            reasons=[why_first, why_swapped],
        )

    try:
        found = await asyncio.gather(*(one(*pair) for pair in pairs))
    finally:
        await judge.aclose()
    return tally(settings.model, found)
