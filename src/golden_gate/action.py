"""The GitHub Action: scope, baseline, evaluation, gate, report, summary, outputs, comment.

Order matters: report.json, the comment file, the summary and the outputs are written before
anything that can fail after them (posting the comment), so no result is ever lost.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from golden_gate import redaction, runner
from golden_gate.errors import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    EXIT_INCOMPLETE,
    EXIT_PASSED,
    GateError,
    InputError,
)
from golden_gate.inputs import ActionSettings, read_action_settings
from golden_gate.scope import PULL_REQUEST_EVENTS, Scope, decide, git_changed_files

if TYPE_CHECKING:
    from golden_gate.pipeline import Outcome
    from golden_gate.report import Report

# The environment variable each judge provider reads its key from.
PROVIDER_KEYS = {
    "openai": ("OPENAI_API_KEY",),
    "azure_openai": ("AZURE_OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "google_genai": ("GOOGLE_API_KEY",),
    "mistralai": ("MISTRAL_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "fireworks": ("FIREWORKS_API_KEY",),
    "together": ("TOGETHER_API_KEY",),
}
SECRET_ENV = [key for keys in PROVIDER_KEYS.values() for key in keys]


class Context:
    """The run's environment as the runner sets it for a container step."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = env
        self.event_name = env.get("GITHUB_EVENT_NAME", "")
        self.repository = env.get("GITHUB_REPOSITORY", "")
        self.api_url = env.get("GITHUB_API_URL", "https://api.github.com")
        self.workspace = Path(env.get("GITHUB_WORKSPACE") or os.getcwd())
        self.event: dict[str, Any] = {}
        path = env.get("GITHUB_EVENT_PATH")
        if path and Path(path).is_file():
            try:
                self.event = json.loads(Path(path).read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError) as exc:
                raise InputError(f"{path}: the event payload is not JSON ({exc})") from None

    @property
    def pull_request(self) -> dict[str, Any] | None:
        pr = self.event.get("pull_request")
        return pr if isinstance(pr, dict) else None

    @property
    def pr_number(self) -> int | None:
        pr = self.pull_request
        return int(pr["number"]) if pr and "number" in pr else None

    @property
    def base_ref(self) -> str | None:
        pr = self.pull_request
        return pr.get("base", {}).get("ref") if pr else None

    @property
    def is_fork(self) -> bool:
        pr = self.pull_request
        if not pr:
            return False
        head = (pr.get("head") or {}).get("repo") or {}
        return bool(head.get("fork")) or head.get("full_name") not in (None, self.repository)


def judge_key_available(model: str, env: Mapping[str, str]) -> bool:
    """False when the judge needs a key that is not set (fork pull requests get no secrets)."""
    provider = model.partition(":")[0] if ":" in model else ""
    if model == "keypoints" or provider not in PROVIDER_KEYS:
        return True
    return any(env.get(key) for key in PROVIDER_KEYS[provider])


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
    from golden_gate.github import GitHub

    return GitHub(token=settings.token, repository=ctx.repository, api_url=ctx.api_url)


