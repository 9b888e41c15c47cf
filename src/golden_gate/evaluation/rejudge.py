"""Asking the judge again, at the end of the run, about the runs it failed on: bounded, each
once."""

from __future__ import annotations

import asyncio
import math
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from golden_gate.core.golden import GoldenItem, Turn
from golden_gate.core.item_result import ItemResult, RunResult, Verdict
from golden_gate.evaluation.eval_settings import REJUDGE_MIN, REJUDGE_SHARE
from golden_gate.evaluation.evaluators import Panel
from golden_gate.evaluation.judge import JudgeError
from golden_gate.evaluation.outcome import aggregate

if TYPE_CHECKING:
    from golden_gate.evaluation.conversations import Paused


class Rejudging:
    """The end-of-run pass over the runs the judge failed on (a mixin of evaluate.Evaluation)."""

    panel: Panel | None
    finished: dict[str, ItemResult]
    rejudged: tuple[int, int]
    _unjudged: dict[int, tuple[RunResult, str, str | None, dict[str, object]]]
    _paused: dict[int, tuple[RunResult, Paused]]

    if TYPE_CHECKING:

        async def verdict(self, item: GoldenItem, answer: str) -> Verdict: ...

        async def _evaluated(self, *args: Any, **kwargs: Any) -> RunResult: ...

        async def _conversation(
            self, item: GoldenItem, turns: Sequence[Turn], *, rerun: bool, paused: Paused | None
        ) -> RunResult: ...

    def _keep_unjudged(
        self, run: RunResult, answer: str, context: str | None, result: dict[str, object]
    ) -> RunResult:
        self._unjudged[id(run)] = (run, answer, context, result)
        return run

    async def _judge_again(self, item: GoldenItem, answer: str, context: str | None, result):
        """The run's answer judged once more, as it was the first time."""
        assert self.panel is not None
        if self.panel.plain:
            try:
                verdict = await self.verdict(item, answer)
            except JudgeError as exc:
                return RunResult(
                    status="error", error_side="judge", error=f"judge: {exc}", **result
                )
            return RunResult(status="pass" if verdict.passed else "fail", verdict=verdict, **result)
        return await self._evaluated(item, answer, context, result)

    async def judge_again(self, items: Sequence[GoldenItem]) -> None:
        """Ask the judge once more, at the end of the run, about the runs it failed on (a judge
        failing now and then would otherwise leave a run without a result: issue 29). Bounded:
        at most REJUDGE_SHARE of the runs (and REJUDGE_MIN), each once; said on stderr."""
        by_id = {item.id: item for item in items}
        pending: list[tuple[GoldenItem, int]] = []
        for item_id, result in self.finished.items():
            for index, run in enumerate(result.run_results):
                kept = self._unjudged.get(id(run)) or self._paused.get(id(run))
                if kept is not None and kept[0] is run and item_id in by_id:
                    pending.append((by_id[item_id], index))
        if not pending:
            return
        total_runs = sum(len(r.run_results) for r in self.finished.values())
        limit = max(REJUDGE_MIN, math.ceil(total_runs * REJUDGE_SHARE))
        chosen = pending[:limit]

        async def again(item: GoldenItem, index: int) -> tuple[GoldenItem, int, RunResult]:
            run = self.finished[item.id].run_results[index]
            paused = self._paused.get(id(run))
            if paused is not None:  # a conversation: on from the turn the judge failed on
                assert item.turns is not None
                resumed = await self._conversation(
                    item, item.turns, rerun=run.rerun, paused=paused[1]
                )
                return item, index, resumed
            _, answer, context, result = self._unjudged[id(run)]
            return item, index, await self._judge_again(item, answer, context, result)

        judged = 0
        for item, index, new in await asyncio.gather(*(again(i, x) for i, x in chosen)):
            if new.status == "error" and new.error_side == "judge":
                continue  # still no verdict: the run stays counted apart
            judged += 1
            runs = list(self.finished[item.id].run_results)
            runs[index] = new
            self.finished[item.id] = aggregate(item, runs)
        self.rejudged = (len(chosen), judged)
        left = len(pending) - len(chosen)
        print(
            f"golden-gate: asked the judge again about {len(chosen)} run(s) it had failed on: "
            f"{judged} judged now"
            + (f"; {left} more not asked again (at most {limit})" if left else ""),
            file=sys.stderr,
            flush=True,
        )
