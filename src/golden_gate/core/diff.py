"""What changed between two reports, item by item: flipped, score changed, answer changed.

The gate's paired comparison decides whether a run regressed; this lists, for a reader, each
item whose outcome or answer moved, with both answers and both reasons. Its `regressed` and
`improved` are the gate's: an item counted in both reports whose pass fraction fell or rose.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from golden_gate.core.item_result import ItemResult, counts
from golden_gate.core.report import Report

Change = Literal["regressed", "improved", "answer-changed", "only-baseline", "only-candidate"]
# The order a reader wants them in: what may block the merge first.
ORDER: tuple[Change, ...] = (
    "regressed",
    "improved",
    "answer-changed",
    "only-candidate",
    "only-baseline",
)


class Side(BaseModel):
    """One report's view of one item."""

    passes: int
    runs: int
    passed: bool
    errored: bool
    answer: str | None = None
    why: str = ""


class ItemChange(BaseModel):
    id: str
    change: Change
    tags: list[str] = Field(default_factory=list)
    question: str | None = None
    flipped: bool = False  # the majority verdict changed (pass to fail or back)
    answer_changed: bool = False
    baseline: Side | None = None
    candidate: Side | None = None

    @property
    def score_delta(self) -> float | None:
        if self.baseline is None or self.candidate is None:
            return None
        if self.baseline.errored or self.candidate.errored:
            return None
        return _score(self.candidate) - _score(self.baseline)


class ReportDiff(BaseModel):
    baseline: str
    candidate: str
    shared: int = 0
    unchanged: int = 0
    changes: list[ItemChange] = Field(default_factory=list)

    def of(self, change: Change) -> list[ItemChange]:
        return [c for c in self.changes if c.change == change]

    def counts(self) -> dict[str, int]:
        return {change: len(self.of(change)) for change in ORDER}


def _score(side: Side) -> float:
    return side.passes / side.runs if side.runs else 0.0


def _answers(item: ItemResult) -> tuple[str, ...]:
    """The counted runs' answers, whitespace aside: what "the answer changed" compares."""
    return tuple(" ".join((r.answer or "").split()) for r in item.run_results if counts(r))


def side(item: ItemResult) -> Side:
    return Side(
        passes=item.passes,
        runs=item.runs,
        passed=item.passed,
        errored=item.errored,
        answer=item.answer,
        why=item.why,
    )


def diff_reports(
    baseline: Report, candidate: Report, *, baseline_name: str = "A", candidate_name: str = "B"
) -> ReportDiff:
    """Every item that changed from `baseline` to `candidate`, in the order of `ORDER`, then
    by id."""
    base = baseline.by_id()
    cand = candidate.by_id()
    changes: list[ItemChange] = []
    shared = unchanged = 0
    for item_id in sorted(base.keys() | cand.keys()):
        b, c = base.get(item_id), cand.get(item_id)
        item = c if c is not None else b
        assert item is not None
        common = {
            "id": item_id,
            "tags": item.tags,
            "question": (c.question if c is not None else None) or (b and b.question),
            "baseline": side(b) if b is not None else None,
            "candidate": side(c) if c is not None else None,
        }
        if b is None:
            changes.append(ItemChange(change="only-candidate", **common))
            continue
        if c is None:
            changes.append(ItemChange(change="only-baseline", **common))
            continue
        shared += 1
        answer_changed = _answers(b) != _answers(c)
        flipped = not b.errored and not c.errored and b.passed != c.passed
        if b.errored or c.errored:
            kind: Change | None = "answer-changed" if answer_changed else None
        elif c.score < b.score:
            kind = "regressed"
        elif c.score > b.score:
            kind = "improved"
        else:
            kind = "answer-changed" if answer_changed else None
        if kind is None:
            unchanged += 1
            continue
        changes.append(
            ItemChange(change=kind, flipped=flipped, answer_changed=answer_changed, **common)
        )
    rank = {change: i for i, change in enumerate(ORDER)}
    changes.sort(key=lambda change: rank[change.change])  # stable: by id within a kind
    return ReportDiff(
        baseline=baseline_name,
        candidate=candidate_name,
        shared=shared,
        unchanged=unchanged,
        changes=changes,
    )
