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
    from golden_gate.action.github.pulls import PullRequestInfo
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


# The second line of every comment this mode writes: a comment without it was written by a
# trusted run (escaping keeps an answer from writing `<!--` anywhere in a comment).
CLAIM_LINE = "<!-- golden-gate:unverified fork report -->"


def _as_claim_body(body: str, marker: str) -> str:
    head, _, rest = body.partition("\n")
    if head != marker:
        head, rest = marker, body
    return f"{head}\n{CLAIM_LINE}\n{rest}"


def is_claim(body: str) -> bool:
    """Whether a sticky comment is a fork's claim this mode posted (else a trusted verdict)."""
    lines = body.split("\n", 2)
    return len(lines) > 1 and lines[1].strip() == CLAIM_LINE


def _full_name(repo: object) -> str | None:
    name = repo.get("full_name") if isinstance(repo, dict) else None
    return name if isinstance(name, str) and name else None


def _check_same_head(
    pull: PullRequestInfo, run: dict[str, Any], meta: dict[str, Any], repository: str | None
) -> None:
    """The pull request is a fork's, and its head is the run's: the same commit, branch and
    repository (a fork's run at a victim's head commit names the victim's PR in vain)."""
    number = pull.number
    expected = {
        "head commit": (pull.head_sha, run.get("head_sha") or meta.get("head_sha")),
        "head branch": (pull.head_ref, run.get("head_branch")),
        "head repository": (pull.head_repo, _full_name(run.get("head_repository"))),
    }
    for what, (actual, wanted) in expected.items():
        if wanted and actual != wanted:
            raise InputError(
                f"pull request #{number}'s {what} is {str(actual)[:60]}, not the workflow "
                f"run's {str(wanted)[:60]}: refusing to post another pull request's comment"
            )
    if pull.head_repo is not None and pull.head_repo == repository:
        raise InputError(
            f"pull request #{number} is not from a fork: its own run comments; refusing to "
            "post a fork's report on it"
        )


def post_comment_mode(settings: ActionSettings, ctx: Context) -> int:
    from golden_gate.action.baseline import deterministic_view, find_baseline
    from golden_gate.action.common import github_client
    from golden_gate.action.github.client import GitHubError
    from golden_gate.core.report import DETERMINISTIC
    from golden_gate.core.report_file import load_report
    from golden_gate.publish import publish
    from golden_gate.rendering.render import legacy_marker, marker

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

    run = ctx.event.get("workflow_run")
    run = run if isinstance(run, dict) else {}
    run_repo = _full_name(run.get("head_repository"))
    if run and run_repo in (None, ctx.repository):
        # A run on a branch of this repository posted its own trusted comment: the example
        # workflow runs after every gate run, and must never replace that verdict.
        print(
            "golden-gate: the workflow run is not from a fork (its head repository is this "
            "one): its own run posted the comment; nothing to do"
        )
        runner.set_outputs({"verdict": "skipped", "ran": "false"})
        return EXIT_PASSED
    try:
        pull = github.pull_request(pr_number)
    except GitHubError as exc:
        raise InputError(f"pull request #{pr_number} cannot be read ({exc})") from None
    _check_same_head(pull, run, meta, ctx.repository)

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
        update={
            "comment_path": None,
            "comment_template": None,
            "junit_path": None,
            "html_path": None,
        }
    )
    outcome = publish(report, baseline, run_settings, notes=notes, unverified=True)
    body = outcome.comment
    print(
        f"golden-gate: the fork's run reports {outcome.verdict} (unverified); "
        f"its comment file and notes are not used"
    )
    body = _as_claim_body(body, marker(settings.comment_id))
    try:
        result = github.upsert_comment(
            pr_number,
            body,
            marker(settings.comment_id),
            legacy=legacy_marker(settings.comment_id),
            keep=lambda found: not is_claim(found),
        )
    except GitHubError as exc:
        runner.error(f"could not post the comment on #{pr_number} ({exc})", title="golden-gate")
        return EXIT_INCOMPLETE
    if result is None:
        runner.warning(
            f"pull request #{pr_number} carries a verdict from a trusted run of this "
            "repository; the fork's unverified report does not replace it",
            title="golden-gate comment not posted",
        )
        runner.set_outputs({"verdict": "unverified", "ran": "true"})
        return EXIT_PASSED
    # A fork's report is a claim: no later step may read it as a verdict.
    runner.set_outputs({"comment-url": result.url, "verdict": "unverified", "ran": "true"})
    print(f"golden-gate: comment {result.action} on #{pr_number}: {result.url}")
    return EXIT_PASSED
