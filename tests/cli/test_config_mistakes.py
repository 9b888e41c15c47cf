"""Configuration mistakes are named as configuration: one sentence naming the setting, exit 2,
never a verdict (issue 44)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.assistant_server import AssistantServer
from tests.helpers import golden_gate


def write_golden(path: Path, count: int = 4) -> dict[str, str]:
    answers = {}
    lines = []
    for n in range(count):
        question = f"Which port does service {n} use?"
        answers[question] = f"port {8000 + n}"
        tags = ["smoke"] if n % 2 == 0 else ["full"]
        item = {"id": f"q{n}", "question": question, "tags": tags}
        lines.append(json.dumps({**item, "reference_key_points": [f"port {8000 + n}"]}))
    path.write_text("\n".join(lines) + "\n")
    return answers


@pytest.mark.parametrize("command", ["eval", "run", "plan", "subset"])
def test_a_subset_tag_no_item_carries_is_named(tmp_path, command):
    answers = write_golden(tmp_path / "g.jsonl")
    with AssistantServer(answers) as assistant:
        args = {
            "eval": ["--quiet", "--assistant-url", assistant.url, "-o", tmp_path / "r.json"],
            "run": ["--quiet", "--assistant-url", assistant.url, "-o", tmp_path / "r.json"],
            "plan": [],
            "subset": ["-o", tmp_path / "s.jsonl"],
        }[command]
        done = golden_gate(
            command, tmp_path / "g.jsonl", "--subset-tags", "smoke,smok", *args, cwd=tmp_path
        )
        asked = assistant.request_count
    assert done.returncode == 2, done.stdout + done.stderr
    said = [line for line in done.stderr.splitlines() if "error" in line]
    assert said == [
        f"golden-gate: error: subset-tags: no item in {tmp_path / 'g.jsonl'} carries 'smok' "
        "(the tags there: full, smoke)"
    ], done.stderr
    assert asked == 0


def test_tags_every_item_set_carries_run(tmp_path):
    answers = write_golden(tmp_path / "g.jsonl")
    with AssistantServer(answers) as assistant:
        done = golden_gate(
            "eval", tmp_path / "g.jsonl", "--subset-tags", "smoke,full", "--quiet",
            "--assistant-url", assistant.url, "-o", tmp_path / "r.json", cwd=tmp_path,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert len(json.loads((tmp_path / "r.json").read_text())["results"]) == 4


def test_the_action_names_a_subset_tag_no_item_carries(world):
    from tests.action.test_adversary import ten_items

    questions = ten_items(world)
    with AssistantServer(dict.fromkeys(questions.values(), "x")) as assistant:
        done = world.run(
            "workflow_dispatch",
            world.event("workflow_dispatch"),
            assistant_url=assistant.url,
            subset_tags="smoke,smoek",
        )
        asked = assistant.request_count
    assert done.returncode == 2, done.stdout + done.stderr
    assert "subset-tags: no item in" in done.stdout + done.stderr
    assert "carries 'smoek' (the tags there: smoke)" in done.stdout + done.stderr
    assert asked == 0


# -- a path into the answer that finds nothing in every answer ----------------------------


def cited_golden(path: Path, count: int = 16) -> dict[str, str]:
    """Items that cite a page each, as the trial's assistant (`{"reply", "sources"}`)."""
    answers, lines = {}, []
    for n in range(count):
        question = f"Where is feature {n} documented?"
        answers[question] = f"See the page on feature {n}."
        lines.append(json.dumps({"id": f"f{n}", "question": question,
                                 "reference_urls": [f"docs/f{n}.md"]}))  # fmt: skip
    path.write_text("\n".join(lines) + "\n")
    return answers


def reply_shape(answer, sources):
    return {"reply": answer, "sources": sources}


