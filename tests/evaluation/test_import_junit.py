"""`golden-gate import-junit` and the Action's `junit-results`: a test suite's JUnit results
gate with the same verdict as the equivalent report, and a hostile file is refused or escaped."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from xml.sax.saxutils import quoteattr

import pytest

from golden_gate.cli import main
from tests.action_world import REPO

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "junit" / "TEST-com.example.docs.GoldenSetTest.xml"
SUITE = "com.example.docs.GoldenSetTest"


def _surefire(items: dict[str, list[str]], *, classname: str = SUITE) -> str:
    """A Surefire-shaped report: one <testcase> per run, `pass`, `fail`, `error` or `skip`."""
    cases = []
    for item_id, runs in items.items():
        for outcome in runs:
            inner = {
                "pass": "",
                "fail": '<failure message="missing key point" '
                'type="org.opentest4j.AssertionFailedError">stack</failure>',
                "error": '<error message="Read timed out" type="java.net.SocketTimeoutException"/>',
                "skip": '<skipped message="disabled"/>',
            }[outcome]
            cases.append(
                f"  <testcase name={quoteattr(item_id)} classname={quoteattr(classname)} "
                f'time="1.250">{inner}</testcase>'
            )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<testsuite name="{SUITE}" tests="{len(cases)}" version="3.0">\n'
        '  <properties><property name="java.version" value="21"/></properties>\n'
        + "\n".join(cases)
        + "\n</testsuite>\n"
    )


def _equivalent(items: dict[str, list[str]], *, tag: str = SUITE) -> dict:
    """The minimal report a hand-written harness would write for the same runs."""
    results = []
    for item_id, runs in items.items():
        counted = [r for r in runs if r in ("pass", "fail")]
        if not counted and "error" not in runs:
            continue
        results.append(
            {
                "id": item_id,
                "tags": [tag],
                "passes": counted.count("pass"),
                "runs": len(counted),
                "errors": runs.count("error"),
            }
        )
    return {"judge": "junit", "results": results}


def _gate_json(report: Path, baseline: Path, capsys, *extra: str) -> tuple[int, dict]:
    capsys.readouterr()
    code = main(["gate", str(report), str(baseline), "--format", "json", *extra])
    return code, json.loads(capsys.readouterr().out)


def _import(xml: Path, out: Path, capsys, *extra: str) -> int:
    code = main(["import-junit", str(xml), "-o", str(out), *extra])
    capsys.readouterr()
    return code


VERDICT_FIELDS = (
    "verdict", "reasons", "n", "k", "score_sum", "lower_bound", "comparison", "errored", "unstable",
)  # fmt: skip


def _verdict(result: dict) -> dict:
    """The gate's verdict and every figure behind it (not its notes about the files)."""
    return {k: result[k] for k in VERDICT_FIELDS}


# 40 items: 36 pass on main; the candidate loses 5 of them (and 1 flaky run), one errors once.
BASE_ITEMS = {f"q{i:02d}": ["pass", "pass", "pass"] for i in range(36)} | {
    f"q{i:02d}": ["fail", "fail", "fail"] for i in range(36, 40)
}
CANDIDATE_ITEMS = dict(BASE_ITEMS) | {
    "q01": ["fail", "fail", "pass"],
    "q02": ["fail", "fail", "fail"],
    "q03": ["fail", "fail", "fail"],
    "q04": ["fail", "pass", "fail"],
    "q05": ["fail", "fail", "fail"],
    "q06": ["pass", "fail", "pass"],
    "q07": ["pass", "error", "pass"],
    "q08": ["pass", "pass", "pass", "skip"],
}


@pytest.mark.parametrize(
    ("candidate", "floor"),
    [(CANDIDATE_ITEMS, "0.5"), (BASE_ITEMS, "0.5"), (CANDIDATE_ITEMS, "0.9")],
    ids=["regressed", "unchanged", "below-floor"],
)
def test_a_surefire_file_gates_as_its_equivalent_report(tmp_path, capsys, candidate, floor):
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps(_equivalent(BASE_ITEMS)))
    xml = tmp_path / f"TEST-{SUITE}.xml"
    xml.write_text(_surefire(candidate))
    imported = tmp_path / "report.json"
    assert _import(xml, imported, capsys) == 0
    equivalent = tmp_path / "equivalent.json"
    equivalent.write_text(json.dumps(_equivalent(candidate)))

    code_a, gate_a = _gate_json(imported, baseline, capsys, "--floor", floor)
    code_b, gate_b = _gate_json(equivalent, baseline, capsys, "--floor", floor)
    assert (code_a, _verdict(gate_a)) == (code_b, _verdict(gate_b))
    expected = {"regressed": 1, "unchanged": 0, "below-floor": 1}
    assert code_a == expected[
        "regressed" if candidate is CANDIDATE_ITEMS and floor == "0.5" else
        "unchanged" if candidate is BASE_ITEMS else "below-floor"
    ]  # fmt: skip


