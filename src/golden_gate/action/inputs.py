"""The Action's inputs, read exactly as the runner passes them, into the CLI's settings.

The runner upper-cases an input's name and turns spaces into `_` but keeps hyphens:
`judge-model` arrives as `INPUT_JUDGE-MODEL`. Every input is validated here, before anything
starts or costs money, and a bad one is one sentence naming it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from golden_gate.action.scope import DEFAULT_PATHS
from golden_gate.core.golden import Shard
from golden_gate.core.merge import shard_report_path
from golden_gate.errors import InputError
from golden_gate.evaluation.cache_location import default_cache_dir
from golden_gate.evaluation.evaluators import EvaluatorSettings, parse_evaluators
from golden_gate.limits import DEFAULT_CONCURRENCY
from golden_gate.settings import Settings

T = TypeVar("T")
Mode = Literal["gate", "merge", "post-comment", "calibrate", "baseline", "drift"]
MODES = ("gate", "merge", "post-comment", "calibrate", "baseline", "drift")
EVALUATING = ("gate", "baseline", "drift")
TRUE = {"true", "True", "TRUE"}
FALSE = {"false", "False", "FALSE"}


def env_name(name: str) -> str:
    return "INPUT_" + name.replace(" ", "_").upper()


class Inputs:
    """Typed access to `INPUT_*` values; empty means "use the default"."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = env

    def raw(self, name: str, default: str = "") -> str:
        value = self.env.get(env_name(name), "").strip()
        return value if value else default

    def boolean(self, name: str, default: bool) -> bool:
        value = self.raw(name)
        if not value:
            return default
        if value in TRUE:
            return True
        if value in FALSE:
            return False
        raise InputError(f"input '{name}' must be true or false, got '{value}'")

    def _number(self, name: str, default: T, parse: Callable[[str], T], kind: str) -> T:
        value = self.raw(name)
        if not value:
            return default
        try:
            return parse(value)
        except ValueError:
            raise InputError(f"input '{name}' must be {kind}, got '{value}'") from None

    def number(self, name: str, default: float) -> float:
        return self._number(name, default, float, "a number")

    def integer(self, name: str, default: int | None) -> int | None:
        return self._number(name, default, int, "a whole number")

    def lines(self, name: str, default: list[str] | None = None) -> list[str]:
        value = self.raw(name)
        if not value:
            return list(default or [])
        return [line.strip() for line in value.splitlines() if line.strip()]

    def csv(self, name: str) -> list[str]:
        return [part.strip() for part in self.raw(name).split(",") if part.strip()]


