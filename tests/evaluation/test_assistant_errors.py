"""Issue 30: an assistant-side error is explained where the user looks, not only in
report.json: a preflight request stops a run every request would fail the same way, and after a
run the first error of each kind is said with its status and what to check."""

from __future__ import annotations

import json

import pytest

from tests.fakes.assistant_server import AssistantServer
from tests.helpers import golden_gate


def _golden(path, n=20):
    path.write_text(
        "".join(
            json.dumps({"id": f"i{k:02d}", "question": f"q{k}?", "reference_key_points": ["x"]})
            + "\n"
            for k in range(n)
        )
    )
    return path


def _eval(tmp_path, url, *flags):
    return golden_gate(
        "eval", _golden(tmp_path / "g.jsonl"), "--assistant-url", url, "--judge-model",
        "keypoints", "--retries", "0", "-o", tmp_path / "r.json", *flags, cwd=tmp_path,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (
            ("--assistant-path", "/api/answer"),
            'HTTP 404 from POST {url}/api/answer ({{"error": "no route POST /api/answer"}}): '
            "is `assistant-path` right (and `assistant-url`)?",
        ),
        (
            ("--answer-path", "data.answer"),
            "no answer at 'data.answer' (no key 'data') (HTTP 200 from POST {url}/ask): set "
            "`answer-path` to where the answer is in the response",
        ),
    ],
)
def test_a_wrong_setting_stops_at_the_first_request_with_what_to_check(tmp_path, flags, said):
    # Before: 20 requests, "20 of 20 runs ended in an error", "0/20 items passed", the progress
    # line "0 errors", and the cause only in report.json.
    with AssistantServer(default_answer="x") as assistant:
        url = assistant.url
        done = _eval(tmp_path, url, *flags)
        asked = assistant.request_count
    # A response read whole without the answer at answer-path is a setting (exit 2, issue
    # 44); a 404 may be a service not deployed yet (exit 3). Either way the report is written.
    setting = flags[0] == "--answer-path"
    assert done.returncode == (2 if setting else 3), done.stdout + done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "golden-gate: error: "
        + ("" if setting else "the evaluation could not be completed: ")
        + "the assistant's first answer (item 'i00', before the run) failed: "
        + said.format(url=url)
    )
    assert asked == 1 and "items passed" not in done.stdout
    if not setting:  # a setting's sentence is the error alone: no result is printed
        assert done.stdout.startswith("golden-gate: incomplete: 0 of 20 items got a verdict")
    report = json.loads((tmp_path / "r.json").read_text())  # the report is kept, as ever
    assert report["complete"] is False and len(report["not_asked"]) == 20
    reason = done.stderr.strip().splitlines()[-1].removeprefix("golden-gate: error: ")
    assert report["incomplete_reason"] == reason.removeprefix(
        "the evaluation could not be completed: "
    )


def test_a_422_names_the_request_template(tmp_path):
    with AssistantServer(default_answer="x") as assistant:
        assistant.status = 422
        done = _eval(tmp_path, assistant.url)
    assert done.returncode == 3
    assert "is `request-template` the body your service expects?" in done.stderr


def test_nothing_listening_and_https_to_plain_http_are_told_apart(tmp_path):
    down = _eval(tmp_path, "http://127.0.0.1:9")
    assert down.returncode == 3
    assert "connection refused (POST http://127.0.0.1:9/ask): is the assistant running there?" in (
        down.stderr
    )
    assert "`http://runner-host:PORT`, listening on 0.0.0.0" in down.stderr
    with AssistantServer(default_answer="x") as assistant:
        tls = _eval(tmp_path, assistant.url.replace("http:", "https:"))
    assert tls.returncode == 3
    assert "the URL says https: does the service speak plain http?" in tls.stderr


def test_errors_during_the_run_are_explained_and_counted_on_the_progress_line(tmp_path):
    with AssistantServer(default_answer="x") as assistant:
        assistant.failing_questions = {f"q{k}?" for k in range(1, 20)}
        assistant.fail_status = 404
        url = assistant.url
        done = _eval(tmp_path, url)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "19 errors (19 from the assistant)" in done.stderr
    reason = json.loads((tmp_path / "r.json").read_text())["incomplete_reason"]
    assert reason.endswith(
        f"; the assistant: HTTP 404 from POST {url}/ask "
        '({"error": "fake assistant says 404"}): is `assistant-path` right (and `assistant-url`)? '
        "(19 runs)"
    )
    assert reason in done.stderr  # said where the user looks, not only in the report


def test_a_few_errors_below_the_error_rate_are_a_warning_with_their_cause(tmp_path):
    with AssistantServer(default_answer="x") as assistant:
        assistant.failing_questions = {"q7?"}
        assistant.fail_status = 400
        done = _eval(tmp_path, assistant.url, "--max-error-rate", "0.1")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert any(
        w.startswith("the assistant: HTTP 400 from POST") and "request-template" in w
        for w in report["warnings"]
    )
