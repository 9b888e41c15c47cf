"""The floor with clustered questions: Wilson on an effective sample size (stats.floor_bound)."""

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from golden_gate.core.gate import evaluate_gate
from golden_gate.core.item_result import ItemResult
from golden_gate.core.report import Report
from golden_gate.core.stats import floor_bound, wilson_lower_bound
from golden_gate.core.verdict import GateSettings
from tests.core.test_soundness import bound, soundness
from tests.helpers import golden_gate, ids


@settings(deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 3), st.integers(1, 3)), min_size=1, max_size=60),
    st.sampled_from([0.8, 0.9, 0.95]),
)
def test_without_clusters_it_is_exactly_the_wilson_bound(pairs, confidence):
    scores = [min(p, r) / r for p, r in pairs]
    got = floor_bound(scores, [None] * len(scores), confidence=confidence)
    assert got.lower == wilson_lower_bound(math.fsum(scores), len(scores), confidence=confidence)
    # Clusters of one item each are no clusters.
    singles = floor_bound(scores, [str(i) for i in range(len(scores))], confidence=confidence)
    assert singles.lower == got.lower and singles.clusters is None


@settings(deadline=None)
@given(st.lists(st.booleans(), min_size=4, max_size=80), st.integers(2, 10))
def test_clusters_never_tighten_the_bound(outcomes, size):
    scores = [float(o) for o in outcomes]
    groups = [str(i // size) for i in range(len(scores))]
    wilson = wilson_lower_bound(sum(scores), len(scores))
    assert floor_bound(scores, groups).lower <= wilson + 1e-12


def test_whole_pages_failing_weigh_as_few_items():
    # 200 questions, 25 pages of 8: five pages fail entirely, every other question passes.
    scores = [float(i // 8 % 5 != 0) for i in range(200)]
    groups = [f"page{i // 8}" for i in range(200)]
    got = floor_bound(scores, groups)
    assert got.clusters == 25
    assert got.design_effect == pytest.approx(8.29, abs=0.01)  # about the pages' size
    assert got.lower < wilson_lower_bound(sum(scores), 200) - 0.1


def _clustered_report(path, clustered: bool):
    # 240 questions on 30 pages; 6 pages fail entirely: a 80 % pass rate the items alone
    # would bound at 0.745, and as 30 pages far lower.
    results = [
        ItemResult(
            id=i,
            passes=int(n // 8 % 5 != 0),
            runs=1,
            cluster=f"page{n // 8}" if clustered else None,
        )
        for n, i in enumerate(ids(240))
    ]
    path.write_text(json.dumps(Report(judge="j", results=results).model_dump(mode="json")))
    return path


def test_the_gate_command_widens_the_floor_by_the_clusters(tmp_path):
    plain = golden_gate("gate", _clustered_report(tmp_path / "plain.json", False), "--floor", "0.7")
    clustered = golden_gate(
        "gate", _clustered_report(tmp_path / "clustered.json", True), "--floor", "0.7"
    )
    assert plain.returncode == 0, plain.stdout
    assert clustered.returncode == 1, clustered.stdout
    assert "below the floor" in clustered.stdout


def test_the_note_says_how_much_the_clusters_weigh():
    results = [
        ItemResult(id=i, passes=int(n // 8 % 5 != 0), runs=1, cluster=f"page{n // 8}")
        for n, i in enumerate(ids(240))
    ]
    gate = evaluate_gate(Report(judge="j", results=results), None, GateSettings(floor=0.5))
    assert any("30 clusters" in note and "design effect" in note for note in gate.notes)


@pytest.mark.parametrize(("runs", "breaks"), [(1, True), (1, False), (3, True)])
def test_a_clustered_assistant_at_the_floor_rarely_passes_it(runs, breaks):
    reps = 300
    counts = soundness.floor_coverage(
        200, runs, reps, seed=41, breaks=breaks, settings=GateSettings()
    )
    assert counts["gate"] / reps <= 0.05 + bound(0.05, reps)
    if breaks and runs == 1:
        # The clusters matter here: the plain Wilson bound passes it far more often.
        assert counts["wilson"] / reps > 0.10
