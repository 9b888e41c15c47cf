"""One typed settings object for a run, built by both front doors from the same options
(`options.OPTIONS`: defaults, golden-gate.toml, then flags or inputs)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, ValidationError

from golden_gate.core.golden import Shard
from golden_gate.core.verdict import GateSettings
from golden_gate.evaluation.checks import CheckSettings
from golden_gate.evaluation.compose import ComposeSettings
from golden_gate.evaluation.custom_checks import CustomCheck
from golden_gate.evaluation.eval_settings import EvalSettings
from golden_gate.evaluation.evaluators import EvaluatorSettings
from golden_gate.evaluation.judge import JudgeSettings
from golden_gate.evaluation.response import AssistantSettings
from golden_gate.limits import DEFAULT_CONCURRENCY
from golden_gate.option_values import explain, gate_settings, validated
from golden_gate.options import BY_NAME

if TYPE_CHECKING:
    from golden_gate.option_values import Resolved


class Settings(BaseModel):
    golden: Path
    golden_strict: bool = False  # a golden item's unknown fields are errors, not metadata
    tags: list[str] = Field(default_factory=list)
    shard: Shard | None = None  # evaluate only this part of the selection (a matrix job)
    target: AssistantSettings | None = None  # only evaluating needs the assistant
    compose: ComposeSettings | None = None  # start the assistant with docker compose first
    judge: JudgeSettings = Field(default_factory=JudgeSettings)
    evaluators: EvaluatorSettings = Field(default_factory=EvaluatorSettings)
    checks: CheckSettings = Field(default_factory=CheckSettings)
    evaluation: EvalSettings = Field(default_factory=EvalSettings)
    gate: GateSettings = Field(default_factory=GateSettings)
    cache_dir: Path | None = Path(".judge-cache")
    baseline: Path | None = None
    baseline_label: str | None = None  # how the comment names the baseline (a repo path)
    report_path: Path = Path(BY_NAME["report-path"].default)
    comment_path: Path | None = None
    summary_path: Path | None = None
    junit_path: Path | None = None  # JUnit XML, one test case per item
    html_path: Path | None = None  # the report page (rendering/page.py)
    comment_id: str = BY_NAME["comment-id"].default
    comment_template: Path | None = None
    deterministic_only: bool = False
    # A model judge without its key (outside fork pull requests): stop (`error`) or run the
    # deterministic checks only, labelled as such (`checks-only`).
    on_missing_judge_key: Literal["error", "checks-only"] = "error"
    index_snapshot: str | None = None
    calibration: Path | None = None  # the judge's last calibration report, shown in comments
    progress: bool = True


def check_settings(r: Resolved, root: Path, *, evaluating: bool = True) -> CheckSettings:
    """The deterministic checks' settings; a custom check's file relative to `root`."""
    from golden_gate.errors import InputError

    if evaluating and r["citations-in-sources"] and not r["sources-path"]:
        raise InputError(
            f"{r.where('citations-in-sources')} needs sources-path: without the sources an "
            "answer returned, every citation it makes would count as invented"
        )
    return CheckSettings(
        refusal_phrases=r["refusal-phrases"],
        forbidden_patterns=r["forbidden"],
        must_include=r["must-include"],
        must_not_include=r["must-not-include"],
        json_schema_file=_path(r["json-schema"], root),
        citations_in_sources=r["citations-in-sources"],
        custom_checks=[CustomCheck.parse(text, root) for text in r["custom-checks"]],
        check_timeout_s=r["check-timeout"],
    )


def _path(value: Any, root: Path) -> Path | None:
    return root / value if value not in (None, "") else None


def expand_headers(resolved: Resolved, env: Mapping[str, str]) -> dict[str, str]:
    """Header values, `$VAR` read from the environment (so a secret is never in a file), as
    secret_env allows: on a pull request only what its base branch's rules grant."""
    from golden_gate import secret_env

    return secret_env.send_headers(
        resolved["assistant-headers"],
        env,
        where=resolved.where("assistant-headers"),
        trust=resolved.trust,
        assistant_url=resolved["assistant-url"],
    )


def judge_concurrency(r: Resolved) -> int:
    """judge-concurrency, else the assistant's concurrency: the judge keeps up with it."""
    concurrency = r["judge-concurrency"]
    if concurrency is None:
        concurrency = r["concurrency"] if r.door_has("concurrency") else DEFAULT_CONCURRENCY
    return concurrency


