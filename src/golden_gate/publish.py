"""The one output path: gate a report, render it, write every output asked for, and say the
exit code. `golden-gate gate`, `merge`, `report`, `run` and the Action's modes all come here.

Every output format is one entry of `FORMATS` (its setting, what a failed write says, where
the settings put it, how it is written): a new format is one entry. They are written in that
order, the report first, so nothing after it can lose the result, and the comment last: a
user's comment template that fails is bad input, but it must not take the others with it.
A file that cannot be written does not stop the rest (`WriteFailures`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from golden_gate.core import golden, slim
from golden_gate.core.comparison import undeclared_clusters
from golden_gate.core.gate import evaluate_gate
from golden_gate.core.report import Report
from golden_gate.core.report_file import save_report
from golden_gate.core.verdict import GateResult, GateSettings, RunVerdict
from golden_gate.errors import EXIT_FAILED, EXIT_INCOMPLETE, EXIT_PASSED, InputError
from golden_gate.files import WriteFailures, write_result
from golden_gate.rendering.charts import TrendPoint

if TYPE_CHECKING:
    from golden_gate.core.calibration import CalibrationReport


class OutputSettings(Protocol):
    """What publishing reads of a run's settings (`settings.Settings` has it all; a command
    that gates reports it did not evaluate gives `Destinations`, without the judge's stack)."""

    @property
    def gate(self) -> GateSettings: ...
    @property
    def golden(self) -> Path | None: ...
    @property
    def calibration(self) -> Path | None: ...
    @property
    def comment_id(self) -> str: ...
    @property
    def comment_template(self) -> Path | None: ...
    @property
    def baseline_label(self) -> str | None: ...
    @property
    def report_path(self) -> Path | None: ...
    @property
    def comment_path(self) -> Path | None: ...
    @property
    def summary_path(self) -> Path | None: ...
    @property
    def junit_path(self) -> Path | None: ...
    @property
    def html_path(self) -> Path | None: ...


@dataclass(frozen=True)
class Destinations:
    """The settings of a command that gates reports it did not evaluate (gate, merge,
    report): the gate's thresholds, and where each output goes (None: not asked for)."""

    gate: GateSettings
    comment_id: str
    golden: Path | None = None
    calibration: Path | None = None
    comment_template: Path | None = None
    baseline_label: str | None = None
    report_path: Path | None = None
    comment_path: Path | None = None
    summary_path: Path | None = None
    junit_path: Path | None = None
    html_path: Path | None = None


class Outcome:
    """What a gated run produced; `exit_code` follows docs/architecture.md#conventions. The
    comment and the summary are rendered when first asked for (a command that writes neither
    never renders them)."""

    def __init__(
        self,
        *,
        report: Report | slim.SlimReport,
        view: slim.SlimReport,
        baseline: Report | slim.SlimReport | None,
        gate: GateResult,
        settings: OutputSettings,
        render_args: dict[str, Any],
    ) -> None:
        self.report = report
        self.view = view
        self.baseline = baseline
        self.gate = gate
        self.settings = settings
        self._render_args = render_args
        self.history: list[TrendPoint] | None = render_args["history"]
        self.verdict: RunVerdict = gate.run_verdict(view.header.complete)
        self.exit_code = {
            "incomplete": EXIT_INCOMPLETE,
            "passed": EXIT_PASSED,
            "failed": EXIT_FAILED,
        }[self.verdict]

    @property
    def incomplete_reason(self) -> str | None:
        """Why there is no gate result: the evaluation, or verdicts missing where they count."""
        return self.view.header.incomplete_reason or self.gate.inconclusive

    @cached_property
    def full_report(self) -> Report:
        """The report's whole records (runs and answers): JUnit and the page show them."""
        return _full(self.report)

    @cached_property
    def full_baseline(self) -> Report | None:
        return _full(self.baseline) if self.baseline is not None else None

    @cached_property
    def summary(self) -> str:
        from golden_gate.rendering.render import render_summary

        return render_summary(self.view, self.gate, **self._render_args)

    @cached_property
    def comment(self) -> str:
        from golden_gate.rendering.render import render_comment

        return render_comment(
            self.view,
            self.gate,
            user_template=self.settings.comment_template,
            **self._render_args,
        )


def _full(report: Report | slim.SlimReport) -> Report:
    return report.full() if isinstance(report, slim.SlimReport) else report


@dataclass(frozen=True)
class OutputFormat:
    """One output: its setting, what a failed write names, where the settings put it (None:
    not asked for), and how it is written."""

    setting: str
    what: str
    path: Callable[[OutputSettings], Path | None]
    write: Callable[[Path, Outcome], None]


def _write_report(path: Path, outcome: Outcome) -> None:
    save_report(outcome.full_report, path)


