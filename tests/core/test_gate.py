import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from golden_gate.core.gate import evaluate_gate
from golden_gate.core.item_result import ItemResult
from golden_gate.core.report import DatasetInfo, Report
from golden_gate.core.verdict import GateSettings
from tests.helpers import ids, report


def test_ten_regressions_of_200_fail_with_the_ids():
    names = ids(200)
    baseline = report(dict.fromkeys(names, True))
    lost = set(names[::20])
    candidate = report({i: i not in lost for i in names})
    gate = evaluate_gate(candidate, baseline)
    assert gate.verdict == "failed"
    assert [r.code for r in gate.reasons] == ["significant-regression"]
    assert gate.comparison.regressions == sorted(lost)
    assert gate.comparison.b == 10 and gate.comparison.c == 0
    assert gate.comparison.p_value == 1 / 1024
    assert gate.comparison.net_drop == 0.05
    assert round(gate.lower_bound, 4) == 0.9104


def test_identical_reports_pass():
    outcomes = {i: n % 7 != 0 for n, i in enumerate(ids(100))}
    gate = evaluate_gate(report(outcomes), report(outcomes), GateSettings(floor=0.5))
    assert gate.passed
    assert gate.comparison.p_value == 1.0
    assert any("no shared item changed outcome" in n for n in gate.notes)  # b + c = 0


def test_below_floor_without_baseline():
    outcomes = {i: n < 15 for n, i in enumerate(ids(20))}
    gate = evaluate_gate(report(outcomes), None)
    assert gate.verdict == "failed"
    assert [r.code for r in gate.reasons] == ["below-floor"]
    assert "no baseline" in " ".join(gate.notes)
    assert gate.comparison is None


def test_nineteen_of_twenty_passes_the_default_floor_is_refused():
    outcomes = {i: n < 19 for n, i in enumerate(ids(20))}
    gate = evaluate_gate(report(outcomes), None)
    assert round(gate.lower_bound, 4) == 0.7639
    assert not gate.passed  # 0.7639 < 0.80: twenty items cannot prove 80 %
    assert "76%" in gate.notes[0]


def test_empty_report_is_an_explicit_failure():
    gate = evaluate_gate(Report(judge="x", results=[]), None)
    assert gate.verdict == "failed"
    assert gate.reasons[0].code == "no-results"
    assert gate.lower_bound is None


def test_all_errored_items_is_no_results():
    results = [ItemResult(id=i, passes=0, runs=0, errors=1) for i in ids(3)]
    gate = evaluate_gate(Report(judge="x", results=results), None)
    assert gate.reasons[0].code == "no-results"
    assert gate.errored == ids(3)


def test_small_drop_is_not_significant_and_says_underpowered():
    names = ids(200)
    baseline = report(dict.fromkeys(names, True))
    candidate = report({i: i not in names[:3] for i in names})
    gate = evaluate_gate(candidate, baseline)
    assert gate.passed
    assert gate.comparison.underpowered
    assert gate.comparison.regressions == names[:3]


def test_significant_but_below_min_drop_passes():
    # 40 regressions, 15 improvements on 2,000 items: p < 0.05 but net drop 1.25 % < 3 %.
    names = ids(2000)
    base = {i: n >= 15 for n, i in enumerate(names)}
    cand = dict(base)
    for i in names[:15]:
        cand[i] = True
    for i in names[100:140]:
        cand[i] = False
    gate = evaluate_gate(report(cand), report(base))
    assert gate.comparison.p_value < 0.05
    assert not gate.comparison.significant
    assert gate.passed


def test_items_only_on_one_side_are_reported_not_paired():
    names = ids(100)
    baseline = report({**dict.fromkeys(names, True), "old": True})
    candidate = report({**dict.fromkeys(names, True), "new": False})
    gate = evaluate_gate(candidate, baseline, GateSettings(floor=0.1))
    assert gate.comparison.only_in_candidate == ["new"]
    assert gate.comparison.only_in_baseline == ["old"]
    assert gate.comparison.shared == 100
    # One baseline item of 101 left out: said with its id, not counted (at most 2 %).
    assert any("1 baseline item(s) missing" in w and "old" in w for w in gate.warnings)


