"""`mode: merge`: merge the shard reports of a matrix, then gate and comment once."""

from __future__ import annotations

from golden_gate import runner
from golden_gate.action.common import baseline_and_trend, in_scope, skip
from golden_gate.action.context import Context
from golden_gate.action.inputs import ActionSettings
from golden_gate.action.results import baseline_unavailable, finish, report_outcome
from golden_gate.action.rule_files import decide_pending, rule_files_at_base, without_pending
from golden_gate.errors import InputError
from golden_gate.files import WriteFailures


def merge_mode(settings: ActionSettings, ctx: Context) -> int:
    from golden_gate.core.merge import merge_reports
    from golden_gate.core.report import DETERMINISTIC, load_report, save_report
    from golden_gate.pipeline import check_inputs

    scope = in_scope(settings, ctx)
    if not scope.run:
        return skip(scope)
    settings, rule_files = rule_files_at_base(settings, ctx)  # the base's, on a pull request
    check_inputs(settings.run)  # before the shards are read
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
        baseline, history = baseline_and_trend(
            settings, ctx, deterministic=merged.tier == DETERMINISTIC, notes=notes
        )
    except BaselineUnavailable as exc:
        settings = without_pending(settings, rule_files)
        return baseline_unavailable(settings, ctx, exc, notes, report=merged)
    settings, _ = decide_pending(settings, rule_files, base_gates=baseline is not None)
    failures = WriteFailures()
    failures.attempt(lambda: save_report(merged, settings.run.report_path))
    outcome, code = report_outcome(
        settings, ctx, merged, baseline, notes, failures, history=history
    )
    return finish(settings, ctx, outcome, code, failures)
