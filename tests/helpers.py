"""Builders for reports in tests: the minimal shape teams already have, plus our details."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from golden_gate.core.item_result import ItemResult, RunResult, Verdict
from golden_gate.core.report import Report


def item(
    item_id: str,
    passed: bool,
    *,
    tags: Iterable[str] = ("smoke",),
    answer: str = "an answer",
    question: str | None = None,
    why: str = "missing key point",
) -> ItemResult:
    run = RunResult(
        status="pass" if passed else "fail",
        answer=answer,
        verdict=Verdict(passed=passed, comment="" if passed else why),
    )
    return ItemResult(
        id=item_id,
        tags=list(tags),
        passes=int(passed),
        runs=1,
        question=question or f"What about {item_id}?",
        run_results=[run],
    )


def report(outcomes: dict[str, bool], *, judge: str = "openai:gpt-4.1-mini", **kw) -> Report:
    return Report(judge=judge, results=[item(i, p) for i, p in outcomes.items()], **kw)


def ids(n: int) -> list[str]:
    return [f"q{i:04d}" for i in range(n)]


def golden_gate(
    *args: object, cwd: object = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """The command as a user runs it: a subprocess, its output and its exit code."""
    return subprocess.run(
        [sys.executable, "-m", "golden_gate", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
    )


# A small golden set about configuring features, shared by the tests that judge answers through
# the fake judge (evaluators, canaries, judge identity, review).
FEATURE_CONTEXT = (
    "Set option 0, option 1, option 2, option 3 or option 4 in the config, then restart "
    "the server. Source: docs/config.md"
)


def feature_answer(i: int) -> str:
    return f"Set option {i} in the config, then restart the server. Source: docs/config.md"


def write_feature_golden(path: Path, n: int = 5, *, sources: bool = True) -> Path:
    """n items; `sources`: with a reference URL and the smoke tag, as a RAG set has them."""
    extra = {"reference_urls": ["docs/config.md"], "tags": ["smoke"]} if sources else {}
    lines = [
        {
            "id": f"q{i}",
            "question": f"How do I configure feature {i}?",
            "reference_key_points": [f"set option {i}", "restart the server"],
            **extra,
        }
        for i in range(n)
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def with_feature_context(answer: str, sources: list[str]) -> dict[str, object]:
    """The assistant's response with its retrieved passage, for evaluators that read it."""
    return {
        "answer": answer,
        "sources": sources,
        "retrieval": {"passages": [{"text": FEATURE_CONTEXT}]},
    }
