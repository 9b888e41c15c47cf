"""The GitHub Action: scope, baseline, evaluation, gate, report, summary, outputs, comment.

Order matters: report.json, the comment file, the summary and the outputs are written before
anything that can fail or be cut short after them (saving the judge cache, posting the
comment), so no result is ever lost. A file that cannot be written does not stop the others.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from golden_gate import redaction, runner
from golden_gate.action.context import Context
from golden_gate.action.inputs import ActionSettings, read_action_settings
from golden_gate.action.scope import (
    PULL_REQUEST_EVENTS,
    Scope,
    decide,
    git_changed_files,
    repo_path,
)
from golden_gate.errors import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    EXIT_INCOMPLETE,
    EXIT_PASSED,
    GateError,
    InputError,
)
from golden_gate.evaluation import providers
from golden_gate.files import WriteFailures, write_result

if TYPE_CHECKING:
    from golden_gate.core.golden import GoldenItem
    from golden_gate.core.report import JudgeCacheStats, Report, RuleChanges
    from golden_gate.pipeline import Outcome
    from golden_gate.rendering.charts import TrendPoint

# The environment variables the supported judge providers read their keys from.
SECRET_ENV = providers.KEY_ENV
judge_key_available = providers.key_available


def mask_secrets(settings: ActionSettings, env: Mapping[str, str]) -> None:
    """Mask every secret in the log and register it to be scrubbed from what we write."""
    values = [settings.token, *[env.get(k, "") for k in SECRET_ENV]]
    values += redaction.url_credentials(settings.run.judge.base_url)
    if settings.run.target is not None:
        values.extend(settings.run.target.headers.values())
        values += redaction.url_credentials(settings.run.target.url)
    too_short = 0
    for value in values:
        if value:
            runner.mask(value)
            too_short += not redaction.register(value)
    if too_short:
        runner.warning(
            f"{too_short} secret(s) shorter than {redaction.MIN_LENGTH} characters: masked in "
            "the log, but too short to scrub from report.json, the comment and the summary "
            "without mangling ordinary text",
            title="golden-gate secrets",
        )


def github_client(settings: ActionSettings, ctx: Context):
    if not settings.token or not ctx.repository:
        return None
    from golden_gate.action.github import GitHub

    return GitHub(token=settings.token, repository=ctx.repository, api_url=ctx.api_url)


def own_inputs(settings: ActionSettings) -> dict[str, str]:
    """The repo paths of the files the gate itself reads, each with its input's name."""
    run = settings.run
    files: dict[str, Path | str | None] = {
        "golden": run.golden,
        "judge-prompt": run.judge.prompt_file,
        "calibration": run.calibration,
        "comment-template": run.comment_template,
        "labels": settings.labels,
        "baseline": settings.baseline or None,
    }
    for spec in run.evaluators.evaluators:
        if spec.prompt_file is not None:  # a custom evaluator's prompt is a rule file too
            files.setdefault(f"evaluators ({spec.name})", spec.prompt_file)
    found = {}
    for name, path in files.items():
        if path:
            where = workspace_relative(settings.workspace / path, settings)
            found[repo_path(where)] = name
    return found


def find_scope(settings: ActionSettings, ctx: Context) -> Scope:
    # With `force` on a pull request the files are still listed: the comment must say when
    # the pull request changes the gate's own rules.
    if ctx.event_name not in PULL_REQUEST_EVENTS or ctx.pr_number is None:
        return decide(ctx.event_name, force=settings.force, patterns=settings.paths)
    own = own_inputs(settings)
    from golden_gate.action.github import GitHubError

    github = github_client(settings, ctx)
    if github is not None:
        try:
            listed = github.changed_files(ctx.pr_number)
            return decide(
                ctx.event_name,
                force=settings.force,
                patterns=settings.paths,
                changed=listed.files,
                capped=listed.capped,
                source="api",
                own_inputs=own,
            )
        except GitHubError as exc:
            runner.warning(f"could not list the pull request's files ({exc}); trying git diff")
    pr = ctx.pull_request or {}
    base, head = pr.get("base", {}).get("sha"), pr.get("head", {}).get("sha")
    try:
        files = git_changed_files(base, head, cwd=ctx.workspace) if base and head else None
    except (RuntimeError, OSError) as exc:
        runner.warning(f"git diff failed ({exc}); running the gate")
        files = None
    return decide(
        ctx.event_name,
        force=settings.force,
        patterns=settings.paths,
        changed=files,
        source="git",
        own_inputs=own,
    )


