"""One typed settings object for a run: the CLI builds it from flags, the Action from inputs."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from golden_gate.core.gate import GateSettings
from golden_gate.core.golden import Shard
from golden_gate.evaluation.checks import CheckSettings
from golden_gate.evaluation.compose import ComposeSettings
from golden_gate.evaluation.evaluate import EvalSettings
from golden_gate.evaluation.evaluators import EvaluatorSettings
from golden_gate.evaluation.judge import JudgeSettings
from golden_gate.evaluation.target import TargetSettings


class Settings(BaseModel):
    golden: Path
    tags: list[str] = Field(default_factory=list)
    shard: Shard | None = None  # evaluate only this part of the selection (a matrix job)
    target: TargetSettings | None = None  # only evaluating needs the assistant
    compose: ComposeSettings | None = None  # start the assistant with docker compose first
    judge: JudgeSettings = Field(default_factory=JudgeSettings)
    evaluators: EvaluatorSettings = Field(default_factory=EvaluatorSettings)
    checks: CheckSettings = Field(default_factory=CheckSettings)
    evaluation: EvalSettings = Field(default_factory=EvalSettings)
    gate: GateSettings = Field(default_factory=GateSettings)
    cache_dir: Path | None = Path(".judge-cache")
    baseline: Path | None = None
    baseline_label: str | None = None  # how the comment names the baseline (a repo path)
    report_path: Path = Path("report.json")
    comment_path: Path | None = None
    summary_path: Path | None = None
    junit_path: Path | None = None  # JUnit XML, one test case per item
    comment_id: str = "default"
    comment_template: Path | None = None
    deterministic_only: bool = False
    # A model judge without its key (outside fork pull requests): stop (`error`) or run the
    # deterministic checks only, labelled as such (`checks-only`).
    on_missing_judge_key: Literal["error", "checks-only"] = "error"
    index_snapshot: str | None = None
    calibration: Path | None = None  # the judge's last calibration report, shown in comments
    progress: bool = True


# Which part of the settings a model is, so an error names the right flag or input whether the
# part was validated alone (its own title) or inside Settings (a longer location).
_SECTIONS = {
    "TargetSettings": "target",
    "JudgeSettings": "judge",
    "EvalSettings": "evaluation",
    "ComposeSettings": "compose",
    "GateSettings": "gate",
    "CheckSettings": "checks",
    "EvaluatorSettings": "evaluators",
}


def first_problem(exc: ValidationError) -> tuple[str, str]:
    """(`section.field` of the first problem, e.g. `judge.concurrency`, its message)."""
    problem = exc.errors()[0]
    loc = [str(p) for p in problem["loc"] if not isinstance(p, int)]
    section = _SECTIONS.get(exc.title)
    path = ".".join([section, *loc] if section else loc) or "value"
    return path, problem["msg"].removeprefix("Value error, ")