@pytest.mark.parametrize("command", ["eval", "run"])
def test_a_sources_path_that_finds_nothing_in_any_answer_is_named(tmp_path, command):
    answers = cited_golden(tmp_path / "g.jsonl")
    with AssistantServer(answers, shape=reply_shape, sources=["docs/x.md"]) as assistant:
        done = golden_gate(
            command, tmp_path / "g.jsonl", "--assistant-url", assistant.url, "--quiet",
            "--answer-path", "reply", "--sources-path", "citations",
            *(["--floor", "0"] if command == "run" else []), "-o", tmp_path / "r.json",
            cwd=tmp_path,
        )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    said = [line for line in done.stderr.splitlines() if "error" in line]
    assert said == [
        "golden-gate: error: sources-path 'citations' found nothing in any of the 16 answers "
        "(the first answer's keys: reply, sources): check sources-path, a dotted path into the "
        "response (e.g. data.sources, choices.0.message.content)"
    ], done.stderr
    assert "regressed" not in done.stdout and "missing citation" not in done.stdout
    report = json.loads((tmp_path / "r.json").read_text())  # written, saying why
    assert report["complete"] is False and "sources-path 'citations'" in report["incomplete_reason"]


def test_some_answers_without_sources_are_the_assistants_not_a_setting(tmp_path):
    answers = cited_golden(tmp_path / "g.jsonl")
    first = next(iter(answers))

    def shape(answer, sources):  # the first question's reply carries no sources at all
        return {"reply": answer} if answer == answers[first] else reply_shape(answer, sources)

    with AssistantServer(answers, shape=shape, sources=["docs/f1.md"]) as assistant:
        done = golden_gate(
            "eval", tmp_path / "g.jsonl", "--assistant-url", assistant.url, "--quiet",
            "--answer-path", "reply", "--sources-path", "sources",
            "-o", tmp_path / "r.json", cwd=tmp_path,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr  # a verdict: items fail on their citations
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["complete"] is True
    statuses = {r["id"]: r["run_results"][0]["status"] for r in report["results"]}
    assert statuses["f1"] == "pass" and statuses["f0"] == "fail"


def test_a_wrong_answer_path_is_named_after_one_request(tmp_path):
    answers = cited_golden(tmp_path / "g.jsonl")
    with AssistantServer(answers, shape=reply_shape) as assistant:
        done = golden_gate(
            "eval", tmp_path / "g.jsonl", "--assistant-url", assistant.url, "--quiet",
            "--answer-path", "answer", "-o", tmp_path / "r.json", cwd=tmp_path,
        )  # fmt: skip
        asked = assistant.request_count
    assert done.returncode == 2, done.stderr
    said = [line for line in done.stderr.splitlines() if "error" in line]
    assert len(said) == 1 and "no answer at 'answer'" in said[0], done.stderr
    assert "set `answer-path` to where the answer is in the response" in said[0]
    assert asked == 1
    assert "answer-path" in json.loads((tmp_path / "r.json").read_text())["incomplete_reason"]


def test_the_action_names_a_sources_path_that_finds_nothing(world):
    lines, answers = [], {}
    for n in range(10):
        question = f"Where is feature {n} documented?"
        answers[question] = f"See feature {n}."
        item = {"id": f"f{n}", "question": question, "tags": ["smoke"]}
        lines.append(json.dumps({**item, "reference_urls": [f"docs/f{n}.md"]}))
    (world.workspace / "evals" / "golden.jsonl").write_text("\n".join(lines) + "\n")
    with AssistantServer(answers, shape=reply_shape) as assistant:
        done = world.run(
            "workflow_dispatch",
            world.event("workflow_dispatch"),
            assistant_url=assistant.url,
            answer_path="reply",
            sources_path="data.sources",
            floor="0",
        )
    out = done.stdout + done.stderr
    assert done.returncode == 2, out
    assert "sources-path 'data.sources' found nothing in any of the 10 answers" in out
    assert "missing citation" not in done.summary
    report = json.loads((world.workspace / "golden-gate" / "report.json").read_text())
    assert "sources-path" in report["incomplete_reason"]
