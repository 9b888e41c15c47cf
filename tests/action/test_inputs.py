from pathlib import Path

import pytest

from golden_gate.action.inputs import read_action_settings
from golden_gate.action.yardstick import env_name
from golden_gate.errors import InputError

WS = Path("/github/workspace")


def env(**inputs):
    base = {"assistant-url": "http://assistant:8080"}
    base.update(inputs)
    return {env_name(k.replace("_", "-")): v for k, v in base.items()}


def test_names_keep_hyphens():
    assert env_name("judge-model") == "INPUT_JUDGE-MODEL"
    assert env_name("my input") == "INPUT_MY_INPUT"


def test_defaults_and_values():
    s = read_action_settings(
        env(
            **{
                "judge-model": "openai:gpt-4.1-mini",
                "floor": "0.7",
                "subset-tags": "smoke, nightly",
                "runs": "3",
                "assistant-headers": "Authorization: Bearer abc\nX-A: 1",
                "fail-on-regression": "false",
                "judge-max-tokens": "2048",
                "judge-retries": "2",
                "judge-timeout": "120",
                "judge-prices": "0.4, 1.6",
            }
        ),
        workspace=WS,
    )
    assert (s.run.judge.max_tokens, s.run.judge.max_retries, s.run.judge.timeout_s) == (
        2048,
        2,
        120.0,
    )
    assert s.run.evaluation.judge_prices == (0.4, 1.6)
    assert s.mode == "gate" and s.force is False and s.comment is True
    assert s.run.judge.model == "openai:gpt-4.1-mini"
    assert s.run.gate.floor == 0.7 and s.run.gate.alpha == 0.05
    assert s.run.tags == ["smoke", "nightly"] and s.run.evaluation.runs == 3
    assert s.run.target.headers == {"Authorization": "Bearer abc", "X-A": "1"}
    assert s.run.golden == WS / "evals/golden.jsonl"
    assert s.run.report_path == WS / "golden-gate/report.json"
    assert s.fail_on_regression is False
    assert s.paths == [] and s.ignore_paths == []  # no allow-list: the ignore list decides


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({"floor": "1.5"}, "input 'floor': floor must be in [0, 1)"),
        ({"floor": "high"}, "input 'floor' must be a number, got 'high'"),
        ({"runs": "2.5"}, "input 'runs' must be a whole number"),
        ({"runs": "0"}, "input 'runs'"),
        ({"force": "yes"}, "input 'force' must be true or false, got 'yes'"),
        ({"mode": "deploy"}, "input 'mode' must be one of gate, merge, post-comment"),
        ({"shard": "5/4"}, "input 'shard' must be i/n with 1 ≤ i ≤ n, got '5/4'"),
        ({"assistant-url": ""}, "input 'assistant-url' or 'compose-file' is required"),
        ({"compose-file": "c.yml", "wait-timeout": "0"}, "input 'wait-timeout'"),
        ({"request-template": "{nope"}, "request-template"),
        ({"assistant-headers": "no colon"}, "input 'assistant-headers'"),
    ],
)
def test_bad_inputs_name_the_input(inputs, message):
    with pytest.raises(InputError) as exc:
        read_action_settings(env(**inputs), workspace=WS)
    assert message in str(exc.value)


def test_post_comment_mode_needs_no_assistant():
    s = read_action_settings(env(**{"mode": "post-comment", "assistant-url": ""}), workspace=WS)
    assert s.run.target is None


@pytest.mark.parametrize(
    ("inputs", "expected"),
    [
        ({}, (8, 8, 8)),
        ({"concurrency": "32"}, (32, 32, 32)),
        ({"concurrency": "32", "judge-concurrency": "4"}, (32, 4, 4)),
        ({"judge-concurrency": "16"}, (8, 16, 16)),
    ],
    ids=["defaults", "follows", "set", "set-alone"],
)
def test_the_judge_concurrency_follows_concurrency_unless_set(inputs, expected):
    # action.yml's default for judge-concurrency is "", which arrives as an empty input.
    s = read_action_settings(env(**{"judge-concurrency": "", **inputs}), workspace=WS)

    run = s.run
    assert (run.target.concurrency, run.judge.concurrency, run.evaluation.judge_concurrency) == (
        expected
    )


def test_a_bad_concurrency_the_judge_follows_is_named_as_set():
    calibrate = {"mode": "calibrate", "labels": "labels.jsonl", "assistant-url": ""}
    with pytest.raises(InputError) as exc:
        read_action_settings(env(**calibrate, concurrency="0"), workspace=WS)
    assert str(exc.value).startswith("input 'concurrency': ")