def test_the_mapping_of_cases_to_items_and_runs(tmp_path, capsys):
    out = tmp_path / "report.json"
    assert _import(EXAMPLE, out, capsys) == 0
    report = json.loads(out.read_text())
    items = {r["id"]: r for r in report["results"]}
    assert report["judge"] == "junit"
    assert set(items) == {"refund-window", "reset-password", "export-csv", "sso-setup"}
    assert "weather-today" not in items  # skipped: no run, no item
    refund = items["refund-window"]
    assert (refund["passes"], refund["runs"], refund["tags"]) == (3, 3, [SUITE])
    assert (items["reset-password"]["passes"], items["reset-password"]["runs"]) == (2, 3)
    export = items["export-csv"]
    assert (export["passes"], export["runs"], export["errors"]) == (0, 2, 1)
    fail = export["run_results"][0]
    assert fail["status"] == "fail" and "not relevant" in fail["checks"][0]["reason"]
    assert export["run_results"][2]["status"] == "error"
    assert "Read timed out" in export["run_results"][2]["error"]
    assert fail["latency_ms"] == 4310.0
    assert any("skipped" in w for w in report["warnings"])


def test_a_pytest_junitxml_file_gates_as_its_equivalent_report(tmp_path, capsys):
    suite = tmp_path / "test_golden.py"
    suite.write_text(
        "import pytest\n"
        "ANSWERS = {f'q{i:02d}': i % 5 != 3 for i in range(30)}\n"
        "@pytest.mark.parametrize('item', sorted(ANSWERS))\n"
        "def test_answer(item):\n"
        "    assert ANSWERS[item], f'{item}: the answer misses a key point'\n"
        "@pytest.mark.skip(reason='not in this subset')\n"
        "def test_skipped():\n"
        "    pass\n"
    )
    xml = tmp_path / "results.xml"
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
         "-o", "addopts=", f"--junitxml={xml}", str(suite)],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert xml.is_file()
    imported = tmp_path / "report.json"
    assert _import(xml, imported, capsys) == 0
    report = json.loads(imported.read_text())
    ids = {r["id"] for r in report["results"]}
    assert "test_answer[q03]" in ids and "test_skipped" not in ids
    assert {tuple(r["tags"]) for r in report["results"]} == {("test_golden",)}

    failing = {f"q{i:02d}" for i in range(30) if i % 5 == 3}
    equivalent = {
        "judge": "junit",
        "results": [
            {
                "id": f"test_answer[q{i:02d}]",
                "tags": ["test_golden"],
                "passes": 0 if f"q{i:02d}" in failing else 1,
                "runs": 1,
            }
            for i in range(30)
        ],
    }
    baseline = tmp_path / "baseline.json"
    baseline.write_text(
        json.dumps(equivalent | {"results": [r | {"passes": 1} for r in equivalent["results"]]})
    )
    equivalent_path = tmp_path / "equivalent.json"
    equivalent_path.write_text(json.dumps(equivalent))
    code_a, gate_a = _gate_json(imported, baseline, capsys, "--floor", "0.6")
    code_b, gate_b = _gate_json(equivalent_path, baseline, capsys, "--floor", "0.6")
    assert (code_a, _verdict(gate_a)) == (code_b, _verdict(gate_b))
    assert code_a == 1 and len(gate_a["comparison"]["regressions"]) == len(failing)


