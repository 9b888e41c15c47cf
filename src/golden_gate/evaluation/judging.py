"""Judge calls: the verdict cache, identical calls in flight shared, the judge slots and budget,
and the evaluators' votes combined."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from golden_gate.core import trajectory as shown
from golden_gate.core.golden import GoldenItem
from golden_gate.core.item_result import (
    EvaluatorOutcome,
    JudgeVote,
    RunResult,
    TokenUsage,
    ToolCall,
    Verdict,
)
from golden_gate.core.report import RunStats
from golden_gate.evaluation.cache import VerdictCache, VerdictKey
from golden_gate.evaluation.checks import needs_judge
from golden_gate.evaluation.eval_settings import EvalSettings
from golden_gate.evaluation.evaluators import Evaluator, Panel, combine
from golden_gate.evaluation.judge import Judge, JudgeError
from golden_gate.evaluation.progress import Progress


class Judging:
    """The judge's side of one evaluation (a mixin of evaluate.Evaluation)."""

    panel: Panel | None
    cache: VerdictCache
    settings: EvalSettings
    stats: RunStats
    progress: Progress | None
    _judge_slots: asyncio.Semaphore
    _judge_calls_begun: int
    _in_flight: dict[VerdictKey, asyncio.Future[Verdict]]

    if TYPE_CHECKING:

        def _check_cost(self) -> None: ...  # Budget's

    async def _judge_call(
        self,
        key: VerdictKey,
        judge: Judge,
        question: str,
        answer: str,
        reference: str,
        context: str | None,
    ) -> Verdict:
        budget = self.settings.max_judge_calls
        if budget is not None and self._judge_calls_begun >= budget:
            self.stats.budget_exhausted = True
            raise JudgeError(f"judge budget exhausted (max-judge-calls {budget})")
        self._judge_calls_begun += 1
        async with self._judge_slots:
            if self.progress:
                self.progress.judge_in_flight += 1
            # `context` only when an evaluator reads it: judges written before it keep working.
            extra = {"context": context} if context is not None else {}
            try:
                verdict = await judge.judge(
                    question=question, answer=answer, reference=reference, **extra
                )
            except JudgeError as exc:
                self.stats.judge_timeouts += exc.timed_out
                self.stats.judge_attempts += exc.attempts  # requests sent, retries included
                self._count_tokens(exc.tokens)  # a failed call is paid for too
                raise
            finally:
                if self.progress:
                    self.progress.judge_in_flight -= 1
                # Made: answered or failed; a call cut short by an interrupt is neither.
                if not cancelled():
                    self.stats.judge_calls += 1
                    if self.progress:
                        self.progress.judge_calls += 1
        self._count_tokens(verdict.tokens)
        self.stats.judge_attempts += verdict.attempts or 0
        # The cache keeps the verdict, not how many tries this run's call took.
        self.cache.put(key, verdict.model_copy(update={"attempts": None}))
        return verdict

    def _count_tokens(self, tokens: TokenUsage | None) -> None:
        if tokens:
            self.stats.input_tokens += tokens.input_tokens
            self.stats.output_tokens += tokens.output_tokens
            self._check_cost()

    async def verdict(
        self,
        item: GoldenItem,
        answer: str,
        *,
        judge: Judge | None = None,
        evaluator: Evaluator | None = None,
        context: str | None = None,
    ) -> Verdict:
        """One judge's verdict for one evaluator (default: the first of each), from the cache,
        from an identical call in flight, or new."""
        assert self.panel is not None
        await self.panel.ready()  # judges built on a thread (deferred_judge.py)
        evaluator = evaluator or self.panel.evaluators[0]
        judge = judge or evaluator.judges[0]
        # What the prompt reads besides question and answer: the key points, and the context.
        material = item.reference if context is None else json.dumps([item.reference, context])
        key = self.cache.key(
            judge_identity=evaluator.identity(judge),
            question=item.question,
            answer=answer,
            reference=material,
        )
        cached = self.cache.get(key)
        if cached is not None:
            self.stats.cache_hits += 1
            if self.progress:
                self.progress.cache_hits += 1
            return cached.model_copy(update={"cached": True})
        pending = self._in_flight.get(key)
        if pending is not None:
            self.stats.cache_hits += 1
            return (await asyncio.shield(pending)).model_copy(update={"cached": True})
        self.stats.cache_misses += 1
        future: asyncio.Future[Verdict] = asyncio.get_running_loop().create_future()
        self._in_flight[key] = future
        try:
            verdict = await self._judge_call(
                key, judge, item.question, answer, item.reference, context
            )
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # mark retrieved: waiters re-raise it, nobody else must
            raise
        else:
            future.set_result(verdict)
            return verdict
        finally:
            del self._in_flight[key]

    async def probe(
        self,
        item: GoldenItem,
        answer: str,
        judge: Judge,
        evaluator: Evaluator,
        context: str | None,
    ) -> Verdict:
        """A canary's verdict, by the same path (and cache) as an answer's."""
        return await self.verdict(item, answer, judge=judge, evaluator=evaluator, context=context)

    async def _evaluated(
        self,
        item: GoldenItem,
        answer: str,
        context: str | None,
        result: dict[str, object],
        *,
        transcript: str | None = None,
        only: str | None = None,
    ) -> RunResult:
        """Every evaluator's panel, combined by the panel rule, then the evaluators' rule.

        `only`: "answer" (a conversation's turn: all but the transcript's evaluators) or
        "transcript" (the conversation's end: those alone)."""
        assert self.panel is not None
        chosen = [
            e
            for e in self.panel.evaluators
            if only is None or (e.reads == "transcript") == (only == "transcript")
        ]
        calls = result.get("tool_calls")
        calls = calls if isinstance(calls, list) else None
        outcomes = list(
            await asyncio.gather(
                *(
                    self._evaluator(e, item, answer, context, calls=calls, transcript=transcript)
                    for e in chosen
                )
            )
        )
        decided = combine([evaluator_passed(o) for o in outcomes], self.panel.rule)
        verdicts = [v for o in outcomes for v in o[1]]
        outcomes_only = [o[0] for o in outcomes]
        if decided is None:
            errors = [e.comment for e in outcomes_only if e.status == "error"]
            return RunResult(
                status="error",
                error_side="judge",
                error=f"judge: {errors[0] if errors else 'no verdict'}",
                evaluations=outcomes_only,
                **result,
            )
        failing = [o for o in outcomes_only if o.status == "fail"]
        verdict = Verdict(
            passed=decided,
            comment="; ".join(f"{o.evaluator}: {o.comment}" for o in failing)
            or f"passed {', '.join(o.evaluator for o in outcomes_only if o.status == 'pass')}",
            cached=bool(verdicts) and all(v.cached for v in verdicts),
            tokens=TokenUsage(
                input_tokens=sum(v.tokens.input_tokens for v in verdicts if v.tokens),
                output_tokens=sum(v.tokens.output_tokens for v in verdicts if v.tokens),
            ),
            latency_ms=max((v.latency_ms or 0.0 for v in verdicts), default=None),
        )
        return RunResult(
            status="pass" if decided else "fail",
            verdict=verdict,
            evaluations=outcomes_only,
            **result,
        )

    async def _evaluator(
        self,
        evaluator: Evaluator,
        item: GoldenItem,
        answer: str,
        context: str | None,
        *,
        calls: list[ToolCall] | None = None,
        transcript: str | None = None,
    ) -> tuple[EvaluatorOutcome, list[Verdict]]:
        if evaluator.reads == "trajectory":
            # The calls with the answer (untrusted: fenced as the answer is); the expected
            # calls are the reference. Both are in the verdict's cache key.
            answer = trajectory_text(calls, answer)
            expected = shown.expected_text(item.expected_tools or [])
            item = item.model_copy(update={"reference_key_points": expected})
        elif evaluator.reads == "transcript" and transcript is not None:
            answer = transcript
        if evaluator.needs_context and context is None:
            # The assistant returned no passages: nothing grounds the answer, so it fails.
            comment = "no retrieved context in the assistant's response (context-path)"
            return EvaluatorOutcome(evaluator=evaluator.name, status="fail", comment=comment), []
        use = context if evaluator.needs_context else None

        async def vote(judge: Judge) -> tuple[JudgeVote, Verdict | None]:
            try:
                v = await self.verdict(item, answer, judge=judge, evaluator=evaluator, context=use)
            except JudgeError as exc:
                return JudgeVote(judge=judge.name, error=str(exc)), None
            passed = evaluator.passed(v.score, v.passed)
            vote = JudgeVote(
                judge=judge.name,
                passed=passed,
                score=v.score,
                comment=v.comment,
                cached=v.cached,
                served_model=v.served_model,
            )
            return vote, v

        votes = list(await asyncio.gather(*(vote(j) for j in evaluator.judges)))
        assert self.panel is not None
        decided = combine([v.passed for v, _ in votes], self.panel.judge_panel)
        first = votes[0][0]
        status = "error" if decided is None else "pass" if decided else "fail"
        deciding = next(
            (v for v, _ in votes if v.passed is decided or (decided is None and v.error)), first
        )
        outcome = EvaluatorOutcome(
            evaluator=evaluator.name,
            status=status,
            score=first.score,
            comment=deciding.error or deciding.comment,
            votes=[v for v, _ in votes],
        )
        return outcome, [v for _, v in votes if v is not None]


def trajectory_text(calls: Sequence[ToolCall] | None, answer: str) -> str:
    lines = [f"{n}. {shown.call_text(c.name, c.arguments)}" for n, c in enumerate(calls or [], 1)]
    steps = "\n".join(lines) or shown.NO_CALLS
    return f"Tool calls, in order:\n{steps}\n\nFinal answer:\n{answer}"


def judgeable(item: GoldenItem, evaluators: Sequence[Evaluator]) -> bool:
    """Whether any of `evaluators` has something to judge this answer by."""
    for evaluator in evaluators:
        if evaluator.reads == "trajectory" and (
            evaluator.name != "trajectory" or item.expected_tools is not None
        ):
            return True
        if evaluator.reads == "transcript" or needs_judge(item):
            return True
    return False


def cancelled() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def evaluator_passed(outcome: tuple[EvaluatorOutcome, list[Verdict]]) -> bool | None:
    status = outcome[0].status
    return None if status == "error" else status == "pass"
