import json

import pytest

from golden_gate.core.item_result import ItemResult, RunResult
from golden_gate.core.report import Report, new_report
from golden_gate.core.report_file import load_report, parse_report, report_json, save_report
from golden_gate.errors import InputError

MINIMAL = {
    "judge": "openai:gpt-4.1-mini",
    "results": [
        {"id": "a", "tags": ["smoke"], "passes": 2, "runs": 3},
        {"id": "b", "tags": [], "passes": 1, "runs": 2},
    ],
}


def test_minimal_report_from_a_hand_written_harness_loads():
    rep = parse_report(json.dumps(MINIMAL), source="baseline.json")
    a, b = rep.results
    assert a.passed and not b.passed  # 2*2 > 3; 1*2 > 2 is false: a tie is not a majority
    assert rep.tier == "full" and rep.complete


def test_our_report_keeps_the_minimal_shape(tmp_path):
    run = RunResult(status="pass", answer="yes", latency_ms=12.5)
    rep = new_report(
        judge="keypoints",
        results=[ItemResult(id="a", tags=["smoke"], passes=1, runs=1, run_results=[run])],
    )
    path = tmp_path / "report.json"
    save_report(rep, path)
    data = json.loads(path.read_text())
    # What a minimal consumer reads is all there, with the same meaning.
    assert data["judge"] == "keypoints"
    assert {k: data["results"][0][k] for k in ("id", "tags", "passes", "runs")} == {
        "id": "a",
        "tags": ["smoke"],
        "passes": 1,
        "runs": 1,
    }
    assert data["format"] == "golden-gate/1"
    assert load_report(path) == rep
    assert not list(tmp_path.glob(".report.json.*"))  # the temporary file is gone


def test_unknown_fields_survive_a_round_trip():
    data = {**MINIMAL, "harness": "v7", "results": [{**MINIMAL["results"][0], "note": "x"}]}
    rep = parse_report(json.dumps(data), source="r.json")
    again = json.loads(report_json(rep))
    assert again["harness"] == "v7" and again["results"][0]["note"] == "x"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{", "r.json: not a report: invalid JSON"),
        ("[]", "r.json: not a report: expected an object"),
        ('{"judge": "x", "results": [{"id": "a"}]}', "r.json: not a report: results.0.passes"),
        (
            '{"judge": "x", "results": [{"id": "a", "passes": 3, "runs": 2}]}',
            "passes (3) exceeds runs",
        ),
        (
            '{"judge": "x", "results": [{"id": "a", "passes": 1, "runs": 1},'
            ' {"id": "a", "passes": 1, "runs": 1}]}',
            "appears twice",
        ),
    ],
)
def test_bad_reports_name_the_file(text, expected):
    with pytest.raises(InputError) as exc:
        parse_report(text, source="r.json")
    assert expected in str(exc.value)
    assert str(exc.value).startswith("r.json: ")


def test_missing_report(tmp_path):
    with pytest.raises(InputError, match="report not found"):
        load_report(tmp_path / "none.json")


def test_item_properties():
    item = ItemResult(
        id="x",
        passes=1,
        runs=3,
        run_results=[
            RunResult(status="fail", answer="bad", checks=[]),
            RunResult(status="pass", answer="good"),
        ],
    )
    assert item.unstable and not item.passed
    assert item.answer == "bad"
    assert ItemResult(id="y", passes=0, runs=0, errors=2).errored
    assert Report(judge="j", results=[item]).counted == [item]
