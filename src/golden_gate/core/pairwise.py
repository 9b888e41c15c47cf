"""Pairwise comparison against the baseline's answers: which answer is better, asked both ways.

For each item whose answer changed, a pairwise judge is asked "A or B, or a tie" twice: with
the run's answer as A, then with it as B. A judge that prefers whatever stands first (a
position bias) says A both times: the orders disagree, and that is a tie, never a win. The run
wins an item only when both orders prefer its answer. The win rate is over the decided items
(wins / (wins + losses)), with an exact two-sided sign test of wins against losses (ties
carry no sign). Pure: the two preferences per item in, the tally out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

from golden_gate.core.sign_flip import sign_test_p

Preference = Literal["A", "B", "tie"]
Outcome = Literal["win", "loss", "tie"]


def decide(first: Preference, swapped: Preference) -> Outcome:
    """The run's outcome from the order (run, baseline) and the order (baseline, run)."""
    if first == "A" and swapped == "B":
        return "win"
    if first == "B" and swapped == "A":
        return "loss"
    return "tie"


class PairwiseItem(BaseModel):
    id: str
    outcome: Outcome | None = None  # None: the judge could not judge one of the orders
    first: Preference | None = None  # run's answer as A
    swapped: Preference | None = None  # run's answer as B
    reasons: list[str] = Field(default_factory=list)  # the judge's, per order (untrusted)
    error: str | None = None


class Pairwise(BaseModel):
    """The run's answers against the baseline's, item by item, judged both ways."""

    judge: str
    items: list[PairwiseItem] = Field(default_factory=list)
    wins: int = 0
    losses: int = 0
    ties: int = 0
    errors: int = 0
    win_rate: float | None = None  # wins / (wins + losses); None when nothing was decided
    p_value: float = 1.0  # exact two-sided sign test, wins against losses


def tally(judge: str, items: Sequence[PairwiseItem]) -> Pairwise:
    wins = sum(i.outcome == "win" for i in items)
    losses = sum(i.outcome == "loss" for i in items)
    ties = sum(i.outcome == "tie" for i in items)
    decided = wins + losses
    # Two-sided: twice the smaller one-sided tail, at most 1.
    p = min(1.0, 2 * min(sign_test_p(wins, losses), sign_test_p(losses, wins))) if decided else 1.0
    return Pairwise(
        judge=judge,
        items=list(items),
        wins=wins,
        losses=losses,
        ties=ties,
        errors=sum(i.outcome is None for i in items),
        win_rate=wins / decided if decided else None,
        p_value=p,
    )


def describe(result: Pairwise) -> str:
    rate = "n/a" if result.win_rate is None else f"{result.win_rate:.1%}"
    return (
        f"pairwise against the baseline's answers ({result.judge}, both orders): {result.wins} "
        f"won, {result.losses} lost, {result.ties} tied, {result.errors} not judged; win rate "
        f"{rate} of the decided items, sign test p = {result.p_value:.4g}"
    )
