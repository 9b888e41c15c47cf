"""A result that cannot be written (report, comment file, summary) is one sentence naming the
file and exit 3 ("could not complete"), never a traceback with exit 1 ("gate failed"); the
verdict is still printed and every other result is still written."""

from __future__ import annotations

import json

import pytest

from golden_gate import cli
from tests.fakes.assistant_server import AssistantServer


@pytest.fixture
def assistant():
    with AssistantServer(default_answer="An answer.") as server:
        yield server


@pytest.fixture
def golden(tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_text(
        "".join(
            json.dumps({"id": f"q{i}", "question": f"Q{i}?", "reference_key_points": ["answer"]})
            + "\n"
            for i in range(3)
        )
    )
    return path


def blocked(tmp_path):
    """A path no one can write, root included: its parent is a regular file."""
    wall = tmp_path / "wall"
    wall.write_text("")
    return wall / "out"


@pytest.mark.parametrize("which", ["report", "comment", "summary"])
def test_run_with_an_unwritable_result_exits_3_and_writes_the_others(
    tmp_path, capsys, assistant, golden, which
):
    paths = {
        "report": tmp_path / "report.json",
        "comment": tmp_path / "comment.md",
        "summary": tmp_path / "summary.md",
    }
    paths[which] = blocked(tmp_path)
    code = cli.main(
        [
            "run",
            str(golden),
            "--assistant-url",
            assistant.url,
            "--quiet",
            "--cache",
            "off",
            "-o",
            str(paths["report"]),
            "--comment-file",
            str(paths["comment"]),
            "--summary-file",
            str(paths["summary"]),
            "--floor",
            "0.4",  # 3 of 3 passing reach a lower bound of 0.439
        ]
    )
    out, err = capsys.readouterr()
    assert code == 3, out + err
    assert "pass rate 3/3" in out  # the verdict is printed
    reason = "a parent is not a directory"
    assert (
        err.strip().splitlines()[-1]
        == f"golden-gate: error: {paths[which]}: cannot write the {which} ({reason})"
    )
    for name, path in paths.items():
        assert path.is_file() == (name != which)


def test_eval_with_an_unwritable_report_prints_the_count_and_exits_3(
    tmp_path, capsys, assistant, golden
):
    report = blocked(tmp_path)
    code = cli.main(
        ["eval", str(golden), "--assistant-url", assistant.url, "--quiet", "-o", str(report)]
    )
    out, err = capsys.readouterr()
    assert code == 3
    assert "3/3 items passed" in out
    assert (
        err.strip().splitlines()[-1]
        == f"golden-gate: error: {report}: cannot write the report (a parent is not a directory)"
    )


@pytest.mark.parametrize(
    ("inputs", "unwritten"),
    [
        ({"report_path": "evals/golden.jsonl/report.json"}, "report"),
        ({"comment_file": "evals/golden.jsonl/comment.md"}, "comment"),
    ],
    ids=["report", "comment-file"],
)
def test_action_with_an_unwritable_result_exits_3_and_writes_the_others(
    world, candidate, inputs, unwritten
):
    done = world.run(
        "workflow_dispatch", world.event("workflow_dispatch"), assistant_url=candidate, **inputs
    )
    assert done.returncode == 3, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stdout.splitlines() if line.startswith("::error")]
    assert any(f"cannot write the {unwritten}" in line for line in errors), errors
    assert "golden-gate: report: " in done.stdout  # the verdict's lines were printed
    # The others were written: the summary, the outputs (then marked incomplete), the files.
    assert "14" in done.summary
    assert done.outputs["items"] == "14" and done.outputs["verdict"] == "incomplete"
    report = world.workspace / "golden-gate" / "report.json"
    comment = world.workspace / "golden-gate" / "comment.md"
    assert report.is_file() == (unwritten != "report")
    assert comment.is_file() == (unwritten != "comment")
