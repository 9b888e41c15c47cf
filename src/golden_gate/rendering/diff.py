"""`golden-gate diff`: the changes between two reports as terminal text, Markdown or JSON.

Answers, questions, ids and reasons are untrusted: the text has no control or escape
character of theirs (`escape.terminal`), the Markdown is escaped as the comment escapes.
"""

from __future__ import annotations

import json
import textwrap

from golden_gate import redaction
from golden_gate.core.diff import ORDER, ItemChange, ReportDiff, Side
from golden_gate.rendering.escape import inline, terminal

TITLES = {
    "regressed": "regressed",
    "improved": "improved",
    "answer-changed": "answer changed, same outcome",
    "only-candidate": "only in B",
    "only-baseline": "only in A",
}
ANSWER_LIMIT = 600
INDENT = " " * 6


def _outcome(side: Side | None) -> str:
    if side is None:
        return "absent"
    if side.errored:
        return "no verdict (errors)"
    verdict = "pass" if side.passed else "fail"
    return f"{verdict} {side.passes}/{side.runs}"


def summary_line(diff: ReportDiff) -> str:
    counts = diff.counts()
    parts = [f"{counts[kind]} {TITLES[kind]}" for kind in ORDER if counts[kind]]
    shown = ", ".join(parts) if parts else "no item changed"
    return f"{shown}; {diff.unchanged} of {diff.shared} shared items unchanged"


def diff_text(diff: ReportDiff) -> str:
    """For a terminal: a line per change, both answers indented below it."""
    out = [
        f"golden-gate diff: A = {terminal(diff.baseline, limit=200)}, "
        f"B = {terminal(diff.candidate, limit=200)}",
        f"  {summary_line(diff)}",
    ]
    for kind in ORDER:
        changes = diff.of(kind)
        if not changes:
            continue
        out.append("")
        out.append(f"{TITLES[kind]} ({len(changes)}):")
        for change in changes:
            out.extend(_text_change(change))
    return "\n".join(out) + "\n"


def _text_change(change: ItemChange) -> list[str]:
    marks = (("flipped", change.flipped), ("answer changed", change.answer_changed))
    flags = [name for name, on in marks if on]
    head = (
        f"  {terminal(change.id, limit=200)}: {_outcome(change.baseline)} -> "
        f"{_outcome(change.candidate)}"
    )
    lines = [head + (f" ({', '.join(flags)})" if flags else "")]
    if change.question:
        lines.append(f"    question: {terminal(change.question, limit=300)}")
    for label, side in (("A", change.baseline), ("B", change.candidate)):
        if side is None:
            continue
        if side.why:
            lines.append(f"    {label} why: {terminal(side.why, limit=300)}")
        answer = terminal(side.answer, limit=ANSWER_LIMIT) if side.answer is not None else ""
        lines.append(f"    {label} answer:")
        for line in answer.splitlines() or ["(none)"]:
            lines.extend(textwrap.wrap(line, 96, initial_indent=INDENT, subsequent_indent=INDENT))
    return lines


def diff_markdown(diff: ReportDiff) -> str:
    """For a pull request or an issue: a table a kind, answers in collapsed sections."""
    out = [
        f"## golden-gate diff: {inline(diff.baseline, limit=200)} → "
        f"{inline(diff.candidate, limit=200)}",
        "",
        inline(summary_line(diff)),
    ]
    for kind in ORDER:
        changes = diff.of(kind)
        if not changes:
            continue
        out += ["", f"### {TITLES[kind].capitalize()} ({len(changes)})", ""]
        for change in changes:
            out.append(
                f"<details><summary><code>{inline(change.id, limit=120)}</code>: "
                f"{_outcome(change.baseline)} → {_outcome(change.candidate)}</summary>"
            )
            out += ["", "| | A | B |", "|---|---|---|"]
            a, b = change.baseline, change.candidate
            if change.question:
                out.append(f"| question | {inline(change.question)} | |")
            out.append(
                f"| answer | {inline(a.answer if a else None, limit=ANSWER_LIMIT)} | "
                f"{inline(b.answer if b else None, limit=ANSWER_LIMIT)} |"
            )
            out.append(f"| why | {inline(a.why if a else None)} | {inline(b.why if b else None)} |")
            out += ["", "</details>"]
    return "\n".join(out) + "\n"


def diff_json(diff: ReportDiff) -> str:
    data = diff.model_dump(mode="json", exclude_none=True)
    for change, raw in zip(diff.changes, data["changes"], strict=True):
        raw["score_delta"] = change.score_delta
    data["counts"] = diff.counts()
    return json.dumps(redaction.scrub_json(data), indent=2, ensure_ascii=False) + "\n"