def test_baseline_items_a_report_leaves_out_count_as_failed_runs_above_two_percent():
    baseline = report({"a": True, "b": True, "old": True})
    candidate = report({"a": True, "b": True, "new": False})
    gate = evaluate_gate(candidate, baseline, GateSettings(floor=0.1))
    assert gate.comparison.only_in_baseline == [] and gate.comparison.regressions == ["old"]
    assert any("counted as failed runs" in w for w in gate.warnings)


def test_comparability_warning_and_fatal_setting():
    outcomes = dict.fromkeys(ids(50), True)
    baseline = report(
        outcomes,
        judge="openai:gpt-4o",
        judge_prompt_hash="aaa",
        dataset=DatasetInfo(fingerprint="sha256:1", tags=["smoke"]),
    )
    candidate = report(
        outcomes,
        judge="openai:gpt-4.1-mini",
        judge_prompt_hash="bbb",
        dataset=DatasetInfo(fingerprint="sha256:1", tags=["smoke"]),
    )
    gate = evaluate_gate(candidate, baseline)
    assert gate.passed and gate.inconclusive is None
    assert len(gate.warnings) == 2
    assert all("yardstick moved" in w for w in gate.warnings)
    strict = evaluate_gate(candidate, baseline, GateSettings(require_comparable=True))
    assert [r.code for r in strict.reasons] == ["not-comparable"]
    # Another golden set is no warning (issue 30): no comparison at all.
    other = candidate.model_copy(
        update={"dataset": DatasetInfo(fingerprint="sha256:2", tags=["smoke"])}
    )
    unrelated = evaluate_gate(other, baseline)
    assert unrelated.inconclusive == (
        "not comparable with the baseline: it was made from another golden set (the same tags "
        "select items with another dataset fingerprint); regenerate the baseline from this "
        "golden set and selection (golden-gate eval, or the Action's baseline mode)"
    )
    # Other tags select other items (a full-set baseline, a smoke run): compared item by item.
    subset = candidate.model_copy(
        update={"dataset": DatasetInfo(fingerprint="sha256:2", tags=["nightly"])}
    )
    assert evaluate_gate(subset, baseline).inconclusive is None


def test_minimal_baseline_without_our_fields_loads_and_compares():
    from golden_gate.core.report_file import parse_report

    minimal = parse_report(
        '{"judge": "openai:gpt-4.1-mini", "results": ['
        '{"id": "a", "tags": ["smoke"], "passes": 3, "runs": 3},'
        '{"id": "b", "tags": ["smoke"], "passes": 1, "runs": 3}]}',
        source="baseline.json",
    )
    candidate = report({"a": False, "b": True})
    gate = evaluate_gate(candidate, minimal, GateSettings(floor=0.01))
    assert gate.comparison.regressions == ["a"]
    assert gate.comparison.improvements == ["b"]
    # Three runs an item in the baseline against one: a steadier baseline, not another yardstick.
    assert gate.warnings == []
    one_run = parse_report(
        '{"judge": "openai:gpt-4.1-mini", "results": ['
        '{"id": "a", "tags": ["smoke"], "passes": 1, "runs": 1},'
        '{"id": "b", "tags": ["smoke"], "passes": 0, "runs": 1}]}',
        source="baseline.json",
    )
    assert evaluate_gate(candidate, one_run, GateSettings(floor=0.01)).warnings == []


outcome_lists = st.lists(st.booleans(), min_size=1, max_size=300)


@settings(max_examples=150, deadline=None)
@given(outcome_lists)
def test_identical_reports_never_fail_the_regression_test(outcomes):
    rep = report(dict(zip(ids(len(outcomes)), outcomes, strict=True)))
    gate = evaluate_gate(rep, rep)
    assert not any(r.code == "significant-regression" for r in gate.reasons)
    assert gate.comparison.p_value == 1.0


