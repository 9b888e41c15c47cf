"""The whole run, from settings to files: evaluate, save the report, gate, render.

The report is saved before the gate and rendering, so nothing after it can lose the result.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

from golden_gate.core import golden, slim
from golden_gate.core.gate import (
    GateResult,
    evaluate_gate,
    floor_out_of_reach,
    undeclared_clusters,
)
from golden_gate.core.report import (
    AssistantInfo,
    DatasetInfo,
    Report,
    save_report,
    selection_digest,
)
from golden_gate.errors import (
    EXIT_FAILED,
    EXIT_INCOMPLETE,
    EXIT_PASSED,
    IncompleteError,
    InputError,
)
from golden_gate.evaluation.cache import VerdictCache
from golden_gate.evaluation.evaluate import evaluate
from golden_gate.evaluation.evaluators import Panel, make_panel
from golden_gate.evaluation.judge import Judge
from golden_gate.evaluation.progress import Progress
from golden_gate.evaluation.target import AssistantClient, AssistantUnusable
from golden_gate.files import WriteFailures, write_result
from golden_gate.rendering.charts import TrendPoint
from golden_gate.settings import Settings

if TYPE_CHECKING:
    from golden_gate.core.calibration import CalibrationReport

Verdict = Literal["passed", "failed", "incomplete"]


class Outcome(BaseModel):
    """What a run produced; `exit_code` follows docs/architecture.md#conventions."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    verdict: Verdict
    exit_code: int
    report: Report
    gate: GateResult
    baseline: Report | slim.SlimReport | None = None
    comment: str
    summary: str

    @property
    def incomplete_reason(self) -> str | None:
        """Why there is no gate result: the evaluation, or verdicts missing where they count."""
        return self.report.incomplete_reason or self.gate.inconclusive


def load_items(settings: Settings) -> list[golden.GoldenItem]:
    items = golden.select(golden.load_golden(settings.golden), settings.tags)
    if not items:
        raise InputError(
            f"{settings.golden}: no items carry any of the tags {', '.join(settings.tags)}"
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
) -> Report:
    assert settings.target is not None and settings.target.url
    if judge is not None:
        from golden_gate.evaluation.preflight import JudgeUnreachable, judge_endpoint

        try:
            await judge_endpoint(settings.judge.base_url)  # before any question is asked
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
    async with AssistantClient(settings.target) as client:
        try:
            asked = items
            unusable = None
            try:
                if items:
                    await client.preflight(items[0])  # before any judge call: as the judge's
            except asyncio.CancelledError:
                task.uncancel()
                raise IncompleteError("interrupted before the assistant's first answer") from None
            except AssistantUnusable as exc:
                # Every request would fail the same way: none is made, no judge is paid, and
                # the report (incomplete, every item not asked) says why, as every run's does.
                asked, unusable = [], str(exc)
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
            )
            if unusable is not None:
                report.complete = False
                report.incomplete_reason = unusable
                report.not_asked = [i.id for i in items]
            return report
        finally:
            for signum, handler in before.items():
                loop.remove_signal_handler(signum)
                if handler is not None:
                    signal.signal(signum, handler)
            if judge is not None:
                await judge.aclose()  # its HTTP client belongs to this event loop


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
        report = asyncio.run(_evaluate(items, settings, judge, dataset, assistant, cache))
        if on_report is not None:
            on_report(report)
    else:
        from golden_gate.evaluation.compose import Compose

        with Compose(settings.compose).running() as service:
            # An explicit URL wins; otherwise the service is reached where compose put it.
            target = settings.target
            if not settings.target.url:
                target = target.model_copy(update={"url": service.url})
            assistant = assistant.model_copy(
                update={"url": target.url, "image_digests": service.image_digests}
            )
            settings = settings.model_copy(update={"target": target})
            report = asyncio.run(_evaluate(items, settings, judge, dataset, assistant, cache))
            if on_report is not None:
                on_report(report)
    return report


def read_calibration(path: Path) -> CalibrationReport | None:
    """The judge's calibration, or None before the first one (the comment says so); a file
    that is there but unreadable or not a calibration is bad input."""
    from golden_gate.core.calibration import load_calibration

    return load_calibration(path) if path.is_file() else None


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
        from golden_gate.rendering.render import check_template

        check_template(template)


def calibration_note(path: Path, report: Report) -> str:
    """The comment's line on how far the judge is trusted (from `golden-gate calibrate`)."""
    from golden_gate.rendering.calibration import calibration_line

    calibration = read_calibration(path)
    if calibration is None:
        return f"no judge calibration at {path}: run `golden-gate calibrate` to measure the judge"
    return calibration_line(
        calibration, judge=report.judge, judge_prompt_hash=report.judge_prompt_hash
    )


