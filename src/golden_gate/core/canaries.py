"""Canaries: answers whose right verdict is known, asked of the judge in every run.

A judge that passes everything (a broken custom prompt, a server that swapped its weights
behind one name, a template that lost the context) still produces a pass rate; only answers
whose verdict is known beforehand show it. Each probe is derived from a golden item, never
from the assistant, so it is the same in every run: its verdict is cached like any other and
a warm re-run asks the judge nothing.

What each evaluator is asked (`PROBES`): the item's key points written as an answer must pass
(known-good); an empty answer, another item's key points (off-topic) and the key points with
one left out must fail (correctness); for groundedness and hallucination the same answer with
its own key points as context must pass and with a passage that supports none of it must
fail; for conciseness the answer repeated must fail. A custom prompt's meaning is the team's:
it gets no canaries. The offline keypoints judge is a fixed rule that cannot drift: neither.

Probes never enter the floor or the paired test: they are the report's `canaries`, apart from
its `results`. A judge that gives more than `TOLERANCE` of an evaluator's probes the wrong
verdict makes the run incomplete; so does one that could judge fewer than half of them.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

from golden_gate.core.golden import GoldenItem

ProbeKind = Literal["known-good", "empty", "off-topic", "key-point-removed", "no-context", "padded"]
CheckStatus = Literal["passed", "failed", "unchecked"]

# What each built-in evaluator is asked; the first is the known-good probe.
PROBES: dict[str, tuple[ProbeKind, ...]] = {
    "correctness": ("known-good", "empty", "off-topic", "key-point-removed"),
    "relevancy": ("known-good", "empty", "off-topic"),
    "groundedness": ("known-good", "no-context"),
    "hallucination": ("known-good", "no-context"),
    "conciseness": ("known-good", "padded"),
}
DESCRIBED: dict[ProbeKind, str] = {
    "known-good": "the key points as the answer",
    "empty": "an empty answer",
    "off-topic": "another item's key points as the answer",
    "key-point-removed": "the key points with one left out",
    "no-context": "the key points with a context that supports none of them",
    "padded": "the key points repeated twenty times",
}
# At most this share of an evaluator's probes may get the wrong verdict (rounded down: with 8
# probes one, with 4 none): a judge at temperature 0 on answers this plain should get them all.
TOLERANCE = 0.2
# A context that supports no golden item's key points (a probe's, for groundedness).
UNRELATED_CONTEXT = (
    "The cafeteria on the ground floor serves lunch from noon until two o'clock on weekdays; "
    "its menu changes every Monday and is posted beside the lifts."
)
PADDING = 20
_WORD = re.compile(r"\w+")


class CanaryProbe(BaseModel):
    """One probe: an answer derived from a golden item whose right verdict is known."""

    evaluator: str
    judge: str
    kind: ProbeKind
    item: str  # the golden item it was derived from
    expected: bool  # the verdict a working judge gives
    answer: str
    context: str | None = None
    passed: bool | None = None  # the judge's verdict; None: it could not judge
    comment: str = ""  # the judge's reasoning (untrusted text)
    cached: bool = False
    served_model: str | None = None
    error: str | None = None

    @property
    def wrong(self) -> bool:
        return self.passed is not None and self.passed != self.expected


class CanaryCheck(BaseModel):
    """One judge's canaries for one evaluator."""

    evaluator: str
    judge: str
    probes: int
    wrong: int
    unjudged: int
    allowed: int  # wrong verdicts within the tolerance
    status: CheckStatus


class Canaries(BaseModel):
    """The run's canaries: each probe and each judge's check. Never counted as items."""

    items: int  # golden items the probes were derived from, per evaluator
    tolerance: float = TOLERANCE
    checks: list[CanaryCheck] = Field(default_factory=list)
    probes: list[CanaryProbe] = Field(default_factory=list)

    @property
    def failed(self) -> list[CanaryCheck]:
        return [c for c in self.checks if c.status != "passed"]


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def as_answer(points: Sequence[str]) -> str:
    """Key points written as a plain answer, one sentence each."""
    return " ".join(p.strip().rstrip(".") + "." for p in points if p.strip())


def _order(item: GoldenItem) -> str:
    # By a hash of the id: spread over the set, and the same in every run.
    return hashlib.sha256(item.id.encode("utf-8")).hexdigest()


def sources(items: Sequence[GoldenItem], count: int) -> list[GoldenItem]:
    """The `count` items probes are derived from: with key points, not refusals, distinct."""
    eligible = [i for i in items if i.reference_key_points and not i.must_refuse]
    chosen: list[GoldenItem] = []
    seen: set[str] = set()
    for item in sorted(eligible, key=_order):
        answer = as_answer(item.reference_key_points)
        if answer and answer not in seen:
            seen.add(answer)
            chosen.append(item)
        if len(chosen) == count:
            break
    return chosen


