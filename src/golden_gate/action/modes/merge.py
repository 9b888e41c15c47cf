"""`mode: merge`: merge the shard reports of a matrix, then gate and comment once."""

from __future__ import annotations

import glob
from pathlib import Path

from golden_gate import runner
from golden_gate.action.common import baseline_and_trend, in_scope, skip
from golden_gate.action.context import Context
from golden_gate.action.inputs import ActionSettings
from golden_gate.action.results import baseline_unavailable, finish, report_outcome
from golden_gate.action.rule_files import decide_pending, rule_files_at_base, without_pending
from golden_gate.errors import InputError
from golden_gate.files import WriteFailures


def shard_paths(patterns: list[str], workspace: Path) -> list[Path]:
    """The files the patterns match: relative ones in the workspace, absolute ones
    (`${{ runner.temp }}/shards/*.json`) where they say; a pattern glob cannot read is bad
    input."""
    found: set[Path] = set()
    for pattern in patterns:
        try:
            if Path(pattern).is_absolute():
                matches = [Path(p) for p in glob.glob(pattern, recursive=True)]
            else:
                matches = list(workspace.glob(pattern))
        except (ValueError, NotImplementedError, OSError) as exc:
            raise InputError(
                f"input 'shard-reports': '{pattern}' is not a pattern that can be matched ({exc})"
            ) from None
        found.update(p for p in matches if p.is_file())
    return sorted(found)


def shown(path: Path, workspace: Path) -> str:
    """A shard's name: relative to the workspace when it is inside it."""
    try:
        return str(path.relative_to(workspace))
    except ValueError:
        return str(path)


def merge_mode(settings: ActionSettings, ctx: Context) -> int:
    from golden_gate.core.merge import merge_reports
    from golden_gate.core.report import DETERMINISTIC
    from golden_gate.core.report_file import load_report, save_report
    from golden_gate.pipeline import check_inputs

    scope = in_scope(settings, ctx)
    if not scope.run:
        return skip(scope)
    settings, rule_files = rule_files_at_base(settings, ctx)  # the base's, on a pull request
    check_inputs(settings.run)  # before the shards are read
    paths = shard_paths(settings.shard_reports, ctx.workspace)
    if not paths:
        patterns = ", ".join(settings.shard_reports)
        raise InputError(f"input 'shard-reports': no shard report matches {patterns}")
    names = [shown(p, ctx.workspace) for p in paths]
    with runner.group(f"Merging {len(paths)} shard reports"):
        # File names come from whoever wrote the files: one may hold a newline and a command.
        runner.print_untrusted("\n".join(f"  {name}" for name in names))
        merged = merge_reports(
            [(name, load_report(p)) for name, p in zip(names, paths, strict=True)]
        )
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
