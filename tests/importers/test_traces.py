"""`golden-gate import --from-traces`: production traces become candidate items that `run` and
`eval` leave out until `review --candidates` takes them in, scrubbed and deduplicated."""

from __future__ import annotations

import json
from pathlib import Path

from golden_gate import redaction
from golden_gate.cli import main
from golden_gate.core.golden import GoldenItem, load_golden
from tests.fakes.assistant_server import AssistantServer

SECRET = "sk-live-0123456789abcdef"


def _messages(role: str, text: str) -> dict:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def _attr(key: str, value: object) -> dict:
    text = value if isinstance(value, str) else json.dumps(value)
    return {"key": key, "value": {"stringValue": text}}


def _otlp(path: Path) -> Path:
    new = {  # semantic conventions v1.37+: the messages as attributes
        "traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174",
        "name": "chat gpt-4.1-mini",
        "attributes": [
            _attr("gen_ai.operation.name", "chat"),
            _attr("gen_ai.input.messages", [_messages("system", "Be brief."), _messages("user",
                f"How do I reset my password? Mail me at jane.doe@example.com, key {SECRET}")]),
            _attr("gen_ai.output.messages", [_messages("assistant", "Open Settings → Reset.")]),
        ],
    }  # fmt: skip
    old = {  # v1.36 and older: one event a message
        "traceId": "aa", "spanId": "bb", "name": "chat gpt-4o",
        "events": [
            {"name": "gen_ai.system.message", "attributes": [_attr("content", "Be brief.")]},
            {"name": "gen_ai.user.message",
             "attributes": [_attr("content", "What ports are used?")]},
            {"name": "gen_ai.choice", "attributes": [_attr("message", {"content": "8200, 8201"})]},
        ],
    }  # fmt: skip
    known = {  # a question the golden set has already
        "traceId": "cc", "spanId": "dd", "name": "chat",
        "attributes": [_attr("gen_ai.input.messages", [_messages("user", "Refund  window?")])],
    }  # fmt: skip
    again = dict(old, traceId="ee")  # the same question asked again
    tool = {"traceId": "ff", "spanId": "11", "name": "execute_tool", "attributes": []}
    path = path / "traces.json"
    path.write_text(json.dumps({"resourceSpans": [{"resource": {}, "scopeSpans": [
        {"scope": {"name": "openai"}, "spans": [new, old, known, again, tool]}]}]}))  # fmt: skip
    return path


def _golden(path: Path) -> Path:
    golden = path / "golden.jsonl"
    golden.write_text(
        json.dumps({"id": "refund", "question": "Refund window?",
                    "reference_key_points": ["30 days"], "tags": ["smoke"]}) + "\n"
    )  # fmt: skip
    return golden


def test_otlp_spans_of_both_conventions_become_scrubbed_candidates(tmp_path, capsys):
    out = tmp_path / "candidates.jsonl"
    code = main(["import", "--from-traces", str(_otlp(tmp_path)), "-o", str(out),
                 "--golden", str(_golden(tmp_path))])  # fmt: skip
    said = capsys.readouterr().out
    assert code == 0
    items = load_golden(out)
    assert [i.question for i in items] == [
        "How do I reset my password? Mail me at [email], key ***",
        "What ports are used?",
    ]
    assert all(i.tags == ["from-traces", "needs-reference"] for i in items)
    extra = items[1].model_extra or {}
    assert extra["observed_answer"] == "8200, 8201" and extra["review"] == ""
    assert SECRET not in out.read_text() and "jane.doe" not in out.read_text()
    assert "the golden set has this question" in said
    assert "the same question as an item before it" in said


def test_a_registered_secret_and_personal_data_are_scrubbed_from_answers_too(tmp_path, capsys):
    redaction.register("hunter2-the-password")
    try:
        traces = tmp_path / "langfuse.json"
        traces.write_text(json.dumps([{
            "id": "t1", "name": "chat", "timestamp": "2026-01-01T00:00:00Z",
            "input": {"messages": [{"role": "user", "content": "Call me on +44 20 7946 0958"}]},
            "output": {"role": "assistant", "content": "Your password is hunter2-the-password"},
        }]))  # fmt: skip
        out = tmp_path / "candidates.jsonl"
        assert main(["import", "--from-traces", str(traces), "-o", str(out)]) == 0
    finally:
        redaction.clear()
    (item,) = load_golden(out)
    assert item.question == "Call me on [phone]"
    assert (item.model_extra or {})["observed_answer"] == "Your password is ***"


def test_langsmith_root_runs_are_the_exchanges(tmp_path, capsys):
    runs = tmp_path / "runs.jsonl"
    runs.write_text("".join(json.dumps(r) + "\n" for r in [
        {"id": "r1", "trace_id": "r1", "run_type": "chain", "parent_run_id": None,
         "inputs": {"question": "Export to CSV?"}, "outputs": {"answer": "Use Export."}},
        {"id": "r2", "trace_id": "r1", "run_type": "llm", "parent_run_id": "r1",
         "inputs": {"messages": [{"role": "user", "content": "inner prompt"}]}, "outputs": {}},
    ]))  # fmt: skip
    out = tmp_path / "candidates.jsonl"
    assert main(["import", "--from-traces", str(runs), "-o", str(out)]) == 0
    assert [i.question for i in load_golden(out)] == ["Export to CSV?"]