def gate_and_render(
    report: Report,
    baseline: Report | slim.SlimReport | None,
    settings: Settings,
    *,
    notes: list[str] | None = None,
    failures: WriteFailures | None = None,
    unverified: bool = False,
    history: list[TrendPoint] | None = None,
) -> Outcome:
    """Gate and render; with `failures`, a file that cannot be written does not stop the rest."""
    from golden_gate.rendering.render import render_comment, render_summary

    collected = failures if failures is not None else WriteFailures()
    # One view of each (its columns, and the rows escaped once for the comment and summary).
    view = slim.of(report)
    base = slim.of(baseline) if baseline is not None else None
    gate = evaluate_gate(view, base, settings.gate)
    if settings.calibration is not None or settings.gate.floor_basis == "human":
        from golden_gate.core import human_basis

        calibration = read_calibration(settings.calibration) if settings.calibration else None
        human_basis.apply(gate, view, calibration)
    if base is not None:
        clustered = undeclared_clusters(view, base, _pages(settings))
        if clustered:
            gate.warnings.append(clustered)
    if notes is None:
        notes = []
    if settings.calibration is not None:
        notes.append(calibration_note(settings.calibration, report))
    notes.extend(_judge_notes(report, gate))
    render_args = {
        "baseline": base,
        "comment_id": settings.comment_id,
        "extra_notes": notes,
        "baseline_path": str(settings.baseline_label) if settings.baseline_label else None,
        "unverified": unverified,
        "history": history,
    }
    # The summary (built-in template) and JUnit are written before the comment is rendered: a
    # user's comment template that fails is bad input, but it must not take those with it.
    summary = render_summary(view, gate, **render_args)
    if settings.summary_path is not None:
        summary_path = settings.summary_path
        collected.attempt(lambda: write_result(summary_path, summary, what="summary"))
    if settings.junit_path is not None:
        from golden_gate.rendering.junit import write_junit

        junit_path = settings.junit_path
        collected.attempt(
            lambda: write_junit(junit_path, report, gate, baseline=baseline, golden=settings.golden)
        )
    if settings.html_path is not None:
        from golden_gate.rendering.page import write_page

        html_path = settings.html_path
        full_base = baseline.full() if isinstance(baseline, slim.SlimReport) else baseline
        collected.attempt(lambda: write_page(html_path, report, gate, baseline=full_base))
    comment = render_comment(view, gate, user_template=settings.comment_template, **render_args)
    if settings.comment_path is not None:
        comment_path = settings.comment_path
        collected.attempt(lambda: write_result(comment_path, comment, what="comment"))
    if failures is None:
        collected.raise_if_any()
    if not report.complete or gate.inconclusive:
        verdict: Verdict = "incomplete"
        code = EXIT_INCOMPLETE
    else:
        verdict = gate.verdict
        code = EXIT_PASSED if gate.passed else EXIT_FAILED
    return Outcome(
        verdict=verdict,
        exit_code=code,
        report=report,
        gate=gate,
        baseline=baseline,
        comment=comment,
        summary=summary,
    )


def _judge_notes(report: Report, gate: GateResult) -> list[str]:
    """How the judge did on its canaries, and how many answers a person should label."""
    from golden_gate.core.review import review_lines

    notes = []
    canaries = report.canaries
    if canaries is not None and not canaries.failed:
        probes = sum(c.probes for c in canaries.checks)
        wrong = sum(c.wrong for c in canaries.checks)
        notes.append(
            f"the judge got {probes - wrong} of its {probes} canaries right (answers whose "
            "verdict is known, derived from golden items; never counted as items)"
        )
    regressed = set(gate.comparison.regressions) if gate.comparison is not None else set()
    worth = {line.id for line in review_lines(report)} | regressed
    if worth:
        notes.append(
            f"{len(worth)} answer(s) are worth a person's label (regressed, unstable, canaries "
            "the judge got wrong, judges disagreeing): `golden-gate review` writes them in the "
            "labels format calibrate reads"
        )
    return notes


def _pages(settings: Settings) -> dict[str, str]:
    """Each golden item's first reference page (none when the golden set cannot be read here:
    then nothing is said about clusters)."""
    path = settings.golden
    if path is None or not Path(path).is_file():
        return {}
    try:
        items = golden.load_golden(path)
    except InputError:
        return {}
    return {i.id: i.reference_urls[0] for i in items if i.reference_urls}


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
    outcome = gate_and_render(report, baseline, settings, failures=collected, history=history)
    if failures is None:
        collected.raise_if_any()
    return outcome
