"""The gate's rules come from the base branch: golden-set edits cannot hide regressions."""

from golden_gate.core.gate import evaluate_gate
from golden_gate.core.golden import GoldenItem
from golden_gate.core.report import ItemResult, Report
from golden_gate.core.rules import PR_SUFFIX, gate_items, mark_origins
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
