"""The command as a user runs it: a subprocess, its output and its exit code."""

import json

import pytest

from golden_gate.cli import build_parser
from golden_gate.cli.options import finish, settings_from_args
from golden_gate.core.report_file import report_json
from tests.fakes.assistant_server import AssistantServer
from tests.helpers import golden_gate, ids, report


def write(path, rep):
    path.write_text(report_json(rep))
    return path


def test_gate_fails_on_ten_regressions_and_lists_them(tmp_path):
    names = ids(200)
    base = write(tmp_path / "base.json", report(dict.fromkeys(names, True)))
    lost = names[5:200:20]
    cand = write(tmp_path / "cand.json", report({i: i not in lost for i in names}))
    done = golden_gate("gate", cand, base)
    assert done.returncode == 1, done.stderr
    assert "significant regression" in done.stdout
    listed = [line.split(": ")[1] for line in done.stdout.splitlines() if "regressed: " in line]
    assert listed == sorted(lost)


def test_identical_reports_pass(tmp_path):
    rep = write(tmp_path / "r.json", report(dict.fromkeys(ids(200), True)))
    done = golden_gate("gate", rep, rep)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("golden-gate: passed")


def test_empty_report_fails_clearly(tmp_path):
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"judge": "x", "results": []}))
    done = golden_gate("gate", empty)
    assert done.returncode == 1
    assert "no results" in done.stdout
    assert "Traceback" not in done.stderr


def test_gate_on_an_incomplete_report_exits_3_saying_so(tmp_path):
    reason = "interrupted after 200 of 400 items; the report holds those"
    rep = report(dict.fromkeys(ids(200), True), complete=False, incomplete_reason=reason)
    done = golden_gate("gate", write(tmp_path / "r.json", rep))
    assert done.returncode == 3, done.stdout + done.stderr
    assert f"golden-gate: error: no gate result: {reason}" in done.stderr


def test_malformed_file_exits_2_naming_it(tmp_path):
    bad = tmp_path / "broken.json"
    bad.write_text("{ not json")
    good = write(tmp_path / "r.json", report({"a": True}))
    done = golden_gate("gate", good, bad)
    assert done.returncode == 2
    assert done.stderr.strip().startswith(f"golden-gate: error: {bad}: not a report")
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_bad_threshold_exits_2(tmp_path):
    good = write(tmp_path / "r.json", report({"a": True}))
    done = golden_gate("gate", good, "--floor", "1.5")
    assert done.returncode == 2
    assert "--floor" in done.stderr and "must be in [0, 1)" in done.stderr


def test_report_renders_markdown_and_json(tmp_path):
    names = ids(30)
    base = write(tmp_path / "base.json", report(dict.fromkeys(names, True)))
    cand = write(tmp_path / "cand.json", report({i: i not in names[:6] for i in names}))
    md = golden_gate("report", cand, "--baseline", base, "--comment-id", "docs")
    assert md.returncode == 0
    assert md.stdout.startswith("<!-- golden-gate:report id=docs -->")
    assert "### Regressed items (6)" in md.stdout
    js = golden_gate("report", cand, "--baseline", base, "--format", "json")
    data = json.loads(js.stdout)
    assert data["verdict"] == "failed"
    assert data["comparison"]["regressions"] == names[:6]


def test_subset(tmp_path):
    golden = tmp_path / "golden.jsonl"
    golden.write_text(
        "".join(
            json.dumps({"id": f"i{n}", "question": "q?", "tags": ["smoke"] if n % 2 else []}) + "\n"
            for n in range(6)
        )
    )
    out = tmp_path / "smoke.jsonl"
    done = golden_gate("subset", golden, "--subset-tags", "smoke", "-o", out)
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["i1", "i3", "i5"]
    none = golden_gate("subset", golden, "--subset-tags", "nightly", "-o", out)
    assert none.returncode == 2
    assert f"subset-tags: no item in {golden} carries 'nightly' (the tags there: " in none.stderr


