"""`mode: calibrate`: measure the judge against human labels, with the verdict cache carried
between runs as for a gate run.
"""

from __future__ import annotations

from golden_gate import runner
from golden_gate.action.common import judge_key_available
from golden_gate.action.context import Context
from golden_gate.action.inputs import ActionSettings
from golden_gate.action.results import judge_cache_summary
from golden_gate.action.rule_files import rule_files_at_base
from golden_gate.errors import EXIT_INCOMPLETE, InputError
from golden_gate.files import WriteFailures


def calibrate_mode(settings: ActionSettings, ctx: Context) -> int:
    """Measure the judge against human labels; the verdict cache applies as for a gate run."""
    from golden_gate.action.cache.entries import mode_from_env
    from golden_gate.action.cache.persistence import persisted_verdicts
    from golden_gate.core.calibration import calibration_exit_code
    from golden_gate.evaluation.calibrate import run_calibration
    from golden_gate.evaluation.judge import make_judge
    from golden_gate.rendering.calibration import calibration_line, render_calibration

    # On a pull request the labels, the items they label and the judge's prompts are the base
    # branch's: flipping the labels the judge gets wrong would otherwise buy a perfect kappa.
    settings, found = rule_files_at_base(settings, ctx)
    if found.pending:
        first = found.pending[0]
        raise InputError(
            f"input '{first.input}': {first.path} does not exist at {found.ref}: on a pull "
            "request calibration reads its rules at the base branch, and a pull request cannot "
            f"bring its own; land {first.path} in a pull request of its own first"
        )
    assert settings.labels is not None
    run_settings = settings.run
    if not judge_key_available(run_settings.judge.model, ctx.env, run_settings.judge.base_url):
        raise InputError(
            f"no key for the judge '{run_settings.judge.model}': calibration needs the judge"
        )
    judge = make_judge(run_settings.judge)  # validates the prompt before anything is restored
    failures = WriteFailures()
    with (
        persisted_verdicts(
            run_settings.cache_dir,
            mode=mode_from_env(ctx.env, settings.cache_mode),
            env=ctx.env,
            identity=judge.identity(),
            attempt=ctx.env.get("GITHUB_RUN_ATTEMPT", "1") + "-calibrate",
            cap_bytes=settings.cache_max_mb * 1024 * 1024,
            workspace=ctx.workspace,
        ) as persisted,
        runner.group("Calibration"),
    ):
        report = run_calibration(
            settings.labels,
            run_settings.golden,
            run_settings.judge,
            cache_dir=run_settings.cache_dir,
            min_kappa=settings.min_kappa,
            output=settings.calibration_path,
            cache=persisted.cache,
            judge=judge,
        )
        # Written before the verdicts are saved (when this block ends): see `evaluated`.
        summary = render_calibration(report) + judge_cache_summary(persisted.stats())
        failures.attempt(lambda: runner.write_summary(summary))
        line = calibration_line(report)
        kappa = report.kappa.value
        outputs = {
            "verdict": report.verdict,
            "kappa": "" if kappa is None else f"{kappa:.4f}",
            "calibration-path": str(settings.calibration_path),
            "judge-calls": str(report.cache_misses),
            "cache-hits": str(report.cache_hits),
        }
        failures.attempt(lambda: runner.set_outputs(outputs))
        print(f"golden-gate: {line}")
        code = calibration_exit_code(report)
        ctx.results_code = EXIT_INCOMPLETE if failures else code
    if code:
        runner.error(line, title="golden-gate calibration")
    failures.raise_if_any()
    return code