def skip(scope: Scope) -> int:
    runner.write_summary(f"golden-gate skipped: {scope.reason}.\n")
    runner.set_outputs({"ran": "false", "verdict": "skipped"})
    print(f"golden-gate: skipped: {scope.reason}")
    return EXIT_PASSED


def workspace_relative(path: Path, settings: ActionSettings) -> str:
    """A path later steps can use: relative to the workspace, which they see elsewhere."""
    try:
        return str(path.relative_to(settings.workspace))
    except ValueError:
        return str(path)


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
        "judge-calls": str(stats.judge_calls if stats else 0),
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


def post(settings: ActionSettings, ctx: Context, body: str) -> None:
    """Post or update the sticky comment; a failure is a warning, never a lost result."""
    from golden_gate.action.github import GitHubError
    from golden_gate.rendering.render import marker

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
        result = github.upsert_comment(pr_number, body, marker(settings.comment_id))
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
    runner.set_outputs({"comment-url": result.url})
    print(f"golden-gate: comment {result.action}: {result.url}")


def in_scope(settings: ActionSettings, ctx: Context) -> Scope:
    with runner.group("Scope"):
        scope = find_scope(settings, ctx)
        print(f"golden-gate: {'running' if scope.run else 'skipping'}: {scope.reason}")
        if scope.triggers:
            # File names come from the pull request: a name may hold a newline and a command.
            runner.print_untrusted("\n".join(f"  matched: {n}" for n in scope.triggers[:20]))
    return scope


def find_baseline_for(
    settings: ActionSettings, ctx: Context, *, deterministic: bool, notes: list[str]
) -> Report | None:
    """The baseline to compare with; raises `BaselineUnavailable` when it could not be read
    (looked up before the evaluation, so no judge call is paid for a run that cannot gate)."""
    from golden_gate.action.baseline import deterministic_view, find_baseline

    with runner.group("Baseline"):
        ref = settings.baseline_ref or ctx.base_ref
        github = github_client(settings, ctx)
        found = find_baseline(settings.baseline, ref=ref, github=github, workspace=ctx.workspace)
        print(f"golden-gate: baseline: {found.source}")
    if found.report is None:
        if settings.baseline:
            notes.append(found.source + "; only the floor applies.")
        return None
    return deterministic_view(found.report) if deterministic else found.report