class ActionSettings(BaseModel):
    """What the Action does beyond the engine's settings: scope, baseline lookup, comment."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    mode: Mode
    workspace: Path
    token: str
    paths: list[str]
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
    run: Settings


# The engine's settings, mapped back to the inputs a user sets, for error messages: by their
# place (`section.field`) where a field name is in two sections, else by the field's name.
PLACE_INPUTS = {
    "judge.concurrency": "judge-concurrency",
    "judge.timeout_s": "judge-timeout",
    "judge.max_retries": "judge-retries",
    "judge.max_tokens": "judge-max-tokens",
    "evaluation.judge_concurrency": "judge-concurrency",
    "evaluators.rule": "evaluator-rule",
    "evaluators.panel": "judge-panel",
}
FIELD_INPUTS = {
    "url": "assistant-url",
    "path": "assistant-path",
    "request_template": "request-template",
    "answer_path": "answer-path",
    "sources_path": "sources-path",
    "context_path": "context-path",
    "headers": "assistant-headers",
    "timeout_s": "timeout",
    "model": "judge-model",
    "prompt_file": "judge-prompt",
    "base_url": "judge-base-url",
    "max_tokens": "judge-max-tokens",
    "max_error_rate": "max-error-rate",
    "max_judge_calls": "max-judge-calls",
    "rerun_failures": "rerun-failures",
    "min_drop": "min-drop",
    "judge_concurrency": "judge-concurrency",
    "golden": "golden",
    "report_path": "report-path",
    "wait_timeout_s": "wait-timeout",
    "project": "compose-project",
}


def _headers(lines: list[str]) -> dict[str, str]:
    headers = {}
    for line in lines:
        name, sep, value = line.partition(":")
        if not sep or not name.strip():
            raise InputError("input 'assistant-headers' expects one 'Name: value' a line")
        headers[name.strip()] = value.strip()
    return headers


def _explain(exc: ValidationError, *, judge_follows: bool = False) -> str:
    """`judge_follows`: judge-concurrency is empty, so its value came from 'concurrency'."""
    from golden_gate.settings import first_problem

    path, message = first_problem(exc)
    field = path.rpartition(".")[2]
    name = PLACE_INPUTS.get(path) or FIELD_INPUTS.get(field, field.replace("_", "-"))
    if judge_follows and name == "judge-concurrency":
        name = "concurrency"
    return f"input '{name}': {message}"


def read_action_settings(
    env: Mapping[str, str] | None = None, *, workspace: Path
) -> ActionSettings:
    from golden_gate.core.gate import GateSettings
    from golden_gate.evaluation.checks import CheckSettings
    from golden_gate.evaluation.compose import ComposeSettings
    from golden_gate.evaluation.evaluate import EvalSettings, parse_prices
    from golden_gate.evaluation.judge import JudgeSettings
    from golden_gate.evaluation.target import TargetSettings

    env = os.environ if env is None else env
    inputs = Inputs(env)
    mode = inputs.raw("mode", "gate")
    if mode not in MODES:
        raise InputError(f"input 'mode' must be one of {', '.join(MODES)}, got '{mode}'")
    url = inputs.raw("assistant-url")
    compose_file = inputs.raw("compose-file")
    from golden_gate.action.cache.entries import MODES as CACHE_MODES

    cache_mode = inputs.raw("cache", "auto")
    if cache_mode.strip().lower() not in CACHE_MODES:
        raise InputError(
            f"input 'cache' must be one of {', '.join(CACHE_MODES)}, got '{cache_mode}'"
        )
    cache_max_mb = inputs.integer("cache-max-mb", 50) or 0
    if cache_max_mb <= 0:
        raise InputError("input 'cache-max-mb' must be a positive whole number")
    shard_text = inputs.raw("shard")
    shard = Shard.parse(shard_text) if shard_text and mode == "gate" else None
    report_path = workspace / inputs.raw("report-path", "golden-gate/report.json")
    if shard is not None:
        report_path = shard_report_path(report_path, shard)
    calibration = inputs.raw("calibration")
    if mode == "calibrate" and not inputs.raw("labels"):
        raise InputError("input 'labels' is required for mode calibrate: the human labels")
    if mode in EVALUATING and not url and not compose_file:
        raise InputError(
            "input 'assistant-url' or 'compose-file' is required: where the assistant runs, "
            "or how to start it"
        )
    on_missing_key = inputs.raw("on-missing-judge-key", "error")
    if on_missing_key not in ("error", "checks-only"):
        raise InputError(
            f"input 'on-missing-judge-key' must be error or checks-only, got '{on_missing_key}'"
        )
    judge_prompt = inputs.raw("judge-prompt")
    prices = inputs.raw("judge-prices")
    template = inputs.raw("comment-template")
    # Outside the checkout by default: a pull request must not be able to supply verdicts.
    cache_dir = workspace / inputs.raw("cache-dir") if inputs.raw("cache-dir") else None
    comment_file = workspace / inputs.raw("comment-file", "golden-gate/comment.md")
    concurrency = inputs.integer("concurrency", DEFAULT_CONCURRENCY)
    # Empty (the default): the judge keeps up with the assistant.
    judge_concurrency = inputs.integer("judge-concurrency", concurrency)
    junit_file = workspace / inputs.raw("junit-xml") if inputs.raw("junit-xml") else None
    try:
        run = Settings(
            golden=workspace / inputs.raw("golden", "evals/golden.jsonl"),
            # Empty selects every item; action.yml's default ("smoke") arrives from the runner.
            tags=inputs.csv("subset-tags"),
            target=None
            if mode not in EVALUATING
            else TargetSettings(
                url=url,
                path=inputs.raw("assistant-path", "/ask"),
                request_template=inputs.raw("request-template", '{"text": "{question}"}'),
                answer_path=inputs.raw("answer-path", "answer"),
                sources_path=inputs.raw("sources-path") or None,
                context_path=inputs.raw("context-path") or None,
                headers=_headers(inputs.lines("assistant-headers")),
                concurrency=concurrency,
                timeout_s=inputs.number("timeout", 60.0),
            ),
            judge=JudgeSettings(
                model=inputs.raw("judge-model", "keypoints"),
                prompt_file=workspace / judge_prompt if judge_prompt else None,
                base_url=inputs.raw("judge-base-url") or None,
                timeout_s=inputs.number("judge-timeout", 60.0),
                max_retries=inputs.integer("judge-retries", 6),
                max_tokens=inputs.integer("judge-max-tokens", 1024),
                concurrency=judge_concurrency,
            ),
            evaluators=EvaluatorSettings(
                evaluators=parse_evaluators(
                    inputs.raw("evaluators", "correctness"),
                    flag="input 'evaluators'",
                    root=workspace,
                ),
                rule=inputs.raw("evaluator-rule", "all"),
                panel=inputs.raw("judge-panel", "majority"),
            ),
            compose=None
            if mode not in EVALUATING or not compose_file
            else ComposeSettings(
                file=workspace / compose_file,
                project=inputs.raw(
                    "compose-project", f"golden-gate-{env.get('GITHUB_RUN_ID', 'local')}"
                ),
                service=inputs.raw("compose-service", "assistant"),
                wait_timeout_s=inputs.number("wait-timeout", 300.0),
                health_path=inputs.raw("health-path", "/health"),
                index_snapshot=inputs.raw("index-snapshot") or None,
            ),
            checks=CheckSettings(),
            evaluation=EvalSettings(
                runs=inputs.integer("runs", 1),
                rerun_failures=inputs.integer("rerun-failures", 0),
                max_error_rate=inputs.number("max-error-rate", 0.10),
                max_judge_calls=inputs.integer("max-judge-calls", None),
                judge_concurrency=judge_concurrency,
                judge_prices=parse_prices(prices, name="input 'judge-prices'") if prices else None,
            ),
            gate=GateSettings(
                floor=inputs.number("floor", 0.80),
                alpha=inputs.number("alpha", 0.05),
                min_drop=inputs.number("min-drop", 0.02),
                require_comparable=inputs.boolean("require-comparable", False),
            ),
            cache_dir=None
            if cache_mode.strip().lower() == "off"
            else cache_dir or default_cache_dir(env),
            report_path=report_path,
            shard=shard,
            comment_path=comment_file,
            junit_path=junit_file,
            comment_id=inputs.raw("comment-id", "default"),
            baseline_label=inputs.raw("baseline") or None,
            comment_template=workspace / template if template else None,
            calibration=workspace / calibration if calibration and mode != "post-comment" else None,
            on_missing_judge_key=on_missing_key,  # type: ignore[arg-type]
            progress=True,
        )
    except ValidationError as exc:
        raise InputError(_explain(exc, judge_follows=not inputs.raw("judge-concurrency"))) from None
    pr_number = inputs.integer("pr-number", None)
    return ActionSettings(
        mode=mode,  # type: ignore[arg-type]
        workspace=workspace,
        token=inputs.raw("github-token"),
        paths=inputs.lines("paths", DEFAULT_PATHS),
        force=inputs.boolean("force", False),
        baseline=inputs.raw("baseline"),
        baseline_ref=inputs.raw("baseline-ref"),
        comment=inputs.boolean("comment", True),
        comment_id=run.comment_id,
        comment_file=comment_file,
        fail_on_regression=inputs.boolean("fail-on-regression", True),
        index_snapshot=inputs.raw("index-snapshot"),
        pr_number=pr_number,
        cache_mode=cache_mode,
        cache_max_mb=cache_max_mb,
        labels=workspace / inputs.raw("labels") if inputs.raw("labels") else None,
        min_kappa=inputs.number("min-kappa", 0.6),
        open_pr=inputs.boolean("open-pr", False),
        baseline_branch=inputs.raw("baseline-branch", "golden-gate/baseline"),
        drift_label=inputs.raw("drift-label", "golden-gate-drift"),
        calibration_path=workspace / inputs.raw("calibration-path", "golden-gate/calibration.json"),
        shard_reports=inputs.lines("shard-reports", ["golden-gate/report-shard-*-of-*.json"]),
        run=run,
    )
