"""Bounds: a setting that would hang or never end, a header the transport would refuse, and
JSON that would crash the parser are each one sentence naming the flag, input or file (exit 2),
before anything starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from golden_gate import cli
from golden_gate.action.inputs import read_action_settings
from golden_gate.action.yardstick import env_name
from golden_gate.core.golden import load_golden
from golden_gate.core.report_file import load_report
from golden_gate.errors import InputError
from tests.helpers import golden_gate

WS = Path("/github/workspace")
DEEP = "[" * 100_000 + "]" * 100_000
LONG = "7" * 5000


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--concurrency", "100000"], "--concurrency: Input should be less than or equal to 1024"),
        (["--runs", "1000000000"], "--runs: Input should be less than or equal to 100"),
        (["--rerun-failures", "1000000000"], "--rerun-failures: Input should be less than or"),
        (["--retries", "1000"], "--retries: Input should be less than or equal to 10"),
        (["--timeout", "inf"], "--timeout must be a finite number"),
        (["--timeout", "nan"], "--timeout must be a finite number"),
        (["--timeout", "-1"], "--timeout: Input should be greater than 0"),
        (["--timeout", "86400"], "--timeout: Input should be less than or equal to 3600"),
        (["--judge-timeout", "inf"], "--judge-timeout must be a finite number"),
        (["--judge-concurrency", "0"], "--judge-concurrency: Input should be greater than"),
        (["--judge-concurrency", "5000"], "--judge-concurrency: Input should be less than"),
        (["--judge-temperature", "nan"], "--judge-temperature must be a finite number"),
        (["--judge-max-tokens", "0"], "--judge-max-tokens: Input should be greater than or equal"),
        (["--judge-max-tokens", "1000000"], "--judge-max-tokens: Input should be less than or"),
        (["--judge-retries", "99"], "--judge-retries: Input should be less than or equal to 10"),
        (["--judge-prices", "0.4"], "--judge-prices must be two non-negative numbers"),
        (["--judge-prices", "0.4,-1"], "--judge-prices must be two non-negative numbers"),
        (["--judge-prices", "nan,1.6"], "--judge-prices must be two non-negative numbers"),
        (["--assistant-headers", "X A: 1"], "--assistant-headers: a header name has ' '"),
        (
            ["--assistant-headers", "X-A: a\nb"],
            "--assistant-headers: the value of header 'X-A' holds a line break",
        ),
        (
            ["--assistant-headers", "X-A: café"],
            "--assistant-headers: the value of header 'X-A' holds a line break",
        ),
    ],
)
def test_cli_flags_out_of_bounds_are_one_sentence_exit_2(tmp_path, capsys, flags, message):
    golden = tmp_path / "g.jsonl"
    golden.write_text('{"id": "a", "question": "Why?"}\n')
    # Port 9 (discard) on loopback: nothing is asked, the flag is refused first.
    code = cli.main(
        ["eval", str(golden), "--assistant-url", "http://127.0.0.1:9", "--quiet", *flags]
    )
    err = capsys.readouterr().err
    assert code == 2, err
    assert message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "report.json").exists()


def action_env(**inputs: str) -> dict[str, str]:
    values = {"assistant-url": "http://assistant:8080", **inputs}
    return {env_name(name): value for name, value in values.items()}


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({"concurrency": "100000"}, "input 'concurrency': Input should be less than or equal"),
        ({"runs": "1000000000"}, "input 'runs': Input should be less than or equal to 100"),
        ({"rerun-failures": "1000000000"}, "input 'rerun-failures': Input should be less"),
        ({"timeout": "inf"}, "input 'timeout' must be a finite number"),
        ({"timeout": "nan"}, "input 'timeout' must be a finite number"),
        ({"timeout": "-5"}, "input 'timeout': Input should be greater than 0"),
        ({"judge-concurrency": "0"}, "input 'judge-concurrency': Input should be greater"),
        ({"judge-concurrency": "100000"}, "input 'judge-concurrency': Input should be less"),
        ({"judge-max-tokens": "0"}, "input 'judge-max-tokens': Input should be greater"),
        ({"judge-max-tokens": "1e9"}, "input 'judge-max-tokens' must be a whole number"),
        ({"judge-retries": "11"}, "input 'judge-retries': Input should be less than or equal"),
        ({"judge-timeout": "inf"}, "input 'judge-timeout' must be a finite number"),
        ({"judge-prices": "0.4,inf"}, "input 'judge-prices' must be two non-negative numbers"),
        ({"judge-prices": "cheap"}, "input 'judge-prices' must be two non-negative numbers"),
        (
            {"compose-file": "c.yml", "wait-timeout": "inf"},
            "input 'wait-timeout' must be a finite number",
        ),
        ({"assistant-headers": "X A: 1"}, "input 'assistant-headers': a header name has ' '"),
        ({"assistant-headers": "X-Key: café"}, "the value of header 'X-Key' holds a line break"),
    ],
)
def test_action_inputs_out_of_bounds_name_the_input(inputs, message):
    with pytest.raises(InputError) as exc:
        read_action_settings(action_env(**inputs), workspace=WS)
    assert message in str(exc.value)
    assert "café" not in str(exc.value)  # a header value may be a secret: never shown


@pytest.mark.parametrize(
    ("value", "problem"),
    [(DEEP, "nested more than 64 deep"), (LONG, "a number with more than 4300 digits")],
    ids=["deep", "long-integer"],
)
def test_hostile_json_in_a_golden_line_names_the_line(tmp_path, value, problem):
    path = tmp_path / "g.jsonl"
    path.write_text(
        '{"id": "a", "question": "Why?"}\n{"id": "b", "question": "x", "x": ' + value + "}\n"
    )
    with pytest.raises(InputError) as exc:
        load_golden(path)
    assert f"{path}:2: invalid JSON ({problem}" in str(exc.value)


def test_a_golden_value_too_deep_to_write_again_is_refused(tmp_path):
    # 900 levels parse, but the fingerprint (pydantic) cannot serialise them: refused up front.
    path = tmp_path / "g.jsonl"
    path.write_text('{"id": "a", "question": "Why?", "x": ' + "[" * 900 + "]" * 900 + "}\n")
    with pytest.raises(InputError, match="nested more than 64 deep"):
        load_golden(path)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"judge": "j", "results": [], "x": ' + DEEP + "}", "nested more than 64 deep"),
        ('{"judge": "j", "results": [], "n": ' + LONG + "}", "a number with more than 4300"),
        (
            '{"judge": "j", "results": [{"id": "a", "passes": 1, "runs": 1, "x": '
            + "[" * 300
            + "]" * 300
            + "}]}",
            "results.0.x: nested more than 64 deep",
        ),
    ],
    ids=["deep", "long-integer", "deep-unknown-field"],
)
def test_hostile_json_in_a_report_or_baseline_is_exit_2(tmp_path, capsys, text, problem):
    path = tmp_path / "baseline.json"
    path.write_text(text)
    with pytest.raises(InputError) as exc:
        load_report(path)
    assert str(exc.value).startswith(f"{path}: not a report:") and problem in str(exc.value)
    assert cli.main(["gate", str(path)]) == 2
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize("value", [DEEP, LONG], ids=["deep", "long-integer"])
def test_hostile_json_in_an_artifact_is_exit_2(tmp_path, value):
    from golden_gate.action.modes.post_comment import _metadata
    from golden_gate.core.calibration import load_calibration

    path = tmp_path / "comment.json"
    path.write_text('{"pr_number": ' + value + "}")
    settings = read_action_settings(
        action_env(mode="post-comment", **{"comment-file": str(path.with_suffix(".md"))}),
        workspace=tmp_path,
    )
    with pytest.raises(InputError, match="comment metadata is not JSON"):
        _metadata(settings)
    with pytest.raises(InputError, match="not a calibration: invalid JSON"):
        load_calibration(path)


@pytest.mark.parametrize("flag", ["--answer-path", "--sources-path", "--context-path"])
@pytest.mark.parametrize("path", ["", "..", "a..b", ".retrieval", "passages."])
def test_a_response_path_with_an_empty_segment_is_one_sentence(tmp_path, flag, path):
    if path == "" and flag != "--answer-path":
        pytest.skip("an empty sources or context path is unset, as the input and the file have it")
    golden = tmp_path / "golden.jsonl"
    golden.write_text('{"id": "a", "question": "q?"}\n')
    done = golden_gate(
        "eval", golden, "--assistant-url", "http://127.0.0.1:9", flag, path, cwd=tmp_path
    )
    assert done.returncode == 2
    name = flag.removeprefix("--")
    assert done.stderr.strip() == (
        f"golden-gate: error: {flag}: {name} {path!r} has an empty segment; write keys and "
        "array indexes joined by dots (retrieval.passages)"
    )
