"""Baseline items a candidate report leaves out are never silent (issue 29, point 5)."""

from golden_gate.core.gate import evaluate_gate
from golden_gate.core.report import DatasetInfo, add_digests, selection_digest
from golden_gate.core.report_file import report_json
from tests.helpers import golden_gate, ids, report


def _pair(tmp_path, *, left_out: int, tags=None):
    names = ids(200)
    outcomes = {i: n % 10 != 0 for n, i in enumerate(names)}  # 90 % pass
    baseline = report(outcomes)
    passed = [i for i in names if outcomes[i]]
    gone = set(passed[:left_out])
    kw = {"dataset": DatasetInfo(tags=tags)} if tags else {}
    candidate = report({i: o for i, o in outcomes.items() if i not in gone}, **kw)
    base_path, cand_path = tmp_path / "base.json", tmp_path / "cand.json"
    base_path.write_text(report_json(baseline))
    cand_path.write_text(report_json(candidate))
    return cand_path, base_path, sorted(gone)


def test_a_report_leaving_out_passed_items_fails_naming_them(tmp_path):
    cand, base, gone = _pair(tmp_path, left_out=19)
    done = golden_gate("gate", cand, base)
    assert done.returncode == 1, done.stdout
    assert "19 baseline item(s) missing from this report" in done.stdout
    assert gone[0] in done.stdout and "and 9 more" in done.stdout
    assert "significant regression: 19 regressed" in done.stdout


def test_a_few_missing_items_are_a_warning_with_their_ids(tmp_path):
    cand, base, gone = _pair(tmp_path, left_out=3)
    done = golden_gate("gate", cand, base, "--floor", "0.7")
    assert done.returncode == 0, done.stdout
    assert "3 baseline item(s) missing from this report" in done.stdout
    assert all(i in done.stdout for i in gone) and "not counted" in done.stdout


def test_items_outside_the_candidates_tags_are_not_missing():
    names = ids(100)
    baseline = report({i: True for i in names})
    # The candidate ran the smoke items only; the others carry another tag in the baseline.
    for n, item in enumerate(baseline.results):
        if n >= 50:
            item.tags = ["nightly"]
    candidate = report({i: True for i in names[:50]}, dataset=DatasetInfo(tags=["smoke"]))
    gate = evaluate_gate(candidate, baseline)
    assert not any("missing from this report" in w for w in gate.warnings)


def _selected_report(names, kept, **kw):
    dataset = DatasetInfo(items=len(names), selected=selection_digest(names))
    return report(dict.fromkeys(kept, True), dataset=dataset, **kw)


def test_a_report_cut_short_cannot_pass_as_complete(tmp_path):
    names = ids(200)
    whole = tmp_path / "whole.json"
    whole.write_text(report_json(_selected_report(names, names)))
    assert golden_gate("gate", whole).returncode == 0
    cut = tmp_path / "cut.json"
    cut.write_text(report_json(_selected_report(names, names[:190])))
    done = golden_gate("gate", cut)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "holds 190 item(s), not the 200 items its evaluation selected" in done.stderr
    # An interrupted evaluation says which items it never asked: that adds up.
    interrupted = _selected_report(names, names[:190], not_asked=names[190:])
    assert evaluate_gate(interrupted, None).inconclusive is None


def test_the_shards_selections_add_up_to_the_whole():
    names = ids(30)
    parts = [
        selection_digest(names[:7]),
        selection_digest(names[7:19]),
        selection_digest(names[19:]),
    ]
    assert add_digests(parts) == selection_digest(reversed(names))
    assert selection_digest(names[:29]) != selection_digest(names)
