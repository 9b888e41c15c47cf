"""The GitHub Action: read the inputs, mask the secrets, and run the mode they name.

Each mode is a function of (settings, context) in `modes/`; this module only dispatches and
turns an error or an interrupt into the step's summary, outputs and exit code.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from golden_gate import files, process, runner
from golden_gate.action.common import mask_secrets, missing_ref_sentence, workspace_relative
from golden_gate.action.context import Context
from golden_gate.action.github.client import RefNotFound
from golden_gate.action.inputs import ActionSettings, read_action_settings
from golden_gate.action.junit_source import check_junit_source
from golden_gate.action.modes.baseline import baseline_mode
from golden_gate.action.modes.calibrate import calibrate_mode
from golden_gate.action.modes.drift import drift_mode
from golden_gate.action.modes.gate import gate_mode
from golden_gate.action.modes.merge import merge_mode
from golden_gate.action.modes.post_comment import post_comment_mode
from golden_gate.action.scope import check_patterns
from golden_gate.errors import (
    EXIT_BAD_INPUT,
    EXIT_INCOMPLETE,
    EXIT_PASSED,
    GateError,
    InputError,
    unexpected,
)

DISPATCH: dict[str, Callable[[ActionSettings, Context], int]] = {
    "gate": gate_mode,
    "merge": merge_mode,
    "calibrate": calibrate_mode,
    "baseline": baseline_mode,
    "drift": drift_mode,
    "post-comment": post_comment_mode,
}


def checked_settings(env: Mapping[str, str], ctx: Context) -> ActionSettings:
    """The inputs read and checked before any request: secrets masked, every rule file in the
    workspace, every `paths` pattern valid. A bad value is an InputError (one sentence)."""
    for key, value in env.items():
        # Bytes that are not UTF-8 arrive as lone surrogates (surrogateescape): no setting.
        if key.startswith("INPUT_") and not _utf8(value):
            raise InputError(f"input '{key[6:].lower()}' is not valid UTF-8 text")
    workspace = ctx.workspace
    settings = read_action_settings(env, workspace=workspace, ctx=ctx)
    mask_secrets(settings, env)
    for path, what in rule_files(settings):
        files.inside(path, workspace, what=what)
    if settings.junit_results is not None:
        check_junit_source(
            settings.junit_results,
            workspace=workspace,
            event_name=ctx.event_name,
            shown=workspace_relative(settings.junit_results, settings),
        )
    # Said now, not first when a pull request lists files.
    r = settings.resolved
    check_patterns(settings.paths, name=r.where("paths") if r else "input 'paths'")
    check_patterns(
        settings.ignore_paths, name=r.where("ignore-paths") if r else "input 'ignore-paths'"
    )
    return settings


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def rule_files(settings: ActionSettings) -> list[tuple[Path, str]]:
    """The files a pull request can write that the run reads as text (rules and data)."""
    run = settings.run
    found = [
        (run.golden, "golden set"),
        (run.judge.prompt_file, "judge prompt"),
        *((spec.prompt_file, "evaluator prompt") for spec in run.evaluators.evaluators),
        (run.comment_template, "comment template"),
        (run.calibration, "calibration"),
        (settings.labels, "labels file"),
    ]
    return [(path, what) for path, what in found if path is not None]


def main(argv: list[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    env = os.environ if env is None else env
    if "--post" in argv:
        # post-entrypoint: tear compose down again, in case the step was cancelled mid-run.
        from golden_gate.evaluation.compose import down_from_state

        down_from_state(env)
        return EXIT_PASSED
    process.start()
    runner.guard_output()  # no line printed from here on can be a workflow command
    ctx: Context | None = None
    try:
        runner.check_file_commands(env)
        ctx = Context(env)
        settings = checked_settings(env, ctx)
        try:
            return DISPATCH[settings.mode](settings, ctx)
        except RefNotFound as exc:
            raise InputError(missing_ref_sentence(exc, settings)) from None
    except GateError as exc:
        runner.error(str(exc), title="golden-gate")
        bad_input = exc.exit_code == EXIT_BAD_INPUT
        summary = f"golden-gate: bad input: {exc}\n" if bad_input else None
        summary = summary or f"golden-gate could not complete: {exc}\n"
        # Reporting the error must not fail on the same broken file: `best_effort`.
        runner.best_effort(lambda: runner.write_summary(summary))
        verdict = "error" if bad_input else "incomplete"
        runner.best_effort(lambda: runner.set_outputs({"verdict": verdict}))
        return exc.exit_code
    except Exception as exc:  # a defect of ours: still one sentence, never "gate failed"
        runner.error(unexpected(exc, env), title="golden-gate")
        runner.best_effort(lambda: runner.set_outputs({"verdict": "incomplete"}))
        return EXIT_INCOMPLETE
    except KeyboardInterrupt:
        if ctx is not None and ctx.results_code is not None:
            # The results are written and stand; only what came after (the cache save, the
            # comment post) was cut short.
            runner.warning(
                "interrupted after the results were written; the judge cache or the comment "
                "may not be saved",
                title="golden-gate",
            )
            return ctx.results_code
        runner.error("interrupted before the evaluation finished", title="golden-gate")
        runner.best_effort(lambda: runner.set_outputs({"verdict": "incomplete"}))
        return EXIT_INCOMPLETE
