"""Registered secrets never reach what the gate writes; short ones are said to be unscrubbable."""

import json

from golden_gate import redaction, runner
from golden_gate.core.gate import evaluate_gate
from golden_gate.core.item_result import ItemResult, RunResult
from golden_gate.core.report import AssistantInfo, Report
from golden_gate.core.report_file import report_json
from golden_gate.core.verdict import GateSettings
from golden_gate.rendering.render import render_comment, render_summary

TOKEN = "ghp_s3cret_token_0123456789"  # "_" is escaped in Markdown: scrubbed before escaping
HEADER = "Bearer hdr_s3cret_value"
URL = "http://gate:url-pa55word@127.0.0.1:9/ask"


def register_all() -> None:
    for value in (TOKEN, HEADER, *redaction.url_credentials(URL)):
        assert redaction.register(value)


def leaky_report() -> Report:
    text = f"echoed {TOKEN} and {HEADER.split()[1]} from {URL}"
    run = RunResult(status="fail", answer=text, error=None)
    return Report(
        judge="keypoints",
        results=[ItemResult(id="a", passes=0, runs=1, question=text, run_results=[run])],
        assistant=AssistantInfo(url=URL),
        incomplete_reason=text,
    )


def test_scrub_covers_every_form_and_any_urls_credentials():
    register_all()
    assert redaction.scrub(f"a {TOKEN} b") == "a *** b"
    assert redaction.scrub("token hdr_s3cret_value alone") == "token *** alone"
    assert redaction.scrub(json.dumps({"k": f'x"{TOKEN}'})) == '{"k": "x\\"***"}'
    assert redaction.scrub("https://someone:other@host/x") == "https://***@host/x"
    assert redaction.without_credentials(URL) == "http://127.0.0.1:9/ask"
    assert redaction.url_credentials("https://tok3n-as-user@host") == ["tok3n-as-user"]


def test_short_secrets_are_registered_as_too_short_and_not_scrubbed():
    assert not redaction.register("ab1")
    assert redaction.too_short() == 1
    assert redaction.scrub("about ab1") == "about ab1"


def test_report_comment_summary_outputs_and_commands_hold_no_secret(tmp_path, capsys):
    register_all()
    report = leaky_report()
    assert report.assistant is not None and report.assistant.url == "http://127.0.0.1:9/ask"
    gate = evaluate_gate(report, None, GateSettings())
    written = report_json(report)
    json.loads(written)  # still a valid report
    comment = render_comment(report, gate)
    summary = render_summary(report, gate)
    env = {"GITHUB_OUTPUT": str(tmp_path / "out"), "GITHUB_STEP_SUMMARY": str(tmp_path / "sum")}
    runner.set_outputs({"why": f"{TOKEN}\n{HEADER}"}, env)
    runner.write_summary(f"raw {TOKEN}", env)
    runner.error(f"failed at {URL}", title=TOKEN)
    runner.print_untrusted(f"log {HEADER}")
    files = (tmp_path / "out").read_text() + (tmp_path / "sum").read_text()
    printed = capsys.readouterr().out
    for text in (written, comment, summary, files, printed):
        assert TOKEN not in text and "hdr_s3cret_value" not in text
        assert "url-pa55word" not in text
    assert "***" in written and "***" in files


def test_a_password_in_a_providers_endpoint_variable_is_scrubbed(monkeypatch):
    # The SDK reads ANTHROPIC_BASE_URL itself: a password there can reach an error message.
    from golden_gate.cli.options import _register_secrets

    monkeypatch.setenv("ANTHROPIC_BASE_URL", "https://judge:gw-pa55word-xyz@gateway.test/v1")
    assert _register_secrets({})
    assert redaction.scrub("401: bad credentials gw-pa55word-xyz") == "401: bad credentials ***"


# -- one scrubber, each caller's cases ---------------------------------------------------------


def test_a_clients_own_secrets_are_scrubbed_unregistered():
    # The assistant's client: its header values, the token of "Bearer <token>" alone too, even
    # when nothing registered them (a library caller, a test).
    headers = ["Bearer hdr_s3cret_value", "key-abcdef123456"]
    text = "bad token hdr_s3cret_value; sent Bearer hdr_s3cret_value and key-abcdef123456"

    assert redaction.scrub(text, also=headers) == "bad token ***; sent *** and ***"
    assert redaction.scrub("a Bearer word", also=headers) == "a Bearer word"
    assert redaction.scrub(text) == text  # nothing registered: only what the caller gives


def test_text_a_provider_wrote_loses_environment_secrets_and_key_shapes(monkeypatch):
    # The judge: an SDK's error may echo a key no one registered.
    monkeypatch.setenv("JUDGE_API_KEY", "plain-secret-value")
    monkeypatch.setenv("SHORT_TOKEN", "abc")  # too short to be told from ordinary words
    text = "a plain-secret-value b sk-proj-abcdef123 c Bearer xyz d abc"

    assert redaction.scrub(text, third_party=True) == "a *** b *** c *** d abc"
    assert redaction.scrub(text) == text  # an answer keeps its words


def test_registered_secrets_and_a_clients_own_are_scrubbed_longest_first():
    assert redaction.register("s3cret-registered-value")
    text = "s3cret-registered-value-and-more s3cret-registered-value"

    scrubbed = redaction.scrub(text, also=["s3cret-registered-value-and-more"])

    assert scrubbed == "*** ***"