@settings(max_examples=150, deadline=None)
@given(outcome_lists, outcome_lists, st.data())
def test_one_more_failure_never_raises_p(base_list, cand_list, data):
    n = min(len(base_list), len(cand_list))
    names = ids(n)
    base = dict(zip(names, base_list[:n], strict=True))
    cand = dict(zip(names, cand_list[:n], strict=True))
    passing = [i for i in names if cand[i]]
    if not passing:
        return
    flip = data.draw(st.sampled_from(passing))
    worse = {**cand, flip: False}
    before = evaluate_gate(report(cand), report(base)).comparison.p_value
    after = evaluate_gate(report(worse), report(base)).comparison.p_value
    assert after <= before + 1e-12


# -- per-item scores, clusters, run settings, power (step 9) -----------------------------------

from golden_gate.core.report import RunSettings  # noqa: E402
from golden_gate.core.sign_flip import sign_test_p  # noqa: E402


def scored(scores: dict[str, tuple[int, int]], *, clusters=None, **kw) -> Report:
    """A report of items with (passes, runs) each, optionally with clusters."""
    clusters = clusters or {}
    return Report(
        judge="openai:gpt-4.1-mini",
        results=[
            ItemResult(id=i, passes=p, runs=r, cluster=clusters.get(i))
            for i, (p, r) in scores.items()
        ],
        **kw,
    )


def test_several_runs_use_every_run_not_the_majority():
    names = ids(200)
    baseline = scored(dict.fromkeys(names, (3, 3)))
    # Forty items lose one run in three: no item's majority changes, the score does.
    worse = set(names[::5])
    candidate = scored({i: (2, 3) if i in worse else (3, 3) for i in names})
    gate = evaluate_gate(candidate, baseline, GateSettings(floor=0.5))
    assert gate.k == 200  # every item still passes by majority
    assert gate.comparison.regressions == sorted(worse)
    assert gate.comparison.net_drop == pytest.approx(40 / 3 / 200)
    assert gate.comparison.method == "sign test"  # all differences equal: exactly the sign test
    assert gate.comparison.p_value == sign_test_p(40, 0)
    assert [r.code for r in gate.reasons] == ["significant-regression"]
    assert gate.pass_rate == pytest.approx(1 - 40 / 3 / 200)
    assert gate.pass_rate_text == "93.3% of runs over 200 items"


def test_mixed_differences_use_the_exact_sign_flip_test():
    names = ids(60)
    baseline = scored(dict.fromkeys(names, (3, 3)))
    candidate = scored(
        {i: ((0, 3) if n < 4 else (2, 3) if n < 10 else (3, 3)) for n, i in enumerate(names)}
    )
    comparison = evaluate_gate(candidate, baseline, GateSettings(floor=0.1)).comparison
    assert comparison.method == "exact sign-flip"
    assert comparison.p_value == pytest.approx(0.5**10, rel=1e-12)  # all of them negative
    assert comparison.b == 10 and comparison.units == 10


def test_clusters_flip_together_so_related_items_are_not_independent_evidence():
    names = ids(40)
    baseline = report(dict.fromkeys(names, True))
    lost = names[:8]
    candidate = report({i: i not in lost for i in names})
    independent = evaluate_gate(candidate, baseline, GateSettings(floor=0.1)).comparison
    assert independent.p_value == 0.5**8 and independent.clusters is None
    # The same eight items are two clusters of four questions about one page each.
    clusters = {i: ("page-a" if n < 4 else "page-b") for n, i in enumerate(lost)}
    clustered_base = baseline.model_copy(
        update={
            "results": [
                r.model_copy(update={"cluster": clusters.get(r.id)}) for r in baseline.results
            ]
        }
    )
    clustered = evaluate_gate(candidate, clustered_base, GateSettings(floor=0.1)).comparison
    assert clustered.units == 2 and clustered.clusters == 2
    assert clustered.p_value == 0.25  # two independent units, both negative
    assert not clustered.significant and clustered.underpowered


