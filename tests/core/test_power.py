"""The power statement's sentence, and what it reads of a comparison (core/power.py)."""

from __future__ import annotations

import json

from golden_gate.core.gate import evaluate_gate
from golden_gate.core.item_model import ItemModel
from golden_gate.core.power import PowerNote, statement
from golden_gate.core.report import Report
from golden_gate.core.report_file import parse_report
from golden_gate.core.verdict import GateSettings


def one_run(passes: list[int]) -> Report:
    results = [{"id": f"q{i}", "tags": [], "passes": p, "runs": 1} for i, p in enumerate(passes)]
    return parse_report(json.dumps({"judge": "j", "results": results}), source="r.json")


def test_two_shapes_are_said_as_a_range_and_named():
    note = PowerNote(
        detectable_drop=0.121,
        detectable_concentrated=0.157,
        items_for_drop=117,
        items_for_concentrated=152,
        runs=3,
        basis="b",
    )
    text = note.sentence(30)
    assert text == (
        "power: 30 items × 3 runs catch a drop of 12.1–15.7 points 80% of the time; "
        "catching a 5-point drop needs about 117–152 items."
    )
    assert note.detail() == (
        "b; spread over every item: 12.1 points (117 items for 5); "
        "on the most reliable items: 15.7 points (152 items for 5)"
    )


def test_a_range_is_said_low_to_high_whichever_shape_is_lower():
    note = PowerNote(
        detectable_drop=0.03,
        detectable_concentrated=0.028,
        items_for_drop=160,
        items_for_concentrated=140,
        runs=3,
        basis="b",
    )
    text = note.sentence(120)
    assert "catch a drop of 2.8–3 points" in text and "needs about 140–160 items" in text
    assert "(" not in text  # the basis is the detail's, not the sentence's


def test_figures_that_agree_are_one_figure_without_the_shapes_clause():
    note = PowerNote(
        detectable_drop=0.0251,
        detectable_concentrated=0.0259,
        items_for_drop=400,
        items_for_concentrated=420,
        basis="b",
    )
    text = note.sentence(1000)
    assert "catch a drop of 2.6 points" in text  # rounded up, never understated
    assert "a 5-point drop is within reach" in text
    assert "–" not in text


def test_a_shape_no_drop_catches_is_said():
    note = PowerNote(
        detectable_drop=0.2,
        detectable_concentrated=None,
        items_for_drop=None,
        items_for_concentrated=None,
        basis="b",
    )
    text = note.sentence(12)
    assert "catch a drop of 20 points spread over every item" in text
    assert "no drop concentrated" in text
    assert "no number of items catches a 5-point drop" in text


def test_the_statement_computes_both_shapes_for_the_test_the_gate_runs():
    model = ItemModel(mean=0.895, within=0.04, base_runs=3, runs=3)
    note = statement(model, n=30, settings=GateSettings(), source="s")
    assert note.detectable_drop is not None and note.detectable_concentrated is not None
    # A drop on the most reliable items changes the most outcomes: the harder one to catch.
    assert note.detectable_concentrated > note.detectable_drop + 0.01
    assert note.items_for_concentrated > note.items_for_drop


def test_items_that_happened_not_to_change_do_not_prove_every_item_steady():
    # 24 one-run items, none changed: before, the statement took every item as steady and said
    # a 5-point drop needs about 100 items; one change more than seen says what 24 can show.
    base = one_run([1] * 22 + [0] * 2)
    gate = evaluate_gate(base, base, GateSettings(floor=0))
    assert gate.power is not None and gate.power.items_for_drop is not None
    assert gate.power.items_for_drop > 150


def test_no_drop_is_caught_no_more_often_than_a_false_alarm():
    from golden_gate.core.item_model import CONCENTRATED, SPREAD, paired_power

    for loss in (SPREAD, CONCENTRATED):
        model = ItemModel(mean=0.9, within=0.05, base_runs=3, runs=3, hit_loss=loss)
        assert paired_power(model, 0.0, 30, alpha=0.05, min_drop=0.02) <= 0.05