def baseline_history_for(settings: ActionSettings, ctx: Context) -> list[TrendPoint]:
    """The baseline's earlier pass rates for the trend chart; none (said in the log) when
    they cannot be read: a trend is never worth failing the gate for."""
    from golden_gate.history import baseline_trend

    ref = settings.baseline_ref or ctx.base_ref
    if not settings.baseline or not ref:
        return []
    try:
        points, source = baseline_trend(
            settings.baseline,
            ref=ref,
            github=github_client(settings, ctx),
            workspace=ctx.workspace,
            confidence=settings.run.gate.confidence,
        )
    except GateError as exc:  # e.g. no usable token: the gate itself says so elsewhere
        points, source = [], f"no trend ({exc})"
    print(f"golden-gate: trend: {source}")
    return points


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
    from golden_gate.pipeline import gate_and_render

    run_settings = settings.run.model_copy(update={"summary_path": None})
    outcome = gate_and_render(
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
    from golden_gate.core.report import DETERMINISTIC, Report, save_report

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


def items_to_gate(
    settings: ActionSettings, ctx: Context, scope: Scope | None
) -> tuple[list[GoldenItem], RuleChanges | None]:
    """The items to evaluate. On a pull request the rules come from the base branch: the golden
    set is read at the base ref, as the baseline is (see rules.py)."""
    from golden_gate.action.baseline import read_at_ref
    from golden_gate.core import golden
    from golden_gate.core.report import RuleChanges
    from golden_gate.core.rules import gate_items
    from golden_gate.pipeline import load_items

    items = load_items(settings.run)  # bad golden set: exit 2 before any download or container
    ref = settings.baseline_ref or ctx.base_ref
    if ctx.pr_number is None or not ref:
        return items, None
    files = scope.own_inputs_changed if scope is not None else []
    path = repo_path(workspace_relative(settings.workspace / settings.run.golden, settings))
    with runner.group("Golden set at the base branch"):
        text, where = read_at_ref(
            path,
            ref,
            github=github_client(settings, ctx),
            workspace=ctx.workspace,
            what="golden set",
        )
        print(
            f"golden-gate: rules from {where}" if text is not None else f"golden-gate: {where}: new"
        )
    if text is None:  # the golden set is new in this pull request: every item is its own
        return items, RuleChanges(added=[i.id for i in items], files=files)
    base = golden.parse_golden(text.splitlines(), source=where)
    head = golden.load_golden(settings.run.golden)
    selected, changes = gate_items(base, head, settings.run.tags)
    return selected or items, changes.model_copy(update={"files": files})


@contextmanager
def evaluated(
    settings: ActionSettings, ctx: Context, failures: WriteFailures, scope: Scope | None = None
) -> Iterator[Report]:
    """Build the judge (validating its prompt first), restore verdicts, evaluate, save the
    report and yield it; the verdicts are saved when the block ends, so the caller writes the
    results first and a cancelled or slow save cannot lose them."""
    from golden_gate.action.cache.entries import choose_service, mode_from_env
    from golden_gate.action.cache.persistence import persisted_verdicts
    from golden_gate.core.report import save_report
    from golden_gate.core.rules import mark_origins
    from golden_gate.evaluation.evaluators import make_panel
    from golden_gate.pipeline import evaluate_report

    run_settings = settings.run
    items, rule_changes = items_to_gate(settings, ctx, scope)
    mode = mode_from_env(ctx.env, settings.cache_mode)
    if settings.cache_mode.strip().lower() == "actions" and mode != "actions":
        runner.warning(
            f"cache is 'actions' but {choose_service(ctx.env).why}; using the directory only",
            title="golden-gate cache",
        )
    judge = (
        None
        if run_settings.deterministic_only
        else make_panel(run_settings.judge, run_settings.evaluators)
    )
    attempt = ctx.env.get("GITHUB_RUN_ATTEMPT", "1")
    if run_settings.shard is not None:
        # Shards of one run save side by side: each needs its own immutable key.
        attempt += f"-shard{run_settings.shard.index}of{run_settings.shard.count}"
    with persisted_verdicts(
        run_settings.cache_dir,
        mode=mode if judge is not None else "off",
        env=ctx.env,
        identity=judge.identity() if judge is not None else "",
        attempt=attempt,
        cap_bytes=settings.cache_max_mb * 1024 * 1024,
        workspace=ctx.workspace,
    ) as persisted:
        # No log group around this: compose prints its own groups, and groups cannot nest.
        report = evaluate_report(run_settings, items=items, judge=judge, cache=persisted.cache)
        if rule_changes is not None:
            mark_origins(report, rule_changes)
        if report.stats is not None:
            report.stats.judge_cache = persisted.stats()
        failures.attempt(lambda: save_report(report, run_settings.report_path))
        cache_outputs = {
            "cache-misses": str(report.stats.cache_misses if report.stats else 0),
            "cache-restored-key": persisted.restored_key or "",
        }
        failures.attempt(lambda: runner.set_outputs(cache_outputs))
        yield report


def gate_mode(settings: ActionSettings, ctx: Context) -> int:
    scope = in_scope(settings, ctx)
    if not scope.run:
        return skip(scope)

    run_settings = settings.run
    notes: list[str] = []
    if not judge_key_available(run_settings.judge.model, ctx.env):
        run_settings = run_settings.model_copy(update={"deterministic_only": True})
        notes.append(
            f"no key for the judge '{run_settings.judge.model}' (a fork pull request gets no "
            "secrets): only the deterministic checks ran, compared with the baseline's."
        )
        runner.notice(notes[-1], title="golden-gate: deterministic tier only")
    if settings.index_snapshot:
        run_settings = run_settings.model_copy(update={"index_snapshot": settings.index_snapshot})

    settings = settings.model_copy(update={"run": run_settings})
    failures = WriteFailures()
    if run_settings.shard is not None:
        # A matrix job: evaluate this shard; the merge job gates and comments once.
        with evaluated(settings, ctx, failures, scope) as report:
            code = shard_written(settings, ctx, report, failures)
        failures.raise_if_any()
        return code

    from golden_gate.action.baseline import BaselineUnavailable

    try:
        baseline = find_baseline_for(
            settings, ctx, deterministic=run_settings.deterministic_only, notes=notes
        )
    except BaselineUnavailable as exc:
        return baseline_unavailable(settings, ctx, exc, notes)
    history = baseline_history_for(settings, ctx) if baseline is not None else None
    with evaluated(settings, ctx, failures, scope) as report:
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


def calibrate_mode(settings: ActionSettings, ctx: Context) -> int:
    """Measure the judge against human labels; the verdict cache applies as for a gate run."""
    from golden_gate.action.cache.entries import mode_from_env
    from golden_gate.action.cache.persistence import persisted_verdicts
    from golden_gate.evaluation.calibrate import (
        calibration_exit_code,
        calibration_line,
        render_calibration,
        run_calibration,
    )
    from golden_gate.evaluation.judge import make_judge

    assert settings.labels is not None
    run_settings = settings.run
    if not judge_key_available(run_settings.judge.model, ctx.env):
        raise InputError(
            f"no key for the judge '{run_settings.judge.model}': calibration needs the judge"
        )
    judge = make_judge(run_settings.judge)  # validates the prompt before anything is restored
    failures = WriteFailures()
    with (
        persisted_verdicts(
            run_settings.cache_dir,
            mode=mode_from_env(ctx.env, settings.cache_mode),
            env=ctx.env,
            identity=judge.identity(),
            attempt=ctx.env.get("GITHUB_RUN_ATTEMPT", "1") + "-calibrate",
            cap_bytes=settings.cache_max_mb * 1024 * 1024,
            workspace=ctx.workspace,
        ) as persisted,
        runner.group("Calibration"),
    ):
        report = run_calibration(
            settings.labels,
            run_settings.golden,
            run_settings.judge,
            cache_dir=run_settings.cache_dir,
            min_kappa=settings.min_kappa,
            output=settings.calibration_path,
            cache=persisted.cache,
            judge=judge,
        )
        # Written before the verdicts are saved (when this block ends): see `evaluated`.
        summary = render_calibration(report) + judge_cache_summary(persisted.stats())
        failures.attempt(lambda: runner.write_summary(summary))
        line = calibration_line(report)
        kappa = report.kappa.value
        outputs = {
            "verdict": report.verdict,
            "kappa": "" if kappa is None else f"{kappa:.4f}",
            "calibration-path": str(settings.calibration_path),
            "judge-calls": str(report.cache_misses),
            "cache-hits": str(report.cache_hits),
        }
        failures.attempt(lambda: runner.set_outputs(outputs))
        print(f"golden-gate: {line}")
        code = calibration_exit_code(report)
        ctx.results_code = EXIT_INCOMPLETE if failures else code
    if code:
        runner.error(line, title="golden-gate calibration")
    failures.raise_if_any()
    return code


def run_url(ctx: Context) -> str | None:
    server = ctx.env.get("GITHUB_SERVER_URL", "https://github.com")
    run_id = ctx.env.get("GITHUB_RUN_ID")
    return f"{server}/{ctx.repository}/actions/runs/{run_id}" if run_id and ctx.repository else None


def baseline_mode(settings: ActionSettings, ctx: Context) -> int:
    """Evaluate, write the new baseline, and with open-pr propose it as a reviewed change."""
    from golden_gate.action.baseline import find_baseline
    from golden_gate.action.github import GitHubError
    from golden_gate.action.promote import flips, pull_request_body
    from golden_gate.core.report import report_json

    if not settings.baseline:
        raise InputError("input 'baseline' is required for mode baseline: where the baseline goes")
    github = github_client(settings, ctx)
    if settings.open_pr and github is None:
        raise InputError("input 'github-token' is required for mode baseline with open-pr")
    base = settings.baseline_ref or (github.default_branch() if github is not None else None)
    with runner.group("Current baseline"):
        current = find_baseline(settings.baseline, ref=base, github=github, workspace=ctx.workspace)
        print(f"golden-gate: current baseline: {current.source}")
    failures = WriteFailures()
    with evaluated(settings, ctx, failures) as report:
        if not report.complete:
            runner.error(
                f"the evaluation could not be completed, so it is not promoted: "
                f"{report.incomplete_reason}",
                title="golden-gate baseline",
            )
            failures.attempt(lambda: runner.set_outputs({"verdict": "incomplete", "ran": "true"}))
            ctx.results_code = EXIT_INCOMPLETE
            return EXIT_INCOMPLETE
        text = report_json(report)
        target = ctx.workspace / settings.baseline
        failures.attempt(lambda: write_result(target, text, what="baseline"))
        change = flips(report, current.report)
        body = pull_request_body(
            report, current.report, path=settings.baseline, run_url=run_url(ctx)
        )
        summary = body + judge_cache_summary(report_cache(report))
        failures.attempt(lambda: runner.write_summary(summary))
        outputs = {
            "ran": "true",
            "verdict": "promoted",
            "items": str(len(report.counted)),
            "flipped": str(change.count),
            "report-path": workspace_relative(settings.run.report_path, settings),
        }
        failures.attempt(lambda: runner.set_outputs(outputs))
        ctx.results_code = EXIT_INCOMPLETE if failures else EXIT_PASSED
    failures.raise_if_any()  # a baseline not written is not proposed either
    print(f"golden-gate: new baseline written to {settings.baseline}; {change.count} flipped")
    if settings.open_pr and github is not None and base is not None:
        rate = report.pass_rate_text()
        try:
            result = github.propose_file_change(
                path=settings.baseline,
                content=text,
                branch=settings.baseline_branch,
                base=base,
                title=f"golden-gate: update the baseline to {rate}, {change.count} flipped",
                body=body,
                commit_message=f"golden-gate: update the baseline to {rate}",
            )
        except GitHubError as exc:
            runner.error(f"could not open the baseline pull request ({exc})", title="golden-gate")
            return EXIT_INCOMPLETE
        if result is None:
            print("golden-gate: the baseline is unchanged; no pull request")
        else:
            runner.set_outputs({"pr-url": result.url})
            print(f"golden-gate: baseline pull request {result.action}: {result.url}")
    return EXIT_PASSED


def drift_mode(settings: ActionSettings, ctx: Context) -> int:
    """A scheduled run: gate against the committed baseline; one issue while it fails."""
    from golden_gate.action.github import GitHubError
    from golden_gate.action.modes.drift import baseline_history, issue_body, issue_title

    notes: list[str] = []
    from golden_gate.action.baseline import BaselineUnavailable

    try:
        baseline = find_baseline_for(settings, ctx, deterministic=False, notes=notes)
    except BaselineUnavailable as exc:
        return baseline_unavailable(settings, ctx, exc, notes)  # the issue is left as it is
    failures = WriteFailures()
    with evaluated(settings, ctx, failures) as report:
        outcome, code = report_outcome(settings, ctx, report, baseline, notes, failures)
    github = github_client(settings, ctx)
    if github is None:
        runner.warning("no token: drift issues cannot be opened or closed", title="golden-gate")
        failures.raise_if_any()
        return code
    try:
        branch = settings.baseline_ref or github.default_branch()
        if outcome.verdict == "failed":
            history = []
            if settings.baseline:
                history = baseline_history(github, settings.baseline, ref=branch)
            body = issue_body(
                report,
                outcome.gate,
                baseline=baseline,
                baseline_path=settings.baseline or None,
                history=history,
                run_url=run_url(ctx),
            )
            issue = github.open_or_update_issue(
                label=settings.drift_label, title=issue_title(outcome.gate, branch), body=body
            )
            runner.set_outputs({"issue-url": issue.url})
            print(f"golden-gate: drift issue {issue.action}: {issue.url}")
        elif outcome.verdict == "passed":
            closed = github.close_issue(
                settings.drift_label,
                f"golden-gate passes again: {outcome.gate.headline}"
                + (f" ({run_url(ctx)})" if run_url(ctx) else ""),
            )
            if closed is not None:
                runner.set_outputs({"issue-url": closed.url})
                print(f"golden-gate: drift issue closed: {closed.url}")
    except GitHubError as exc:
        runner.warning(f"could not update the drift issue ({exc})", title="golden-gate")
    failures.raise_if_any()
    return code


def merge_mode(settings: ActionSettings, ctx: Context) -> int:
    from golden_gate.core.merge import merge_reports
    from golden_gate.core.report import DETERMINISTIC, load_report, save_report

    scope = in_scope(settings, ctx)
    if not scope.run:
        return skip(scope)
    paths = sorted({p for pattern in settings.shard_reports for p in ctx.workspace.glob(pattern)})
    if not paths:
        patterns = ", ".join(settings.shard_reports)
        raise InputError(f"input 'shard-reports': no shard report matches {patterns}")
    with runner.group(f"Merging {len(paths)} shard reports"):
        for path in paths:
            print(f"  {path.relative_to(ctx.workspace)}")
        merged = merge_reports([(str(p.relative_to(ctx.workspace)), load_report(p)) for p in paths])
    notes: list[str] = []
    from golden_gate.action.baseline import BaselineUnavailable

    try:
        baseline = find_baseline_for(
            settings, ctx, deterministic=merged.tier == DETERMINISTIC, notes=notes
        )
    except BaselineUnavailable as exc:
        return baseline_unavailable(settings, ctx, exc, notes, report=merged)
    failures = WriteFailures()
    failures.attempt(lambda: save_report(merged, settings.run.report_path))
    history = baseline_history_for(settings, ctx) if baseline is not None else None
    outcome, code = report_outcome(
        settings, ctx, merged, baseline, notes, failures, history=history
    )
    return finish(settings, ctx, outcome, code, failures)


def main(argv: list[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    env = os.environ if env is None else env
    if "--post" in argv:
        # post-entrypoint: tear compose down again, in case the step was cancelled mid-run.
        from golden_gate.evaluation.compose import down_from_state

        down_from_state(env)
        return EXIT_PASSED
    from golden_gate.cli import interrupt_on_sigterm

    interrupt_on_sigterm()
    ctx: Context | None = None
    try:
        runner.check_file_commands(env)
        ctx = Context(env)
        settings = read_action_settings(env, workspace=ctx.workspace)
        mask_secrets(settings, env)
        if settings.mode == "merge":
            return merge_mode(settings, ctx)
        if settings.mode == "calibrate":
            return calibrate_mode(settings, ctx)
        if settings.mode == "baseline":
            return baseline_mode(settings, ctx)
        if settings.mode == "drift":
            return drift_mode(settings, ctx)
        if settings.mode == "post-comment":
            from golden_gate.action.modes.post_comment import post_comment_mode

            return post_comment_mode(settings, ctx)
        return gate_mode(settings, ctx)
    except GateError as exc:
        runner.error(str(exc), title="golden-gate")
        bad_input = exc.exit_code == EXIT_BAD_INPUT
        summary = f"golden-gate: bad input: {exc}\n" if bad_input else None
        summary = summary or f"golden-gate could not complete: {exc}\n"
        # Reporting the error must not fail on the same broken file: `best_effort`.
        runner.best_effort(lambda: runner.write_summary(summary))
        verdict = "error" if bad_input else "incomplete"
        runner.best_effort(lambda: runner.set_outputs({"verdict": verdict}))
        return exc.exit_code
    except KeyboardInterrupt:
        if ctx is not None and ctx.results_code is not None:
            # The results are written and stand; only what came after (the cache save, the
            # comment post) was cut short.
            runner.warning(
                "interrupted after the results were written; the judge cache or the comment "
                "may not be saved",
                title="golden-gate",
            )
            return ctx.results_code
        runner.error("interrupted before the evaluation finished", title="golden-gate")
        runner.best_effort(lambda: runner.set_outputs({"verdict": "incomplete"}))
        return EXIT_INCOMPLETE