def test_no_shared_items_does_not_claim_no_significant_regression():
    # The baseline's item is not among the tags this report selected: not missing from it.
    baseline = report({"b": True}, dataset=DatasetInfo(tags=["nightly"]))
    baseline.results[0].tags = ["nightly"]
    candidate = report({"a": True}, dataset=DatasetInfo(tags=["smoke"]))
    gate = evaluate_gate(candidate, baseline, GateSettings(floor=0.01))
    assert gate.passed
    assert "no significant regression" not in gate.headline
    assert "no items shared with the baseline" in gate.headline


def test_what_n_can_prove_rounds_down():
    outcomes = {i: n < 23 for n, i in enumerate(ids(24))}
    gate = evaluate_gate(report(outcomes), None)
    assert gate.lower_bound < 0.80 and not gate.passed  # 0.798
    assert "fewer than 79%" in gate.notes[0]


def test_an_unreachable_floor_is_said():
    gate = evaluate_gate(report(dict.fromkeys(ids(10), True)), None)
    assert any("out of reach" in n and "10 of 10" in n for n in gate.notes)
    assert not any(
        "out of reach" in n for n in evaluate_gate(report(dict.fromkeys(ids(30), True)), None).notes
    )


def test_significant_but_small_drop_is_said_not_silent():
    names = ids(1000)
    baseline = report(dict.fromkeys(names, True))
    candidate = report({i: n >= 20 for n, i in enumerate(names)})  # b = 20, c = 0: 2.0 %
    gate = evaluate_gate(candidate, baseline)
    assert gate.passed and gate.comparison.p_value < 0.05
    assert any("the drop is real" in n and "not above min-drop" in n for n in gate.notes)


def test_every_comment_says_what_drop_the_gate_could_catch():
    names = ids(200)
    base = report({i: n % 10 != 0 for n, i in enumerate(names)})
    gate = evaluate_gate(base, base)
    assert gate.power is not None and gate.power.detectable_drop is not None
    assert any(n.startswith("power: 200 items catch a drop of") for n in gate.notes)


def test_run_settings_that_differ_move_the_yardstick():
    names = ids(50)
    one = scored(dict.fromkeys(names, (1, 1)), run_settings=RunSettings(runs=1))
    three = scored(dict.fromkeys(names, (3, 3)), run_settings=RunSettings(runs=3))
    warnings = evaluate_gate(three, one).warnings
    assert any("runs per item differ (baseline 1, this run 3)" in w for w in warnings)
    hot = scored(
        dict.fromkeys(names, (1, 1)), run_settings=RunSettings(runs=1, judge_temperature=0.7)
    )
    cold = one.model_copy(update={"run_settings": RunSettings(runs=1, judge_temperature=0.0)})
    assert any("judge temperature differ" in w for w in evaluate_gate(hot, cold).warnings)
    strict = evaluate_gate(three, one, GateSettings(require_comparable=True))
    assert "not-comparable" in [r.code for r in strict.reasons]
    # The other way round is `mode: baseline`'s default (baseline-runs 3, pull requests 1): the
    # same per-item score from a steadier sample, comparable even when comparability is required.
    steady = evaluate_gate(one, three, GateSettings(require_comparable=True, floor=0))
    assert not any("runs" in w for w in steady.warnings)
    assert "not-comparable" not in [r.code for r in steady.reasons]
    # Inferred from the results when a report does not record its settings.
    bare = scored(dict.fromkeys(names, (1, 1)))
    assert any(
        "has 1 run(s) per item, this run 3" in w for w in evaluate_gate(three, bare).warnings
    )
    # A baseline made by 0.1, which counted re-runs of failures: said, so it is made again.
    old = bare.model_copy(update={"format": "golden-gate/1", "tool_version": "0.1.0"})
    assert any("golden-gate 0.1.0" in w for w in evaluate_gate(one, old).warnings)


def test_the_power_line_is_about_the_items_the_baseline_paired():
    names = ids(1000)
    candidate = report({i: n % 10 != 0 for n, i in enumerate(names)})
    baseline = report({i: n % 10 != 0 for n, i in enumerate(names[:50])})
    gate = evaluate_gate(candidate, baseline, GateSettings(floor=0.5))
    assert gate.comparison.shared == 50
    assert any(n.startswith("power: 50 items") for n in gate.notes)


