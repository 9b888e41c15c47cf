"""Evaluation: ask the assistant, check, judge, repeat, and aggregate into a report.

Assistant and judge calls share one event loop with separate concurrency limits, so both stay
busy. An infrastructure fault becomes an error run, never a failing verdict.

About 600 lines, one module: the scheduling of assistant and judge calls, the re-runs and the
aggregation share one event loop's state (slots, progress, counts); split, each part would
have to pass it around.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import secrets
import sys
import time
from collections.abc import Sequence

from pydantic import BaseModel, Field

from golden_gate.core import retrieval
from golden_gate.core import trajectory as shown
from golden_gate.core.canaries import incomplete_reason as canary_reason
from golden_gate.core.golden import GoldenItem, Turn, item_hash
from golden_gate.core.item_result import (
    EvaluatorOutcome,
    ItemResult,
    JudgeVote,
    RunResult,
    TokenUsage,
    ToolCall,
    TurnResult,
    Verdict,
    counts,
    tally_runs,
)
from golden_gate.core.report import (
    DETERMINISTIC,
    AssistantInfo,
    DatasetInfo,
    Report,
    RetrievalRecord,
    RunSettings,
    RunStats,
    new_report,
)
from golden_gate.errors import InputError
from golden_gate.evaluation import canaries
from golden_gate.evaluation.cache import VerdictCache
from golden_gate.evaluation.checks import (
    Checker,
    CheckSettings,
    checks_hash,
    errored,
    needs_judge,
)
from golden_gate.evaluation.evaluators import Evaluator, Panel, combine
from golden_gate.evaluation.judge import Judge, JudgeError
from golden_gate.evaluation.judge_identity import identities, identity_warnings, served
from golden_gate.evaluation.progress import Progress
from golden_gate.evaluation.providers import CUT_OFF
from golden_gate.evaluation.target import Answer, AssistantClient
from golden_gate.evaluation.trajectory import check_calls, has_rules
from golden_gate.limits import MAX_CANARIES, MAX_CONCURRENCY, MAX_RERUN_FAILURES, MAX_RUNS
from golden_gate.text import cut


class EvalSettings(BaseModel):
    runs: int = Field(default=1, ge=1, le=MAX_RUNS)
    # Diagnostic re-runs of a failed item: shown (consistent or flaky), never counted, because
    # re-running only failures biases the pass rate up and hides spread drops
    # (docs/architecture.md#the-gate-exactly).
    rerun_failures: int = Field(default=0, ge=0, le=MAX_RERUN_FAILURES)
    max_error_rate: float = Field(default=0.10, ge=0, le=1)
    max_judge_calls: int | None = Field(default=None, ge=0)
    judge_concurrency: int = Field(default=8, ge=1, le=MAX_CONCURRENCY)
    # USD per million input and output tokens; only the user's prices, never a built-in table.
    judge_prices: tuple[float, float] | None = None
    # The same for the assistant's own tokens (usage-path): c_sys.
    assistant_prices: tuple[float, float] | None = None
    # Past this spend (judge + assistant, at the prices above) the run stops, incomplete.
    max_cost_usd: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    # The answer as the report keeps it: whole for any answer a person reads (pairwise, the
    # report page, review), cut only past this, so a runaway reply cannot swell the report.
    answer_excerpt_chars: int = Field(default=20_000, ge=0)
    # The models the assistant answers with (assistant-model): a judge among them is warned of.
    assistant_models: list[str] = Field(default_factory=list)
    # Golden items each model judge's canaries are derived from, per evaluator (0: none).
    canaries: int = Field(default=2, ge=0, le=MAX_CANARIES)
    # Items with a simulated user run (nightly); off, the pipeline leaves them out.
    simulate_users: bool = False


# Timeouts beside successes in one run: calls queued in a server with fewer slots than ours.
SLOT_TIMEOUTS = 3
# Runs the judge failed on are asked about once more at the end of the run: at most this share
# of the runs (at least REJUDGE_MIN), so a judge that is down costs a bounded number of calls.
REJUDGE_SHARE = 0.10
REJUDGE_MIN = 10


def parse_prices(text: str, *, name: str) -> tuple[float, float]:
    """`input,output` USD per million tokens; InputError naming `name` otherwise."""
    parts = [part.strip() for part in text.split(",")]
    try:
        prices = tuple(float(part) for part in parts)
    except ValueError:
        prices = ()
    if len(prices) != 2 or not all(math.isfinite(p) and p >= 0 for p in prices):
        raise InputError(
            f"{name} must be two non-negative numbers 'input,output' "
            f"(USD per million tokens), got '{text}'"
        )
    return prices[0], prices[1]


class Evaluation:
    """One evaluation's shared state: limits, counters, and in-flight judge calls."""

    def __init__(
        self,
        *,
        client: AssistantClient,
        judge: Judge | Panel | None,
        cache: VerdictCache,
        settings: EvalSettings,
        checks: CheckSettings,
        progress: Progress | None = None,
    ) -> None:
        self.client = client
        self.panel = judge if isinstance(judge, Panel) or judge is None else Panel.of(judge)
        self.cache = cache
        self.settings = settings
        self.checks = checks
        self.checker = Checker(checks)
        self.progress = progress
        self.stats = RunStats()
        self.finished: dict[str, ItemResult] = {}  # kept as items finish: an interrupt keeps them
        self._judge_slots = asyncio.Semaphore(settings.judge_concurrency)
        self._judge_calls_begun = 0  # made or waiting for a slot: what the budget counts
        self._in_flight: dict[str, asyncio.Future[Verdict]] = {}
        # Runs the judge failed on, with what it needs to judge them again at the end of the
        # run (the report keeps only an excerpt of the answer): keyed by the run's identity.
        self._unjudged: dict[int, tuple[RunResult, str, str | None, dict[str, object]]] = {}
        self.rejudged = (0, 0)  # (re-asked, judged now)
        self.over_budget = asyncio.Event()  # max-cost-usd passed: the run stops
        # Conversation ids: new each evaluation (a stateful service starts afresh), the same
        # on every turn of one conversation.
        self._nonce = secrets.token_hex(4)
        self._conversations: dict[str, int] = {}
        self._user_model: object | None = None  # the simulated users' chat model

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

    async def _judge_call(
        self,
        key: str,
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
                if not _cancelled():
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

    async def run_once(self, item: GoldenItem, *, rerun: bool = False) -> RunResult:
        """One run; whatever goes wrong in it is this run's error, never the whole evaluation's."""
        try:
            return await self._run_once(item, rerun=rerun)
        except InputError:  # the judge could not be set up: the run's, not one item's
            raise
        except Exception as exc:  # a bug or an unforeseen input: one item, not every result
            reason = cut(" ".join(f"{type(exc).__name__}: {exc}".split()), 300)
            return RunResult(status="error", rerun=rerun, error=f"internal error: {reason}")

    async def _run_once(self, item: GoldenItem, *, rerun: bool) -> RunResult:
        if item.turns:
            return await self._conversation(item, item.turns, rerun=rerun)
        if item.simulated_user is not None:
            return await self._simulated(item, rerun=rerun)
        self.stats.assistant_calls += 1
        answer = await self.client.ask(item)
        return await self._judged(item, answer, rerun=rerun)

    def conversation_id(self, item: GoldenItem) -> str:
        """A new conversation's id: stable for its turns, unique per item, run and evaluation."""
        number = self._conversations[item.id] = self._conversations.get(item.id, 0) + 1
        seed = json.dumps([self._nonce, item.id, number])
        return "gg-" + hashlib.sha256(seed.encode("utf-8")).hexdigest()[:20]

    async def _conversation(
        self, item: GoldenItem, turns: Sequence[Turn], *, rerun: bool
    ) -> RunResult:
        """Each turn one request with the history so far, judged as an answer of its own (the
        judge reads the conversation up to it; the cache key covers it); the run passes when
        every turn does, and names the first that did not."""
        conversation = self.conversation_id(item)
        history: list[dict[str, str]] = []
        kept: list[TurnResult] = []
        failed: tuple[int, RunResult] | None = None
        run: RunResult | None = None
        latency = 0.0  # the conversation's: every turn's request
        for number, turn in enumerate(turns, start=1):
            view = _turn_view(item, turn, history)
            self.stats.assistant_calls += 1
            answer = await self.client.ask(
                item, question=turn.question, history=list(history), conversation_id=conversation
            )
            run = await self._judged(view, answer, rerun=rerun, keep=False, per_turn=True)
            latency += run.latency_ms or 0.0
            kept.append(
                TurnResult(
                    turn=number,
                    question=cut(turn.question, self.settings.answer_excerpt_chars),
                    status=run.status,
                    answer=run.answer,
                    why=run.why,
                    tool_calls=run.tool_calls,
                )
            )
            if run.status == "error":  # no answer to go on with, or no verdict
                return run.model_copy(update={"turns": kept, "failed_turn": number})
            if run.status == "fail" and failed is None:
                failed = (number, run)
            assert answer.text is not None
            history += [
                {"role": "user", "content": turn.question},
                {"role": "assistant", "content": answer.text},
            ]
        assert run is not None
        final = await self._transcript_run(item, history, run)
        if final is not None and final.status != "pass" and failed is None:
            return final.model_copy(update={"turns": kept})
        base = failed[1] if failed is not None else run
        whole = [*(base.evaluations or []), *(final.evaluations or [] if final else [])]
        return base.model_copy(
            update={
                "turns": kept,
                "failed_turn": failed[0] if failed is not None else None,
                "latency_ms": round(latency, 1),
                "evaluations": whole or None,
            }
        )

    async def _simulated(self, item: GoldenItem, *, rerun: bool) -> RunResult:
        """A simulated user's conversation (simulate.py), judged as a whole at its end."""
        from golden_gate.evaluation import simulate

        assert self.panel is not None  # checked before the run (evaluate)
        await self.panel.ready()
        if self._user_model is None:
            self._user_model = simulate.user_model(self.panel.evaluators[0].judges[0])
        conversation = self.conversation_id(item)
        unanswered: list[Answer] = []

        async def ask(text: str, history: list[dict[str, str]]) -> str:
            self.stats.assistant_calls += 1
            answer = await self.client.ask(
                item, question=text, history=history, conversation_id=conversation
            )
            if answer.text is None or answer.error is not None:
                unanswered.append(answer)
                raise _Unanswered
            return answer.text

        try:
            history = await simulate.simulate(item, self._user_model, ask)
        except _Unanswered:
            failed = unanswered[0]
            return RunResult(
                status="error",
                error_side="assistant",
                error=failed.error or "no answer",
                http_status=failed.http_status,
                rerun=rerun,
            )
        except Exception as exc:  # the simulated user's model: no verdict about the assistant
            reason = cut(" ".join(f"{type(exc).__name__}: {exc}".split()), 300)
            return RunResult(
                status="error", error_side="judge", error=f"simulated user: {reason}", rerun=rerun
            )
        limit = self.settings.answer_excerpt_chars
        turns = [
            TurnResult(
                turn=n,
                question=cut(history[2 * n - 2]["content"], limit),
                status="pass",  # answered; the transcript's evaluators judge the whole
                answer=cut(history[2 * n - 1]["content"], limit),
            )
            for n in range(1, len(history) // 2 + 1)
        ]
        last = RunResult(status="pass", rerun=rerun, answer=turns[-1].answer if turns else None)
        final = await self._transcript_run(item, history, last)
        assert final is not None  # a transcript evaluator is required (evaluate)
        return final.model_copy(update={"turns": turns})

    async def _transcript_run(
        self, item: GoldenItem, history: list[dict[str, str]], last: RunResult
    ) -> RunResult | None:
        """The evaluators that read the whole conversation (task completion), once an item."""
        if self.panel is None or not any(e.reads == "transcript" for e in self.panel.evaluators):
            return None
        whole = item.model_copy(update={"question": _transcript(history[:1]), "turns": None})
        result = {k: v for k, v in last.model_dump().items() if k in _RUN_FIELDS}
        return await self._evaluated(
            whole, "", None, result, transcript=_transcript(history), only="transcript"
        )

    async def _judged(
        self,
        item: GoldenItem,
        answer: Answer,
        *,
        rerun: bool,
        keep: bool = True,
        per_turn: bool = False,
    ) -> RunResult:
        """One answer's run: its checks (the tool calls' too), then the judge's verdict."""
        excerpt_limit = self.settings.answer_excerpt_chars
        base = {
            "rerun": rerun,
            "http_status": answer.http_status,
            "latency_ms": round(answer.latency_ms, 1),
            "surrogates_replaced": answer.surrogates_replaced or None,
            "usage": answer.usage,
        }
        if answer.usage is not None:
            spent = self.stats.assistant_tokens or TokenUsage()
            self.stats.assistant_tokens = TokenUsage(
                input_tokens=spent.input_tokens + answer.usage.input_tokens,
                output_tokens=spent.output_tokens + answer.usage.output_tokens,
            )
            self._check_cost()
        if answer.error is not None or answer.text is None:
            return RunResult(
                status="error",
                error_side="assistant",
                error=answer.error or "no answer",
                **base,
            )
        sources = answer.sources or []
        checks = await self.checker.run(item, answer.text, sources)
        calls = answer.tool_calls
        if has_rules(item):
            if self.panel is not None:
                # The judges import openevals on a thread; importing its trajectory module
                # here meanwhile could meet it half-initialised.
                await self.panel.ready()
            checks += check_calls(item, calls or [])
        result = {
            **base,
            "answer": cut(answer.text, excerpt_limit),
            "sources": answer.sources,
            "checks": checks,
            "tool_calls": shown.kept(calls) if calls is not None else None,
        }
        undecided = errored(checks)
        if undecided is not None:  # a check that hung or crashed: no verdict, never a pass
            error = f"check {undecided.name}: {undecided.reason}"
            return RunResult(status="error", error_side="check", error=error, **result)
        if any(not c.passed for c in checks):
            return RunResult(status="fail", **result)
        readers = self.panel.evaluators if self.panel is not None else []
        if per_turn:
            readers = [e for e in readers if e.reads != "transcript"]
        if self.panel is None or not readers or not _judgeable(item, readers):
            return RunResult(status="pass", **result)
        transcript = _transcript(
            [
                {"role": "user", "content": item.question},
                {"role": "assistant", "content": answer.text},
            ]
        )
        if self.panel.plain:
            try:
                verdict = await self.verdict(item, answer.text)
            except JudgeError as exc:
                error = f"judge: {exc}"
                run = RunResult(status="error", error_side="judge", error=error, **result)
                if exc.final or not keep:  # the same question would hit the same cap
                    return run
                return self._keep_unjudged(run, answer.text, answer.context, result)
            status = "pass" if verdict.passed else "fail"
            return RunResult(status=status, verdict=verdict, **result)
        run = await self._evaluated(
            item,
            answer.text,
            answer.context,
            result,
            transcript=transcript,
            only="answer" if per_turn else None,
        )
        if keep and run.error_side == "judge" and CUT_OFF not in (run.error or ""):
            return self._keep_unjudged(run, answer.text, answer.context, result)
        return run

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
                kept = self._unjudged.get(id(run))
                if kept is not None and kept[0] is run and item_id in by_id:
                    pending.append((by_id[item_id], index))
        if not pending:
            return
        total_runs = sum(len(r.run_results) for r in self.finished.values())
        limit = max(REJUDGE_MIN, math.ceil(total_runs * REJUDGE_SHARE))
        chosen = pending[:limit]

        async def again(item: GoldenItem, index: int) -> tuple[GoldenItem, int, RunResult]:
            _, answer, context, result = self._unjudged[
                id(self.finished[item.id].run_results[index])
            ]
            return item, index, await self._judge_again(item, answer, context, result)

        judged = 0
        for item, index, new in await asyncio.gather(*(again(i, x) for i, x in chosen)):
            if new.status == "error":
                continue
            judged += 1
            runs = list(self.finished[item.id].run_results)
            runs[index] = new
            self.finished[item.id] = _aggregate(item, runs)
        self.rejudged = (len(chosen), judged)
        left = len(pending) - len(chosen)
        print(
            f"golden-gate: asked the judge again about {len(chosen)} run(s) it had failed on: "
            f"{judged} judged now"
            + (f"; {left} more not asked again (at most {limit})" if left else ""),
            file=sys.stderr,
            flush=True,
        )

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
        outcomes = list(
            await asyncio.gather(
                *(
                    self._evaluator(e, item, answer, context, calls=calls, transcript=transcript)  # type: ignore[arg-type]
                    for e in chosen
                )
            )
        )
        decided = combine([_passed(o) for o in outcomes], self.panel.rule)
        verdicts = [v for o in outcomes for v in o[1]]
        outcomes_only = [o[0] for o in outcomes]
        if decided is None:
            errors = [e.comment for e in outcomes_only if e.status == "error"]
            return RunResult(
                status="error",
                error_side="judge",
                error=f"judge: {errors[0] if errors else 'no verdict'}",
                evaluations=outcomes_only,
                **result,  # type: ignore[arg-type]
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
            **result,  # type: ignore[arg-type]
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
            answer = _trajectory_text(calls, answer)
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

    async def run_item(self, item: GoldenItem) -> ItemResult:
        runs = list(await asyncio.gather(*(self.run_once(item) for _ in range(self.settings.runs))))
        if self.settings.rerun_failures and _failed(runs):
            # Diagnostic only: shows whether a failure repeats; never counted, never until green.
            for _ in range(self.settings.rerun_failures):
                runs.append(await self.run_once(item, rerun=True))
        result = _aggregate(item, runs)
        self.finished[item.id] = result
        if self.progress:
            self.progress.done += 1
            self.progress.errors += result.errors
            self.progress.assistant_errors += result.unanswered
            self.progress.passes += result.passes
            self.progress.runs += result.runs
            self.progress.update()
        return result


_RUN_FIELDS = frozenset(
    ["rerun", "http_status", "latency_ms", "surrogates_replaced", "answer", "sources", "checks",
     "tool_calls"]
)  # fmt: skip


def _turn_view(item: GoldenItem, turn: Turn, history: list[dict[str, str]]) -> GoldenItem:
    """A conversation's turn as an item of its own: the turn's checks and key points, and as
    its question the conversation up to it (what the judge reads and the cache key covers)."""
    said = [*history, {"role": "user", "content": turn.question}]
    fields = {name: getattr(turn, name) for name in Turn.model_fields if name != "question"}
    return item.model_copy(update={**fields, "question": _transcript(said), "turns": None})


def _transcript(messages: Sequence[dict[str, str]]) -> str:
    """Chat messages as the judge reads them: `user: …` / `assistant: …`, a message a block;
    a single user message as itself."""
    if len(messages) == 1:
        return messages[0]["content"]
    return "\n\n".join(f"{m['role']}: {m['content']}" for m in messages)


def _trajectory_text(calls: Sequence[ToolCall] | None, answer: str) -> str:
    lines = [f"{n}. {shown.call_text(c.name, c.arguments)}" for n, c in enumerate(calls or [], 1)]
    steps = "\n".join(lines) or shown.NO_CALLS
    return f"Tool calls, in order:\n{steps}\n\nFinal answer:\n{answer}"


def _judgeable(item: GoldenItem, evaluators: Sequence[Evaluator]) -> bool:
    """Whether any of `evaluators` has something to judge this answer by."""
    for evaluator in evaluators:
        if evaluator.reads == "trajectory" and (
            evaluator.name != "trajectory" or item.expected_tools is not None
        ):
            return True
        if evaluator.reads == "transcript" or needs_judge(item):
            return True
    return False


class _Unanswered(Exception):
    """The assistant gave no answer in a simulated conversation: the run is its error."""


def _cancelled() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def _passed(outcome: tuple[EvaluatorOutcome, list[Verdict]]) -> bool | None:
    status = outcome[0].status
    return None if status == "error" else status == "pass"


def _failed(runs: Sequence[RunResult]) -> bool:
    return any(r.status != "pass" for r in runs if counts(r))


def _aggregate(item: GoldenItem, runs: list[RunResult]) -> ItemResult:
    return ItemResult(
        id=item.id,
        tags=list(item.tags),
        **tally_runs(runs),
        cluster=item.cluster,
        question=item.question,
        item_hash=item_hash(item),
        expected_tools=_expected(item),
        run_results=runs,
    )


def _retrieval(
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


def _expected(item: GoldenItem) -> list[str] | None:
    """The expected calls as the comment shows them: the item's, or each turn's, named."""
    if item.expected_tools is not None:
        return shown.expected_text(item.expected_tools)
    lines = [
        f"turn {n}: {' → '.join(shown.expected_text(t.expected_tools)) or shown.NO_CALLS}"
        for n, t in enumerate(item.turns or (), start=1)
        if t.expected_tools is not None
    ]
    return lines or None


def _judge_warnings(
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


def _sides(results: Sequence[ItemResult]) -> str:
    unanswered = sum(r.unanswered for r in results)
    judge = sum(r.errors for r in results)
    return f"{unanswered} unanswered by the assistant, {judge} not judged"


async def evaluate(
    items: Sequence[GoldenItem],
    *,
    client: AssistantClient,
    judge: Judge | Panel | None,
    cache: VerdictCache,
    settings: EvalSettings | None = None,
    checks: CheckSettings | None = None,
    dataset: DatasetInfo | None = None,
    assistant: AssistantInfo | None = None,
    progress: Progress | None = None,
    retrieval_k: int = retrieval.DEFAULT_K,
) -> Report:
    """Evaluate every item; `judge=None` runs the deterministic tier only."""
    settings = settings or EvalSettings()
    priced = settings.judge_prices or settings.assistant_prices
    if settings.max_cost_usd is not None and not priced:
        raise InputError(
            "max-cost-usd needs judge-prices or assistant-prices: without prices nothing the "
            "run spends has a cost to compare with it"
        )
    simulated = next((i for i in items if i.simulated_user is not None), None)
    panel = judge if isinstance(judge, Panel) or judge is None else Panel.of(judge)
    if simulated is not None and (
        panel is None or not any(e.reads == "transcript" for e in panel.evaluators)
    ):
        raise InputError(
            f"{simulated.where}: item '{simulated.id}' has a simulated user: add an evaluator "
            "that judges the whole conversation (--evaluators task-completion)"
        )
    evaluation = Evaluation(
        client=client,
        judge=judge,
        cache=cache,
        settings=settings,
        checks=checks or CheckSettings(),
        progress=progress,
    )
    if progress:
        progress.watch(
            assistant_in_flight=lambda: client.in_flight,
            assistant_slots=client.settings.concurrency,
            judge_slots=settings.judge_concurrency if evaluation.panel is not None else None,
        )
    started = time.monotonic()
    tasks = [asyncio.ensure_future(evaluation.run_item(item)) for item in items]
    probing = None
    if evaluation.panel is not None and settings.canaries:
        # Beside the items, in the same judge slots: a few calls, none on a warm re-run.
        probing = asyncio.ensure_future(
            canaries.ask_all(evaluation.panel, items, settings.canaries, evaluation.probe)
        )
        tasks.append(probing)
    heartbeat = asyncio.ensure_future(progress.heartbeat()) if progress else None
    interrupted = False
    try:
        await _gather_within_budget(evaluation, tasks)
    except asyncio.CancelledError:
        # Interrupted (SIGTERM, a cancelled job): keep what finished, as an incomplete report.
        interrupted = True
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        current = asyncio.current_task()
        if current is not None:
            current.uncancel()
    finally:
        await evaluation.checker.close()
        if heartbeat is not None:
            heartbeat.cancel()
            await asyncio.gather(heartbeat, return_exceptions=True)
    over_budget = evaluation.over_budget.is_set()
    if not interrupted and not over_budget and evaluation.panel is not None:
        try:
            await evaluation.judge_again(items)
        except asyncio.CancelledError:
            interrupted = True  # what was judged again is kept; the rest stays an error
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
    results = [evaluation.finished[i.id] for i in items if i.id in evaluation.finished]
    if progress:
        progress.finish()
    stats = evaluation.stats
    panel = evaluation.panel
    stats.elapsed_s = round(time.monotonic() - started, 3)
    if settings.judge_prices is not None:
        per_input, per_output = settings.judge_prices
        cost = (stats.input_tokens * per_input + stats.output_tokens * per_output) / 1e6
        stats.cost_usd = round(cost, 6)
    _performance(stats, results)
    if settings.assistant_prices is not None and stats.assistant_tokens is not None:
        from golden_gate.core.cost import price

        assistant_cost = price(stats.assistant_tokens, settings.assistant_prices)
        stats.assistant_cost_usd = round(assistant_cost, 6)
    report = new_report(
        judge=panel.name if panel is not None else DETERMINISTIC,
        judge_prompt_hash=panel.prompt_hash if panel is not None else None,
        tier="full" if panel is not None else DETERMINISTIC,
        results=list(results),
        dataset=dataset,
        assistant=assistant,
        run_settings=RunSettings(
            runs=settings.runs,
            rerun_failures=settings.rerun_failures,
            judge_temperature=panel.temperature if panel is not None else None,
            checks_hash=checks_hash(evaluation.checks),
            evaluators=panel.settings_label if panel is not None else None,
            judge_panel=panel.judge_panel
            if panel is not None and len(panel.judge_names) > 1
            else None,
        ),
        stats=stats,
        warnings=_judge_warnings(results, stats, settings) or None,
    )
    if client.settings.sources_path:
        report.retrieval = _retrieval(items, results, retrieval_k)
    if probing is not None and probing.done() and not probing.cancelled():
        report.canaries = probing.result()
    if panel is not None:
        report.judges = identities(panel, results, report.canaries) or None
        if report.judges:
            models = [*settings.assistant_models, *sorted(client.served_models)]
            said = identity_warnings(report.judges, models)
            report.warnings = (report.warnings or []) + said or None
    canaries_failed = canary_reason(report.canaries) if report.canaries else None
    total_runs = sum(r.runs + r.errors for r in results)
    error_runs = sum(r.errors + r.unanswered for r in results)
    if over_budget:
        # A budget is not a verdict: what was not asked is not a regression, and no pass.
        report.complete = False
        report.incomplete_reason = (
            f"stopped at max-cost-usd {settings.max_cost_usd:g}: the run had spent "
            f"${evaluation.spent_usd():.4f} after {len(results)} of {len(items)} items"
        )
        report.not_asked = [i.id for i in items if i.id not in evaluation.finished] or None
    elif interrupted:
        report.complete = False
        report.incomplete_reason = (
            f"interrupted after {len(results)} of {len(items)} items; the report holds those"
        )
        report.not_asked = [i.id for i in items if i.id not in evaluation.finished] or None
    elif total_runs and error_runs / total_runs > settings.max_error_rate:
        report.complete = False
        report.incomplete_reason = (
            f"{error_runs} of {total_runs} runs ended in an error "
            f"({_sides(results)}; {error_runs / total_runs:.0%}, above max-error-rate "
            f"{settings.max_error_rate:.0%})"
            + ("; the judge budget ran out" if stats.budget_exhausted else "")
        )
    elif canaries_failed:
        # A judge that cannot tell a known-bad answer from a good one measures nothing.
        report.complete = False
        report.incomplete_reason = canaries_failed + (
            "; the judge budget ran out (max-judge-calls counts the canaries too)"
            if stats.budget_exhausted
            else ""
        )
    elif stats.budget_exhausted:
        report.incomplete_reason = "the judge budget ran out before every answer was judged"
    explained = client.explain_errors(
        [
            (run.error or "no answer", run.http_status)
            for result in results
            for run in result.run_results
            if run.status == "error" and run.error_side == "assistant"
        ]
    )
    if explained and report.incomplete_reason and not interrupted:
        report.incomplete_reason += "; the assistant: " + "; ".join(explained[:3])
    elif explained:
        report.warnings = [*(report.warnings or []), *(f"the assistant: {e}" for e in explained)]
    return report


async def _gather_within_budget(evaluation: Evaluation, tasks: list[asyncio.Future]) -> None:
    """Every task to its end, or, once the run passes max-cost-usd, every task cancelled."""
    if evaluation.settings.max_cost_usd is None:
        await asyncio.gather(*tasks)
        return
    gathered = asyncio.gather(*tasks)
    stop = asyncio.ensure_future(evaluation.over_budget.wait())
    try:
        await asyncio.wait({gathered, stop}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stop.cancel()
    if not gathered.done():
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if gathered.cancelled():
            return
    if gathered.exception() is not None:
        raise gathered.exception()  # type: ignore[misc]


def _performance(stats: RunStats, results: Sequence[ItemResult]) -> None:
    """The assistant's latency and tokens an answer, p50 and p95: shown, never gated."""
    from golden_gate.core.cost import percentiles

    asked = [
        run
        for item in results
        for run in item.run_results
        if not run.rerun and run.error_side != "assistant"
    ]
    stats.latency_ms = percentiles([r.latency_ms for r in asked if r.latency_ms is not None])
    stats.tokens_per_answer = percentiles([float(r.usage.total) for r in asked if r.usage])
