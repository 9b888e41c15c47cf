"""An Action run's evaluation: the items to gate (their rules read at the base branch), the
judge, and the verdict cache restored before `evaluate_report` and saved after the results.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from golden_gate import jsonl, runner
from golden_gate.action.common import github_client, rules_ref, workspace_relative
from golden_gate.action.context import Context
from golden_gate.action.inputs import ActionSettings
from golden_gate.action.scope import Scope, repo_path
from golden_gate.errors import InputError
from golden_gate.files import WriteFailures

if TYPE_CHECKING:
    from golden_gate.action.rule_files import RuleFiles
    from golden_gate.core.golden import GoldenItem
    from golden_gate.core.report import Report, RuleChanges


def items_to_gate(
    settings: ActionSettings, ctx: Context, scope: Scope | None, baseline: Report | None = None
) -> tuple[list[GoldenItem], RuleChanges | None]:
    """The items to evaluate. On a pull request the rules come from the base branch: the golden
    set is read at the base ref, as the baseline is, and pairing follows the `baseline`
    report's own record (see rules.py)."""
    from golden_gate.action.baseline import read_at_ref
    from golden_gate.core import golden
    from golden_gate.core.report import RuleChanges
    from golden_gate.core.rules import dropped_items, gate_items, gate_items_by_record
    from golden_gate.pipeline import load_items

    ref = rules_ref(settings, ctx)
    head_path: Path | None = settings.run.golden
    if ref and not settings.run.golden.exists():
        # The base's rule names a golden set this checkout no longer has (the pull request
        # renamed or deleted it): the base's items come from the base ref, the pull request's
        # from the path its own golden-gate.toml proposes, if any.
        head_path = _proposed_golden(settings)
    if head_path is None:
        items = []
    else:  # bad golden set: exit 2 before any download or container
        # On a pull request a tag only the base's items carry is the base's to select.
        items = load_items(
            settings.run.model_copy(update={"golden": head_path}), every_tag_used=not ref
        )
    if not ref:
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
    head = golden.load_golden(head_path) if head_path is not None else []
    if text is None and head_path is None:
        raise InputError(f"{path}: golden set not found, neither in the checkout nor at {ref}")
    if text is not None:
        base = golden.parse_golden(jsonl.lines(text), source=where)
        selected, changes = gate_items(base, head, settings.run.tags)
        items = selected or items
    elif baseline is not None:
        # No golden set at this path at the base (a renamed file, `golden` pointed at a copy):
        # the baseline's record (id and item hash) says which items are still the base's.
        items, changes = gate_items_by_record(head, settings.run.tags, baseline)
        print(f"golden-gate: items paired by the baseline's record (id and item hash): {where}")
    else:  # first adoption: no golden set and no baseline at the base, every item is its own
        return items, RuleChanges(added=[i.id for i in items], files=files)
    if baseline is not None:
        dropped = dropped_items(items, changes, baseline, settings.run.tags)
        changes = changes.model_copy(update={"dropped": dropped})
    return items, changes.model_copy(update={"files": files})


def _proposed_golden(settings: ActionSettings) -> Path | None:
    """The golden set the pull request's own golden-gate.toml names, when it is in the
    checkout (its items are the pull request's own: evaluated beside the base's)."""
    proposed = settings.resolved.proposed.get("golden") if settings.resolved else None
    if not proposed:
        return None
    path = settings.workspace / proposed
    return path if path.is_file() else None


@contextmanager
def evaluated(
    settings: ActionSettings,
    ctx: Context,
    failures: WriteFailures,
    scope: Scope | None = None,
    baseline: Report | None = None,
    rule_files: RuleFiles | None = None,
) -> Iterator[Report]:
    """Build the judge (validating its prompt first), restore verdicts, evaluate, save the
    report and yield it; the verdicts are saved when the block ends, so the caller writes the
    results first and a cancelled or slow save cannot lose them. `baseline`: what pairing
    follows on a pull request; `rule_files`: where its rule files came from (rule_files.py)."""
    from golden_gate.action.cache.entries import choose_service, mode_from_env
    from golden_gate.action.cache.persistence import persisted_verdicts
    from golden_gate.core.report_file import save_report
    from golden_gate.core.rules import mark_origins
    from golden_gate.evaluation.evaluators import make_panel
    from golden_gate.pipeline import check_floor, check_golden, evaluate_report

    run_settings = settings.run
    if settings.junit_results is not None:
        yield _imported(settings, ctx, failures)
        return
    items, rule_changes = items_to_gate(settings, ctx, scope, baseline)
    if items:  # before the cache is restored or a judge is built
        check_golden(items, run_settings)  # the base's items too: a vacuous item never counts
        check_floor(items, run_settings)
    if rule_changes is not None and rule_files is not None:
        rule_changes = rule_changes.model_copy(
            update={"not_used": rule_files.not_used, "own_rule_files": rule_files.own}
        )
    proposed = settings.resolved.notes if settings.resolved is not None else []
    if rule_changes is not None and proposed:
        rule_changes = rule_changes.model_copy(update={"settings_not_used": list(proposed)})
    if rule_changes is not None and rule_changes.rule_paths:
        from golden_gate.action.owners import with_approvers

        rule_changes = with_approvers(rule_changes, settings, ctx)
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

        def save(report: Report) -> None:  # before a compose-started assistant is taken down
            if rule_changes is not None:
                mark_origins(report, rule_changes)
            if report.stats is not None:
                report.stats.judge_cache = persisted.stats()
            failures.attempt(lambda: save_report(report, run_settings.report_path))
            # Said as soon as it exists: a run stopped after this (a setting the evaluation
            # found wrong, exit 2) still points its artifact step at the report.
            where = {"report-path": workspace_relative(run_settings.report_path, settings)}
            failures.attempt(lambda: runner.set_outputs(where))

        # No log group around this: compose prints its own groups, and groups cannot nest.
        report = evaluate_report(
            run_settings, items=items, judge=judge, cache=persisted.cache, on_report=save
        )
        cache_outputs = {
            "cache-misses": str(report.stats.cache_misses if report.stats else 0),
            "cache-restored-key": persisted.restored_key or "",
        }
        failures.attempt(lambda: runner.set_outputs(cache_outputs))
        yield report


def _imported(settings: ActionSettings, ctx: Context, failures: WriteFailures) -> Report:
    """The report of a test suite's JUnit results (`junit-results`): nothing is started or
    judged; the suite's own assertions are the verdicts, gated like any report's."""
    from golden_gate.core.report_file import save_report
    from golden_gate.evaluation.junit import report_from_junit
    from golden_gate.files import inside

    path = settings.junit_results
    assert path is not None
    inside(path, ctx.workspace, what="JUnit results file")
    report = report_from_junit(path, max_error_rate=settings.run.evaluation.max_error_rate)
    runs = sum(r.runs + r.errors for r in report.results)
    print(
        f"golden-gate: imported {len(report.results)} items ({runs} runs) from "
        f"{workspace_relative(path, settings)}; no assistant started, no judge called"
    )
    failures.attempt(lambda: save_report(report, settings.run.report_path))
    return report
