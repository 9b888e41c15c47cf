"""The whole run, from settings to files: evaluate, save the report, gate, render.

The report is saved before the gate and rendering, so nothing after it can lose the result.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Callable

from golden_gate import process
from golden_gate.core import golden, slim
from golden_gate.core.report import AssistantInfo, DatasetInfo, Report, selection_digest
from golden_gate.core.report_file import save_report
from golden_gate.core.verdict import floor_out_of_reach
from golden_gate.errors import (
    EXIT_BAD_INPUT,
    IncompleteError,
    InputError,
)
from golden_gate.evaluation.cache import VerdictCache
from golden_gate.evaluation.evaluators import Panel, make_panel
from golden_gate.evaluation.judge import Judge
from golden_gate.evaluation.progress import Progress
from golden_gate.files import WriteFailures
from golden_gate.publish import Outcome, publish, read_calibration
from golden_gate.rendering.charts import TrendPoint
from golden_gate.settings import Settings


def load_items(settings: Settings, *, every_tag_used: bool = True) -> list[golden.GoldenItem]:
    """The items the settings select. `every_tag_used`: a subset tag no item carries is bad
    input (a typo selects nothing, silently); off on a pull request, whose own golden set may
    drop a tag the base branch's still has (its items come from the base)."""
    every = golden.load_golden(settings.golden)
    if every_tag_used:
        golden.check_tags_used(every, settings.tags, where=settings.golden)
    waiting = sum(1 for i in every if golden.unreviewed(i))
    if waiting:
        print(
            f"golden-gate: {waiting} item(s) tagged needs-review or needs-reference left out "
            "until reviewed (golden-gate review --candidates)",
            file=sys.stderr,
        )
    items = golden.select(every, settings.tags)
    if not settings.evaluation.simulate_users:
        # Simulated users are nightly (cost, noise): left out unless simulate-users is on.
        kept = [i for i in items if i.simulated_user is None]
        if items and not kept:
            raise InputError(
                f"{settings.golden}: every selected item has a simulated user: turn on "
                "simulate-users to run them (meant for nightly runs)"
            )
        if len(kept) < len(items):
            print(
                f"golden-gate: {len(items) - len(kept)} item(s) with a simulated user left "
                "out (simulate-users is off)",
                file=sys.stderr,
            )
            items = kept
    if not items and waiting == len(every):
        raise InputError(
            f"{settings.golden}: every item is still to be reviewed (tagged needs-review or "
            "needs-reference): accept them with golden-gate review --candidates first"
        )
    if not items:
        raise InputError(
            f"subset-tags: no item in {settings.golden} carries any of the tags "
            f"{', '.join(settings.tags)}"
        )
    check_golden(items, settings)
    return items


def check_golden(items: list[golden.GoldenItem], settings: Settings) -> None:
    """Every selected item can be judged by these evaluators (an item with nothing to judge
    it by passes whatever the answer), and with `golden-strict` holds known fields only."""
    from golden_gate.evaluation.evaluators import reference_free

    golden.check_judgeable(
        items,
        reference_free=reference_free(settings.evaluators),
        strict=settings.golden_strict,
    )
    if settings.target is not None and settings.target.tools_path is None:
        golden.check_tools_readable(items)


def check_floor(items: list[golden.GoldenItem], settings: Settings) -> None:
    """Exit 2 when the selected items cannot clear the floor even all passing: before anything
    is asked or paid, since this gate would fail whatever the answers are."""
    out_of_reach = floor_out_of_reach([i.cluster for i in items], settings.gate)
    if out_of_reach is not None:
        raise InputError(f"floor: {out_of_reach}")


