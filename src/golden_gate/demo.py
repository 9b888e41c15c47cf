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

from golden_gate import config_file
from golden_gate.core.stats import wilson_lower_bound
from golden_gate.errors import EXIT_INCOMPLETE, EXIT_PASSED
from golden_gate.example_assistant import start
from golden_gate.files import write_result
from golden_gate.option_values import apply, defaults
from golden_gate.pipeline import run
from golden_gate.rendering.charts import TrendPoint
from golden_gate.settings import Settings, build


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


def write_config(out: Path) -> Path:
    """The demo's golden-gate.toml in `out`, its paths pointing at the bundled example."""
    bundled = resources.files("golden_gate.example_assistant")
    text = (bundled / "golden-gate.toml").read_text(encoding="utf-8")
    for name in ("golden.jsonl", "baseline.json"):
        text = text.replace(f'"{name}"', json.dumps(str(Path(str(bundled / name)))))
    path = out / "golden-gate.toml"
    write_result(path, text, what="demo config")
    return path


def demo_settings(url: str, out: Path, *, junit_path: Path | None = None) -> Settings:
    """The demo's settings, from its golden-gate.toml in `out`, as `golden-gate run` reads one."""
    config = config_file.read(write_config(out))
    resolved = defaults("cli")
    here = {
        "assistant-url": url,
        "report-path": str(out / "report.json"),
        "comment-file": str(out / "comment.md"),
        "cache-dir": str(out / ".judge-cache"),
        "junit-xml": str(junit_path or ""),
        "html-report": str(out / "report.html"),
    }
    apply(resolved, config.values, config.origins)
    apply(resolved, here, dict.fromkeys(here, "demo"))
    return build(
        resolved,
        root=Path("."),
        env={},
        evaluating=True,
        cache_dir=out / ".judge-cache",
        baseline=Path(resolved["baseline"]),
        summary_path=out / "summary.md",
        progress=False,
    )


def run_demo(*, out: Path, variant: str = "candidate", junit_path: Path | None = None) -> int:
    """Run the demo; exits 0 when the demo itself worked, whatever the gate decided."""
    out.mkdir(parents=True, exist_ok=True)
    with start(variant) as assistant:
        settings = demo_settings(assistant.url, out, junit_path=junit_path)
        outcome = run(settings, history=baseline_history(settings.gate.confidence))
    from golden_gate.rendering import terminal

    if terminal.wanted():  # a person: the summary; the comment is in comment.md
        files = {"report": str(out / "report.json"), "page": str(out / "report.html")}
        files["comment"] = str(out / "comment.md")
        colours = terminal.colour()
        print(terminal.summary(outcome.gate, outcome.report, files=files, colours=colours), end="")
    else:
        print(outcome.comment)
    print("-" * 72, file=sys.stderr)
    print(
        f"golden-gate demo: the gate {outcome.verdict} ({outcome.gate.headline})", file=sys.stderr
    )
    names = ("golden-gate.toml", "report.json", "report.html", "comment.md", "summary.md")
    written = [out / name for name in names]
    written += [junit_path] if junit_path is not None else []
    print(
        f"golden-gate demo: wrote {', '.join(map(str, written[:-1]))} and {written[-1]}; "
        f"`golden-gate run` would exit {outcome.exit_code}",
        file=sys.stderr,
    )
    print(
        f"golden-gate demo: open {out / 'report.html'} in a browser to see each item's answers "
        f"beside the baseline's; `golden-gate diff {baseline_path()} {out / 'report.json'}` "
        "lists the changes",
        file=sys.stderr,
    )
    print(
        f"golden-gate demo: the settings and where each came from: golden-gate config "
        f"--config {out / 'golden-gate.toml'} --show-origin",
        file=sys.stderr,
    )
    return EXIT_INCOMPLETE if outcome.verdict == "incomplete" else EXIT_PASSED
