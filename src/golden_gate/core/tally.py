"""A report's items as the gate counts them: per-item scores over the slim view's columns.

A 100,000-item report is too large for a loop of Python statements an item: each count is a
builtin over a column (`map`, `compress`, `zip`), and the float sums keep the order of a plain
loop, so every figure is the one an item-by-item loop gives.
"""

from __future__ import annotations

from collections import Counter
from functools import cached_property, reduce
from itertools import compress, repeat
from operator import add, lt, mul, ne, not_, truediv

from golden_gate.core import slim
from golden_gate.core.report import Report
from golden_gate.core.slim import ItemColumns, SlimReport
from golden_gate.core.stats import FloorBound, floor_bound, wilson_lower_bound


class Tally:
    """What the gate needs of a report's items, from its columns (slim.py)."""

    def __init__(self, items: ItemColumns) -> None:
        runs = items.runs
        self.items = items
        self.clusters = items.clusters
        self.counted_ids = list(compress(items.ids, runs))
        self.counted_passes = list(compress(items.passes, runs))
        self.counted_runs = list(compress(runs, runs))
        self.n = len(self.counted_runs)
        # What follows is computed when asked: a baseline needs little of it.

    @cached_property
    def errored(self) -> list[str]:
        """Items with an error run on either side: no counted run, or errors, or unanswered."""
        items = self.items
        erred = map(any, zip(map(not_, items.runs), items.errors, items.unanswered, strict=True))
        return list(compress(items.ids, erred))

    @cached_property
    def unanswered(self) -> int:
        return sum(self.items.unanswered)

    @cached_property
    def majority(self) -> list[bool]:
        """Each counted item: did a strict majority of its counted runs pass (passes * 2 >
        runs)? The majority rule of ItemResult.passed, a column at a time."""
        return list(map(lt, self.counted_runs, map(mul, self.counted_passes, repeat(2))))

    @cached_property
    def k(self) -> int:
        """Items whose counted runs passed by a strict majority."""
        return sum(self.majority)

    @cached_property
    def failed(self) -> list[str]:
        """The counted items that did not pass, sorted."""
        return sorted(compress(self.counted_ids, map(not_, self.majority)))

    @cached_property
    def _fractions(self) -> list[float]:
        return list(map(truediv, self.counted_passes, self.counted_runs))

    @cached_property
    def score_sum(self) -> float:
        return reduce(add, self._fractions, 0.0)

    @cached_property
    def runs(self) -> Counter[int]:
        return Counter(self.counted_runs)

    @cached_property
    def own(self) -> set[str]:
        """Items the pull request defined (rules.py): they count toward the floor only."""
        own = self.items.own
        return own.intersection(self.counted_ids) if own else set()

    @cached_property
    def _base(self) -> tuple[int, float]:
        """Items and score sum without the pull request's own items."""
        if not self.own:
            return self.n, self.score_sum
        base = [i not in self.own for i in self.counted_ids]
        return sum(base), reduce(add, compress(self._fractions, base), 0.0)

    @property
    def base_n(self) -> int:
        return self._base[0]

    @property
    def base_score_sum(self) -> float:
        return self._base[1]

    @cached_property
    def unstable(self) -> list[str]:
        """0 < passes < runs (passes never exceed runs): the counted runs disagree."""
        passes, runs = self.counted_passes, self.counted_runs
        return list(compress(self.counted_ids, map(mul, passes, map(ne, passes, runs))))

    @cached_property
    def variances(self) -> list[float]:
        """The unbiased per-run variance of each item with two or more runs."""
        pairs = zip(self.counted_passes, self.counted_runs, strict=True)
        return [p * (r - p) / (r * (r - 1)) for p, r in pairs if r > 1]

    @cached_property
    def counted(self) -> dict[str, tuple[int, int]]:
        """id -> (passes, runs) of the counted items."""
        pairs = zip(self.counted_passes, self.counted_runs, strict=True)
        return dict(zip(self.counted_ids, pairs, strict=True))

    def floor_bound(
        self,
        confidence: float,
        clusters: dict[str, str] | None = None,
        *,
        base_only: bool = False,
    ) -> FloorBound:
        """The floor's lower bound over the counted items (`base_only`: without the pull
        request's own), clusters widening it (stats.floor_bound); `clusters` defaults to the
        report's own."""
        clusters = self.clusters if clusters is None else clusters
        n, total = (self.base_n, self.base_score_sum) if base_only else (self.n, self.score_sum)
        if not clusters:  # the usual case, and a 100,000-item report: no loop over items
            return FloorBound(lower=wilson_lower_bound(total, n, confidence=confidence))
        keep = [not (base_only and i in self.own) for i in self.counted_ids]
        scores = list(compress(self._fractions, keep))
        groups = list(map(clusters.get, compress(self.counted_ids, keep)))
        return floor_bound(scores, groups, confidence=confidence)

    @property
    def typical_runs(self) -> int:
        return self.runs.most_common(1)[0][0] if self.runs else 1

    @property
    def score(self) -> float:
        return self.score_sum / self.n if self.n else 0.0


def tally_of(report: Report | SlimReport) -> Tally:
    return Tally(slim.of(report).items)


def changed_items(candidate: ItemColumns, baseline: ItemColumns) -> int:
    """Shared items whose question or reference changed (both record a differing hash)."""
    ours, theirs = candidate.hashes, baseline.hashes
    if candidate.ids != baseline.ids:
        by_id = dict(zip(baseline.ids, theirs, strict=True))
        theirs = list(map(by_id.get, candidate.ids))
    if ours == theirs:
        return 0
    return sum(1 for a, b in zip(ours, theirs, strict=True) if a and b and a != b)
