"""The gate's rules come from the base branch: golden-set edits cannot hide regressions."""

from golden_gate.core.gate import evaluate_gate
from golden_gate.core.golden import GoldenItem, item_hash
from golden_gate.core.item_result import ItemResult
from golden_gate.core.report import DatasetInfo, Report, RuleChanges
from golden_gate.core.rules import (
    PR_SUFFIX,
    dropped_items,
    gate_items,
    gate_items_by_record,
    mark_origins,
)
from golden_gate.rendering.render import render_comment
from tests.helpers import ids, report


def golden(n: int, **overrides: dict) -> list[GoldenItem]:
    items = [
        GoldenItem(
            id=i, question=f"What about {i}?", reference_key_points=[f"{i} fact"], tags=["smoke"]
        )
        for i in ids(n)
    ]
    return [i.model_copy(update=overrides.get(i.id, {})) for i in items]


def test_deleted_untagged_and_reworded_items_are_still_evaluated_as_the_base_defines_them():
    base = golden(6)
    names = ids(6)
    head = [
        item.model_copy(update={"tags": ["nightly"]})
        if item.id == names[1]
        else item.model_copy(update={"reference_key_points": ["anything goes"]})
        if item.id == names[2]
        else item
        for item in base
        if item.id != names[0]  # deleted
    ]
    head.append(GoldenItem(id="new-one", question="New?", tags=["smoke"]))
    items, changes = gate_items(base, head, ["smoke"])
    assert changes.removed == [names[0]]
    assert changes.untagged == [names[1]]
    assert changes.reworded == [names[2]]
    assert changes.added == ["new-one"]
    by_id = {i.id: i for i in items}
    # The base branch's six, as it defines them, then the pull request's own two.
    assert [i.id for i in items] == [*names, names[2] + PR_SUFFIX, "new-one"]
    assert by_id[names[2]].reference_key_points == [f"{names[2]} fact"]
    assert by_id[names[2] + PR_SUFFIX].reference_key_points == ["anything goes"]


def test_unchanged_golden_set_changes_nothing():
    items, changes = gate_items(golden(5), golden(5), ["smoke"])
    assert [i.id for i in items] == ids(5) and not changes.any


def test_hiding_the_regressed_items_still_fails_and_the_comment_says_so():
    names = ids(200)
    base_items = golden(200)
    regressed = set(names[:12])
    # The pull request deletes the twelve items it broke from the golden set.
    head_items = [i for i in base_items if i.id not in regressed]
    items, changes = gate_items(base_items, head_items, ["smoke"])
    assert len(items) == 200  # all twelve are still evaluated
    baseline = report(dict.fromkeys(names, True))
    candidate = report({i.id: i.id not in regressed for i in items})
    mark_origins(candidate, changes)
    gate = evaluate_gate(candidate, baseline)
    assert not gate.passed and gate.comparison.regressions == sorted(regressed)
    comment = render_comment(candidate, gate, baseline=baseline)
    first_lines = "\n".join(comment.splitlines()[:8])
    assert "This pull request changes the gate's own rules:" in first_lines
    assert "items removed: <code>q0000</code>" in first_lines
    assert all(r.origin == "base" for r in candidate.results)


def test_reworded_copies_count_for_the_floor_only():
    base_items = golden(3)
    head_items = [base_items[0].model_copy(update={"question": "Easier?"}), *base_items[1:]]
    items, changes = gate_items(base_items, head_items, ["smoke"])
    results = [ItemResult(id=i.id, passes=1, runs=1) for i in items]
    candidate = Report(judge="j", results=results)
    mark_origins(candidate, changes)
    baseline = report(dict.fromkeys(ids(3), True), judge="j")
    gate = evaluate_gate(candidate, baseline, None)
    assert gate.n == 4 and gate.comparison.shared == 3
    assert gate.comparison.only_in_candidate == [ids(1)[0] + PR_SUFFIX]
    assert candidate.by_id()[ids(1)[0] + PR_SUFFIX].origin == "pull-request"


def test_hostile_ids_in_the_rules_banner_are_escaped():
    base_items = golden(2)
    evil = GoldenItem(id="@admin <img src=x> [x](http://e) #1", question="q?", tags=["smoke"])
    items, changes = gate_items(base_items, [*base_items, evil], ["smoke"])
    candidate = Report(judge="j", results=[ItemResult(id=i.id, passes=1, runs=1) for i in items])
    mark_origins(candidate, changes)
    comment = render_comment(candidate, evaluate_gate(candidate, None))
    banner = next(line for line in comment.splitlines() if "gate's own rules" in line)
    assert "<img" not in banner and "](http" not in banner and "@admin" not in banner


