"""Issue 44, item 7: `golden-gate init` run again keeps what the team wrote and adds what is new;
the local and the CI baseline are made with as many runs; `run` says what floor a grown set
could hold."""

from __future__ import annotations

import json
import re
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml

from golden_gate import config_file
from golden_gate.demo import baseline_path
from golden_gate.example_assistant import golden_path, start
from golden_gate.starter_merge import merge
from tests.helpers import golden_gate

PIN = "someorg/golden-gate-action@" + "0123456789abcdef" * 2 + "01234567"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return tmp_path


def _init(repo: Path, *args: object) -> subprocess.CompletedProcess[str]:
    done = golden_gate("init", "--dir", repo, "--action", PIN, *args)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def _edit(repo: Path) -> str:
    """The team's edits to the starter config: its assistant, judge, floor and a comment."""
    path = repo / "golden-gate.toml"
    text = path.read_text()
    text = text.replace(
        "[assistant]\n",
        '[assistant]\n# our staging box\nurl = "http://127.0.0.1:8000"\npath = "/api/chat"\n'
        'answer-path = "reply"\n',
    )
    text = re.sub(r"^floor = .*$", "floor = 0.5  # agreed with the team", text, flags=re.M)
    text = text.replace('model = "openai:gpt-4.1-mini-2025-04-14"', 'model = "ollama:llama3"')
    text = text.replace("[judge]\n", "[judge]\ntemperature = 0.0\n")
    path.write_text(text)
    return text


@pytest.mark.parametrize("force", [False, True])
def test_init_again_after_adding_compose_keeps_the_teams_settings(repo, force):
    _init(repo)
    mine = _edit(repo)
    (repo / "docker-compose.yml").write_text("services:\n  assistant:\n    build: .\n")
    done = _init(repo, *(["--force"] if force else []))
    text = (repo / "golden-gate.toml").read_text()
    # What the team wrote is there as written; [compose] was added after it.
    assert text.startswith(mine) and text[len(mine) :].lstrip().startswith("[compose]")
    values = config_file.parse(text, source="golden-gate.toml").values
    assert values["assistant-path"] == "/api/chat" and values["answer-path"] == "reply"
    assert values["judge-model"] == "ollama:llama3" and values["judge-temperature"] == 0.0
    assert values["floor"] == 0.5 and values["compose-file"] == "docker-compose.yml"
    assert "# agreed with the team" in text and "# our staging box" in text
    assert "added [compose]" in done.stdout
    assert "[assistant] url is set and init added [compose] file" in done.stdout
    gate = yaml.safe_load((repo / ".github/workflows/golden-gate.yml").read_text())
    step = gate["jobs"]["gate"]["steps"][1]
    if force:  # rewritten: the compose file starts the pull request's own assistant
        assert "with" not in step
    else:  # kept, and said so
        assert step["with"]["assistant-url"] == "${{ vars.ASSISTANT_URL }}"
        assert "kept .github/workflows/golden-gate.yml" in done.stdout
        assert "--force rewrites them" in done.stdout
    # A third run has nothing to add and changes nothing.
    again = _init(repo)
    assert (repo / "golden-gate.toml").read_text() == text
    assert "golden-gate.toml: kept as it is" in again.stdout


def test_the_compose_section_holds_only_compose_keys_and_each_hint_uncomments(repo):
    # The regenerated file once put the assistant's keys, commented, under [compose]:
    # uncommenting one gave "unknown setting '[compose] path'".
    (repo / "compose.yaml").write_text("services:\n  assistant:\n    build: .\n")
    _init(repo)
    text = (repo / "golden-gate.toml").read_text()
    names = "path|request-template|answer-path|sources-path|usage-path|headers|service"
    on = re.sub(rf"^# ((?:{names}) = )", r"\1", text, flags=re.M)
    values = config_file.parse(on, source="golden-gate.toml").values
    assert values["assistant-path"] == "/ask" and values["answer-path"] == "answer"
    assert values["compose-service"] == "assistant"
    assert tomllib.loads(on)["compose"].keys() == {"file", "service"}


def test_init_over_a_file_it_did_not_write_adds_what_is_missing(repo):
    (repo / "golden-gate.toml").write_text(
        "# ours\ngolden = 'evals/golden.jsonl'\nsubset-tags = [\n  'smoke',\n]\n\n"
        "[gate]\n# strict\nfloor = 0.9\n# retrieval-k = 3\n"
    )
    done = _init(repo)
    text = (repo / "golden-gate.toml").read_text()
    assert text.startswith("# ours\ngolden = 'evals/golden.jsonl'\nsubset-tags = [\n  'smoke',\n]")
    data = tomllib.loads(text)
    assert data["gate"]["floor"] == 0.9 and data["baseline-runs"] == 3
    assert data["judge"]["model"] == "openai:gpt-4.1-mini-2025-04-14"
    assert data["gate"]["alpha"] == 0.05  # a key added to a table the file has
    # Added before the team's commented hint, inside [gate], with the starter's comment.
    gate = text[text.index("[gate]") :]
    assert gate.index("alpha = 0.05") < gate.index("# retrieval-k = 3")
    added = re.search(r"kept every setting you wrote; added (.*)", done.stdout)
    assert added is not None and "baseline-runs" in added.group(1).split(", ")
    assert "[gate] alpha" in added.group(1) and "[judge]" in added.group(1)
    config_file.parse(text, source="golden-gate.toml")


