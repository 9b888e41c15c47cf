"""Writing a run's results, in the order that loses nothing.

report.json, the comment file, the summary and the outputs are written before anything that
can fail or be cut short after them (saving the judge cache, posting the comment), so no result
is ever lost. A file that cannot be written does not stop the others.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from golden_gate import runner
from golden_gate.action.common import github_client, workspace_relative
from golden_gate.action.context import Context
from golden_gate.action.inputs import ActionSettings
from golden_gate.errors import EXIT_FAILED, EXIT_INCOMPLETE, EXIT_PASSED, GateError
from golden_gate.files import WriteFailures, write_result

if TYPE_CHECKING:
    from golden_gate.core.report import JudgeCacheStats, Report
    from golden_gate.publish import Outcome
    from golden_gate.rendering.charts import TrendPoint


def judge_cache_summary(cache: JudgeCacheStats | None) -> str:
    """The summary's line on the judge cache: the service used or why none, and the restore."""
    if cache is None or not cache.note:
        return ""
    from golden_gate.rendering.escape import inline

    return f"\n**Judge cache:** {inline(cache.note, limit=600)}\n"


def report_cache(report: Report) -> JudgeCacheStats | None:
    return report.stats.judge_cache if report.stats is not None else None


def outputs_for(outcome: Any, settings: ActionSettings) -> dict[str, str]:
    gate, report = outcome.gate, outcome.report
    comparison = gate.comparison
    stats = report.stats
    return {
        "ran": "true",
        "verdict": outcome.verdict,
        "pass-rate": f"{gate.pass_rate:.4f}" if gate.pass_rate is not None else "",
        "lower-bound": f"{gate.lower_bound:.4f}" if gate.lower_bound is not None else "",
        "p-value": f"{comparison.p_value:.6g}" if comparison else "",
        "regressions": str(comparison.b) if comparison else "0",
        "improvements": str(comparison.c) if comparison else "0",
        "items": str(gate.n),
        "report-path": workspace_relative(settings.run.report_path, settings),
        "comment-file": workspace_relative(settings.comment_file, settings),
        "junit-xml": workspace_relative(settings.run.junit_path, settings)
        if settings.run.junit_path
        else "",
        "html-report": workspace_relative(settings.run.html_path, settings)
        if settings.run.html_path
        else "",
        "judge-calls": str(stats.judge_calls if stats else 0),
        "judge-attempts": str(stats.judge_attempts if stats else 0),
        "cache-hits": str(stats.cache_hits if stats else 0),
    }


def _write_comment_metadata(settings: ActionSettings, ctx: Context, notes: list[str]) -> None:
    """Beside the comment file: what a `workflow_run` poster needs to find the pull request."""
    pr = ctx.pull_request or {}
    meta = {
        "pr_number": ctx.pr_number,
        "head_sha": (pr.get("head") or {}).get("sha"),
        "comment_id": settings.comment_id,
        "notes": notes,
    }
    path = settings.comment_file.with_suffix(".json")
    write_result(path, json.dumps(meta) + "\n", what="comment metadata")


def report_outcome(
    settings: ActionSettings,
    ctx: Context,
    report: Report,
    baseline: Report | None,
    notes: list[str],
    failures: WriteFailures,
    *,
    history: list[TrendPoint] | None = None,
) -> tuple[Outcome, int]:
    """Gate, then write the comment file, the summary and the outputs: before anything else.

    Returns the outcome and the step's exit code, also kept in `ctx.results_code`.
    """
    from golden_gate.publish import publish

    run_settings = settings.run.model_copy(update={"summary_path": None})
    notes = [*notes, *proposed_thresholds_decide(settings, report, baseline)]
    outcome = publish(
        report, baseline, run_settings, notes=notes, failures=failures, history=history
    )
    failures.attempt(lambda: _write_comment_metadata(settings, ctx, notes))
    summary = outcome.summary + judge_cache_summary(report_cache(report))
    failures.attempt(lambda: runner.write_summary(summary))
    failures.attempt(lambda: runner.set_outputs(outputs_for(outcome, settings)))
    print(f"golden-gate: {outcome.gate.headline}")
    print(f"golden-gate: report: {run_settings.report_path}")
    code = exit_for(outcome, settings)
    ctx.results_code = EXIT_INCOMPLETE if failures else code
    return outcome, code


