"""Drift alerts: a scheduled run on the default branch that fails against the committed baseline
opens (or updates, never duplicates) one issue, closed again by the next passing run.

The issue also shows how often the baseline was rewritten and what the pass rate did across
those rewrites, so a slow slide hidden by repeated promotions is visible.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from golden_gate import runner
from golden_gate.action.common import (
    find_baseline_for,
    github_client,
    run_url,
    runs_on_branch,
)
from golden_gate.action.context import Context
from golden_gate.action.inputs import ActionSettings
from golden_gate.action.results import baseline_unavailable, report_outcome
from golden_gate.action.run import evaluated
from golden_gate.core.report_file import parse_report
from golden_gate.errors import InputError
from golden_gate.files import WriteFailures

if TYPE_CHECKING:
    from golden_gate.action.github import GitHub
    from golden_gate.rendering.drift import Rewrite


def baseline_history(
    github: GitHub,
    path: str,
    *,
    ref: str,
    limit: int = 10,
    known: Mapping[str, str] | None = None,
) -> list[Rewrite]:
    """The baseline's versions, newest first, reusing `known` texts; a version that is not
    a report says so."""
    from golden_gate.action.baseline import from_github
    from golden_gate.rendering.drift import Rewrite

    rows = []
    for version in from_github(github, path, ref=ref, limit=limit, known=known):
        try:
            text = version.text
            rate = parse_report(text, source=path).pass_rate_text() if text else "deleted"
        except InputError:
            rate = "not a report"
        rows.append(
            Rewrite(
                sha=version.sha[:12],
                date=version.date,
                message=version.message,
                pass_rate=rate,
            )
        )
    return rows


def drift_mode(settings: ActionSettings, ctx: Context) -> int:
    """A scheduled run: gate against the committed baseline; one issue while it fails."""
    from golden_gate.action.baseline import BaselineUnavailable, known_texts
    from golden_gate.action.github.client import GitHubError
    from golden_gate.pipeline import check_inputs
    from golden_gate.rendering.drift import issue_body, issue_title

    check_inputs(settings.run)  # what the issue's gate reads: bad input before any request
    if not settings.baseline:
        raise InputError("input 'baseline' is required for mode drift: what drift is from")
    notes: list[str] = []
    try:
        found = find_baseline_for(settings, ctx, deterministic=False, notes=notes)
        if found.report is None:
            # Renamed or deleted: the floor alone would pass and close the issue while the
            # items it names still fail. No baseline is "could not evaluate", never all-clear.
            raise BaselineUnavailable(
                f"mode drift compares against the baseline and there is none ({found.source}); "
                "the drift issue is left as it is"
            )
    except BaselineUnavailable as exc:
        return baseline_unavailable(settings, ctx, exc, notes)  # the issue is left as it is
    baseline = found.report
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
        if not runs_on_branch(ctx, branch):
            # The drift issue is the branch's: a run dispatched on a feature branch (or a pull
            # request's merge commit) must neither close nor rewrite it.
            runner.warning(
                f"the drift issue is left as it is: it tracks {branch}, and this run is for "
                f"{ctx.env.get('GITHUB_REF') or 'an unknown ref (GITHUB_REF is not set)'}",
                title="golden-gate",
            )
            failures.raise_if_any()
            return code
        if outcome.verdict == "failed":
            history = []
            if settings.baseline:
                known = known_texts(found.text)  # the newest version, usually
                history = baseline_history(github, settings.baseline, ref=branch, known=known)
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
