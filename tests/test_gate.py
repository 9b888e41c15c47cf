from hypothesis import given, settings
from hypothesis import strategies as st

from golden_gate.gate import GateSettings, evaluate_gate
from golden_gate.report import DatasetInfo, ItemResult, Report
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
    assert any("is not evidence" in n for n in gate.notes)  # b + c = 0 is underpowered


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
    baseline = report({"a": True, "b": True, "old": True})
    candidate = report(
        {"a": True, "b": True, "new": False},
    )
    gate = evaluate_gate(candidate, baseline, GateSettings(floor=0.1))
    assert gate.comparison.only_in_candidate == ["new"]
    assert gate.comparison.only_in_baseline == ["old"]
    assert gate.comparison.shared == 2


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
        dataset=DatasetInfo(fingerprint="sha256:2", tags=["smoke"]),
    )
    gate = evaluate_gate(candidate, baseline)
    assert gate.passed
    assert len(gate.warnings) == 3
    assert all("yardstick moved" in w for w in gate.warnings)
    strict = evaluate_gate(candidate, baseline, GateSettings(require_comparable=True))
    assert [r.code for r in strict.reasons] == ["not-comparable"]


def test_minimal_baseline_without_our_fields_loads_and_compares():
    from golden_gate.report import parse_report

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
    assert gate.warnings == []


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
