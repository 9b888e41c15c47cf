"""The user's files the gate reads only after the evaluation (the calibration, the comment
template) are checked before it: a bad one is exit 2 with one sentence naming it, and not one
request reaches the assistant. A missing calibration is no error: the comment says so."""

from __future__ import annotations

import shutil

import pytest

from golden_gate.example_assistant import golden_path
from tests.fakes.assistant_server import AssistantServer
from tests.helpers import golden_gate

BAD_JSON = '{"format": "golden-gate-calibration/1",'
BAD_JSON_SAYS = "not a calibration: invalid JSON at line 1 (Expecting property name"
UNPARSABLE = "{% if %}\n"  # a Jinja syntax error: the template cannot even be loaded


def run_cli(tmp_path, assistant, *extra):
    golden = tmp_path / "golden.jsonl"
    shutil.copy(golden_path(), golden)
    return golden_gate(
        "run", golden, "--assistant-url", assistant.url, "--quiet", "--cache", "off",
        "-o", tmp_path / "report.json", "--comment-file", tmp_path / "comment.md",
        *extra, cwd=tmp_path,
    )  # fmt: skip


def only_error(done) -> str:
    (line,) = [line for line in done.stderr.splitlines() if line.strip()]
    return line


@pytest.mark.parametrize(
    ("flag", "name", "text", "says"),
    [
        ("--calibration", "calibration.json", BAD_JSON, BAD_JSON_SAYS),
        ("--comment-template", "mine.md.j2", UNPARSABLE, "cannot load the template"),
    ],
    ids=["corrupt-calibration", "template-that-does-not-parse"],
)
def test_run_with_a_bad_input_file_exits_2_before_any_request(tmp_path, flag, name, text, says):
    path = tmp_path / name
    path.write_text(text)
    with AssistantServer() as assistant:
        done = run_cli(tmp_path, assistant, flag, path)
        asked = assistant.request_count
    assert done.returncode == 2, done.stdout + done.stderr
    assert only_error(done).startswith(f"golden-gate: error: {path}: {says}")
    assert asked == 0
    assert not (tmp_path / "report.json").exists()


def test_run_with_a_missing_calibration_runs_and_the_comment_says_so(tmp_path):
    calibration = tmp_path / "calibration.json"
    with AssistantServer() as assistant:
        done = run_cli(tmp_path, assistant, "--calibration", calibration, "--floor", "0")
        asked = assistant.request_count
    assert done.returncode == 0, done.stdout + done.stderr
    assert asked > 0
    comment = (tmp_path / "comment.md").read_text()
    assert "_no judge calibration at " in comment and "calibration.json: run" in comment


def test_action_gate_with_a_corrupt_calibration_exits_2_before_any_request(world):
    (world.workspace / "calibration.json").write_text(BAD_JSON)
    world.configure({"comment": {"calibration": "calibration.json"}})
    pull = world.pull(["prompts/answer.txt"])
    with AssistantServer() as assistant:
        done = world.run(
            "pull_request",
            world.event("pull_request.opened", pull),
            assistant_url=assistant.url,
        )
        asked = assistant.request_count
    assert done.returncode == 2, done.stdout + done.stderr
    said = f"{world.workspace / 'calibration.json'}: {BAD_JSON_SAYS}"
    assert done.summary.startswith(f"golden-gate: bad input: {said}")
    assert done.outputs["verdict"] == "error"
    assert asked == 0
    assert world.github.comments("acme/docs-assistant", pull.number) == []


def test_action_drift_with_a_template_that_does_not_parse_exits_2_before_any_request(world):
    (world.workspace / "mine.md.j2").write_text(UNPARSABLE)
    with AssistantServer() as assistant:
        done = world.run(
            "schedule",
            world.event("workflow_dispatch"),
            mode="drift",
            assistant_url=assistant.url,
            comment_template="mine.md.j2",
        )
        asked = assistant.request_count
    assert done.returncode == 2, done.stdout + done.stderr
    said = f"{world.workspace / 'mine.md.j2'}: cannot load the template"
    assert done.summary.startswith(f"golden-gate: bad input: {said}")
    assert asked == 0
    assert world.github.issues("acme/docs-assistant", label="golden-gate-drift") == []


def test_action_gate_with_a_missing_template_names_it_before_any_request(world):
    world.configure({"comment": {"template": "missing.md.j2"}})
    pull = world.pull(["prompts/answer.txt"])
    with AssistantServer() as assistant:
        done = world.run(
            "pull_request",
            world.event("pull_request.opened", pull),
            assistant_url=assistant.url,
        )
        asked = assistant.request_count
    assert done.returncode == 2, done.stdout + done.stderr
    said = f"{world.workspace / 'missing.md.j2'}: comment template not found"
    assert done.summary == f"golden-gate: bad input: {said}\n"
    assert asked == 0


def test_action_merge_with_a_corrupt_calibration_says_so_before_reading_shards(world):
    (world.workspace / "calibration.json").write_text(BAD_JSON)
    done = world.run(
        "schedule", world.event("workflow_dispatch"), mode="merge", calibration="calibration.json"
    )
    assert done.returncode == 2, done.stdout + done.stderr
    said = f"{world.workspace / 'calibration.json'}: {BAD_JSON_SAYS}"
    assert done.summary.startswith(f"golden-gate: bad input: {said}")
