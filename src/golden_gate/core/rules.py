"""The gate's own rules come from the base branch: a pull request cannot edit its way to a pass.

A pull request could delete, untag or reword the very items that regressed, and its own gate
would then compare only what is left. So, like the baseline, the golden set is read at the base
ref: every item the base branch selects is evaluated as the base branch defines it (and paired
with the baseline), and the pull request's new or reworded items are evaluated beside them,
marked as the pull request's, counted by the floor only. The comment says at the top what the
pull request changed.

Pairing follows the baseline report's own record (id and item hash), wherever the golden set
was read from: when the base ref has no golden set at the path the pull request names (a
renamed file, `golden` pointed at a copy), an item whose id and hash match the baseline's record
is the base's, and pairs. A baseline item the run does not evaluate as the base defines it is
*dropped*: the report records its question and hash but not its key points, so it cannot be
evaluated again, and it counts as a failed item in the paired comparison (core/comparison.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from golden_gate.core.golden import GoldenItem, item_hash, select
from golden_gate.core.item_result import ItemResult
from golden_gate.core.report import Report, RuleChanges

PR_SUFFIX = "@pull-request"  # a reworded item's pull-request version, beside the base one


def gate_items(
    base: Sequence[GoldenItem], head: Sequence[GoldenItem], tags: Sequence[str]
) -> tuple[list[GoldenItem], RuleChanges]:
    """What to evaluate: the base branch's selection as it defines it, then the PR's own items.

    `base` and `head` are the whole golden sets at the base ref and in the pull request.
    """
    base_selected = select(base, tags)
    head_by_id = {item.id: item for item in head}
    head_selected = select(head, tags)
    base_ids = {item.id for item in base_selected}
    removed = [item.id for item in base_selected if item.id not in head_by_id]
    untagged = [
        item.id
        for item in base_selected
        if item.id in head_by_id and not select([head_by_id[item.id]], tags)
    ]
    reworded = [
        item.id
        for item in base_selected
        if item.id in head_by_id
        and select([head_by_id[item.id]], tags)
        and item_hash(head_by_id[item.id]) != item_hash(item)
    ]
    added = [item.id for item in head_selected if item.id not in base_ids]
    items = list(base_selected)
    for item_id in reworded:
        items.append(head_by_id[item_id].model_copy(update={"id": item_id + PR_SUFFIX}))
    taken = {item.id for item in items}
    # An added id equal to a marked copy's would replace a comparison: the marked copy stays.
    items.extend(head_by_id[item_id] for item_id in added if item_id not in taken)
    changes = RuleChanges(
        removed=sorted(removed), untagged=sorted(untagged), reworded=sorted(reworded), added=added
    )
    return items, changes


def mark_origins(report: Report, changes: RuleChanges) -> None:
    """Record on each result whether the base branch or the pull request defined it."""
    own = {*changes.added, *(i + PR_SUFFIX for i in changes.reworded)}
    for result in report.results:
        result.origin = "pull-request" if result.id in own else "base"
    report.rule_changes = changes


def gate_items_by_record(
    head: Sequence[GoldenItem], tags: Sequence[str], baseline: Report | None
) -> tuple[list[GoldenItem], RuleChanges]:
    """What to evaluate when the base ref has no golden set at this path: the pull request's
    selection, each item the base's when the baseline records the same id and item hash (a
    baseline without hashes cannot vouch for any), the pull request's own otherwise."""
    recorded = {r.id: r.item_hash for r in baseline.results} if baseline is not None else {}
    items: list[GoldenItem] = []
    reworded: list[str] = []
    added: list[str] = []
    for item in select(head, tags):
        known = recorded.get(item.id)
        if known is not None and known == item_hash(item):
            items.append(item)
        elif item.id in recorded:  # the baseline's item, changed: a copy of the pull request's
            reworded.append(item.id)
            items.append(item.model_copy(update={"id": item.id + PR_SUFFIX}))
        else:
            added.append(item.id)
            items.append(item)
    return items, RuleChanges(reworded=sorted(reworded), added=added)


def dropped_items(
    items: Sequence[GoldenItem], changes: RuleChanges, baseline: Report, tags: Sequence[str]
) -> list[str]:
    """The baseline's items that this selection would hold (by the tags the baseline records)
    and that the run does not evaluate as the base defines them, sorted."""
    own = {*changes.added, *(i + PR_SUFFIX for i in changes.reworded)}
    evaluated = {item.id for item in items if item.id not in own}
    wanted = {t.strip() for t in tags if t.strip()}
    return sorted(
        r.id
        for r in baseline.results
        if not r.errored and r.id not in evaluated and _selected(r, wanted)
    )


def _selected(result: ItemResult, wanted: set[str]) -> bool:
    return not wanted or bool(wanted.intersection(result.tags))
