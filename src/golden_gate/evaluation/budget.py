"""The cost budget (max-cost-usd): what a run has spent at the user's prices, and stopping it."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from golden_gate.core.report import RunStats, TokenUsage
from golden_gate.evaluation.eval_settings import EvalSettings


class Budget:
    """What the run has spent, against max-cost-usd (a mixin of evaluate.Evaluation)."""

    settings: EvalSettings
    stats: RunStats
    over_budget: asyncio.Event

    def spent_usd(self) -> float:
        """What the run has spent so far at the user's prices (judge and assistant)."""
        from golden_gate.core.cost import price

        s, stats = self.settings, self.stats
        judge = TokenUsage(input_tokens=stats.input_tokens, output_tokens=stats.output_tokens)
        total = price(judge, s.judge_prices) if s.judge_prices else 0.0
        if s.assistant_prices and stats.assistant_tokens is not None:
            total += price(stats.assistant_tokens, s.assistant_prices)
        return total

    def _check_cost(self) -> None:
        limit = self.settings.max_cost_usd
        if limit is not None and not self.over_budget.is_set() and self.spent_usd() > limit:
            self.over_budget.set()


async def gather_within_budget(evaluation: Budget, tasks: Sequence[asyncio.Future[Any]]) -> None:
    """Every task to its end, or, once the run passes max-cost-usd, every task cancelled."""
    if evaluation.settings.max_cost_usd is None:
        await asyncio.gather(*tasks)
        return
    gathered = asyncio.gather(*tasks)
    stop = asyncio.ensure_future(evaluation.over_budget.wait())
    try:
        either: set[asyncio.Future[Any]] = {gathered, stop}
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stop.cancel()
    if not gathered.done():
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if gathered.cancelled():
            return
    error = gathered.exception()
    if error is not None:
        raise error
