"""Critical means critical: a test or item under `critical-tags` that is missing, skipped or
errored is never absorbed by the missing-items allowance (at most 2 % of the baseline's items
left out are otherwise only a warning). Through the Action's entrypoint with an imported JUnit
file (the class name is the tag), and through the gate command with golden-gate's reports."""

from __future__ import annotations

import json
from xml.sax.saxutils import quoteattr

import pytest

from golden_gate.core.gate import evaluate_gate
from golden_gate.core.verdict import GateSettings
from tests.action_world import REPO
from tests.helpers import ids, report

RESULTS = "target/surefire-reports/TEST-Suite.xml"
CRITICAL = "item-00"  # one of a hundred tests, the only one in the critical class
INNER = {
    "pass": "",
    "fail": '<failure message="wrong" type="AssertionError">stack</failure>',
    "error": '<error message="Read timed out" type="java.net.SocketTimeoutException"/>',
    "skip": '<skipped message="disabled"/>',
}


def tag_of(item: str) -> str:
    return "Critical" if item == CRITICAL else "Suite"


def surefire(outcomes: dict[str, str]) -> str:
    cases = "\n".join(
        f'  <testcase name={quoteattr(i)} classname={quoteattr(tag_of(i))} time="0.1">'
        f"{INNER[o]}</testcase>"
        for i, o in outcomes.items()
    )
    return f'<?xml version="1.0"?>\n<testsuite name="Suite">\n{cases}\n</testsuite>\n'


def gate_junit(world, critical_outcome: str | None, *, critical_tags: str = "Critical"):
    names = [f"item-{n:02d}" for n in range(100)]
    baseline = {"judge": "junit", "results": [
        {"id": i, "tags": [tag_of(i)], "passes": 1, "runs": 1} for i in names
    ]}  # fmt: skip
    world.github.commit(REPO, "main", {"evals/baseline.json": json.dumps(baseline)})
    world.configure_options(critical_tags=critical_tags.split(",") if critical_tags else [])
    world.check_out()
    outcomes = {i: "pass" for i in names}
    if critical_outcome is None:
        del outcomes[CRITICAL]  # the failing test deleted
    else:
        outcomes[CRITICAL] = critical_outcome
    file = world.workspace / RESULTS
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(surefire(outcomes))  # the job's own results: not committed
    pull = world.pull(["src/main/java/Assistant.java"])
    event = world.event("pull_request.opened", pull)
    return world.run("pull_request", event, junit_results=RESULTS)


@pytest.mark.parametrize("how", ["deleted", "skip", "error", "fail"])
def test_one_critical_test_of_a_hundred_is_never_absorbed(world, how):
    done = gate_junit(world, None if how == "deleted" else how)
    said = done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert done.returncode != 0 and done.outputs["verdict"] != "passed", said
    if how in ("deleted", "skip"):
        assert done.returncode == 1, said
        assert "1 under critical-tags counted as failed runs" in done.summary
        assert CRITICAL in done.summary


def test_without_critical_tags_one_missing_test_is_still_only_a_warning(world):
    done = gate_junit(world, None, critical_tags="")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "item-00; not counted" in done.summary, done.summary


def test_a_missing_critical_item_fails_and_the_rest_stay_within_the_allowance():
    names = ids(100)
    baseline = report(dict.fromkeys(names, True))
    for item in baseline.results:
        item.tags = ["payments"] if item.id == names[0] else ["smoke"]
    # Two missing (2 %, within the allowance): the critical one and another.
    candidate = report({i: True for i in names[2:]})
    settings = GateSettings(floor=0.5, critical_tags=["payments"])
    gate = evaluate_gate(candidate, baseline, settings)
    assert not gate.passed
    (warning,) = [w for w in gate.warnings if "missing from this report" in w]
    assert "1 under critical-tags counted as failed runs" in warning
    assert not evaluate_gate(candidate, baseline, GateSettings(floor=0.5)).reasons


def test_untagging_a_failing_critical_item_does_not_hide_it():
    # The class name (the tag) of the failing critical test changed in the pull request: the
    # baseline's record of its tags still makes it critical.
    names = ids(100)
    baseline = report(dict.fromkeys(names, True))
    candidate = report({i: i != names[0] for i in names})
    for item in baseline.results:
        item.tags = ["payments"] if item.id == names[0] else ["smoke"]
    for item in candidate.results:
        item.tags = ["smoke"]
    gate = evaluate_gate(candidate, baseline, GateSettings(floor=0.5, critical_tags=["payments"]))
    assert [r.message for r in gate.reasons] == [
        f"critical tag 'payments': 1 item(s) regressed ({names[0]})"
    ]
