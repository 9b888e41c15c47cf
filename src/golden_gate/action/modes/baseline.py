"""`mode: baseline`: evaluate main, write the new baseline, and with `open-pr` propose it as a
reviewed pull request whose body lists the items that flipped.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from golden_gate import runner
from golden_gate.action.common import github_client, run_url, workspace_relative
from golden_gate.action.context import Context
from golden_gate.action.inputs import ActionSettings
from golden_gate.action.results import judge_cache_summary, report_cache
from golden_gate.action.run import evaluated
from golden_gate.core.report import Report
from golden_gate.errors import (
    EXIT_INCOMPLETE,
    EXIT_PASSED,
    InputError,
)
from golden_gate.files import WriteFailures, write_result
from golden_gate.rendering.escape import code_span, inline
from golden_gate.rendering.render import COMMENT_LIMIT, templates_dir

BODY_LIMIT = COMMENT_LIMIT  # pull request bodies share GitHub's 65,536-character cap


class Flips(BaseModel):
    """Items whose outcome differs between the old baseline and the new one."""

    now_failing: list[str] = Field(default_factory=list)
    now_passing: list[str] = Field(default_factory=list)
    added: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.now_failing) + len(self.now_passing)


def flips(new: Report, old: Report | None) -> Flips:
    if old is None:
        return Flips(added=sorted(r.id for r in new.counted))
    before = {r.id: r.passed for r in old.counted}
    after = {r.id: r.passed for r in new.counted}
    shared = before.keys() & after.keys()
    return Flips(
        now_failing=sorted(i for i in shared if before[i] and not after[i]),
        now_passing=sorted(i for i in shared if after[i] and not before[i]),
        added=sorted(after.keys() - before.keys()),
        removed=sorted(before.keys() - after.keys()),
    )


def pull_request_body(new: Report, old: Report | None, *, path: str, run_url: str | None) -> str:
    """The promotion pull request's description, within GitHub's size limit."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        autoescape=False,  # Markdown; the data is escaped below
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    template = env.get_template("baseline_pr.md.j2")
    change = flips(new, old)
    items = new.by_id()
    questions = {i: inline(items[i].question, limit=120) for i in items}

    def body(max_rows: int) -> str:
        return template.render(
            path=code_span(path, limit=200),
            run_url=inline(run_url, limit=300) if run_url else None,
            old_rate=old.pass_rate_text() if old is not None else "n/a",
            new_rate=new.pass_rate_text(),
            judge=code_span(new.judge, limit=80),
            flips=change,
            rows={
                name: [(code_span(i), questions.get(i, "")) for i in ids[:max_rows]]
                for name, ids in (
                    ("now_failing", change.now_failing),
                    ("now_passing", change.now_passing),
                    ("added", change.added),
                    ("removed", change.removed),
                )
            },
            max_rows=max_rows,
        )

    for max_rows in (1000, 300, 100, 30, 10, 0):
        text = body(max_rows)
        if len(text) <= BODY_LIMIT:
            return text
    return text[:BODY_LIMIT]


def baseline_mode(settings: ActionSettings, ctx: Context) -> int:
    """Evaluate, write the new baseline, and with open-pr propose it as a reviewed change."""
    from golden_gate.action.baseline import find_baseline
    from golden_gate.action.github.client import GitHubError
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