def judge_settings(r: Resolved, *, root: Path) -> JudgeSettings:
    from golden_gate import secret_env
    from golden_gate.option_values import verdict_identity

    # The judge's key goes where judge-base-url points: on a pull request, the base's choice.
    secret_env.check_endpoint(r["judge-base-url"], where=r.where("judge-base-url"), trust=r.trust)
    return validated(
        r,
        lambda: JudgeSettings(
            model=r["judge-model"],
            prompt_file=_path(r["judge-prompt"], root),
            base_url=r["judge-base-url"] or None,
            temperature=r["judge-temperature"],
            timeout_s=r["judge-timeout"],
            max_retries=r["judge-retries"],
            max_tokens=r["judge-max-tokens"],
            concurrency=judge_concurrency(r),
            yardstick=verdict_identity(r, root=root),
        ),
    )


def build(
    resolved: Resolved,
    *,
    root: Path,
    env: Mapping[str, str],
    evaluating: bool,
    cache_dir: Path | None,
    **extra: Any,
) -> Settings:
    """The engine's settings from resolved options; paths relative to `root`. A bad value is
    one sentence naming the option as it was set (flag, input or file line), exit 2."""
    from golden_gate.core.golden import Shard
    from golden_gate.errors import InputError
    from golden_gate.evaluation.eval_settings import parse_prices
    from golden_gate.evaluation.evaluators import parse_evaluators

    r = resolved
    concurrency = r["concurrency"]
    compose_file = r["compose-file"]
    prices = r["judge-prices"]
    shard = r["shard"]
    try:
        settings = Settings(
            golden=root / r["golden"],
            golden_strict=r["golden-strict"],
            tags=r["subset-tags"],
            shard=Shard.parse(shard, where=r.where("shard")) if shard else None,
            target=AssistantSettings(
                url=r["assistant-url"],
                path=r["assistant-path"],
                request_template=r["request-template"],
                answer_path=r["answer-path"],
                sources_path=r["sources-path"] or None,
                context_path=r["context-path"] or None,
                tools_path=r["tools-path"] or None,
                model_path=r["model-path"] or None,
                usage_path=r["usage-path"] or None,
                headers=expand_headers(r, env),
                concurrency=concurrency,
                timeout_s=r["timeout"],
                retries=r["retries"],
            )
            if evaluating
            else None,
            judge=judge_settings(r, root=root),
            evaluators=EvaluatorSettings(
                evaluators=parse_evaluators(r["evaluators"], flag=r.where("evaluators"), root=root),
                rule=r["evaluator-rule"],
                judge_panel=r["judge-panel"],
            ),
            compose=ComposeSettings(
                file=root / compose_file,
                project=r["compose-project"] or f"golden-gate-{env.get('GITHUB_RUN_ID', 'local')}",
                service=r["compose-service"],
                wait_timeout_s=r["wait-timeout"],
                health_path=r["health-path"],
                index_snapshot=r["index-snapshot"] or None,
                env=r["compose-env"],
                confine_to=root.resolve() if r.trust is not None else None,
            )
            if evaluating and compose_file
            else None,
            index_snapshot=r["index-snapshot"] or None,
            checks=check_settings(r, root, evaluating=evaluating),
            evaluation=EvalSettings(
                runs=r["runs"],
                rerun_failures=r["rerun-failures"],
                simulate_users=r["simulate-users"],
                max_error_rate=r["max-error-rate"],
                max_judge_calls=r["max-judge-calls"],
                canaries=r["judge-canaries"],
                assistant_models=r["assistant-model"],
                judge_concurrency=judge_concurrency(r),
                judge_prices=parse_prices(prices, name=r.where("judge-prices")) if prices else None,
                assistant_prices=parse_prices(
                    r["assistant-prices"], name=r.where("assistant-prices")
                )
                if r["assistant-prices"]
                else None,
                max_cost_usd=r["max-cost-usd"],
            ),
            gate=gate_settings(r),
            cache_dir=cache_dir,
            report_path=root / r["report-path"],
            junit_path=_path(r["junit-xml"], root),
            html_path=_path(r["html-report"], root),
            comment_path=_path(r["comment-file"], root),
            comment_id=r["comment-id"],
            comment_template=_path(r["comment-template"], root),
            calibration=_path(r["calibration"], root),
            on_missing_judge_key=r["on-missing-judge-key"],
            **extra,
        )
    except ValidationError as exc:
        raise InputError(explain(exc, r)) from None
    return settings