def test_a_broken_config_is_named_and_nothing_is_written(repo):
    (repo / "golden-gate.toml").write_text("[gate]\nflor = 0.8\n")
    done = golden_gate("init", "--dir", repo, "--action", PIN)
    assert done.returncode == 2
    assert "golden-gate.toml:2: unknown setting '[gate] flor'" in done.stderr
    assert (repo / "golden-gate.toml").read_text() == "[gate]\nflor = 0.8\n"
    assert not (repo / ".github").exists()


def test_merge_never_changes_a_value_and_adds_whole_tables():
    mine = "a = 1\n\n[gate]\nfloor = 0.5\n"
    fresh = (
        'a = 2\nb = 3\n\n[gate]\n# why\nfloor = 0.8\nalpha = 0.05\n\n[judge]\n# j\nmodel = "m"\n'
    )
    merged = merge(mine, fresh)
    data = tomllib.loads(merged.text)
    assert data == {"a": 1, "b": 3, "gate": {"floor": 0.5, "alpha": 0.05}, "judge": {"model": "m"}}
    assert merged.added == ["b", "[gate] alpha", "[judge]"]
    assert "# j\nmodel" in merged.text
    assert merge(merged.text, fresh).added == []


def test_the_local_and_the_ci_baseline_are_made_with_as_many_runs(repo):
    _init(repo)
    text = (repo / "golden-gate.toml").read_text()
    assert "the baseline must be made with as many" not in text
    config = tomllib.loads(text)
    assert config["baseline-runs"] == 3 and config["evaluation"]["runs"] == 1
    workflow = (repo / ".github/workflows/golden-gate-baseline.yml").read_text()
    step = yaml.safe_load(workflow)["jobs"]["promote"]["steps"][1]
    assert "baseline-runs" not in step["with"]  # golden-gate.toml's, as the laptop reads it
    # On a laptop: `eval -o` the configured baseline makes it with baseline-runs.
    (repo / "evals" / "golden.jsonl").write_text(golden_path().read_text())
    with start("baseline") as assistant:
        args = ("--assistant-url", assistant.url, "--judge-model", "keypoints", "--subset-tags")
        made = golden_gate("eval", "-o", "evals/baseline.json", *args, "*", cwd=repo)
        other = golden_gate("eval", "-o", "elsewhere.json", *args, "*", cwd=repo)
    assert made.returncode == 0, made.stdout + made.stderr
    assert "writing the baseline evals/baseline.json: 3 runs an item" in made.stdout
    baseline = json.loads((repo / "evals" / "baseline.json").read_text())
    assert {r["runs"] for r in baseline["results"]} == {3}
    assert other.returncode == 0, other.stderr
    assert {r["runs"] for r in json.loads((repo / "elsewhere.json").read_text())["results"]} == {1}


def test_run_says_what_floor_a_grown_set_could_hold(repo):
    _init(repo)  # three starter items: floor 0
    assert tomllib.loads((repo / "golden-gate.toml").read_text())["gate"]["floor"] == 0.0
    golden = repo / "evals" / "golden.jsonl"
    golden.write_text(golden_path().read_text())
    with start("baseline") as assistant:
        args = ("--assistant-url", assistant.url, "--judge-model", "keypoints")
        (repo / "evals" / "baseline.json").write_text(baseline_path().read_text())
        grown = golden_gate("run", *args, "--subset-tags", "*", cwd=repo)
        small = golden_gate("run", *args, "--subset-tags", "smoke", "--floor", "0.6", cwd=repo)
    assert grown.returncode in (0, 1), grown.stdout + grown.stderr
    # 24 items, one allowed to fail: 23 of 24 give 0.798, so 0.75 (the Wilson bound the gate
    # uses at its confidence).
    assert (
        "golden-gate: the set has grown: 24 items could hold floor = 0.75 (23 of 24 passing "
        "give a Wilson lower bound of 0.798); the floor is 0: raise [gate] floor"
    ) in grown.stdout
    assert small.returncode in (0, 1), small.stdout + small.stderr
    assert "could hold" not in small.stdout  # 14 items (13 of 14: 0.685) hold 0.6, as set


def test_merge_keeps_the_files_line_endings():
    merged = merge("a = 1\r\n\r\n[gate]\r\nfloor = 0.5\r\n", "a = 1\nb = 2\n\n[gate]\nalpha = 1\n")
    assert merged.text == "a = 1\r\nb = 2\r\n\r\n[gate]\r\nfloor = 0.5\r\nalpha = 1\r\n"


def test_a_header_inside_a_multiline_value_stops_the_merge_and_writes_nothing(repo):
    # A line that only looks like `[gate]`: a key put under it would land inside the string.
    mine = (
        "[assistant]\nrequest-template = '''\n[gate]\n{\"q\": \"{question}\"}'''\n\n"
        "[gate]\nfloor = 0.5\n"
    )
    (repo / "golden-gate.toml").write_text(mine)
    done = golden_gate("init", "--dir", repo, "--action", PIN)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "init could not add its new settings to this file" in done.stderr
    assert "Traceback" not in done.stderr
    assert (repo / "golden-gate.toml").read_text() == mine
    assert not (repo / ".github").exists()