def test_help_on_every_command():
    for command in ("gate", "report", "subset", "eval", "run", "merge", "demo", "plan"):
        done = golden_gate(command, "--help")
        assert done.returncode == 0
        assert "usage: golden-gate " + command in done.stdout


def test_plan_says_what_the_floor_demands_and_what_drop_can_be_caught(tmp_path):
    golden = tmp_path / "golden.jsonl"
    golden.write_text(
        "".join(
            json.dumps({"id": f"i{n}", "question": f"q{n}?", "tags": ["smoke"]}) + "\n"
            for n in range(200)
        )
    )
    done = golden_gate("plan", golden, "--subset-tags", "smoke", "--runs", "3")
    assert done.returncode == 0, done.stderr
    assert "200 items × 3 run(s)" in done.stdout
    assert "at least 172 of 200" in done.stdout  # Wilson(172, 200) = 0.8008 ≥ 0.80
    assert "catch a drop of" in done.stdout and "80% of the time" in done.stdout
    # With the baseline's variability: a steadier baseline means smaller detectable drops.
    steady = tmp_path / "steady.json"
    steady.write_text(report_json(report(dict.fromkeys(ids(200), True))))
    with_base = golden_gate("plan", "--items", "200", "--baseline", steady)
    assert "the baseline's 100.0% pass rate" in with_base.stdout


UNREACHABLE_12 = (
    "golden-gate: error: floor: with 12 items even 12/12 passing gives a lower bound of 0.758 < "
    "floor 0.80: select at least 16 items or lower the floor"
)


def test_plan_fails_when_the_floor_is_out_of_reach():
    # Issue 30: the same configuration error `run` stops on, exit 2, after the plan is shown.
    done = golden_gate("plan", "--items", "12")
    assert done.returncode == 2
    assert done.stderr.strip() == UNREACHABLE_12
    assert "floor 0.80 needs at least 16 items even when every one passes" in done.stdout
    assert golden_gate("plan", "--items", "16").returncode == 0


def smoke_set(path, n, **extra):
    path.write_text(
        "".join(
            json.dumps(
                {"id": f"i{k}", "question": f"q{k}?", "reference_key_points": ["x"], **extra}
            )
            + "\n"
            for k in range(n)
        )
    )
    return path


def test_plan_with_no_argument_plans_the_default_golden_set(tmp_path):
    # Issue 30: `plan` alone said "give a golden set or --items N, not both".
    none = golden_gate("plan", cwd=tmp_path)
    assert none.returncode == 2
    assert "no golden set at evals/golden.jsonl" in none.stderr and "not both" not in none.stderr
    (tmp_path / "evals").mkdir()
    smoke_set(tmp_path / "evals" / "golden.jsonl", 30)
    done = golden_gate("plan", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("golden-gate plan: 30 items × 1 run(s)")
    both = golden_gate("plan", tmp_path / "evals" / "golden.jsonl", "--items", "3")
    assert both.returncode == 2 and "not both" in both.stderr


def test_run_refuses_a_floor_12_items_cannot_reach_before_asking_anything(tmp_path):
    # Issue 30: 12 smoke items, every one passing, failed "below the floor" (exit 1) after the
    # assistant and the judge were paid; it is a configuration error, said first.
    golden = smoke_set(tmp_path / "g.jsonl", 12)
    with AssistantServer(default_answer="x") as assistant:
        done = golden_gate(
            "run", golden, "--assistant-url", assistant.url, "--judge-model", "keypoints",
            "--quiet", cwd=tmp_path,
        )  # fmt: skip
        asked = assistant.request_count
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip() == UNREACHABLE_12
    assert asked == 0
    # Clusters count: 16 items in 4 clusters of 4 cannot clear it either (the gate's bound).
    clustered = tmp_path / "c.jsonl"
    clustered.write_text(
        "".join(
            json.dumps({"id": f"i{k}", "question": f"q{k}?", "reference_key_points": ["x"],
                        "cluster": f"page{k % 4}"}) + "\n"
            for k in range(16)
        )
    )  # fmt: skip
    plan = golden_gate("plan", clustered)
    assert plan.returncode == 2
    assert "with 16 items (4 clusters of related items among them) even 16/16" in plan.stderr
    # `eval` gates nothing: it warns and writes its report.
    with AssistantServer(default_answer="x") as assistant:
        evaluated = golden_gate(
            "eval", golden, "--assistant-url", assistant.url, "--judge-model", "keypoints",
            "--quiet", "-o", tmp_path / "r.json", cwd=tmp_path,
        )  # fmt: skip
    assert evaluated.returncode == 0, evaluated.stderr
    assert "golden-gate: warning: floor: with 12 items even 12/12" in evaluated.stderr


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ([], (8, 8)),
        (["--concurrency", "32"], (32, 32)),
        (["--concurrency", "32", "--judge-concurrency", "4"], (32, 4)),
    ],
    ids=["defaults", "follows", "set"],
)
def test_the_judge_concurrency_follows_concurrency_unless_set(tmp_path, flags, expected):
    golden = str(tmp_path / "golden.jsonl")
    args = build_parser().parse_args(
        ["eval", golden, "--assistant-url", "http://127.0.0.1:9", *flags]
    )
    finish(args)

    settings = settings_from_args(args.resolved)

    assert settings.target is not None
    assert (settings.target.concurrency, settings.judge.concurrency) == expected
    assert settings.evaluation.judge_concurrency == expected[1]