def _removed(points: Sequence[str]) -> list[str] | None:
    """The key points without the one most of whose words no other point says; None when
    there is only one (nothing would be left) or every point's words are said by others."""
    if len(points) < 2:
        return None

    def own(index: int) -> int:
        others = set().union(*(_words(p) for j, p in enumerate(points) if j != index))
        return len(_words(points[index]) - others)

    index = max(range(len(points)), key=lambda i: (own(i), -i))
    if own(index) == 0:
        return None
    return [p for j, p in enumerate(points) if j != index]


def _off_topic(item: GoldenItem, pool: Sequence[GoldenItem]) -> GoldenItem | None:
    """The item of `pool` whose key points share the fewest words with `item`'s, among those
    that leave some key point of `item`'s unsaid (another item with the same key points would
    be a right answer, not an off-topic one)."""
    mine = _words(" ".join(item.reference_key_points))

    def says_all(other: GoldenItem) -> bool:
        said = _words(" ".join(other.reference_key_points))
        return all(_words(point) <= said for point in item.reference_key_points)

    others = [p for p in pool if p.id != item.id and p.reference_key_points and not says_all(p)]
    if not others:
        return None
    return min(
        others,
        key=lambda p: (len(mine & _words(" ".join(p.reference_key_points))), _order(p)),
    )


def derive(
    items: Sequence[GoldenItem], count: int, evaluator: str, judge: str
) -> list[tuple[GoldenItem, CanaryProbe]]:
    """The probes for one evaluator and judge, each with the golden item it is asked about."""
    kinds = PROBES.get(evaluator)
    if not kinds or count <= 0:
        return []
    eligible = [i for i in items if i.reference_key_points and not i.must_refuse]
    probes: list[tuple[GoldenItem, CanaryProbe]] = []
    for item in sources(items, count):
        good = as_answer(item.reference_key_points)
        for kind in kinds:
            context: str | None = None
            if kind == "known-good":
                answer = good
                context = good if evaluator in ("groundedness", "hallucination") else None
            elif kind == "empty":
                answer = ""
            elif kind == "off-topic":
                other = _off_topic(item, eligible)
                if other is None:
                    continue
                answer = as_answer(other.reference_key_points)
            elif kind == "key-point-removed":
                kept = _removed(item.reference_key_points)
                if kept is None:
                    continue
                answer = as_answer(kept)
            elif kind == "no-context":
                answer, context = good, UNRELATED_CONTEXT
            else:  # padded
                answer = " ".join([good] * PADDING)
            probe = CanaryProbe(
                evaluator=evaluator,
                judge=judge,
                kind=kind,
                item=item.id,
                expected=kind == "known-good",
                answer=answer,
                context=context,
            )
            probes.append((item, probe))
    return probes


def check(probes: Sequence[CanaryProbe]) -> list[CanaryCheck]:
    """Each (evaluator, judge)'s probes against the tolerance."""
    groups: dict[tuple[str, str], list[CanaryProbe]] = {}
    for probe in probes:
        groups.setdefault((probe.evaluator, probe.judge), []).append(probe)
    checks = []
    for (evaluator, judge), group in groups.items():
        wrong = sum(p.wrong for p in group)
        unjudged = sum(p.passed is None for p in group)
        allowed = math.floor(len(group) * TOLERANCE)
        if wrong > allowed:
            status: CheckStatus = "failed"
        elif unjudged * 2 > len(group):
            status = "unchecked"
        else:
            status = "passed"
        checks.append(
            CanaryCheck(
                evaluator=evaluator,
                judge=judge,
                probes=len(group),
                wrong=wrong,
                unjudged=unjudged,
                allowed=allowed,
                status=status,
            )
        )
    return checks


def _one_line(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def incomplete_reason(canaries: Canaries) -> str | None:
    """Why the canaries make the run incomplete, naming the first wrong probe and the judge's
    reasoning on it; None when every check passed."""
    failed = canaries.failed
    if not failed:
        return None
    first = failed[0]
    group = [
        p for p in canaries.probes if p.evaluator == first.evaluator and p.judge == first.judge
    ]
    if first.status == "unchecked":
        return (
            f"judge {first.judge} could not judge {first.unjudged} of its {first.probes} "
            f"{first.evaluator} canaries, so it is not known to work"
            + (f" (and {len(failed) - 1} more check(s))" if len(failed) > 1 else "")
        )
    probe = next(p for p in group if p.wrong)
    said = "passed" if probe.passed else "failed"
    reasoning = _one_line(probe.comment, 120) or "no reasoning given"
    more = f"; {len(failed) - 1} more canary check(s) failed" if len(failed) > 1 else ""
    return (
        f"judge {first.judge} gave {first.wrong} of {first.probes} {first.evaluator} canaries "
        f"the wrong verdict (at most {first.allowed} allowed): it {said} the {probe.kind} probe "
        f"({DESCRIBED[probe.kind]}, from item {probe.item}), saying: {reasoning}{more}"
    )
