"""JUnit identity as real reporters write it: an item is a test's class (or file) and name,
numbered repeats are runs of one item, differing parameters are items of their own, and two
tests that would share an id are an error naming both, never a merge. Fixtures are written
here in the shapes of real reports (pytest, Surefire/JUnit 5, Gradle, jest, Playwright)."""

from __future__ import annotations

import json
from pathlib import Path
from xml.sax.saxutils import quoteattr

import pytest

from golden_gate.cli import main
from golden_gate.evaluation import junit

FAIL = '<failure message="assert 1 == 2" type="AssertionError">trace</failure>'


def _case(classname: str | None, name: str, inner: str = "", **extra: str) -> str:
    attrs = f"name={quoteattr(name)}"
    if classname is not None:
        attrs += f" classname={quoteattr(classname)}"
    attrs += "".join(f" {k}={quoteattr(v)}" for k, v in extra.items())
    return f'<testcase {attrs} time="0.010">{inner}</testcase>'


def _file(tmp_path: Path, *cases: str, suite: str = "suite") -> Path:
    path = tmp_path / "results.xml"
    path.write_text(
        '<?xml version="1.0" encoding="utf-8"?><testsuites>'
        f"<testsuite name={quoteattr(suite)}>" + "\n".join(cases) + "</testsuite></testsuites>\n"
    )
    return path


def _items(path: Path, capsys, *extra: str) -> dict[str, dict]:
    out = path.parent / "report.json"
    code = main(["import-junit", str(path), "-o", str(out), *extra])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return {r["id"]: r for r in json.loads(out.read_text())["results"]}


def _refused(path: Path, capsys) -> str:
    out = path.parent / "report.json"
    assert main(["import-junit", str(path), "-o", str(out)]) == 2
    assert not out.exists()
    return capsys.readouterr().err


def test_pytest_method_names_repeated_across_classes_are_distinct_items(tmp_path, capsys):
    # The real report's shape: test_add/test_remove in a dozen classes; one failing test_add.
    cases = []
    for i in range(12):
        cls = f"tests.test_store.TestStore{i:02d}"
        cases.append(_case(cls, "test_add", FAIL if i == 7 else ""))
        cases.append(_case(cls, "test_remove"))
    cases.append(_case("tests.test_misc.TestMisc", "test_unique"))
    items = _items(_file(tmp_path, *cases), capsys)
    assert len(items) == 25
    failing = items["tests.test_store.TestStore07::test_add"]
    assert (failing["passes"], failing["runs"]) == (0, 1)
    assert all(
        (items[f"tests.test_store.TestStore{i:02d}::test_add"]["passes"]) == 1
        for i in range(12)
        if i != 7
    )
    assert items["test_unique"]["runs"] == 1  # a name no other class has keeps its old id


def test_pytest_parameters_are_items_and_pytest_repeat_series_are_runs(tmp_path, capsys):
    cls = "tests.test_bot.TestBot"
    cases = [
        _case(cls, "test_welcome[pyloop-/start]"),
        _case(cls, "test_welcome[pyloop-/help]", FAIL),
        _case(cls, "test_errors[pyloop-400]"),
        _case(cls, "test_errors[pyloop-500]"),
        # pytest-repeat --count 3: one test, three runs
        _case(cls, "test_refund[1-3]"),
        _case(cls, "test_refund[2-3]", FAIL),
        _case(cls, "test_refund[3-3]"),
        _case(cls, "test_sso[en-1-2]"),
        _case(cls, "test_sso[en-2-2]"),
        # not a complete series: the parameters 1 and 3
        _case(cls, "test_range[1-3]"),
    ]
    items = _items(_file(tmp_path, *cases), capsys)
    assert set(items) == {
        "test_welcome[pyloop-/start]",
        "test_welcome[pyloop-/help]",
        "test_errors[pyloop-400]",
        "test_errors[pyloop-500]",
        "test_refund",
        "test_sso[en]",
        "test_range[1-3]",
    }
    assert (items["test_refund"]["passes"], items["test_refund"]["runs"]) == (2, 3)
    assert items["test_sso[en]"]["runs"] == 2
    assert items["test_welcome[pyloop-/help]"]["passes"] == 0