def find_scope(settings: ActionSettings, ctx: Context) -> Scope:
    if settings.force or ctx.event_name not in PULL_REQUEST_EVENTS or ctx.pr_number is None:
        return decide(ctx.event_name, force=settings.force, patterns=settings.paths)
    from golden_gate.github import GitHubError

    github = github_client(settings, ctx)
    if github is not None:
        try:
            listed = github.changed_files(ctx.pr_number)
            return decide(
                ctx.event_name,
                force=False,
                patterns=settings.paths,
                changed=listed.files,
                capped=listed.capped,
                source="api",
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
    return decide(ctx.event_name, force=False, patterns=settings.paths, changed=files, source="git")


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
    path.write_text(json.dumps(meta) + "\n", encoding="utf-8")


def post(settings: ActionSettings, ctx: Context, body: str) -> None:
    """Post or update the sticky comment; a failure is a warning, never a lost result."""
    from golden_gate.github import GitHubError
    from golden_gate.render import marker

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
        if scope.matched:
            # File names come from the pull request: a name may hold a newline and a command.
            runner.print_untrusted("\n".join(f"  matched: {n}" for n in scope.matched[:20]))
    return scope


def find_baseline_for(
    settings: ActionSettings, ctx: Context, *, deterministic: bool, notes: list[str]
) -> Report | None:
    from golden_gate.baseline import deterministic_view, find_baseline

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


def report_outcome(
    settings: ActionSettings,
    ctx: Context,
    report: Report,
    baseline: Report | None,
    notes: list[str],
) -> Outcome:
    """Gate, then write the comment file, the summary and the outputs: before anything else."""
    from golden_gate.pipeline import gate_and_render

    run_settings = settings.run.model_copy(update={"summary_path": None})
    outcome = gate_and_render(report, baseline, run_settings, notes=notes)
    _write_comment_metadata(settings, ctx, notes)
    runner.write_summary(outcome.summary)
    runner.set_outputs(outputs_for(outcome, settings))
    print(f"golden-gate: {outcome.gate.headline}")
    print(f"golden-gate: report: {run_settings.report_path}")
    return outcome


def exit_for(outcome: Outcome, settings: ActionSettings) -> int:
    """The step's exit code, with an annotation; fail-on-regression false makes it a warning."""
    if outcome.verdict == "incomplete":
        runner.error(
            f"the evaluation could not be completed: {outcome.report.incomplete_reason}",
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
    settings: ActionSettings,
    ctx: Context,
    report: Report,
    baseline: Report | None,
    notes: list[str],
) -> int:
    outcome = report_outcome(settings, ctx, report, baseline, notes)
    if ctx.pr_number is not None:
        post(settings, ctx, outcome.comment)
    return exit_for(outcome, settings)


def evaluate_with_cache(settings: ActionSettings, ctx: Context) -> Report:
    """Build the judge (validating its prompt first), restore verdicts, evaluate, save them."""
    from golden_gate.actions_cache import mode_from_env
    from golden_gate.cache_persistence import persisted_verdicts
    from golden_gate.judge import make_judge
    from golden_gate.pipeline import evaluate_only, load_items

    run_settings = settings.run
    items = load_items(run_settings)  # bad golden set: exit 2 before any download or container
    mode = mode_from_env(ctx.env, settings.cache_mode)
    if settings.cache_mode.strip().lower() == "actions" and mode != "actions":
        runner.warning(
            "cache is 'actions' but the runner exposes no cache service; using the directory only",
            title="golden-gate cache",
        )
    judge = None if run_settings.deterministic_only else make_judge(run_settings.judge)
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
    ) as persisted:
        # No log group around this: compose prints its own groups, and groups cannot nest.
        report = evaluate_only(run_settings, items=items, judge=judge, cache=persisted.cache)
    runner.set_outputs(
        {
            "cache-misses": str(report.stats.cache_misses if report.stats else 0),
            "cache-restored-key": persisted.restored_key or "",
        }
    )
    return report


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
    if run_settings.shard is not None:
        # A matrix job: evaluate this shard; the merge job gates and comments once.
        report = evaluate_with_cache(settings, ctx)
        complete = report.complete
        runner.write_summary(
            f"golden-gate shard {run_settings.shard}: {len(report.results)} items evaluated"
            + ("" if complete else f"; incomplete: {report.incomplete_reason}")
            + f". Report: `{run_settings.report_path}`.\n"
        )
        runner.set_outputs(
            {
                "ran": "true",
                "verdict": "evaluated" if complete else "incomplete",
                "items": str(len(report.counted)),
                "report-path": workspace_relative(run_settings.report_path, settings),
            }
        )
        return EXIT_PASSED if complete else EXIT_INCOMPLETE

    baseline = find_baseline_for(
        settings, ctx, deterministic=run_settings.deterministic_only, notes=notes
    )
    report = evaluate_with_cache(settings, ctx)
    return finish(settings, ctx, report, baseline, notes)


