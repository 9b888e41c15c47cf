"""Evaluation: ask the assistant, check, judge, repeat, and aggregate into a report.

Assistant and judge calls share one event loop with separate concurrency limits, so both stay
busy. An infrastructure fault becomes an error run, never a failing verdict.

About 600 lines, one module: the scheduling of assistant and judge calls, the re-runs and the
aggregation share one event loop's state (slots, progress, counts); split, each part would
have to pass it around.
"""

from __future__ import annotations

import asyncio
import json
import math
import sys
import time
from collections.abc import Sequence

from pydantic import BaseModel, Field

from golden_gate.core.canaries import incomplete_reason as canary_reason
from golden_gate.core.golden import GoldenItem, item_hash
from golden_gate.core.report import (
    DETERMINISTIC,
    AssistantInfo,
    DatasetInfo,
    EvaluatorOutcome,
    ItemResult,
    JudgeVote,
    Report,
    RunResult,
    RunSettings,
    RunStats,
    TokenUsage,
    Verdict,
    counts,
    new_report,
    tally_runs,
)
from golden_gate.errors import InputError
from golden_gate.evaluation import canaries
from golden_gate.evaluation.cache import VerdictCache
from golden_gate.evaluation.checks import CheckSettings, checks_hash, needs_judge, run_checks
from golden_gate.evaluation.evaluators import Evaluator, Panel, combine
from golden_gate.evaluation.judge import Judge, JudgeError
from golden_gate.evaluation.judge_identity import identities, identity_warnings, served
from golden_gate.evaluation.progress import Progress
from golden_gate.evaluation.providers import CUT_OFF
from golden_gate.evaluation.target import AssistantClient
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
    # The answer as the report keeps it: whole for any answer a person reads (pairwise, the
    # report page, review), cut only past this, so a runaway reply cannot swell the report.
    answer_excerpt_chars: int = Field(default=20_000, ge=0)
    # The models the assistant answers with (assistant-model): a judge among them is warned of.
    assistant_models: list[str] = Field(default_factory=list)
    # Golden items each model judge's canaries are derived from, per evaluator (0: none).
    canaries: int = Field(default=2, ge=0, le=MAX_CANARIES)


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
        self.cache.put(key, verdict)  # only successful verdicts reach this line
        return verdict

    def _count_tokens(self, tokens: TokenUsage | None) -> None:
        if tokens:
            self.stats.input_tokens += tokens.input_tokens
            self.stats.output_tokens += tokens.output_tokens

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
        self.stats.assistant_calls += 1
        answer = await self.client.ask(item)
        excerpt_limit = self.settings.answer_excerpt_chars
        base = {
            "rerun": rerun,
            "http_status": answer.http_status,
            "latency_ms": round(answer.latency_ms, 1),
            "surrogates_replaced": answer.surrogates_replaced or None,
        }
        if answer.error is not None or answer.text is None:
            return RunResult(
                status="error",
                error_side="assistant",
                error=answer.error or "no answer",
                **base,
            )
        sources = answer.sources or []
        checks = run_checks(item, answer.text, sources, self.checks)
        result = {
            **base,
            "answer": cut(answer.text, excerpt_limit),
            "sources": answer.sources,
            "checks": checks,
        }
        if any(not c.passed for c in checks):
            return RunResult(status="fail", **result)
        if self.panel is None or not needs_judge(item):
            return RunResult(status="pass", **result)
        if self.panel.plain:
            try:
                verdict = await self.verdict(item, answer.text)
            except JudgeError as exc:
                error = f"judge: {exc}"
                run = RunResult(status="error", error_side="judge", error=error, **result)
                if exc.final:  # the same question would hit the same cap: no money spent
                    return run
                return self._keep_unjudged(run, answer.text, answer.context, result)
            status = "pass" if verdict.passed else "fail"
            return RunResult(status=status, verdict=verdict, **result)
        run = await self._evaluated(item, answer.text, answer.context, result)
        if run.error_side == "judge" and CUT_OFF not in (run.error or ""):
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
        self, item: GoldenItem, answer: str, context: str | None, result: dict[str, object]
    ) -> RunResult:
        """Every evaluator's panel, combined by the panel rule, then the evaluators' rule."""
        assert self.panel is not None
        outcomes = list(
            await asyncio.gather(
                *(self._evaluator(e, item, answer, context) for e in self.panel.evaluators)
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
        self, evaluator: Evaluator, item: GoldenItem, answer: str, context: str | None
    ) -> tuple[EvaluatorOutcome, list[Verdict]]:
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
        decided = combine([v.passed for v, _ in votes], self.panel.panel)
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
        run_results=runs,
    )


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
) -> Report:
    """Evaluate every item; `judge=None` runs the deterministic tier only."""
    settings = settings or EvalSettings()
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
        await asyncio.gather(*tasks)
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
        if heartbeat is not None:
            heartbeat.cancel()
            await asyncio.gather(heartbeat, return_exceptions=True)
    if not interrupted and evaluation.panel is not None:
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
            judge_panel=panel.panel if panel is not None and len(panel.judge_names) > 1 else None,
        ),
        stats=stats,
        warnings=_judge_warnings(results, stats, settings) or None,
    )
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
    if interrupted:
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
