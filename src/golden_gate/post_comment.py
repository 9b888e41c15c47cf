"""`mode: post-comment`: post a fork pull request's comment from a trusted `workflow_run` job.

The artifact of a fork's run is untrusted: the fork controls that workflow. So the pull request
number is checked against the workflow run's head commit, and the comment is rendered here from
the fork run's report (every untrusted string escaped again) against the baseline read with
this job's token; the comment file is compared with it, never posted verbatim when they differ.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from golden_gate import jsontext, runner
from golden_gate.errors import EXIT_INCOMPLETE, EXIT_PASSED, InputError

if TYPE_CHECKING:
    from golden_gate.action import Context
    from golden_gate.inputs import ActionSettings


def _metadata(settings: ActionSettings) -> dict[str, Any]:
    path = settings.comment_file.with_suffix(".json")
    if not path.is_file():
        return {}
    try:
        data = jsontext.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        raise InputError(f"{path}: the comment metadata is not JSON") from None
    return data if isinstance(data, dict) else {}


def post_comment_mode(settings: ActionSettings, ctx: Context) -> int:
    from golden_gate.action import github_client
    from golden_gate.baseline import deterministic_view, find_baseline
    from golden_gate.github import GitHubError
    from golden_gate.pipeline import gate_and_render
    from golden_gate.render import marker
    from golden_gate.report import DETERMINISTIC, load_report

    meta = _metadata(settings)
    pr_number = settings.pr_number or meta.get("pr_number")
    if not isinstance(pr_number, int) or pr_number <= 0:
        raise InputError(
            "input 'pr-number' is required for mode post-comment (or the comment file's "
            f"metadata {settings.comment_file.with_suffix('.json')})"
        )
    report_path = settings.run.report_path
    if not report_path.is_file():
        raise InputError(
            f"{report_path}: mode post-comment renders the comment from the pull request run's "
            "report; download that run's artifact so 'report-path' points at its report.json"
        )
    github = github_client(settings, ctx)
    if github is None:
        raise InputError("input 'github-token' is required for mode post-comment")

    try:
        pull = github.pull_request(pr_number)
    except GitHubError as exc:
        raise InputError(f"pull request #{pr_number} cannot be read ({exc})") from None
    run = ctx.event.get("workflow_run")
    run = run if isinstance(run, dict) else {}
    expected = run.get("head_sha") or meta.get("head_sha")
    if expected and pull.head_sha != expected:
        raise InputError(
            f"pull request #{pr_number} is at {pull.head_sha[:12]}, not at the workflow run's "
            f"head {str(expected)[:12]}: refusing to post another pull request's comment"
        )

    report = load_report(report_path)
    found = find_baseline(
        settings.baseline,
        ref=settings.baseline_ref or pull.base_ref,
        github=github,
        workspace=ctx.workspace,
    )
    baseline = found.report
    if baseline is not None and report.tier == DETERMINISTIC:
        baseline = deterministic_view(baseline)
    notes = [str(n) for n in meta.get("notes") or [] if isinstance(n, str)]
    if baseline is None and settings.baseline:
        notes.append(found.source + "; only the floor applies.")
    outcome = gate_and_render(
        report, baseline, settings.run.model_copy(update={"comment_path": None}), notes=notes
    )
    body = outcome.comment
    if settings.comment_file.is_file():
        posted = settings.comment_file.read_text(encoding="utf-8")
        if posted != body:
            runner.warning(
                f"{settings.comment_file} differs from the comment rendered from the report; "
                "posting the rendered one",
                title="golden-gate",
            )
    try:
        result = github.upsert_comment(pr_number, body, marker(settings.comment_id))
    except GitHubError as exc:
        runner.error(f"could not post the comment on #{pr_number} ({exc})", title="golden-gate")
        return EXIT_INCOMPLETE
    runner.set_outputs({"comment-url": result.url, "verdict": outcome.verdict, "ran": "true"})
    print(f"golden-gate: comment {result.action} on #{pr_number}: {result.url}")
    return EXIT_PASSED
