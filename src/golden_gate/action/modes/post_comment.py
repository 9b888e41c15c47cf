"""`mode: post-comment`: post a fork pull request's comment from a trusted `workflow_run` job.

The artifact of a fork's run is untrusted: the fork controls that workflow, so its report is a
claim, not a verdict. The pull request number is checked against the workflow run's head
commit; the comment is rendered here with the built-in template, from the fork's report
stripped of every free-text field outside the items (`as_claim`), against the baseline read
with this job's token, and it says at the top that it is the fork's unverified report (never
the ✅ of a verdict). The fork's comment file and notes are never posted.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from golden_gate import jsontext, runner
from golden_gate.errors import EXIT_INCOMPLETE, EXIT_PASSED, InputError

if TYPE_CHECKING:
    from golden_gate.action.context import Context
    from golden_gate.action.inputs import ActionSettings
    from golden_gate.core.report import Report


# A judge as golden-gate names one ("keypoints", "provider:model"); anything else is not shown.
_ONE_JUDGE = r"[A-Za-z0-9_.-]{1,40}(:[A-Za-z0-9_./-]{1,80})?"
JUDGE_NAME = re.compile(rf"{_ONE_JUDGE}(,{_ONE_JUDGE}){{0,8}}")  # one judge, or a panel
OFFLINE_JUDGES = ("keypoints", "deterministic")


def as_claim(report: Report, tags: list[str] | None = None) -> Report:
    """The fork's report with every fork-written text outside the items dropped (the items'
    own text is escaped when rendered): what the comment shows is numbers and item rows.

    `tags`: this repository's selection, so the gate knows which baseline items the claim
    should hold (those it leaves out count as failed runs, core/gate.py)."""
    from golden_gate.core.report import DatasetInfo

    judge = report.judge if JUDGE_NAME.fullmatch(report.judge) else "(not a judge name)"
    return report.model_copy(
        update={
            "judge": judge,
            "tool_version": None,
            "created_at": None,
            "judge_prompt_hash": None,
            "dataset": DatasetInfo(tags=tags) if tags else None,
            "assistant": None,
            "rule_changes": None,  # the fork's own account of its golden-set edits
            "warnings": None,
            "incomplete_reason": None if report.complete else "so says the fork's run",
        }
    )


def claim_notes(report: Report) -> list[str]:
    """What this trusted job says about the claim (never the fork's own notes)."""
    notes = ["Rendered by this repository's workflow from the report a fork's run uploaded."]
    if report.tier != "deterministic" and report.judge not in OFFLINE_JUDGES:
        notes.append(
            "The fork's report claims a model judge: a fork's run gets no secrets, so no model "
            "can have judged these answers there."
        )
    return notes


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
    from golden_gate.action.baseline import deterministic_view, find_baseline
    from golden_gate.action.common import github_client
    from golden_gate.action.github.client import GitHubError
    from golden_gate.core.report import DETERMINISTIC, load_report
    from golden_gate.pipeline import gate_and_render
    from golden_gate.rendering.render import marker

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

    report = as_claim(load_report(report_path), settings.run.tags)
    found = find_baseline(  # raises BaselineUnavailable (exit 3) when it cannot be read
        settings.baseline,
        ref=settings.baseline_ref or pull.base_ref,
        github=github,
        workspace=ctx.workspace,
    )
    baseline = found.report
    if baseline is not None and report.tier == DETERMINISTIC:
        baseline = deterministic_view(baseline)
    notes = claim_notes(report)
    if baseline is None and settings.baseline:
        notes.append(found.source + "; only the floor applies.")
    run_settings = settings.run.model_copy(
        update={"comment_path": None, "comment_template": None, "junit_path": None}
    )
    outcome = gate_and_render(report, baseline, run_settings, notes=notes, unverified=True)
    body = outcome.comment
    print(
        f"golden-gate: the fork's run reports {outcome.verdict} (unverified); "
        f"its comment file and notes are not used"
    )
    try:
        result = github.upsert_comment(pr_number, body, marker(settings.comment_id))
    except GitHubError as exc:
        runner.error(f"could not post the comment on #{pr_number} ({exc})", title="golden-gate")
        return EXIT_INCOMPLETE
    # A fork's report is a claim: no later step may read it as a verdict.
    runner.set_outputs({"comment-url": result.url, "verdict": "unverified", "ran": "true"})
    print(f"golden-gate: comment {result.action} on #{pr_number}: {result.url}")
    return EXIT_PASSED