async def _evaluate(
    items: list[golden.GoldenItem],
    settings: Settings,
    judge: Judge | Panel | None,
    dataset: DatasetInfo,
    assistant: AssistantInfo,
    cache: VerdictCache,
) -> tuple[Report, InputError | None]:
    """The report, and the configuration error the run found (a judge the preflight was
    refused by, an answer-path the first answer lacks, a path into the answer no answer had),
    raised by the caller once the report is saved."""
    # Imported here: a skipped run imports this module for `check_inputs`, and the evaluation
    # brings its HTTP client (aiohttp, a tenth of a second or more).
    from golden_gate.evaluation import runner_host
    from golden_gate.evaluation.evaluate import evaluate
    from golden_gate.evaluation.target import AssistantClient, AssistantUnusable

    assert settings.target is not None and settings.target.url
    if judge is not None:
        from golden_gate.evaluation import providers
        from golden_gate.evaluation.preflight import JudgeUnreachable, judge_endpoint

        url = providers.endpoint(settings.judge.model, settings.judge.base_url)
        try:
            await judge_endpoint(url)  # before any question is asked
        except JudgeUnreachable:
            await judge.aclose()
            raise
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    # Removing a loop's handler resets the signal to its default (death on SIGTERM), so the
    # handlers from before are put back after: the rest of the run stays interruptible.
    before = {signum: signal.getsignal(signum) for signum in (signal.SIGTERM, signal.SIGINT)}
    for signum in before:
        # A cancelled job stops the evaluation; what finished is still reported (incomplete).
        loop.add_signal_handler(signum, task.cancel)
    progress = Progress(len(items), enabled=settings.progress)
    try:
        unusable = None
        target = settings.target
        try:  # `runner-host`: the address where a server an earlier step started answers
            url = await runner_host.resolve(target.url)
        except runner_host.RunnerHostUnreachable as exc:
            unusable = str(exc)
        except asyncio.CancelledError:
            task.uncancel()
            raise IncompleteError("interrupted before the assistant's first answer") from None
        else:
            target = target.model_copy(update={"url": url})
            assistant = _with_url(assistant, url)
        spent = None
        misconfigured: InputError | None = None
        if judge is not None and unusable is None:
            from golden_gate.evaluation import preflight

            try:  # one call per judge model before any item: a wrong name costs one request
                spent = await preflight.judges(judge, cache)
            except asyncio.CancelledError:
                task.uncancel()
                raise IncompleteError("interrupted before the judge's first verdict") from None
            except preflight.JudgeMisconfigured as exc:
                unusable, misconfigured, spent = str(exc), exc, exc.spent
            except preflight.JudgeUnreachable as exc:
                unusable, spent = str(exc), exc.spent
        async with AssistantClient(target) as client:
            asked = [] if unusable is not None else items
            try:
                if asked:
                    await client.preflight(items[0])  # before any judge call: as the judge's
            except asyncio.CancelledError:
                task.uncancel()
                raise IncompleteError("interrupted before the assistant's first answer") from None
            except AssistantUnusable as exc:
                # Every request would fail the same way: none is made, no judge is paid, and
                # the report (incomplete, every item not asked) says why, as every run's does.
                asked, unusable = [], str(exc)
                if exc.exit_code == EXIT_BAD_INPUT:  # the answer-path, not the assistant
                    misconfigured = InputError(str(exc))
            report = await evaluate(
                asked,
                client=client,
                judge=judge,
                cache=cache,
                settings=settings.evaluation,
                checks=settings.checks,
                dataset=dataset,
                assistant=assistant,
                progress=progress if asked else None,
                retrieval_k=settings.gate.retrieval_k,
                spent=spent,
            )
            if unusable is not None:
                report.complete = False
                report.incomplete_reason = unusable
                report.not_asked = [i.id for i in items]
            elif (mistake := client.path_mistake()) is not None:
                # Not a verdict on the assistant: every answer "failed" the same setting.
                report.complete = False
                report.incomplete_reason = mistake
                misconfigured = InputError(mistake)
            return report, misconfigured
    finally:
        for signum, handler in before.items():
            loop.remove_signal_handler(signum)
            if handler is not None:
                signal.signal(signum, handler)
        if judge is not None:
            await judge.aclose()  # its HTTP client belongs to this event loop


def _with_url(assistant: AssistantInfo, url: str) -> AssistantInfo:
    """`assistant` at `url`, validated as a new one is (its credentials never recorded)."""
    return AssistantInfo.model_validate({**assistant.model_dump(), "url": url})