def test_the_pull_requests_own_items_neither_pair_nor_carry_the_floor():
    names = ids(100)
    base_items = golden(100)
    # The base branch's items: 72 of 100 pass, below the 0.80 floor.
    # The pull request adds 300 trivial items, and re-adds a deleted id the baseline failed.
    head_items = (
        [*base_items]
        + [GoldenItem(id=f"easy-{n}", question="What is 2+2?", tags=["smoke"]) for n in range(300)]
        + [GoldenItem(id="old-failure", question="What is 1+1?", tags=["smoke"])]
    )
    items, changes = gate_items(base_items, head_items, ["smoke"])
    candidate = Report(
        judge="j",
        results=[
            ItemResult(id=i.id, passes=int(not (i.id in names and names.index(i.id) >= 72)), runs=1)
            for i in items
        ],
    )
    mark_origins(candidate, changes)
    baseline = report({**dict.fromkeys(names, True), "old-failure": False}, judge="j")
    gate = evaluate_gate(candidate, baseline)
    assert "old-failure" not in gate.comparison.improvements  # the pull request's: not paired
    assert gate.comparison.shared == 100 and gate.comparison.b == 28
    assert not gate.passed
    floor_reasons = [r for r in gate.reasons if "base branch's items" in r.message]
    assert [r.code for r in floor_reasons] == ["below-floor"]  # said once


def recorded(items: list[GoldenItem], passed: bool = True) -> Report:
    """A baseline report recording `items` (ids, tags and item hashes), each passed or not."""
    return Report(
        judge="j",
        results=[
            ItemResult(id=i.id, tags=i.tags, passes=int(passed), runs=1, item_hash=item_hash(i))
            for i in items
        ],
    )


def test_without_a_base_golden_set_the_baselines_record_decides_what_pairs():
    base_items = golden(4)
    names = ids(4)
    baseline = recorded(base_items)
    head = [
        base_items[0],  # same id and hash: the base's
        base_items[1].model_copy(update={"reference_key_points": ["easy"]}),  # changed
        base_items[3].model_copy(update={"tags": ["nightly"]}),  # untagged
        GoldenItem(id="new-one", question="New?", tags=["smoke"]),
    ]
    items, changes = gate_items_by_record(head, ["smoke"], baseline)
    assert [i.id for i in items] == [names[0], names[1] + PR_SUFFIX, "new-one"]
    assert changes.reworded == [names[1]] and changes.added == ["new-one"]
    assert dropped_items(items, changes, baseline, ["smoke"]) == names[1:]
    # A baseline without item hashes cannot vouch for any item: nothing of the head pairs.
    bare = Report(
        judge="j", results=[ItemResult(id=n, tags=["smoke"], passes=1, runs=1) for n in names]
    )
    items, changes = gate_items_by_record(base_items, ["smoke"], bare)
    assert changes.reworded == names and dropped_items(items, changes, bare, ["smoke"]) == names


def test_dropped_items_count_as_failed_in_the_comparison_and_only_by_the_recorded_tags():
    names = ids(40)
    base_items = [*golden(40), GoldenItem(id="other", question="Other?", tags=["nightly"])]
    baseline = recorded(base_items)
    # The run evaluates 30 of the 40 smoke items, all passing: 10 were dropped.
    items = base_items[:30]
    changes = RuleChanges()
    dropped = dropped_items(items, changes, baseline, ["smoke"])
    assert dropped == names[30:]  # "other" is not selected by the run's tags: not dropped
    candidate = Report(
        judge="j",
        dataset=DatasetInfo(tags=["smoke"]),  # as a run records its selection
        results=[ItemResult(id=i.id, passes=1, runs=1) for i in items],
    )
    mark_origins(candidate, changes.model_copy(update={"dropped": dropped}))
    gate = evaluate_gate(candidate, baseline)
    assert gate.comparison.shared == 40 and gate.comparison.regressions == names[30:]
    assert gate.comparison.dropped == names[30:] and "other" in gate.comparison.only_in_baseline
    assert not gate.passed and gate.reasons[0].code == "significant-regression"


def test_a_baseline_that_pairs_with_nothing_it_names_is_never_a_silent_pass():
    base_items = golden(30)
    baseline = recorded(base_items)
    # Every item reworded in the pull request's own copy, and the baseline's tags select none
    # of them (so none is dropped): the regression test has nothing to pair.
    baseline = baseline.model_copy(
        update={"results": [r.model_copy(update={"tags": ["old"]}) for r in baseline.results]}
    )
    head = [i.model_copy(update={"question": i.question + " (easy)"}) for i in base_items]
    items, changes = gate_items_by_record(head, ["smoke"], baseline)
    assert dropped_items(items, changes, baseline, ["smoke"]) == []
    candidate = Report(
        judge="j",
        dataset=DatasetInfo(tags=["smoke"]),
        results=[ItemResult(id=i.id, passes=1, runs=1) for i in items],
    )
    mark_origins(candidate, changes)
    gate = evaluate_gate(candidate, baseline, None)
    assert gate.comparison.shared == 0
    assert not gate.passed
    assert [r.code for r in gate.reasons] == ["not-comparable"]
    assert "it names 30 of this run's items" in gate.reasons[0].message
