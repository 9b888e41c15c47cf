"""`mode: baseline`: evaluate main, write the new baseline, and with `open-pr` propose it as a
reviewed pull request whose body lists the items that flipped.
"""

from __future__ import annotations

from golden_gate import runner
from golden_gate.action.common import github_client, run_url, runs_on_branch, workspace_relative
from golden_gate.action.context import Context
from golden_gate.action.inputs import ActionSettings
from golden_gate.action.results import judge_cache_summary, report_cache
from golden_gate.action.run import evaluated
from golden_gate.errors import EXIT_INCOMPLETE, EXIT_PASSED, InputError
from golden_gate.files import WriteFailures, write_result


def baseline_mode(settings: ActionSettings, ctx: Context) -> int:
    """Evaluate, write the new baseline, and with open-pr propose it as a reviewed change."""
    from golden_gate.action.baseline import find_baseline
    from golden_gate.action.github.client import GitHubError
    from golden_gate.core.report_file import report_json
    from golden_gate.rendering.promote import flips, pull_request_body

    if not settings.baseline:
        raise InputError("input 'baseline' is required for mode baseline: where the baseline goes")
    github = github_client(settings, ctx)
    if settings.open_pr and github is None:
        raise InputError("input 'github-token' is required for mode baseline with open-pr")
    base = settings.baseline_ref or (github.default_branch() if github is not None else None)
    if settings.open_pr and base is not None and not runs_on_branch(ctx, base):
        # The proposed baseline is what this checkout answers: only a run of `base` itself may
        # propose `base`'s baseline (not a feature branch, not a pull request's merge commit).
        raise InputError(
            f"input 'open-pr': mode baseline proposes {base}'s baseline, and this run is for "
            f"{ctx.env.get('GITHUB_REF') or 'an unknown ref (GITHUB_REF is not set)'}: run it "
            f"on {base}"
        )
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
