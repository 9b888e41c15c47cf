"""What every mode of the Action shares to read the world: the secrets to mask, the GitHub
client, where a path is in the workspace, the scope of the change, the baseline and its trend.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from golden_gate import redaction, runner
from golden_gate.action.context import Context
from golden_gate.action.inputs import ActionSettings
from golden_gate.action.scope import (
    CONFIG_FILE,
    PULL_REQUEST_EVENTS,
    Scope,
    compose_references,
    decide,
    git_changed_files,
    repo_path,
)
from golden_gate.errors import EXIT_PASSED, GateError
from golden_gate.evaluation import providers

if TYPE_CHECKING:
    from golden_gate.action.baseline import Baseline
    from golden_gate.action.github.client import RefNotFound
    from golden_gate.core.report import Report
    from golden_gate.rendering.charts import TrendPoint


# The environment variables the supported judge providers read their keys from.
SECRET_ENV = providers.KEY_ENV
# Where their SDKs read another endpoint from: a password in such a URL is a secret too.
ENDPOINT_ENV = providers.ENDPOINT_ENV
judge_key_available = providers.key_available


def mask_secrets(settings: ActionSettings, env: Mapping[str, str]) -> None:
    """Mask every secret in the log and register it to be scrubbed from what we write."""
    values = [settings.token, *[env.get(k, "") for k in SECRET_ENV]]
    for url in (settings.run.judge.base_url, *(env.get(name) for name in ENDPOINT_ENV)):
        values += redaction.url_credentials(url)
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


def workspace_relative(path: Path, settings: ActionSettings) -> str:
    """A path later steps can use: relative to the workspace, which they see elsewhere."""
    try:
        return str(path.relative_to(settings.workspace))
    except ValueError:
        return str(path)


def run_url(ctx: Context) -> str | None:
    server = ctx.env.get("GITHUB_SERVER_URL", "https://github.com")
    run_id = ctx.env.get("GITHUB_RUN_ID")
    return f"{server}/{ctx.repository}/actions/runs/{run_id}" if run_id and ctx.repository else None


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
    files["json-schema"] = run.checks.json_schema_file
    for check in run.checks.custom_checks:  # a custom check is code the gate runs: a rule
        files.setdefault(f"custom-checks ({check.name})", check.path)
    found = {CONFIG_FILE: "the config file"}
    for name, path in files.items():
        if path:
            where = workspace_relative(settings.workspace / path, settings)
            found[repo_path(where)] = name
    # The compose file starts the system under test: it and what it builds, mounts and reads.
    if run.compose is not None:
        compose = settings.workspace / run.compose.file
        found[repo_path(workspace_relative(compose, settings))] = "compose-file"
        for path in compose_references(compose, settings.workspace):
            found.setdefault(path, "compose-file")
    return found


def rules_ref(settings: ActionSettings, ctx: Context) -> str | None:
    """Where a pull request's rules (golden set, rule files) are read: the branch it merges
    into, as GitHub's event says, not `baseline-ref`, an input the pull request's own workflow
    sets (it could name a branch of the author's). None outside pull requests."""
    if ctx.pr_number is None:
        return None
    return ctx.base_ref or settings.baseline_ref or None


def runs_on_branch(ctx: Context, branch: str) -> bool:
    """Whether this run is for `branch` itself (GITHUB_REF is refs/heads/BRANCH): a mode that
    changes a branch's state (its drift issue, its baseline) acts only for that branch, never
    from a run dispatched on another branch or a pull request's merge commit."""
    return bool(branch) and ctx.env.get("GITHUB_REF", "") == f"refs/heads/{branch}"


def missing_ref_sentence(exc: RefNotFound, settings: ActionSettings) -> str:
    """A ref that does not exist, said with where the gate got it from: one sentence."""
    source = (
        "input 'baseline-ref'"
        if settings.baseline_ref and settings.baseline_ref == exc.ref
        else "the base branch"
    )
    return (
        f"{source}: {exc.sentence}; fix the ref (only a file missing at an existing ref means "
        "there is no baseline)"
    )


def find_scope(settings: ActionSettings, ctx: Context) -> Scope:
    # With `force` on a pull request the files are still listed: the comment must say when
    # the pull request changes the gate's own rules.
    if ctx.event_name not in PULL_REQUEST_EVENTS or ctx.pr_number is None:
        return decide(ctx.event_name, force=settings.force, patterns=settings.paths)
    own = own_inputs(settings)
    from golden_gate.action.github.client import GitHubError

    github = github_client(settings, ctx)
    if github is not None:
        try:
            listed = github.changed_files(ctx.pr_number)
            return decide(
                ctx.event_name,
                force=settings.force,
                patterns=settings.paths,
                ignore=settings.ignore_paths,
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
        ignore=settings.ignore_paths,
        changed=files,
        source="git",
        own_inputs=own,
    )


def in_scope(settings: ActionSettings, ctx: Context) -> Scope:
    with runner.group("Scope"):
        scope = find_scope(settings, ctx)
        print(f"golden-gate: {'running' if scope.run else 'skipping'}: {scope.reason}")
        if scope.triggers:
            # File names come from the pull request: a name may hold a newline and a command.
            runner.print_untrusted("\n".join(f"  matched: {n}" for n in scope.triggers[:20]))
    return scope


SKIPPED_SHOWN = 50  # files listed, each with the rule that skipped it


def skip(scope: Scope) -> int:
    from golden_gate.rendering.escape import code_span, inline

    # File names come from the pull request: code spans in Markdown, printed as untrusted.
    shown = list(scope.skipped.items())[:SKIPPED_SHOWN]
    more = len(scope.skipped) - len(shown)
    lines = [f"- {code_span(file)} ({inline(rule)})" for file, rule in shown]
    if more > 0:
        lines.append(f"- … and {more} more")
    listing = "\n\n" + "\n".join(lines) if lines else ""
    runner.write_summary(f"golden-gate skipped: {scope.reason}.{listing}\n")
    runner.set_outputs({"ran": "false", "verdict": "skipped"})
    print(f"golden-gate: skipped: {scope.reason}")
    if shown:
        runner.print_untrusted("\n".join(f"  skipped: {f} ({rule})" for f, rule in shown))
    return EXIT_PASSED


def find_baseline_for(
    settings: ActionSettings, ctx: Context, *, deterministic: bool, notes: list[str]
) -> Baseline:
    """The baseline to compare with (its report None when there is none); raises
    `BaselineUnavailable` when it could not be read (looked up before the evaluation, so no
    judge call is paid for a run that cannot gate)."""
    from golden_gate.action.baseline import deterministic_view, find_baseline

    with runner.group("Baseline"):
        ref = settings.baseline_ref or ctx.base_ref
        github = github_client(settings, ctx)
        found = find_baseline(settings.baseline, ref=ref, github=github, workspace=ctx.workspace)
        print(f"golden-gate: baseline: {found.source}")
    if found.report is None:
        if settings.baseline:
            notes.append(found.source + "; only the floor applies.")
        return found
    if not deterministic:
        return found
    return found.model_copy(update={"report": deterministic_view(found.report)})


def baseline_and_trend(
    settings: ActionSettings, ctx: Context, *, deterministic: bool, notes: list[str]
) -> tuple[Report | None, list[TrendPoint] | None]:
    """The baseline to compare with (as `find_baseline_for`) and, when there is one, its
    trend, which reuses the baseline's text rather than download that version again."""
    found = find_baseline_for(settings, ctx, deterministic=deterministic, notes=notes)
    if found.report is None:
        return None, None
    return found.report, baseline_history_for(settings, ctx, found.text)


def baseline_history_for(
    settings: ActionSettings, ctx: Context, baseline_text: str | None
) -> list[TrendPoint]:
    """The baseline's earlier pass rates for the trend chart; none (said in the log) when
    they cannot be read: a trend is never worth failing the gate for."""
    from golden_gate.action.baseline import baseline_trend, known_texts

    ref = settings.baseline_ref or ctx.base_ref
    if not settings.baseline or not ref:
        return []
    github = github_client(settings, ctx)
    try:
        points, source = baseline_trend(
            settings.baseline,
            ref=ref,
            github=github,
            workspace=ctx.workspace,
            confidence=settings.run.gate.confidence,
            known=known_texts(baseline_text) if github is not None else None,
        )
    except GateError as exc:  # e.g. no usable token: the gate itself says so elsewhere
        points, source = [], f"no trend ({exc})"
    print(f"golden-gate: trend: {source}")
    return points
