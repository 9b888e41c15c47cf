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