def test_four_clusters_can_never_show_a_drop_and_the_power_line_says_so():
    names = ids(400)
    clusters = {i: f"page-{n % 4}" for n, i in enumerate(names)}
    base = scored(dict.fromkeys(names, (1, 1)), clusters=clusters)
    cand = scored({i: (0, 1) if n < 40 else (1, 1) for n, i in enumerate(names)})
    gate = evaluate_gate(cand, base, GateSettings(floor=0.5))
    assert gate.comparison.independent_units == 4 and not gate.comparison.significant
    assert any("cannot reliably catch any drop" in n for n in gate.notes)


def test_verdicts_the_judge_could_not_give_never_carry_a_pass_they_could_flip():
    names = ids(200)
    baseline = report(dict.fromkeys(names, True))
    # 19 regressed items whose runs the judge failed on: not counted, the gate would pass.
    broken = set(names[:19])
    results = [
        ItemResult(id=i, passes=0, runs=0, errors=1)
        if i in broken
        else ItemResult(id=i, passes=1, runs=1)
        for i in names
    ]
    gate = evaluate_gate(Report(judge="openai:gpt-4.1-mini", results=results), baseline)
    assert gate.passed and gate.inconclusive is not None
    assert (
        "19 run(s) got no verdict" in gate.inconclusive
        and "significant regression" in gate.inconclusive
    )
    # One judge failure that could not change anything is just that.
    few = [ItemResult(id=names[0], passes=0, runs=0, errors=1)] + [
        ItemResult(id=i, passes=1, runs=1) for i in names[1:]
    ]
    assert evaluate_gate(Report(judge="j", results=few), baseline).inconclusive is None


def test_floor_0_switches_the_floor_off_and_alpha_0_the_paired_test():
    from golden_gate.core.gate import evaluate_gate
    from golden_gate.core.verdict import GateSettings
    from tests.helpers import ids, report

    names = ids(40)
    base = report(dict.fromkeys(names, True))
    low = report({i: i not in names[:30] for i in names})  # 10/40: far below any floor
    off_floor = evaluate_gate(low, base, GateSettings(floor=0))
    assert [r.code for r in off_floor.reasons] == ["significant-regression"]
    assert any("floor 0: the floor is off" in note for note in off_floor.notes)
    alone = evaluate_gate(low, None, GateSettings(floor=0))
    assert alone.passed and "(floor off)" in alone.headline
    assert any("nothing can fail it" in note for note in alone.notes)
    off_test = evaluate_gate(low, base, GateSettings(alpha=0))
    assert [r.code for r in off_test.reasons] == ["below-floor"]
    assert off_test.comparison is not None and not off_test.comparison.significant
    assert not off_test.comparison.underpowered
    assert off_test.power is not None and "paired test is off" in off_test.power.sentence(40)
    both = evaluate_gate(low, base, GateSettings(floor=0, alpha=0))
    assert both.passed and "paired test off (alpha 0)" in both.headline


def test_floor_and_alpha_0_in_the_cli_and_comment(tmp_path):
    from tests.helpers import golden_gate, ids, report

    names = ids(20)
    base = tmp_path / "b.json"
    base.write_text(report(dict.fromkeys(names, True)).model_dump_json())
    cand = tmp_path / "c.json"
    cand.write_text(report({i: i not in names[:8] for i in names}).model_dump_json())
    assert golden_gate("gate", cand, base, "--floor", "0").returncode == 1  # the test still fails
    assert golden_gate("gate", cand, base, "--floor", "0", "--alpha", "0").returncode == 0
    md = golden_gate("report", cand, "--baseline", base, "--floor", "0", "--alpha", "0")
    assert "floor off" in md.stdout and "alpha 0: test off" in md.stdout
    bad = golden_gate("gate", cand, "--alpha", "-0.1")
    assert bad.returncode == 2 and "--alpha: alpha must be in [0, 1)" in bad.stderr