def evaluate_report(
    settings: Settings,
    *,
    items: list[golden.GoldenItem] | None = None,
    judge: Judge | Panel | None = None,
    cache: VerdictCache | None = None,
    on_report: Callable[[Report], object] | None = None,
    gating: bool = True,
) -> Report:
    """Validate everything that costs nothing, start the assistant if asked, evaluate.
    `gating`: the run is gated afterwards, so a floor it cannot reach is bad input (exit 2).

    `items`, `judge` and `cache` are made from the settings unless the caller (the Action,
    which checks them before restoring the cache and carries the cache between runs) passes
    its own. `on_report` (saving it) runs as soon as the report exists: before a compose-started
    assistant is taken down, which a second signal or `docker stop` may cut short.
    """
    if settings.target is None or (not settings.target.url and settings.compose is None):
        raise InputError("no assistant: set the assistant's URL or a compose file to start it")
    if items is None:
        items = load_items(settings)
    if gating:
        check_floor(items, settings)
    elif out_of_reach := floor_out_of_reach([i.cluster for i in items], settings.gate):
        # `eval` does not gate: the report it writes will fail any gate with this floor.
        print(f"golden-gate: warning: floor: {out_of_reach}", file=sys.stderr)
    if judge is None and not settings.deterministic_only:
        # Model judges are built on a thread while the first requests go out.
        judge = make_panel(settings.judge, settings.evaluators, background=True)
    cache = cache if cache is not None else VerdictCache(settings.cache_dir)
    fingerprint = golden.fingerprint(items)  # of the whole selection, so shards can agree
    if settings.shard is not None:
        items = golden.shard_of(items, settings.shard)
    dataset = DatasetInfo(
        path=str(settings.golden),
        fingerprint=fingerprint,
        items=len(items),
        tags=settings.tags,
        shard=str(settings.shard) if settings.shard else None,
        repaired_items=[i.id for i in items if i.surrogates_replaced] or None,
        selected=selection_digest(i.id for i in items),
    )
    assistant = AssistantInfo(url=settings.target.url, index_snapshot=settings.index_snapshot)
    if settings.compose is None:
        report, misconfigured = process.run(
            _evaluate(items, settings, judge, dataset, assistant, cache)
        )
        if on_report is not None:
            on_report(report)
    else:
        from golden_gate.evaluation.compose import Compose

        with Compose(settings.compose).running() as service:
            # An explicit URL wins; otherwise the service is reached where compose put it.
            target = settings.target
            if not settings.target.url:
                target = target.model_copy(update={"url": service.url})
            assistant = _with_url(assistant, target.url).model_copy(
                update={"image_digests": service.image_digests}
            )
            settings = settings.model_copy(update={"target": target})
            report, misconfigured = process.run(
                _evaluate(items, settings, judge, dataset, assistant, cache)
            )
            if on_report is not None:
                on_report(report)
    if misconfigured is not None:
        # Bad configuration, not an incomplete run: exit 2, with the report saved first.
        if on_report is None:
            save_report(report, settings.report_path)
        raise misconfigured
    return report


def check_inputs(settings: Settings) -> None:
    """Read now the user's files the gate reads only after the evaluation (the calibration,
    the comment template), so a bad one costs no request to the assistant or the judge.

    Both are small and read again where they are used, rather than carried to the rendering.
    """
    if settings.calibration is not None:
        read_calibration(settings.calibration)
    template = settings.comment_template
    if template is not None:
        if not template.is_file():
            raise InputError(f"{template}: comment template not found")
        from golden_gate.rendering.environment import check_template

        check_template(template)


def run(
    settings: Settings,
    failures: WriteFailures | None = None,
    *,
    history: list[TrendPoint] | None = None,
) -> Outcome:
    """Evaluate, save the report, gate against the baseline, render the comment and summary.

    With `failures`, a file that cannot be written lands there and the others are still written.
    `history`: the baseline's earlier pass rates, for the trend chart.
    """
    collected = failures if failures is not None else WriteFailures()
    check_inputs(settings)  # the small files first: a bad one is said without the baseline read
    # What the gate reads of the baseline, once: a large one is read without its runs.
    baseline = slim.load(settings.baseline) if settings.baseline is not None else None
    report = evaluate_report(
        settings,
        on_report=lambda r: collected.attempt(lambda: save_report(r, settings.report_path)),
    )
    outcome = publish(report, baseline, settings, failures=collected, history=history)
    if failures is None:
        collected.raise_if_any()
    return outcome