def _options(parser):
    """(command, action) of every option and positional, every subcommand included."""
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                for _, inner in _options(sub):
                    yield name, inner
        elif not isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
            yield "", action


def test_every_flag_has_help_and_shows_its_default():
    import argparse

    from golden_gate.cli import build_parser
    from golden_gate.cli.options import OPTION_OF

    parser = build_parser()
    for command, action in _options(parser):
        where = f"{command} {'/'.join(action.option_strings) or action.dest}"
        assert action.help, f"{where} has no help"
        default = action.default
        option = OPTION_OF.get(action)
        if default is argparse.SUPPRESS and option is not None:  # a table option (options.py)
            default = option.default_for("cli")
            default = ",".join(map(str, default)) if isinstance(default, list) else default
        if action.option_strings and default not in (None, "", [], {}) and default is not False:
            sub = next(a for a in parser._actions if hasattr(a, "choices") and a.choices)
            text = sub.choices[command].format_help()
            assert f"(default: {default})" in " ".join(text.split()), f"{where}: default unsaid"


def test_help_texts_read_as_written():
    calibrate = golden_gate("calibrate", "--help")
    assert "95%" in calibrate.stdout and "%%" not in calibrate.stdout
    assert "kappa" in calibrate.stdout
    plan = golden_gate("plan", "--help")
    assert "80%" in plan.stdout and "%%" not in plan.stdout
    run = golden_gate("run", "--help")
    assert "(default: 8)" in run.stdout  # --concurrency
    assert "(default: 0.8)" in run.stdout  # --floor


