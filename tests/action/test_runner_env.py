"""The runner's environment can be wrong: no or a garbled event payload on a pull request, a
workspace that is not there, file commands that cannot be written. Each is one sentence naming
the variable and exit 2 before anything runs, never a silent "not a pull request" and never a
crash of the error reporting itself."""

from __future__ import annotations

import json
import signal

import pytest

from golden_gate import runner
from golden_gate.action import main as action
from golden_gate.errors import OutputError


@pytest.fixture(autouse=True)
def keep_sigterm():
    before = signal.getsignal(signal.SIGTERM)  # action.main turns SIGTERM into an interrupt
    yield
    signal.signal(signal.SIGTERM, before)


@pytest.fixture
def runner_env(tmp_path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    for name in ("output", "summary", "state"):
        (tmp_path / name).touch()
    return {
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(tmp_path / "event.json"),
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_REPOSITORY": "acme/docs-assistant",
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary"),
        "GITHUB_STATE": str(tmp_path / "state"),
        # Port 9 on loopback: never reached, everything here stops before it.
        "INPUT_ASSISTANT-URL": "http://127.0.0.1:9",
    }


def pull_request(number: object = 7) -> dict:
    return {"pull_request": {"number": number, "base": {"ref": "main"}, "head": {"sha": "a"}}}


def run(env, capsys):
    with pytest.MonkeyPatch.context() as patch:  # file commands are read from os.environ
        for name, value in env.items():
            patch.setenv(name, value)
        code = action.main([], env)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    errors = [line for line in out.splitlines() if line.startswith("::error")]
    assert len(errors) == 1, out
    return code, errors[0], out, err


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (None, "cannot read the event payload (No such file or directory)"),
        ("[1, 2]", "the event payload is a JSON list, not an object"),
        ("{}", "a pull_request event's payload has no pull_request object"),
        (
            json.dumps(pull_request("12")),
            'pull_request.number must be a positive whole number, got "12"',
        ),
        (json.dumps(pull_request("abc")), "pull_request.number must be a positive whole number"),
        (json.dumps(pull_request(None)), "pull_request.number must be a positive whole number"),
        (json.dumps(pull_request(True)), "pull_request.number must be a positive whole number"),
        (json.dumps(pull_request(0)), "pull_request.number must be a positive whole number"),
        (
            json.dumps({"pull_request": {"number": 3, "base": "main", "head": {}}}),
            "pull_request.base is not an object",
        ),
        ('{"pull_request": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested more than 64 deep"),
        ('{"n": ' + "9" * 5000 + "}", "a number with more than 4300 digits"),
    ],
    ids=[
        "missing",
        "list",
        "no-pr",
        "string-number",
        "garbage-number",
        "null-number",
        "bool-number",
        "zero-number",
        "base-string",
        "deep",
        "long-integer",
    ],
)
def test_a_bad_pull_request_payload_is_bad_input(tmp_path, runner_env, capsys, payload, message):
    if payload is not None:
        (tmp_path / "event.json").write_text(payload)
    code, error, _, _ = run(runner_env, capsys)
    assert code == 2
    assert message in error
    assert (tmp_path / "output").read_text() == "verdict=error\n"
    assert "bad input" in (tmp_path / "summary").read_text()


def test_no_event_path_on_a_pull_request_is_bad_input(runner_env, capsys):
    code, error, _, _ = run({**runner_env, "GITHUB_EVENT_PATH": ""}, capsys)
    assert code == 2 and "GITHUB_EVENT_PATH is not set: a pull_request event needs" in error


def test_an_unreadable_event_path_is_bad_input_on_any_event(tmp_path, runner_env, capsys):
    (tmp_path / "event.json").mkdir()
    env = {**runner_env, "GITHUB_EVENT_NAME": "workflow_dispatch"}
    code, error, _, _ = run(env, capsys)
    assert code == 2 and "GITHUB_EVENT_PATH" in error and "Is a directory" in error


def test_a_missing_workspace_is_bad_input(tmp_path, runner_env, capsys):
    (tmp_path / "event.json").write_text(json.dumps(pull_request()))
    env = {**runner_env, "GITHUB_WORKSPACE": str(tmp_path / "nowhere")}
    code, error, _, _ = run(env, capsys)
    assert code == 2 and f"GITHUB_WORKSPACE ({tmp_path / 'nowhere'}) is not a directory" in error


@pytest.mark.parametrize("variable", ["GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_STATE"])
def test_an_unwritable_file_command_is_bad_input_and_reporting_it_does_not_crash(
    tmp_path, runner_env, capsys, variable
):
    (tmp_path / "event.json").write_text(json.dumps(pull_request()))
    folder = tmp_path / "a-folder"
    folder.mkdir()
    code, error, _, err = run({**runner_env, variable: str(folder)}, capsys)
    assert code == 2
    assert f"{variable} ({folder}) cannot be written (Is a directory)" in error
    if variable == "GITHUB_OUTPUT":
        assert "golden-gate: also: cannot write the step outputs" in err  # a line, no crash


def test_a_file_command_failing_mid_run_is_exit_3_not_a_crash(tmp_path):
    env = {"GITHUB_OUTPUT": str(tmp_path / "gone" / "output")}
    with pytest.raises(OutputError) as exc:
        runner.set_outputs({"verdict": "passed"}, env)
    assert exc.value.exit_code == 3
    assert str(exc.value).startswith("cannot write the step outputs to GITHUB_OUTPUT (")
    runner.best_effort(lambda: runner.set_outputs({"verdict": "error"}, env))  # no raise
