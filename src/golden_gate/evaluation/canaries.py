"""Asking the judge the canaries (core/canaries.py): each probe through the same verdict path
as an answer (cache, calls in flight, budget), so a warm re-run asks the judge nothing."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from golden_gate.core import canaries
from golden_gate.core.golden import GoldenItem
from golden_gate.core.item_result import Verdict
from golden_gate.evaluation.evaluators import Evaluator, Panel
from golden_gate.evaluation.judge import KEYPOINTS, Judge, JudgeError

# (item, answer, judge, evaluator, context) -> the verdict, as Evaluation.verdict gives it.
Ask = Callable[[GoldenItem, str, Judge, Evaluator, str | None], Awaitable[Verdict]]


def planned(
    panel: Panel, items: Sequence[GoldenItem], count: int
) -> list[tuple[GoldenItem, canaries.CanaryProbe, Judge, Evaluator]]:
    """Every probe of every evaluator and model judge of the panel."""
    plan = []
    for evaluator in panel.evaluators:
        if evaluator.spec.prompt_file is not None:
            continue  # a custom prompt's meaning is the team's
        for judge in evaluator.judges:
            if judge.name.strip().lower() == KEYPOINTS:
                continue  # a fixed rule: nothing to drift
            for item, probe in canaries.derive(items, count, evaluator.name, judge.name):
                plan.append((item, probe, judge, evaluator))
    return plan


async def ask_all(
    panel: Panel, items: Sequence[GoldenItem], count: int, ask: Ask
) -> canaries.Canaries | None:
    """The canaries' verdicts and checks; None when there is nothing to probe."""
    plan = planned(panel, items, count)
    if not plan:
        return None

    async def one(
        item: GoldenItem, probe: canaries.CanaryProbe, judge: Judge, evaluator: Evaluator
    ) -> canaries.CanaryProbe:
        context = probe.context if evaluator.needs_context else None
        try:
            verdict = await ask(item, probe.answer, judge, evaluator, context)
        except JudgeError as exc:
            return probe.model_copy(update={"error": str(exc)})
        return probe.model_copy(
            update={
                "passed": evaluator.passed(verdict.score, verdict.passed),
                "comment": verdict.comment,
                "cached": verdict.cached,
                "served_model": verdict.served_model,
            }
        )

    probes = list(await asyncio.gather(*(one(*entry) for entry in plan)))
    return canaries.Canaries(items=count, checks=canaries.check(probes), probes=probes)
