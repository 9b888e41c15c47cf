import sys

import pytest

from golden_gate import runner


@pytest.fixture
def workflow_log(capsys):
    """Call it to make stdout and stderr a workflow step's (guarded); restored afterwards.
    Guarded in the test itself: pytest re-points sys.stdout between set-up and the test."""
    saved = sys.stdout, sys.stderr
    yield runner.guard_output
    sys.stdout, sys.stderr = saved


def test_multiline_outputs_use_a_delimiter_not_in_the_value(tmp_path):
    out = tmp_path / "output"
    env = {"GITHUB_OUTPUT": str(out)}
    runner.set_outputs({"ran": "true", "list": "a\nb\nghadelimiter_x"}, env)
    text = out.read_text()
    assert text.startswith("ran=true\nlist<<ghadelimiter_")
    delimiter = text.splitlines()[1].split("<<")[1]
    assert text.endswith(f"a\nb\nghadelimiter_x\n{delimiter}\n")


def test_commands_escape_data_and_properties(workflow_log, capsys):
    workflow_log()
    runner.error("50% done\nnext", title="a:b,c", file="x.jsonl", line=3)
    runner.mask("s3cret\nline2")
    with runner.group("Group"):
        print("inside")
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "::error title=a%3Ab%2Cc,file=x.jsonl,line=3::50%25 done%0Anext"
    assert out[1:3] == ["::add-mask::s3cret", "::add-mask::line2"]
    assert out[3:] == ["::group::Group", "inside", "::endgroup::"]


def test_summary_is_capped(tmp_path):
    summary = tmp_path / "summary"
    runner.write_summary("é" * (runner.SUMMARY_LIMIT), {"GITHUB_STEP_SUMMARY": str(summary)})
    assert len(summary.read_bytes()) <= runner.SUMMARY_LIMIT
    assert summary.read_text().endswith("see report.json)_\n")


def test_untrusted_text_cannot_issue_commands(workflow_log, capsys):
    workflow_log()
    runner.print_untrusted("prompts/a.txt\n::add-mask::x\n::error::forged")
    out = capsys.readouterr().out.splitlines()
    token = out[0].removeprefix("::stop-commands::")
    assert len(token) == 32 and out[-1] == f"::{token}::"
    assert out[1:-1] == ["prompts/a.txt", "::add-mask::x", "::error::forged"]


def test_a_terminal_gets_headings_and_plain_text_not_workflow_commands(capsys):
    from golden_gate import redaction

    redaction.register("hunter2-hunter2")
    with runner.group("compose logs (demo, last 50 lines)"):
        runner.print_untrusted("starting\nkey hunter2-hunter2\n::error::looks like a command")
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "-- compose logs (demo, last 50 lines) --",
        "starting",
        "key ***",
        "::error::looks like a command",  # a terminal runs nothing: shown as it was written
    ]
    assert not runner.in_workflow()
