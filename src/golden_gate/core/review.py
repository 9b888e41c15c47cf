"""The review loop: the answers of a report a person should label, as a labels file.

`golden-gate review REPORT` writes the regressed items (against a baseline), the correctness
canaries the judge got wrong, the runs the judges of a panel disagreed on and the unstable
items, each with its question, answer and the judge's verdict and reason, and a blank `label`
for a person to fill with pass or fail. `calibrate` reads the same file: lines still blank are
skipped, so labels added there grow the calibration where the judge is least trusted.

One line per item (the labels file keys answers by item id), the first reason in `REASONS`
order winning. Answers are the report's: excerpts of at most `answer-excerpt` characters, so an
answer cut there is labelled (and calibrated) as cut.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from golden_gate.core.golden import UNREVIEWED_TAGS, GoldenItem, unreviewed
from golden_gate.core.item_result import ItemResult, RunResult
from golden_gate.core.report import Report
from golden_gate.jsonl import Problems

Reason = Literal["regressed", "canary", "judges disagree", "unstable"]
REASONS: tuple[Reason, ...] = ("regressed", "canary", "judges disagree", "unstable")


class ReviewLine(BaseModel):
    """One answer to label: the labels file's `id`, `answer` and `label`, and what a person
    needs to decide (calibrate keeps the extra fields and ignores them)."""

    id: str
    answer: str
    label: Literal[""] = ""
    why: Reason
    question: str | None = None
    judge: Literal["pass", "fail"] | None = None
    judge_reason: str = ""


def _run_line(item: ItemResult, run: RunResult, why: Reason) -> ReviewLine | None:
    if run.answer is None:
        return None
    verdict = run.verdict
    return ReviewLine(
        id=item.id,
        answer=run.answer,
        why=why,
        question=item.question,
        judge=None if verdict is None else "pass" if verdict.passed else "fail",
        judge_reason=run.why or (verdict.comment if verdict is not None else ""),
    )


def _failing_run(item: ItemResult) -> RunResult | None:
    runs = [r for r in item.run_results if not r.rerun and r.answer is not None]
    return next((r for r in runs if r.status == "fail"), runs[0] if runs else None)


def _disagreeing_run(item: ItemResult) -> RunResult | None:
    for run in item.run_results:
        for outcome in run.evaluations or []:
            votes = {v.passed for v in outcome.votes if v.passed is not None}
            if len(votes) > 1:
                return run
    return None


def _candidates(report: Report, baseline: Report | None) -> Iterable[ReviewLine | None]:
    base = baseline.by_id() if baseline is not None else {}
    for item in report.results:
        before = base.get(item.id)
        if before is not None and before.runs and item.runs and before.passed and not item.passed:
            run = _failing_run(item)
            yield _run_line(item, run, "regressed") if run else None
    questions = {item.id: item.question for item in report.results}
    for probe in report.canaries.probes if report.canaries else []:
        if probe.evaluator == "correctness" and probe.wrong:
            yield ReviewLine(
                id=probe.item,
                answer=probe.answer,
                why="canary",
                question=questions.get(probe.item),
                judge="pass" if probe.passed else "fail",
                judge_reason=f"{probe.kind} probe: {probe.comment}",
            )
    for item in report.results:
        run = _disagreeing_run(item)
        yield _run_line(item, run, "judges disagree") if run else None
    for item in report.results:
        if item.unstable:
            run = _failing_run(item)
            yield _run_line(item, run, "unstable") if run else None


def review_lines(report: Report, baseline: Report | None = None) -> list[ReviewLine]:
    """The answers to label, one per item, in `REASONS` order and by id within each."""
    chosen: dict[str, ReviewLine] = {}
    for line in _candidates(report, baseline):
        if line is not None and line.id not in chosen:
            chosen[line.id] = line
    order = {reason: i for i, reason in enumerate(REASONS)}
    return sorted(chosen.values(), key=lambda line: (order[line.why], line.id))


def counts(lines: Iterable[ReviewLine]) -> dict[Reason, int]:
    found: dict[Reason, int] = {}
    for line in lines:
        found[line.why] = found.get(line.why, 0) + 1
    return found


# Candidate items (`import --from-traces`, or key points drawn with `import --key-points`): a
# person fills `review` with accept or reject; accepted items lose the marks that kept them
# out of the gate and the fields only the reviewer needed.
REVIEW_FIELD = "review"
REVIEWER_FIELDS = (REVIEW_FIELD, "observed_answer", "source_trace")


@dataclass
class Reviewed:
    accepted: list[GoldenItem]
    kept: list[GoldenItem]  # still blank: candidates still
    rejected: list[GoldenItem]


def review_candidates(items: Sequence[GoldenItem]) -> Reviewed:
    """Split items by their `review` mark; InputError naming every accepted item that has
    nothing to judge it by yet, and every mark that is neither accept nor reject."""
    problems = Problems()
    done = Reviewed([], [], [])
    for item in items:
        if not unreviewed(item):
            done.kept.append(item)  # an item of the set, never a candidate
            continue
        mark = (item.model_extra or {}).get(REVIEW_FIELD, "")
        mark = mark.strip().lower() if isinstance(mark, str) else mark
        if mark == "accept":
            if not item.has_reference:
                problems.append(
                    f"{item.where}: item '{item.id}' is accepted but has nothing to judge an "
                    "answer by: write its reference_key_points (or reference_urls, "
                    "must_refuse, must_include) first"
                )
                continue
            data = item.model_dump(mode="json", exclude_unset=True)
            for name in REVIEWER_FIELDS:
                data.pop(name, None)
            data["tags"] = [t for t in item.tags if t not in UNREVIEWED_TAGS]
            accepted = GoldenItem.model_validate(data)
            accepted._where = item.where
            done.accepted.append(accepted)
        elif mark == "reject":
            done.rejected.append(item)
        elif mark in ("", None):
            done.kept.append(item)
        else:
            problems.append(
                f"{item.where}: item '{item.id}': review is '{mark}'; write accept, reject or "
                "leave it blank"
            )
    problems.raise_if_any()
    return done
