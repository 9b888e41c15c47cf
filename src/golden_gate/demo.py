"""`golden-gate demo`: the whole gate on the bundled example, offline, in seconds.

It starts the example assistant on 127.0.0.1 in its candidate configuration (a prompt change
that regressed some answers), evaluates the bundled golden set with the offline keypoints
judge, gates against the bundled baseline and prints the comment a pull request would get.
"""

from __future__ import annotations

import json
import sys
from importlib import resources
from pathlib import Path

from golden_gate.core.gate import GateSettings
from golden_gate.core.stats import wilson_lower_bound
from golden_gate.errors import EXIT_INCOMPLETE, EXIT_PASSED
from golden_gate.evaluation.judge import JudgeSettings
from golden_gate.evaluation.target import TargetSettings
from golden_gate.example_assistant import golden_path, start
from golden_gate.pipeline import run
from golden_gate.rendering.charts import TrendPoint
from golden_gate.settings import Settings


def baseline_history(confidence: float) -> list[TrendPoint]:
    """The bundled baseline's earlier versions (an example history: the demo has no git)."""
    path = resources.files("golden_gate.example_assistant") / "baseline-history.json"
    return [
        TrendPoint(
            label=version["label"],
            pass_rate=version["passed"] / version["items"],
            lower_bound=wilson_lower_bound(
                version["passed"], version["items"], confidence=confidence
            ),
        )
        for version in json.loads(path.read_text(encoding="utf-8"))
    ]


def baseline_path() -> Path:
    """The bundled baseline: the baseline variant's report, as main would have produced it."""
    return Path(str(resources.files("golden_gate.example_assistant") / "baseline.json"))


def demo_settings(
    url: str, out: Path, *, baseline: Path | None, junit_path: Path | None = None
) -> Settings:
    return Settings(
        golden=golden_path(),
        tags=["smoke"],
        target=TargetSettings(url=url),
        judge=JudgeSettings(model="keypoints"),
        cache_dir=out / ".judge-cache",
        baseline=baseline,
        report_path=out / "report.json",
        comment_path=out / "comment.md",
        summary_path=out / "summary.md",
        junit_path=junit_path,
        comment_id="demo",
        # 14 smoke items cannot prove 80 % even when all pass (lower bound 0.785): see README.
        gate=GateSettings(floor=0.70),
        progress=False,
    )


def run_demo(*, out: Path, variant: str = "candidate", junit_path: Path | None = None) -> int:
    """Run the demo; exits 0 when the demo itself worked, whatever the gate decided."""
    out.mkdir(parents=True, exist_ok=True)
    with start(variant) as assistant:
        settings = demo_settings(
            assistant.url, out, baseline=baseline_path(), junit_path=junit_path
        )
        outcome = run(settings, history=baseline_history(settings.gate.confidence))
    print(outcome.comment)
    print("-" * 72, file=sys.stderr)
    print(
        f"golden-gate demo: the gate {outcome.verdict} ({outcome.gate.headline})", file=sys.stderr
    )
    written = [out / "report.json", out / "comment.md", out / "summary.md"]
    written += [junit_path] if junit_path is not None else []
    print(
        f"golden-gate demo: wrote {', '.join(map(str, written[:-1]))} and {written[-1]}; "
        f"`golden-gate run` would exit {outcome.exit_code}",
        file=sys.stderr,
    )
    return EXIT_INCOMPLETE if outcome.verdict == "incomplete" else EXIT_PASSED
