"""Evaluation: ask the assistant, check, judge, repeat, and aggregate into a report.

Assistant and judge calls share one event loop with separate concurrency limits, so both stay
busy. An infrastructure fault becomes an error run, never a failing verdict.

`Evaluation` holds one event loop's shared state (slots, progress, counts); its parts are
mixins, one module each: judging.py (judge calls, cache, evaluators), conversations.py (turns,
simulated users), rejudge.py (the end-of-run re-ask), budget.py (max-cost-usd); outcome.py
turns the runs into the report's figures. Here: one run of an item (ask, check, judge) and the
evaluation as a whole.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from golden_gate.core import retrieval

if TYPE_CHECKING:
    from golden_gate.evaluation.preflight import Spent
from golden_gate.core import trajectory as shown
from golden_gate.core.canaries import incomplete_reason as canary_reason
from golden_gate.core.cost import performance
from golden_gate.core.golden import GoldenItem
from golden_gate.core.item_result import ItemResult, RunResult, TokenUsage, Verdict
from golden_gate.core.report import (
    DETERMINISTIC,
    AssistantInfo,
    DatasetInfo,
    Report,
    RunSettings,
    RunStats,
    new_report,
)
from golden_gate.errors import InputError
from golden_gate.evaluation import canaries
from golden_gate.evaluation.budget import Budget, gather_within_budget
from golden_gate.evaluation.cache import VerdictCache, VerdictKey
from golden_gate.evaluation.checks import Checker, CheckSettings, checks_hash, errored
from golden_gate.evaluation.conversations import Conversations, Paused, as_transcript
from golden_gate.evaluation.eval_settings import EvalSettings, parse_prices
from golden_gate.evaluation.evaluators import Panel
from golden_gate.evaluation.judge import Judge, JudgeError
from golden_gate.evaluation.judge_identity import identities, identity_warnings
from golden_gate.evaluation.judging import Judging, judgeable
from golden_gate.evaluation.outcome import (
    aggregate,
    any_failed,
    count_check_errors,
    error_sides,
    judge_warnings,
    retrieval_record,
)
from golden_gate.evaluation.progress import Progress
from golden_gate.evaluation.providers import CUT_OFF
from golden_gate.evaluation.rejudge import Rejudging
from golden_gate.evaluation.target import Answer, AssistantClient
from golden_gate.evaluation.trajectory import check_calls, has_rules
from golden_gate.text import cut

__all__ = ["EvalSettings", "Evaluation", "evaluate", "parse_prices"]


class Evaluation(Budget, Judging, Conversations, Rejudging):
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
        self._in_flight: dict[VerdictKey, asyncio.Future[Verdict]] = {}
        # Runs the judge failed on, with what it needs to judge them again at the end of the
        # run (the report keeps only an excerpt of the answer): keyed by the run's identity.
        self._unjudged: dict[int, tuple[RunResult, str, str | None, dict[str, object]]] = {}
        # Conversations paused at a turn the judge failed on, resumed there at the end.
        self._paused: dict[int, tuple[RunResult, Paused]] = {}
        self.rejudged = (0, 0)  # (re-asked, judged now)
        self.over_budget = asyncio.Event()  # max-cost-usd passed: the run stops
        # Conversation ids: new each evaluation (a stateful service starts afresh), the same
        # on every turn of one conversation.
        self._nonce = secrets.token_hex(4)
        self._conversations: dict[str, int] = {}
        self._user_model: object | None = None  # the simulated users' chat model

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

    async def _judged(
        self,
        item: GoldenItem,
        answer: Answer,
        *,
        rerun: bool,
        keep: bool = True,
        per_turn: bool = False,
        asked: bool = True,
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
        if answer.usage is not None and asked:  # not again for an answer judged again
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
        result: dict[str, object] = {
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
        if self.panel is None or not readers or not judgeable(item, readers):
            return RunResult(status="pass", **result)
        transcript = as_transcript(
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

    async def run_item(self, item: GoldenItem) -> ItemResult:
        runs = list(await asyncio.gather(*(self.run_once(item) for _ in range(self.settings.runs))))
        if self.settings.rerun_failures and any_failed(runs):
            # Diagnostic only: shows whether a failure repeats; never counted, never until green.
            for _ in range(self.settings.rerun_failures):
                runs.append(await self.run_once(item, rerun=True))
        result = aggregate(item, runs)
        self.finished[item.id] = result
        if self.progress:
            self.progress.done += 1
            self.progress.errors += result.errors
            self.progress.assistant_errors += result.unanswered
            self.progress.passes += result.passes
            self.progress.runs += result.runs
            self.progress.update()
        return result


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
    spent: Spent | None = None,
) -> Report:
    """Evaluate every item; `judge=None` runs the deterministic tier only.

    `spent`: what the judge preflight cost, counted in the run's tokens, cost and requests
    to the judge (its verdicts are not judge calls)."""
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
    if spent is not None:
        evaluation.stats.input_tokens += spent.tokens.input_tokens
        evaluation.stats.output_tokens += spent.tokens.output_tokens
        evaluation.stats.judge_attempts += spent.attempts
    started = time.monotonic()
    tasks: list[asyncio.Future[Any]] = [
        asyncio.ensure_future(evaluation.run_item(item)) for item in items
    ]
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
        await gather_within_budget(evaluation, tasks)
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
    performance(stats, results)  # core/cost.py
    stats.check_errors = count_check_errors(results)
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
        warnings=judge_warnings(results, stats, settings) or None,
    )
    if client.settings.sources_path:
        report.retrieval = retrieval_record(items, results, retrieval_k)
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
            f"({error_sides(results)}; {error_runs / total_runs:.0%}, above max-error-rate "
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
    judge_errors = Counter(
        run.error
        for result in results
        for run in result.run_results
        if run.status == "error" and run.error_side == "judge" and run.error
    )
    if judge_errors and report.incomplete_reason and not interrupted and not over_budget:
        # Which fault stopped the run, in the one sentence said (a cap reached, a timeout).
        fault, count = judge_errors.most_common(1)[0]
        report.incomplete_reason += f"; the judge: {fault.removeprefix('judge: ')} ({count} runs)"
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