def test_junit5_repetitions_and_surefire_indices(tmp_path, capsys):
    cls = "com.example.docs.GoldenSetTest"
    cases = [
        # @RepeatedTest(value = 3, name = RepeatedTest.LONG_DISPLAY_NAME)
        _case(cls, "refundWindow() :: repetition 1 of 3"),
        _case(cls, "refundWindow() :: repetition 2 of 3", FAIL),
        _case(cls, "refundWindow() :: repetition 3 of 3"),
        # Surefire's method()[n]: a method without parameters run n times
        _case(cls, "resetPassword()[1]"),
        _case(cls, "resetPassword()[2]"),
        # method(args)[n]: a parameterised test, one item per index
        _case(cls, "answers(String)[1]"),
        _case(cls, "answers(String)[2]", FAIL),
        # JUnit 5's parameterised display names
        _case(cls, "[1] refund-window"),
        _case(cls, "[2] export-csv"),
    ]
    items = _items(_file(tmp_path, *cases), capsys)
    assert set(items) == {
        "refundWindow()",
        "resetPassword",
        "answers(String)[1]",
        "answers(String)[2]",
        "[1] refund-window",
        "[2] export-csv",
    }
    assert (items["refundWindow()"]["passes"], items["refundWindow()"]["runs"]) == (2, 3)
    assert items["resetPassword"]["runs"] == 2
    assert items["answers(String)[2]"]["passes"] == 0


def test_default_repetition_names_of_two_methods_are_an_error_not_a_merge(tmp_path, capsys):
    cls = "com.example.docs.GoldenSetTest"
    cases = [_case(cls, f"repetition {i} of 2") for i in (1, 2)] * 2
    err = _refused(_file(tmp_path, *cases), capsys)
    assert "results.xml:" in err and "repetition 1 of 2" in err
    assert "LONG_DISPLAY_NAME" in err and err.count("\n") == 1


def test_default_parameter_names_of_two_methods_are_an_error_not_a_merge(tmp_path, capsys):
    cls = "com.example.docs.GoldenSetTest"
    cases = [_case(cls, "[1] refund"), _case(cls, "[2] ports"), _case(cls, "[1] refund", FAIL)]
    err = _refused(_file(tmp_path, *cases), capsys)
    assert "[1] refund" in err and "lines 1 and 3" in err and "{displayName}" in err
    # Named after the method, the same sets are two tests, and a retried case is a run.
    cases = [
        _case(cls, "answers [1] refund"),
        _case(cls, "summaries [1] refund"),
        _case(cls, "answers [1] refund", FAIL),
    ]
    items = _items(_file(tmp_path, *cases), capsys)
    assert (items["answers [1] refund"]["runs"], items["summaries [1] refund"]["runs"]) == (2, 1)


def test_a_retried_repetition_of_a_named_method_is_another_run(tmp_path, capsys):
    cls = "com.example.docs.GoldenSetTest"
    cases = [
        _case(cls, "refund() :: repetition 1 of 2", FAIL),
        _case(cls, "refund() :: repetition 2 of 2"),
        _case(cls, "refund() :: repetition 1 of 2"),  # Gradle's test-retry ran it again
    ]
    items = _items(_file(tmp_path, *cases), capsys)
    assert (items["refund()"]["passes"], items["refund()"]["runs"]) == (2, 3)


def test_one_repeated_method_with_default_names_is_one_item_of_its_class(tmp_path, capsys):
    cls = "com.example.docs.GoldenSetTest"
    items = _items(
        _file(tmp_path, *[_case(cls, f"repetition {i} of 3") for i in (1, 2, 3)]), capsys
    )
    assert list(items) == [cls] and items[cls]["runs"] == 3