def calibrate_mode(settings: ActionSettings, ctx: Context) -> int:
    """Measure the judge against human labels; the verdict cache applies as for a gate run."""
    from golden_gate.actions_cache import mode_from_env
    from golden_gate.cache_persistence import persisted_verdicts
    from golden_gate.calibrate import (
        calibration_exit_code,
        calibration_line,
        render_calibration,
        run_calibration,
    )
    from golden_gate.judge import make_judge

    assert settings.labels is not None
    run_settings = settings.run
    if not judge_key_available(run_settings.judge.model, ctx.env):
        raise InputError(
            f"no key for the judge '{run_settings.judge.model}': calibration needs the judge"
        )
    judge = make_judge(run_settings.judge)  # validates the prompt before anything is restored
    with (
        persisted_verdicts(
            run_settings.cache_dir,
            mode=mode_from_env(ctx.env, settings.cache_mode),
            env=ctx.env,
            identity=judge.identity(),
            attempt=ctx.env.get("GITHUB_RUN_ATTEMPT", "1") + "-calibrate",
            cap_bytes=settings.cache_max_mb * 1024 * 1024,
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
    runner.write_summary(render_calibration(report))
    line = calibration_line(report)
    kappa = report.kappa.value
    runner.set_outputs(
        {
            "verdict": report.verdict,
            "kappa": "" if kappa is None else f"{kappa:.4f}",
            "calibration-path": str(settings.calibration_path),
            "judge-calls": str(report.cache_misses),
            "cache-hits": str(report.cache_hits),
        }
    )
    print(f"golden-gate: {line}")
    code = calibration_exit_code(report)
    if code:
        runner.error(line, title="golden-gate calibration")
    return code


def run_url(ctx: Context) -> str | None:
    server = ctx.env.get("GITHUB_SERVER_URL", "https://github.com")
    run_id = ctx.env.get("GITHUB_RUN_ID")
    return f"{server}/{ctx.repository}/actions/runs/{run_id}" if run_id and ctx.repository else None


def baseline_mode(settings: ActionSettings, ctx: Context) -> int:
    """Evaluate, write the new baseline, and with open-pr propose it as a reviewed change."""
    from golden_gate.baseline import find_baseline
    from golden_gate.files import write_atomic
    from golden_gate.github import GitHubError
    from golden_gate.promote import flips, pull_request_body
    from golden_gate.report import report_json

    if not settings.baseline:
        raise InputError("input 'baseline' is required for mode baseline: where the baseline goes")
    github = github_client(settings, ctx)
    if settings.open_pr and github is None:
        raise InputError("input 'github-token' is required for mode baseline with open-pr")
    base = settings.baseline_ref or (github.default_branch() if github is not None else None)
    with runner.group("Current baseline"):
        current = find_baseline(settings.baseline, ref=base, github=github, workspace=ctx.workspace)
        print(f"golden-gate: current baseline: {current.source}")
    report = evaluate_with_cache(settings, ctx)
    if not report.complete:
        runner.error(
            f"the evaluation could not be completed, so it is not promoted: "
            f"{report.incomplete_reason}",
            title="golden-gate baseline",
        )
        runner.set_outputs({"verdict": "incomplete", "ran": "true"})
        return EXIT_INCOMPLETE
    text = report_json(report)
    write_atomic(ctx.workspace / settings.baseline, text)
    change = flips(report, current.report)
    body = pull_request_body(report, current.report, path=settings.baseline, run_url=run_url(ctx))
    runner.write_summary(body)
    outputs = {
        "ran": "true",
        "verdict": "promoted",
        "items": str(len(report.counted)),
        "flipped": str(change.count),
        "report-path": workspace_relative(settings.run.report_path, settings),
    }
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
            runner.set_outputs(outputs)
            return EXIT_INCOMPLETE
        if result is None:
            print("golden-gate: the baseline is unchanged; no pull request")
        else:
            outputs["pr-url"] = result.url
            print(f"golden-gate: baseline pull request {result.action}: {result.url}")
    runner.set_outputs(outputs)
    return EXIT_PASSED


def drift_mode(settings: ActionSettings, ctx: Context) -> int:
    """A scheduled run: gate against the committed baseline; one issue while it fails."""
    from golden_gate.drift import baseline_history, issue_body, issue_title
    from golden_gate.github import GitHubError

    notes: list[str] = []
    baseline = find_baseline_for(settings, ctx, deterministic=False, notes=notes)
    report = evaluate_with_cache(settings, ctx)
    outcome = report_outcome(settings, ctx, report, baseline, notes)
    github = github_client(settings, ctx)
    if github is None:
        runner.warning("no token: drift issues cannot be opened or closed", title="golden-gate")
        return exit_for(outcome, settings)
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
    return exit_for(outcome, settings)


def merge_mode(settings: ActionSettings, ctx: Context) -> int:
    from golden_gate.merge import merge_reports
    from golden_gate.report import DETERMINISTIC, load_report, save_report

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
        save_report(merged, settings.run.report_path)
    notes: list[str] = []
    baseline = find_baseline_for(
        settings, ctx, deterministic=merged.tier == DETERMINISTIC, notes=notes
    )
    return finish(settings, ctx, merged, baseline, notes)


def main(argv: list[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    env = os.environ if env is None else env
    if "--post" in argv:
        # post-entrypoint: tear compose down again, in case the step was cancelled mid-run.
        from golden_gate.compose import down_from_state

        down_from_state(env)
        return EXIT_PASSED
    from golden_gate.cli import interrupt_on_sigterm

    interrupt_on_sigterm()
    try:
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
            from golden_gate.post_comment import post_comment_mode

            return post_comment_mode(settings, ctx)
        return gate_mode(settings, ctx)
    except GateError as exc:
        runner.error(str(exc), title="golden-gate")
        if exc.exit_code == EXIT_BAD_INPUT:
            runner.write_summary(f"golden-gate: bad input: {exc}\n")
        else:
            runner.write_summary(f"golden-gate could not complete: {exc}\n")
        verdict = "error" if exc.exit_code == EXIT_BAD_INPUT else "incomplete"
        runner.set_outputs({"verdict": verdict})
        return exc.exit_code
    except KeyboardInterrupt:
        runner.error("interrupted before the evaluation finished", title="golden-gate")
        runner.set_outputs({"verdict": "incomplete"})
        return EXIT_INCOMPLETE