def test_run_leaves_candidates_out_until_review_accepts_them(tmp_path, capsys):
    golden = _golden(tmp_path)
    candidates = tmp_path / "candidates.jsonl"
    assert main(["import", "--from-traces", str(_otlp(tmp_path)), "-o", str(candidates),
                 "--golden", str(golden)]) == 0  # fmt: skip
    # Even appended to the golden set, the candidates are never asked or gated.
    with golden.open("a") as out:
        out.write(candidates.read_text())
    with AssistantServer(default_answer="30 days") as assistant:
        report = tmp_path / "report.json"
        flags = ["--assistant-url", assistant.url, "--judge-model", "keypoints", "--quiet"]
        assert main(["eval", str(golden), *flags, "-o", str(report)]) == 0
        err = capsys.readouterr().err
        assert "2 item(s) tagged needs-review or needs-reference left out" in err
        assert [r["id"] for r in json.loads(report.read_text())["results"]] == ["refund"]
        # The reviewer accepts one (with its reference written), rejects the other.
        lines = [json.loads(line) for line in golden.read_text().splitlines()]
        lines[1] |= {"review": "accept", "reference_key_points": ["Settings", "Reset"]}
        lines[2] |= {"review": "reject"}
        golden.write_text("".join(json.dumps(line) + "\n" for line in lines))
        assert main(["review", "--candidates", str(golden)]) == 0
        assert "1 accepted" in capsys.readouterr().out
        items = load_golden(golden)
        assert [i.tags for i in items] == [["smoke"], ["from-traces"]]
        assert not items[1].model_extra  # the reviewer's fields are gone
        assert main(["eval", str(golden), *flags, "-o", str(report)]) == 0
        ids = [r["id"] for r in json.loads(report.read_text())["results"]]
        assert ids == ["refund", items[1].id]


def test_review_into_another_file_and_what_it_refuses(tmp_path, capsys):
    golden = _golden(tmp_path)
    candidates = tmp_path / "candidates.jsonl"
    assert main(["import", "--from-traces", str(_otlp(tmp_path)), "-o", str(candidates)]) == 0
    lines = [json.loads(line) for line in candidates.read_text().splitlines()]
    lines[0]["review"] = "accept"  # no reference written yet
    lines[1]["review"] = "maybe"
    candidates.write_text("".join(json.dumps(line) + "\n" for line in lines))
    capsys.readouterr()
    assert main(["review", "--candidates", str(candidates), "--into", str(golden)]) == 2
    err = capsys.readouterr().err
    assert "candidates.jsonl:1: item" in err and "nothing to judge" in err
    assert "candidates.jsonl:2: item" in err and "review is 'maybe'" in err
    lines[0]["reference_key_points"] = ["Settings"]
    lines[1]["review"] = ""
    candidates.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert main(["review", "--candidates", str(candidates), "--into", str(golden)]) == 0
    assert len(load_golden(golden)) == 2 and len(load_golden(candidates)) == 2


def test_a_pull_request_cannot_hide_a_base_item_by_marking_it_unreviewed():
    from golden_gate.core.rules import gate_items

    base = [
        GoldenItem(
            id="refund", question="Refund window?", reference_key_points=["30"], tags=["smoke"]
        ),
        GoldenItem(id="ports", question="Ports?", reference_key_points=["8200"], tags=["smoke"]),
    ]
    head = [base[0].model_copy(update={"tags": ["smoke", "needs-review"]}), base[1]]
    items, changes = gate_items(base, head, ["smoke"])
    assert [i.id for i in items] == ["refund", "ports"]  # still compared as the base defines it
    assert changes.untagged == ["refund"]


def test_otlp_json_lines_and_the_earliest_indexed_attributes(tmp_path, capsys):
    span = {
        "traceId": "01", "spanId": "02", "name": "openai.chat",
        "attributes": [
            {"key": "gen_ai.prompt.0.role", "value": {"stringValue": "system"}},
            {"key": "gen_ai.prompt.0.content", "value": {"stringValue": "Be brief."}},
            {"key": "gen_ai.prompt.1.role", "value": {"stringValue": "user"}},
            {"key": "gen_ai.prompt.1.content", "value": {"stringValue": "Where are the logs?"}},
            {"key": "gen_ai.completion.0.content", "value": {"stringValue": "In /var/log."}},
        ],
    }  # fmt: skip
    request = {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}
    traces = tmp_path / "traces.jsonl"  # the collector's file exporter: one request a line
    traces.write_text(json.dumps(request) + "\n" + json.dumps(request) + "\n")
    out = tmp_path / "candidates.jsonl"
    assert main(["import", "--from-traces", str(traces), "-o", str(out)]) == 0
    (item,) = load_golden(out)  # the second line's question is the first's
    assert item.question == "Where are the logs?"
    assert (item.model_extra or {})["observed_answer"] == "In /var/log."
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(request) + "\n" + '{"resourceSpans": [\n')
    capsys.readouterr()
    assert main(["import", "--from-traces", str(bad), "-o", str(tmp_path / "b.jsonl")]) == 2
    assert "bad.jsonl:2: not JSON" in capsys.readouterr().err