def test_surefire_reruns_are_runs_of_the_test(tmp_path, capsys):
    cls = "com.example.docs.GoldenSetTest"
    flaky = '<flakyFailure message="timeout" type="java.lang.AssertionError"/>'
    rerun = '<rerunFailure message="still wrong" type="java.lang.AssertionError"/>'
    cases = [
        _case(cls, "flaky", flaky),  # failed once, then passed
        _case(cls, "broken", FAIL + rerun + rerun),  # failed, and each rerun failed
    ]
    items = _items(_file(tmp_path, *cases), capsys)
    assert (items["flaky"]["passes"], items["flaky"]["runs"]) == (1, 2)
    assert [r["status"] for r in items["flaky"]["run_results"]] == ["fail", "pass"]
    assert (items["broken"]["passes"], items["broken"]["runs"]) == (0, 3)


def test_an_error_outweighs_a_failure_which_outweighs_a_skip(tmp_path, capsys):
    cases = [
        _case("C", "skipped-then-failed", "<skipped/>" + FAIL),
        _case("C", "failed-then-errored", FAIL + '<error message="boom"/>'),
    ]
    items = _items(_file(tmp_path, *cases), capsys, "--max-error-rate", "1")
    assert (items["skipped-then-failed"]["passes"], items["skipped-then-failed"]["runs"]) == (0, 1)
    assert items["failed-then-errored"]["errors"] == 1


def test_gradle_retries_and_playwright_files(tmp_path, capsys):
    cases = [
        # Gradle's test-retry plugin writes the retried test again under its name
        _case("com.example.ChatTest", "answersRefunds()", FAIL),
        _case("com.example.ChatTest", "answersRefunds()"),
        # Playwright: the class is the spec file; a retry numbered in the name
        _case("chat.spec.ts", "chat › refunds"),
        _case("chat.spec.ts", "chat › refunds (retry #1)"),
        _case("search.spec.ts", "search › finds"),
        # jest-junit: classname and name are both the full title
        _case("Todo Item should be defined", "Todo Item should be defined", FAIL),
        # no classname: the file attribute, then the suite, is the class
        _case(None, "test_no_class", file="tests/test_x.py"),
    ]
    items = _items(_file(tmp_path, *cases), capsys)
    assert (items["answersRefunds()"]["passes"], items["answersRefunds()"]["runs"]) == (1, 2)
    assert items["chat › refunds"]["runs"] == 2
    assert items["Todo Item should be defined"]["passes"] == 0
    assert items["test_no_class"]["tags"] == ["tests/test_x.py"]


def test_two_tests_on_one_id_are_an_error_naming_both(tmp_path, capsys):
    # Differ only in whitespace, which an id cannot keep.
    path = _file(tmp_path, _case("C", "ask  refund"), _case("C", "ask refund"))
    err = _refused(path, capsys)
    assert '"ask  refund"' in err and '"ask refund"' in err and "never merges" in err
    # A name that spells another class's qualified id.
    path = _file(tmp_path, _case("A", "t"), _case("B", "t"), _case("Z", "A::t"))
    err = _refused(path, capsys)
    assert '"A::t"' in err and 'of "A"' in err and 'of "Z"' in err


def test_explain_shows_each_item_and_why(tmp_path, capsys):
    cases = [
        _case("pkg.TestA", "test_add"),
        _case("pkg.TestB", "test_add"),
        _case("pkg.TestA", "refund() :: repetition 1 of 2"),
        _case("pkg.TestA", "refund() :: repetition 2 of 2"),
        _case("pkg.TestA", "gone", "<skipped/>"),
    ]
    path = _file(tmp_path, *cases)
    assert main(["import-junit", str(path), "-o", str(tmp_path / "r.json"), "--explain"]) == 0
    out = capsys.readouterr().out
    assert "pkg.TestA::test_add  ←  1 run(s)" in out
    assert "other classes too" in out
    assert "refund()  ←  2 run(s)" in out and "repetition i of N" in out
    assert "gone  ←  0 run(s), 1 skipped  (only skipped: left out)" in out