@pytest.mark.parametrize(
    "xml",
    [
        # billion laughs
        '<?xml version="1.0"?><!DOCTYPE t [<!ENTITY a "aaaaaaaaaa">'
        '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
        '<testsuite><testcase name="&b;" classname="x"/></testsuite>',
        # XXE: an external entity naming a local file
        '<?xml version="1.0"?><!DOCTYPE t [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
        '<testsuite><testcase name="&x;" classname="x"/></testsuite>',
        # an external DTD, no entity named
        '<?xml version="1.0"?><!DOCTYPE testsuite SYSTEM "http://127.0.0.1:9/junit.dtd">'
        '<testsuite><testcase name="a" classname="x"/></testsuite>',
    ],
    ids=["billion-laughs", "xxe", "external-dtd"],
)
def test_a_document_type_is_refused_in_one_sentence(tmp_path, capsys, xml):
    path = tmp_path / "results.xml"
    path.write_text(xml)
    out = tmp_path / "report.json"
    assert main(["import-junit", str(path), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "DOCTYPE" in err and str(path) in err
    assert "root:" not in err and not out.exists()


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("not xml at all", "not a JUnit XML file"),
        ("<testsuite><testcase name='a'></testsuite>", "mismatched tag"),
        ("<html><body/></html>", "root element is <html>"),
        ("<testsuite><testcase classname='x'/></testsuite>", "has no name"),
        ("<testsuite><testcase name='a'><skipped/></testcase></testsuite>", "no test case ran"),
    ],
)
def test_a_file_that_is_not_junit_is_bad_input(tmp_path, capsys, text, said):
    path = tmp_path / "results.xml"
    path.write_text(text)
    assert main(["import-junit", str(path), "-o", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err
    assert said in err and "results.xml" in err


def test_errors_above_max_error_rate_make_it_incomplete_with_the_report_written(tmp_path, capsys):
    xml = tmp_path / "results.xml"
    xml.write_text(_surefire({"a": ["pass", "error"], "b": ["pass"], "c": ["error", "error"]}))
    out = tmp_path / "report.json"
    assert main(["import-junit", str(xml), "-o", str(out)]) == 3
    report = json.loads(out.read_text())
    assert report["complete"] is False and "3 of 5 test runs" in report["incomplete_reason"]
    assert main(["import-junit", str(xml), "-o", str(out), "--max-error-rate", "0.7"]) == 0


HOSTILE = "<img src=x onerror=alert(1)> | @admin `x` [link](https://evil.example) <!-- -->"


def test_hostile_names_are_escaped_in_the_comment(tmp_path, capsys):
    hostile = [f"{HOSTILE} {i}" for i in range(8)]
    items = {f"ok{i:02d}": ["pass"] for i in range(30)} | {h: ["fail"] for h in hostile}
    xml = tmp_path / "results.xml"
    xml.write_text(_surefire(items, classname="</details><script>x</script>"))
    out = tmp_path / "report.json"
    assert _import(xml, out, capsys) == 0
    report = json.loads(out.read_text())
    assert hostile[0] in {r["id"] for r in report["results"]}  # kept as text in the report
    baseline = tmp_path / "baseline.json"
    baseline.write_text(
        json.dumps({"judge": "junit", "results": [
            {"id": i, "tags": ["t"], "passes": 1, "runs": 1} for i in items
        ]})
    )  # fmt: skip
    capsys.readouterr()
    assert main(["gate", str(out), str(baseline), "--format", "md", "--floor", "0.5"]) == 1
    comment = capsys.readouterr().out
    assert "onerror" in comment and "evil.example" in comment  # the items are listed ...
    for raw in ("<img", "<script>", "</details><script>", "@admin", "](https://evil"):
        assert raw not in comment  # ... never as markup, a mention or a link


def test_the_action_gates_junit_results_without_an_assistant_or_a_judge(world):
    from golden_gate.demo import baseline_path

    base = json.loads(baseline_path().read_text())
    ids = [r["id"] for r in base["results"]]
    baseline = {
        "judge": "junit",
        "results": [{"id": i, "tags": ["GoldenSetTest"], "passes": 1, "runs": 1} for i in ids],
    }
    world.github.commit(REPO, "main", {"evals/baseline.json": json.dumps(baseline)}, message="b")
    (world.workspace / "evals" / "baseline.json").write_text(json.dumps(baseline))
    world.check_out()  # the results file below is the job's: not committed
    regressed = ids[0]
    xml = world.workspace / "target" / "surefire-reports" / "TEST-GoldenSetTest.xml"
    xml.parent.mkdir(parents=True)
    xml.write_text(
        _surefire(
            {i: ["fail" if i == regressed else "pass"] for i in ids}, classname="GoldenSetTest"
        )
    )
    pull = world.pull(["src/main/java/Assistant.java"])
    done = world.run(
        "pull_request",
        world.event("pull_request.opened", pull),
        junit_results="target/surefire-reports/TEST-GoldenSetTest.xml",
    )
    assert "no assistant started, no judge called" in done.stdout, done.stdout + done.stderr
    (comment,) = world.github.comments(REPO, pull.number)
    assert regressed in comment.body
    report = json.loads((world.workspace / done.outputs["report-path"]).read_text())
    assert report["judge"] == "junit" and len(report["results"]) == len(ids)
    assert done.outputs["ran"] == "true"


def test_mode_baseline_writes_the_imported_results_as_the_baseline(world):
    xml = world.workspace / "build" / "test-results" / "TEST-GoldenSetTest.xml"
    xml.parent.mkdir(parents=True)
    xml.write_text(_surefire({"a": ["pass", "pass"], "b": ["fail", "pass"]}, classname="Golden"))
    done = world.run(
        "workflow_dispatch",
        world.event("workflow_dispatch"),
        mode="baseline",
        junit_results="build/test-results/TEST-GoldenSetTest.xml",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.outputs["verdict"] == "promoted"
    written = json.loads((world.workspace / "evals" / "baseline.json").read_text())
    assert written["judge"] == "junit"
    assert [(r["id"], r["passes"], r["runs"]) for r in written["results"]] == [
        ("a", 2, 2),
        ("b", 1, 2),
    ]


def test_junit_results_outside_the_workspace_or_in_another_mode_is_refused(world, tmp_path):
    outside = tmp_path / "elsewhere.xml"
    outside.write_text(_surefire({"a": ["pass"]}))
    link = world.workspace / "results.xml"
    link.symlink_to(outside)
    pull = world.pull(["src/x.java"])
    done = world.run(
        "pull_request", world.event("pull_request.opened", pull), junit_results="results.xml"
    )
    said = done.stdout + done.stderr
    assert done.returncode == 2 and "input 'junit-results' (results.xml) resolves to" in said
    done = world.run(
        "workflow_dispatch",
        world.event("workflow_dispatch"),
        mode="calibrate",
        labels="labels.jsonl",
        junit_results="results.xml",
    )
    assert done.returncode == 2
    assert "input 'junit-results' is for modes gate and baseline" in done.stdout + done.stderr