def test_output_into_a_closed_pipe_ends_quietly(tmp_path):
    import subprocess
    import sys

    names = ids(3000)
    base = write(tmp_path / "base.json", report(dict.fromkeys(names, True)))
    cand = write(tmp_path / "cand.json", report({i: i not in names[:2000] for i in names}))
    done = subprocess.run(
        f"'{sys.executable}' -m golden_gate report '{cand}' --baseline '{base}' | head -1",
        shell=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.stdout.startswith("<!-- golden-gate:report")
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr
    assert done.stderr == ""


def test_eval_without_an_assistant_names_the_flags(tmp_path):
    golden = tmp_path / "g.jsonl"
    golden.write_text('{"id": "a", "question": "q?"}\n')
    done = golden_gate("eval", golden)
    assert done.returncode == 2
    assert "--assistant-url" in done.stderr and "--compose-file" in done.stderr


def test_eval_where_every_run_errored_says_so(tmp_path, monkeypatch):
    from golden_gate.example_assistant import golden_path, start
    from tests.fakes.judge_server import Behaviour, JudgeServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    with JudgeServer(default=Behaviour.unauthorized()) as judge, start("baseline") as assistant:
        done = golden_gate(
            "eval",
            golden_path(),
            "--assistant-url",
            assistant.url,
            "--subset-tags",
            "install,configuration",
            "--judge-model",
            "openai:gpt-4.1-mini",
            "--judge-base-url",
            judge.base_url,
            "--judge-retries",
            "0",
            "--cache",
            "off",
            "--quiet",
            "-o",
            tmp_path / "r.json",
            cwd=tmp_path,
        )
    assert "0/0" not in done.stdout
    assert "no item could be counted: every run of all 8 items ended in an error" in done.stdout
    assert done.returncode == 3, done.stderr


def test_an_unknown_judge_provider_is_one_sentence_about_our_flags(tmp_path):
    golden = tmp_path / "g.jsonl"
    golden.write_text('{"id": "a", "question": "q?"}\n')
    done = golden_gate(
        "eval", golden, "--assistant-url", "http://127.0.0.1:9", "--judge-model", "foo:bar"
    )
    assert done.returncode == 2
    assert "--judge-model: judge provider 'foo' is not supported" in done.stderr
    assert "model_provider" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_a_judge_that_refuses_connections_fails_the_run_once_at_once(tmp_path, monkeypatch):
    import socket

    from tests.fakes.assistant_server import AssistantServer

    with socket.socket() as probe:  # a port on loopback that nothing listens on
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    golden = tmp_path / "g.jsonl"
    golden.write_text(
        "".join(f'{{"id": "q{i}", "question": "q{i}?", "reference_key_points": ["x"]}}\n'
                for i in range(20))
    )  # fmt: skip
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    with AssistantServer(answers={}) as assistant:
        done = golden_gate(
            "eval", golden, "--assistant-url", assistant.url, "--quiet", "--cache", "off",
            "--judge-model", "openai:gpt-4.1-mini",
            "--judge-base-url", f"http://127.0.0.1:{closed}/v1",
            "-o", tmp_path / "r.json", cwd=tmp_path, timeout=60,
        )  # fmt: skip
        asked = assistant.request_count
    assert done.returncode == 3
    lines = [line for line in done.stderr.splitlines() if "error" in line]
    assert lines == [
        f"golden-gate: error: the judge at http://127.0.0.1:{closed}/v1 cannot be reached "
        "(connection refused): is it running? check judge-base-url"
    ]
    assert asked == 0  # not one question asked, not one retry paid for


def test_a_baseline_sharing_one_item_of_24_is_not_comparable_even_with_the_floor_off(tmp_path):
    # Issue 30: only "the yardstick moved", and with --floor 0 the gate passed, exit 0.
    names = ids(24)
    base = write(tmp_path / "base.json", report({names[0]: True}))
    cand = write(tmp_path / "cand.json", report(dict.fromkeys(names, True)))
    done = golden_gate("gate", cand, base, "--floor", "0")
    assert done.returncode == 3, done.stdout + done.stderr
    assert done.stderr.strip() == (
        "golden-gate: error: no gate result: not comparable with the baseline: only 1 of this "
        "run's 24 items pair with it (same id, question and reference; at least 50% must); "
        "regenerate the baseline from this golden set and selection (golden-gate eval, or the "
        "Action's baseline mode)"
    )
    assert "passed" not in done.stdout
    # Half of them pairing is a comparison.
    half = write(tmp_path / "half.json", report(dict.fromkeys(names[:12], True)))
    assert golden_gate("gate", cand, half, "--floor", "0").returncode == 0
    # Another golden set that reuses the ids (q0000, ...), selected by other tags: the items'
    # recorded question-and-reference hashes differ, so none of them pairs.
    from golden_gate.core.report import DatasetInfo

    def hashed(rep, prefix, tags):
        for result in rep.results:
            result.item_hash = prefix + result.id
        rep.dataset = DatasetInfo(fingerprint="sha256:" + prefix, tags=tags)
        return rep

    ours = write(tmp_path / "ours.json", hashed(report(dict.fromkeys(names, True)), "a", ["smoke"]))
    theirs = write(tmp_path / "theirs.json", hashed(report(dict.fromkeys(names, True)), "b", []))
    other = golden_gate("gate", ours, theirs, "--floor", "0")
    assert other.returncode == 3, other.stdout + other.stderr
    assert "only 0 of this run's 24 items pair with it" in other.stderr


def _dead_assistant_report(names):
    from golden_gate.core.item_result import ItemResult, RunResult
    from golden_gate.core.report import Report

    runs = [RunResult(status="error", error_side="assistant", error="connection refused")]
    return Report(
        judge="openai:gpt-4.1-mini",
        results=[
            ItemResult(id=i, tags=["smoke"], passes=0, runs=1, unanswered=1, run_results=runs)
            for i in names
        ],
        complete=False,
        incomplete_reason=f"{len(names)} of {len(names)} runs ended in an error",
    )


def test_an_incomplete_run_never_prints_a_regression_verdict_or_a_pass_count(tmp_path):
    # Issue 30: `gate` on a dead assistant's report printed "significant regression: 21
    # regressed" and 21 "regressed:" lines, then "no gate result", exit 3.
    names = ids(24)
    base = write(tmp_path / "base.json", report(dict.fromkeys(names, True)))
    dead = write(tmp_path / "dead.json", _dead_assistant_report(names))
    comment, summary = tmp_path / "comment.md", tmp_path / "summary.md"
    done = golden_gate("gate", dead, base, "--comment-file", comment, "--summary-file", summary)
    assert done.returncode == 3, done.stdout + done.stderr
    assert done.stdout.startswith("golden-gate: incomplete: no gate result")
    for said in (done.stdout, comment.read_text(), summary.read_text()):
        assert "regression" not in said.lower() and "regressed:" not in said
        assert "Regressed items" not in said and "0/24" not in said and "24/24" not in said
    assert "**no gate result: the reason is below**" in comment.read_text()
    assert "The evaluation is incomplete: 24 of 24 runs ended in an error" in comment.read_text()
    assert (
        done.stderr.strip() == "golden-gate: error: no gate result: 24 of 24 runs ended in an error"
    )


def test_eval_with_judge_errors_does_not_print_a_pass_count(tmp_path, monkeypatch):
    # Issue 30: 22 of 24 items without a verdict printed "2/2 items passed", exit 3.
    from tests.fakes.judge_server import Behaviour, JudgeServer

    golden = tmp_path / "g.jsonl"
    golden.write_text(
        "".join(f'{{"id": "q{i}", "question": "q{i}?", "reference_key_points": ["x"]}}\n'
                for i in range(24))
    )  # fmt: skip
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    with (
        JudgeServer(default=Behaviour.unauthorized()) as judge,
        AssistantServer(default_answer="x") as assistant,
    ):
        judge.enqueue(Behaviour.verdict(), Behaviour.verdict())
        done = golden_gate(
            "eval", golden, "--assistant-url", assistant.url, "--quiet", "--cache", "off",
            "--judge-model", "openai:gpt-4.1-mini", "--judge-base-url", judge.base_url,
            "--judge-concurrency", "1", "--judge-retries", "0", "-o", tmp_path / "r.json",
            "--judge-canaries", "0",  # the two verdicts go to items, not probes
            cwd=tmp_path, timeout=120,
        )  # fmt: skip
    assert done.returncode == 3, done.stdout + done.stderr
    assert "items passed" not in done.stdout
    assert done.stdout.startswith("golden-gate: incomplete: 2 of 24 items got a verdict")


def test_the_wording_says_one_thing_once(tmp_path):
    # Issue 30: "net drop -25.0%", "only 0 item(s) ... changed", "79.2% of runs ... (79.2%)".
    from golden_gate.core.item_result import ItemResult
    from golden_gate.core.report import Report

    names = ids(24)
    base = write(tmp_path / "base.json", report({i: i not in names[:6] for i in names}))
    better = write(tmp_path / "better.json", report(dict.fromkeys(names, True)))
    gained = golden_gate("gate", better, base, "--floor", "0", "--comment-file", tmp_path / "c.md")
    assert "net gain 25.0%" in gained.stdout and "-25.0%" not in gained.stdout
    assert "net gain 25.0%" in (tmp_path / "c.md").read_text()
    same = golden_gate("gate", base, base, "--floor", "0")
    assert "only 0" not in same.stdout
    assert "no shared item changed outcome since the baseline" in same.stdout
    assert "no net change" in same.stdout
    runs = Report(
        judge="openai:gpt-4.1-mini",
        results=[
            ItemResult(id=i, tags=["smoke"], passes=2 + (k % 6 > 0), runs=3)
            for k, i in enumerate(names)
        ],
    )
    three = golden_gate("gate", write(tmp_path / "runs.json", runs), "--floor", "0")
    line = next(x for x in three.stdout.splitlines() if "pass rate" in x and "Wilson" in x)
    assert "of runs over 24 items, Wilson" in line and line.count("%") == 1


def test_before_the_first_baseline_every_command_runs_on_the_floor_and_says_how(tmp_path):
    # The starter config names evals/baseline.json before anyone has made one.
    (tmp_path / ".git").mkdir()
    (tmp_path / "evals").mkdir()
    golden = tmp_path / "evals" / "golden.jsonl"
    golden.write_text(
        "".join(
            json.dumps({"id": i, "question": f"q {i}?", "reference_key_points": ["k"],
                        "tags": ["smoke"]}) + "\n"
            for i in ids(30)
        )
    )  # fmt: skip
    (tmp_path / "golden-gate.toml").write_text(
        'golden = "evals/golden.jsonl"\nsubset-tags = ["smoke"]\nbaseline = "evals/baseline.json"\n'
        "[gate]\nfloor = 0.7\n"
    )
    write(tmp_path / "report.json", report(dict.fromkeys(ids(30), True)))
    commands = {
        "gate": ("gate", "report.json"),
        "report": ("report", "report.json"),
        "view": ("view", "report.json", "-o", "page.html"),
        "plan": ("plan",),
    }
    for name, argv in commands.items():
        done = golden_gate(*argv, cwd=tmp_path)
        assert done.returncode == 0, (name, done.stderr)
        assert "no baseline yet (evals/baseline.json does not exist; golden-gate.toml:3)" in (
            done.stderr
        ), name
        assert "golden-gate eval -o evals/baseline.json" in done.stderr, name
        assert "not found" not in done.stderr, name
    # A baseline named on the command line must exist: a typo there is bad input.
    typo = golden_gate("gate", "report.json", "evals/baselin.json", cwd=tmp_path)
    assert typo.returncode == 2 and "evals/baselin.json: report not found" in typo.stderr


def test_in_a_pull_requests_workflow_a_missing_baseline_is_still_an_error(tmp_path, monkeypatch):
    # The checkout is the pull request's: deleting the baseline must not turn the paired test off.
    (tmp_path / ".git").mkdir()
    (tmp_path / "golden-gate.toml").write_text('baseline = "evals/baseline.json"\n')
    write(tmp_path / "report.json", report(dict.fromkeys(ids(30), True)))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_EVENT_NAME", "pull_request")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    done = golden_gate("gate", "report.json", cwd=tmp_path)
    assert done.returncode == 2 and "evals/baseline.json: report not found" in done.stderr
    assert "no baseline yet" not in done.stderr