def proposed_thresholds_decide(
    settings: ActionSettings, report: Report, baseline: Report | None
) -> list[str]:
    """What the pull request's own golden-gate.toml thresholds would have decided, where that
    costs only a second look at the same results (not used: the base's rules decide)."""
    from golden_gate.errors import InputError
    from golden_gate.option_values import gate_settings
    from golden_gate.options import GATE_OPTIONS
    from golden_gate.publish import decide

    resolved = settings.resolved
    if resolved is None:
        return []
    proposed = {k: v for k, v in resolved.proposed.items() if k in GATE_OPTIONS}
    if not proposed:
        return []
    try:
        gate = gate_settings(resolved, proposed)
    except InputError:
        return []  # a proposed value out of range: the comment lists it, nothing to decide
    would = decide(report, baseline, gate, settings.run.calibration).run_verdict(report.complete)
    shown = ", ".join(f"{name} {value}" for name, value in proposed.items())
    said = "had no result" if would == "incomplete" else would
    return [
        f"With this pull request's own thresholds ({shown}) the gate would have "
        f"{said}; the base branch's decided."
    ]


def exit_for(outcome: Outcome, settings: ActionSettings) -> int:
    """The step's exit code, with an annotation; fail-on-regression false makes it a warning."""
    if outcome.verdict == "incomplete":
        runner.error(
            f"the evaluation could not be completed: {outcome.incomplete_reason}",
            title="golden-gate incomplete",
        )
        return outcome.exit_code
    if outcome.verdict == "failed":
        regressed = outcome.gate.comparison.regressions if outcome.gate.comparison else []
        listed = f" Regressed: {', '.join(regressed[:10])}" if regressed else ""
        more = f" and {len(regressed) - 10} more" if len(regressed) > 10 else ""
        message = outcome.gate.headline + listed + more
        if settings.fail_on_regression:
            runner.error(message, title="golden-gate failed")
            return EXIT_FAILED
        runner.warning(message + " (fail-on-regression is false)", title="golden-gate failed")
    return EXIT_PASSED


def post(settings: ActionSettings, ctx: Context, body: str) -> None:
    """Post or update the sticky comment; a failure is a warning, never a lost result."""
    from golden_gate.action.github.client import GitHubError
    from golden_gate.rendering.render import legacy_marker, marker

    pr_number = ctx.pr_number
    if pr_number is None:
        return
    if not settings.comment:
        print(f"golden-gate: comment is off; the comment is in {settings.comment_file}")
        return
    github = github_client(settings, ctx)
    if github is None:
        runner.warning(f"no token: the comment is in {settings.comment_file}")
        return
    try:
        result = github.upsert_comment(
            pr_number,
            body,
            marker(settings.comment_id),
            legacy=legacy_marker(settings.comment_id),
        )
    except GitHubError as exc:
        hint = (
            " This looks like a pull request from a fork (read-only token): post the file with "
            "a `workflow_run` workflow and `mode: post-comment`."
            if exc.status in (401, 403)
            else ""
        )
        runner.warning(
            f"could not post the comment ({exc}); it is in {settings.comment_file}.{hint}",
            title="golden-gate comment not posted",
        )
        return
    assert result is not None  # nothing is kept from this run's own comment
    runner.set_outputs({"comment-url": result.url})
    print(f"golden-gate: comment {result.action}: {result.url}")


def finish(
    settings: ActionSettings, ctx: Context, outcome: Outcome, code: int, failures: WriteFailures
) -> int:
    """After the results are written: post the comment, then name any file that was not."""
    if ctx.pr_number is not None:
        post(settings, ctx, outcome.comment)
    failures.raise_if_any()
    return code


def baseline_unavailable(
    settings: ActionSettings,
    ctx: Context,
    exc: GateError,
    notes: list[str],
    report: Report | None = None,
) -> int:
    """The baseline could not be read: not "no baseline" (the floor alone would decide), but
    an incomplete run, reported as every run is (report.json, comment, summary, outputs)."""
    from golden_gate.core.report import DETERMINISTIC, Report
    from golden_gate.core.report_file import save_report

    runner.error(str(exc), title="golden-gate baseline")
    if report is None:
        tier = DETERMINISTIC if settings.run.deterministic_only else "full"
        judge = DETERMINISTIC if settings.run.deterministic_only else settings.run.judge.model
        report = Report(judge=judge, results=[], tier=tier)
    report = report.model_copy(update={"complete": False, "incomplete_reason": str(exc)})
    failures = WriteFailures()
    failures.attempt(lambda: save_report(report, settings.run.report_path))
    outcome, code = report_outcome(settings, ctx, report, None, notes, failures)
    return finish(settings, ctx, outcome, code, failures)
