"""The Action's inputs, read exactly as the runner passes them, into the same settings the CLI
builds (`options.OPTIONS`, laid over golden-gate.toml by `action.yardstick`).

The runner upper-cases an input's name and turns spaces into `_` but keeps hyphens:
`judge-model` arrives as `INPUT_JUDGE-MODEL`. An empty input is unset: action.yml gives every
setting an empty default, so golden-gate.toml and the option's own default apply. Every input
is validated before anything starts or costs money, and a bad one is one sentence naming it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from golden_gate.action.scope import check_patterns
from golden_gate.action.yardstick import resolve_for_event
from golden_gate.core.golden import Shard
from golden_gate.core.merge import shard_report_path
from golden_gate.errors import InputError
from golden_gate.evaluation.cache_location import default_cache_dir
from golden_gate.limits import MAX_RUNS
from golden_gate.option_values import Resolved
from golden_gate.options import BY_NAME
from golden_gate.settings import Settings, build

Mode = Literal["gate", "merge", "post-comment", "calibrate", "baseline", "drift"]
MODES = BY_NAME["mode"].choices
EVALUATING = ("gate", "baseline", "drift")


class ActionSettings(BaseModel):
    """What the Action does beyond the engine's settings: scope, baseline lookup, comment."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    mode: Mode
    workspace: Path
    token: str
    paths: list[str]
    ignore_paths: list[str] = []
    force: bool
    baseline: str
    baseline_ref: str
    comment: bool
    comment_id: str
    comment_file: Path
    fail_on_regression: bool
    index_snapshot: str
    pr_number: int | None
    shard_reports: list[str]
    cache_mode: str
    cache_max_mb: int
    labels: Path | None
    min_kappa: float
    calibration_path: Path
    open_pr: bool
    baseline_branch: str
    drift_label: str
    junit_results: Path | None = None  # gate a test suite's results instead of evaluating
    resolved: Resolved | None = None  # every option with its origin, for the log
    run: Settings


def action_settings(
    resolved: Resolved, env: Mapping[str, str], *, workspace: Path
) -> ActionSettings:
    """The Action's settings from resolved options; paths are the workspace's."""
    r = resolved
    mode = r["mode"]
    if mode == "calibrate" and not r["labels"]:
        raise InputError("input 'labels' is required for mode calibrate: the human labels")
    junit = workspace / r["junit-results"] if r["junit-results"] else None
    if junit is not None and mode not in ("gate", "baseline"):
        raise InputError(f"input 'junit-results' is for modes gate and baseline, not {mode}")
    if junit is not None and r["shard"]:
        raise InputError("input 'junit-results' and 'shard' do not go together: import it whole")
    if mode in EVALUATING and junit is None and not r["assistant-url"] and not r["compose-file"]:
        raise InputError(
            "input 'assistant-url' or 'compose-file' is required: where the assistant runs, "
            "or how to start it"
        )
    cache_mode = r["cache"]
    if r["cache-max-mb"] <= 0:
        raise InputError(f"{r.where('cache-max-mb')} must be a positive whole number")
    if mode != "gate":  # only a matrix job's gate step evaluates one shard
        r.values["shard"].value = ""
    shard_text = r["shard"]
    shard = Shard.parse(shard_text, where=r.where("shard")) if shard_text else None
    report_path = workspace / r["report-path"]
    if shard is not None:
        report_path = shard_report_path(report_path, shard)
    if cache_mode == "off":
        cache_dir = None
    elif r["cache-dir"]:
        cache_dir = workspace / r["cache-dir"]
    else:  # outside the checkout: a pull request must not be able to supply verdicts
        cache_dir = default_cache_dir(env)
    run = build(
        r,
        root=workspace,
        env=env,
        evaluating=mode in EVALUATING,
        cache_dir=cache_dir,
        progress=True,
    ).model_copy(
        update={
            "report_path": report_path,
            "shard": shard,
            "baseline_label": r["baseline"] or None,
            "calibration": workspace / r["calibration"]
            if r["calibration"] and mode != "post-comment"
            else None,
        }
    )
    if mode == "baseline":
        if not 1 <= r["baseline-runs"] <= MAX_RUNS:
            raise InputError(
                f"{r.where('baseline-runs')} must be a whole number from 1 to {MAX_RUNS}"
            )
        runs = max(run.evaluation.runs, r["baseline-runs"])
        run = run.model_copy(
            update={"evaluation": run.evaluation.model_copy(update={"runs": runs})}
        )
    for refused, why in r.refusals:
        # The refused value is checked as if it were taken: a typo is said as a typo.
        name = refused.origin.split("'")[1]
        trial = Resolved(door=r.door, values={**r.values, name: refused})
        build(trial, root=workspace, env=env, evaluating=mode in EVALUATING, cache_dir=None)
        if name in ("paths", "ignore-paths"):
            check_patterns(refused.value, name=f"input '{name}'")
        raise InputError(why)
    comment_file = workspace / r["comment-file"]
    return ActionSettings(
        mode=mode,
        workspace=workspace,
        token=r["github-token"],
        paths=r["paths"],
        ignore_paths=r["ignore-paths"],
        force=r["force"],
        baseline=r["baseline"],
        baseline_ref=r["baseline-ref"],
        comment=r["comment"],
        comment_id=run.comment_id,
        comment_file=comment_file,
        fail_on_regression=r["fail-on-regression"],
        index_snapshot=r["index-snapshot"],
        pr_number=r["pr-number"],
        cache_mode=cache_mode,
        cache_max_mb=r["cache-max-mb"],
        labels=workspace / r["labels"] if r["labels"] else None,
        min_kappa=r["min-kappa"],
        open_pr=r["open-pr"],
        baseline_branch=r["baseline-branch"],
        drift_label=r["drift-label"],
        calibration_path=workspace / r["calibration-path"],
        shard_reports=r["shard-reports"],
        junit_results=junit,
        resolved=r,
        run=run,
    )


def read_action_settings(
    env: Mapping[str, str] | None = None, *, workspace: Path, ctx: Any = None
) -> ActionSettings:
    """The Action's settings for this event (`ctx`: the run's Context; None reads the rules
    from the workspace, as on a push)."""
    import os

    env = os.environ if env is None else env
    resolved = resolve_for_event(env, workspace=workspace, ctx=ctx)
    return action_settings(resolved, env, workspace=workspace)