def test_a_file_beyond_the_case_cap_is_an_incomplete_report_written(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(junit, "MAX_JUNIT_CASES", 5)
    path = _file(tmp_path, *[_case("C", f"t{i}") for i in range(20)])
    out = tmp_path / "report.json"
    assert main(["import-junit", str(path), "-o", str(out)]) == 3
    report = json.loads(out.read_text())
    assert report["complete"] is False and len(report["results"]) == 5
    assert "(5 test cases" in report["incomplete_reason"]
    assert "the first 5 test cases" in report["incomplete_reason"]


def test_a_tag_longer_than_expat_may_hold_is_refused_with_its_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(junit, "MAX_JUNIT_TOKEN_BYTES", 1000)
    monkeypatch.setattr(junit, "CHUNK_BYTES", 512)
    path = _file(tmp_path, _case("C", "ok"), "\n" + _case("C", "x" * 5000))
    err = _refused(path, capsys)
    assert "results.xml:" in err and "runs past" in err
    # Long text between tags (a test's output) is not a long tag: read, and not kept.
    output = f"<system-out>{'log line ' * 2000}</system-out>"
    items = _items(_file(tmp_path, _case("C", "ok", output), _case("C", "next")), capsys)
    assert set(items) == {"ok", "next"}


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("<testsuite>\n<testcase name='a'>\n</testsuite>", "results.xml:3: not a JUnit XML file"),
        ("<testsuite>\n\n<testcase classname='x'/></testsuite>", "results.xml:3: a <testcase>"),
    ],
)
def test_bad_input_names_the_line(tmp_path, capsys, text, said):
    path = tmp_path / "results.xml"
    path.write_text(text)
    assert said in _refused(path, capsys)


def test_explain_cannot_be_driven_by_hostile_names(tmp_path, capsys):
    # XML 1.0 cannot hold escape characters at all (expat refuses them); bidi overrides it can.
    path = _file(tmp_path, _case("C\u202e", "t\u2066x"), _case("D", "u\u202e"))
    assert main(["import-junit", str(path), "-o", str(tmp_path / "r.json"), "--explain"]) == 0
    out = capsys.readouterr().out
    assert "\u202e" not in out and "\u2066" not in out and "tx" in out


def test_an_old_baseline_still_pairs_where_names_were_unique(tmp_path, capsys):
    # Before step 28 the id was the name alone: `test_add` of two classes was one item.
    old = {
        "judge": "junit",
        "results": [
            {"id": "test_unique", "tags": ["pkg.TestA"], "passes": 1, "runs": 1},
            {"id": "test_add", "tags": ["pkg.TestA", "pkg.TestB"], "passes": 1, "runs": 2},
        ],
    }
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps(old))
    path = _file(
        tmp_path,
        _case("pkg.TestA", "test_unique", FAIL),
        _case("pkg.TestA", "test_add"),
        _case("pkg.TestB", "test_add", FAIL),
    )
    report = tmp_path / "report.json"
    assert main(["import-junit", str(path), "-o", str(report)]) == 0
    capsys.readouterr()
    main(["gate", str(report), str(baseline), "--format", "json", "--floor", "0"])
    comparison = json.loads(capsys.readouterr().out)["comparison"]
    # The unique name pairs, and its regression is caught; the merged item of the old baseline
    # is missing from the run, which the gate counts as a failure (never a silent pass); the
    # split tests are new, gated by the floor, until the baseline is imported again.
    assert comparison["regressions"] == ["test_add", "test_unique"]
    assert comparison["only_in_candidate"] == ["pkg.TestA::test_add", "pkg.TestB::test_add"]