def _write_summary(path: Path, outcome: Outcome) -> None:
    write_result(path, outcome.summary, what="summary")


def _write_junit(path: Path, outcome: Outcome) -> None:
    from golden_gate.rendering.junit import write_junit

    write_junit(
        path,
        outcome.full_report,
        outcome.gate,
        baseline=outcome.baseline,
        golden=outcome.settings.golden,
    )


def _write_page(path: Path, outcome: Outcome) -> None:
    from golden_gate.rendering.page import write_page

    write_page(
        path,
        outcome.full_report,
        outcome.gate,
        baseline=outcome.full_baseline,
        history=outcome.history,
    )


def _write_comment(path: Path, outcome: Outcome) -> None:
    write_result(path, outcome.comment, what="comment")


# In the order they are written: the report first, the comment last (see the module's doc).
FORMATS: tuple[OutputFormat, ...] = (
    OutputFormat("report-path", "report", lambda s: s.report_path, _write_report),
    OutputFormat("summary-file", "summary", lambda s: s.summary_path, _write_summary),
    OutputFormat("junit-xml", "JUnit XML", lambda s: s.junit_path, _write_junit),
    OutputFormat("html-report", "report page", lambda s: s.html_path, _write_page),
    OutputFormat("comment-file", "comment", lambda s: s.comment_path, _write_comment),
)


def publish(
    report: Report | slim.SlimReport,
    baseline: Report | slim.SlimReport | None,
    settings: OutputSettings,
    *,
    notes: list[str] | None = None,
    failures: WriteFailures | None = None,
    unverified: bool = False,
    history: list[TrendPoint] | None = None,
    save: bool = False,
    judge_notes: bool = True,
) -> Outcome:
    """Gate `report` against `baseline`, then write every output `settings` asks for.

    `save`: write the report too (`merge`; `run` saves it as soon as it is evaluated).
    `judge_notes`: the comment's notes on the judge (its canaries, the answers worth a
    person's label, its calibration), from a run's own records. With `failures`, a file that
    cannot be written lands there and the others are still written; without, it is raised at
    the end.
    """
    collected = failures if failures is not None else WriteFailures()
    # One view of each (its columns, and the rows escaped once for the comment and summary).
    view = slim.of(report)
    base = slim.of(baseline) if baseline is not None else None
    gate = decide(view, base, settings.gate, settings.calibration)
    if base is not None:
        clustered = undeclared_clusters(view, base, _pages(settings))
        if clustered:
            gate.warnings.append(clustered)
    notes = list(notes or [])
    if judge_notes:
        full = _full(report)
        if settings.calibration is not None:
            notes.append(calibration_note(settings.calibration, full))
        notes.extend(_judge_notes(full, gate))
    outcome = Outcome(
        report=report,
        view=view,
        baseline=baseline,
        gate=gate,
        settings=settings,
        render_args={
            "baseline": base,
            "comment_id": settings.comment_id,
            "extra_notes": notes,
            "baseline_path": str(settings.baseline_label) if settings.baseline_label else None,
            "unverified": unverified,
            "history": history,
        },
    )
    for output in FORMATS:
        path = output.path(settings)
        if path is None or (output.setting == "report-path" and not save):
            continue
        if output.setting == "comment-file":
            _ = outcome.comment  # rendered outside the write: a bad template is bad input
        collected.attempt(partial(output.write, path, outcome))
    if settings.comment_template is not None:
        _ = outcome.comment  # a user's template is checked even when no file is asked for
    if failures is None:
        collected.raise_if_any()
    return outcome


def decide(
    report: Report | slim.SlimReport,
    baseline: Report | slim.SlimReport | None,
    gate: GateSettings,
    calibration: Path | None,
) -> GateResult:
    """The gate's decision, as every output shows it (publish, `view`, the Action's note on a
    pull request's own thresholds): the calibration read here, the rest one pure call."""
    judged = read_calibration(calibration) if calibration is not None else None
    return evaluate_gate(report, baseline, gate, calibration=judged)


def read_calibration(path: Path) -> CalibrationReport | None:
    """The judge's calibration, or None before the first one (the comment says so); a file
    that is there but unreadable or not a calibration is bad input."""
    from golden_gate.core.calibration import load_calibration

    return load_calibration(path) if path.is_file() else None


def calibration_note(path: Path, report: Report) -> str:
    """The comment's line on how far the judge is trusted (from `golden-gate calibrate`)."""
    from golden_gate.rendering.calibration import calibration_line

    calibration = read_calibration(path)
    if calibration is None:
        return f"no judge calibration at {path}: run `golden-gate calibrate` to measure the judge"
    return calibration_line(
        calibration, judge=report.judge, judge_prompt_hash=report.judge_prompt_hash
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


def _pages(settings: OutputSettings) -> dict[str, str]:
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
