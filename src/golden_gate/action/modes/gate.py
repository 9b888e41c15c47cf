"""`mode: gate` (the default): on a pull request, evaluate the changed assistant and gate it
against the baseline; in a matrix job, evaluate one shard for `mode: merge` to gate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from golden_gate import runner
from golden_gate.action.common import (
    baseline_and_trend,
    find_baseline_for,
    in_scope,
    skip,
    workspace_relative,
)
from golden_gate.action.context import Context
from golden_gate.action.inputs import ActionSettings
from golden_gate.action.results import (
    baseline_unavailable,
    finish,
    judge_cache_summary,
    report_cache,
    report_outcome,
)
from golden_gate.action.rule_files import decide_pending, rule_files_at_base, without_pending
from golden_gate.action.run import evaluated
from golden_gate.errors import EXIT_INCOMPLETE, EXIT_PASSED, InputError
from golden_gate.evaluation.providers import missing_key_env
from golden_gate.files import WriteFailures

if TYPE_CHECKING:
    from golden_gate.core.report import Report


def gate_mode(settings: ActionSettings, ctx: Context) -> int:
    scope = in_scope(settings, ctx)
    if not scope.run:
        return skip(scope)

    run_settings = settings.run
    notes: list[str] = []
    # Imported JUnit results were judged by the suite's own assertions: no judge, no key.
    imported = settings.junit_results is not None
    missing = (
        ()
        if imported
        else missing_key_env(run_settings.judge.model, ctx.env, run_settings.judge.base_url)
    )
    if missing:
        # Only a fork pull request (no secrets) or an explicit choice runs without the judge:
        # an expired or renamed secret must not quietly pass what the judge would fail.
        if ctx.is_fork:
            why = "a fork pull request gets no secrets"
        elif run_settings.on_missing_judge_key == "checks-only":
            why = "on-missing-judge-key is checks-only"
        else:
            raise InputError(
                f"no key for the judge '{run_settings.judge.model}': set "
                f"{' or '.join(missing)} in the step's env (e.g. from a secret), or set "
                "on-missing-judge-key: checks-only to run the deterministic checks only"
            )
        run_settings = run_settings.model_copy(update={"deterministic_only": True})
        notes.append(
            f"no key for the judge '{run_settings.judge.model}' ({why}): only the "
            "deterministic checks ran, compared with the baseline's."
        )
        runner.notice(notes[-1], title="golden-gate: deterministic tier only")
    if settings.index_snapshot:
        run_settings = run_settings.model_copy(update={"index_snapshot": settings.index_snapshot})

    settings = settings.model_copy(update={"run": run_settings})
    # On a pull request the judge prompt, rubrics, template and calibration are the base's.
    settings, rule_files = rule_files_at_base(settings, ctx)
    deterministic = run_settings.deterministic_only
    failures = WriteFailures()
    if run_settings.shard is not None:
        # A matrix job: evaluate this shard; the merge job gates and comments once. On a pull
        # request the baseline's record decides what pairs, in every shard alike.
        record = None
        if ctx.pr_number is not None:
            found = find_baseline_for(settings, ctx, deterministic=deterministic, notes=notes)
            record = found.report
        settings, rule_files = decide_pending(settings, rule_files, base_gates=record is not None)
        with evaluated(settings, ctx, failures, scope, record, rule_files) as report:
            code = shard_written(settings, ctx, report, failures)
        failures.raise_if_any()
        return code

    from golden_gate.action.baseline import BaselineUnavailable
    from golden_gate.pipeline import check_inputs

    check_inputs(settings.run)  # what the comment reads: bad input before the evaluation
    try:
        baseline, history = baseline_and_trend(
            settings, ctx, deterministic=deterministic, notes=notes
        )
    except BaselineUnavailable as exc:
        return baseline_unavailable(without_pending(settings, rule_files), ctx, exc, notes)
    settings, rule_files = decide_pending(settings, rule_files, base_gates=baseline is not None)
    with evaluated(settings, ctx, failures, scope, baseline, rule_files) as report:
        outcome, code = report_outcome(
            settings, ctx, report, baseline, notes, failures, history=history
        )
    return finish(settings, ctx, outcome, code, failures)


def shard_written(
    settings: ActionSettings, ctx: Context, report: Report, failures: WriteFailures
) -> int:
    """A shard's summary and outputs; the exit code says only whether it completed."""
    shard = settings.run.shard
    complete = report.complete
    summary = (
        f"golden-gate shard {shard}: {len(report.results)} items evaluated"
        + ("" if complete else f"; incomplete: {report.incomplete_reason}")
        + f". Report: `{settings.run.report_path}`.\n"
        + judge_cache_summary(report_cache(report))
    )
    failures.attempt(lambda: runner.write_summary(summary))
    outputs = {
        "ran": "true",
        "verdict": "evaluated" if complete else "incomplete",
        "items": str(len(report.counted)),
        "report-path": workspace_relative(settings.run.report_path, settings),
    }
    failures.attempt(lambda: runner.set_outputs(outputs))
    code = EXIT_PASSED if complete else EXIT_INCOMPLETE
    ctx.results_code = EXIT_INCOMPLETE if failures else code
    return code
