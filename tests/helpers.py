"""Builders for reports in tests: the minimal shape teams already have, plus our details."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable

from golden_gate.core.report import ItemResult, Report, RunResult, Verdict


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
