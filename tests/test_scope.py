import subprocess

import pytest

from golden_gate.action.scope import DEFAULT_PATHS, decide, git_changed_files, matching


def test_only_pull_requests_can_skip():
    for event in ("workflow_dispatch", "schedule", "workflow_call", "push", ""):
        assert decide(event, force=False, patterns=DEFAULT_PATHS, changed=["README.md"]).run
    assert not decide(
        "pull_request", force=False, patterns=DEFAULT_PATHS, changed=["README.md"]
    ).run


def test_force_runs():
    assert decide("pull_request", force=True, patterns=DEFAULT_PATHS, changed=["README.md"]).run


def test_matching_is_gitignore_style():
    files = [
        "README.md",
        "prompts/answer.txt",
        "config/model.yaml",
        "config/other.yaml",
        "src/app/main.py",
        "docs/src/x.md",
        "evals/golden.jsonl",
    ]
    assert matching(files, DEFAULT_PATHS) == [
        "prompts/answer.txt",
        "config/model.yaml",
        "src/app/main.py",
        "evals/golden.jsonl",
    ]
    assert matching(["a/b.py", "a/keep.md"], ["a/**", "!a/*.md"]) == ["a/b.py"]
    assert matching(["deep/x/y.prompt"], ["*.prompt"]) == ["deep/x/y.prompt"]


def test_skip_and_run_reasons():
    skipped = decide(
        "pull_request",
        force=False,
        patterns=DEFAULT_PATHS,
        changed=["README.md", "docs/a.md"],
        source="api",
    )
    assert not skipped.run and skipped.changed == 2
    assert "2 files changed and none matches" in skipped.reason
    ran = decide(
        "pull_request",
        force=False,
        patterns=DEFAULT_PATHS,
        changed=["README.md", "prompts/answer.txt"],
    )
    assert ran.run and ran.matched == ["prompts/answer.txt"]


def test_cap_and_unknown_run():
    capped = decide(
        "pull_request",
        force=False,
        patterns=DEFAULT_PATHS,
        changed=["README.md"] * 3000,
        capped=True,
    )
    assert capped.run and "3000" in capped.reason
    assert decide("pull_request", force=False, patterns=DEFAULT_PATHS, changed=None).run


def test_git_diff_fallback(tmp_path):
    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("config", "user.email", "t@example.invalid")
    git("config", "user.name", "t")
    (tmp_path / "README.md").write_text("x")
    git("add", ".")
    git("commit", "-qm", "base")
    git("checkout", "-qb", "feature")
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "answer.txt").write_text("be concise")
    git("add", ".")
    git("commit", "-qm", "change")
    assert git_changed_files("main", "feature", cwd=tmp_path) == ["prompts/answer.txt"]
    with pytest.raises(RuntimeError):
        git_changed_files("main", "nope", cwd=tmp_path)


OWN = {
    "evals/golden.jsonl": "golden",
    "gate/judge.txt": "judge-prompt",
    "gate/calibration.json": "calibration",
    "gate/comment.md.j2": "comment-template",
    "gate/labels.jsonl": "labels",
    "gate/baseline.json": "baseline",
}


@pytest.mark.parametrize("changed", [*OWN, ".github/workflows/eval.yml"])
def test_the_gates_own_inputs_run_outside_paths(changed):
    # `paths` names only the service: the gate's own files are still in scope.
    scope = decide(
        "pull_request",
        force=False,
        patterns=["service/**"],
        changed=["README.md", changed],
        own_inputs=OWN,
    )
    assert scope.run and scope.matched == [changed]
    rule = f"input '{OWN[changed]}'" if changed in OWN else "a workflow"
    assert rule in scope.reason and rule in scope.triggers[0]
    assert scope.triggers[0].startswith(changed + " (")


def test_triggers_name_the_paths_pattern_and_reasons_hold_no_file_names():
    scope = decide(
        "pull_request",
        force=False,
        patterns=DEFAULT_PATHS,
        changed=["prompts/a.txt", ".github/workflows/x\n::error::owned.yml"],
        own_inputs=OWN,
    )
    assert scope.triggers[0] == "prompts/a.txt (paths: prompts/**)"
    assert "\n" not in scope.reason and "owned" not in scope.reason


def test_own_inputs_are_repo_paths(tmp_path):
    from golden_gate.action.common import own_inputs
    from golden_gate.action.inputs import read_action_settings

    env = {
        "INPUT_GOLDEN": "./evals/../evals/golden.jsonl",
        "INPUT_JUDGE-PROMPT": "gate/judge.txt",
        "INPUT_CALIBRATION": "gate/calibration.json",
        "INPUT_COMMENT-TEMPLATE": "gate/comment.md.j2",
        "INPUT_LABELS": "gate/labels.jsonl",
        "INPUT_BASELINE": "gate/baseline.json",
        "INPUT_ASSISTANT-URL": "http://127.0.0.1:9",
    }
    # The config file is always one of them (tests/test_adversary.py: and the compose file's).
    expected = {"golden-gate.toml": "the config file", **OWN}
    assert own_inputs(read_action_settings(env, workspace=tmp_path)) == expected


def test_force_and_the_file_cap_still_say_which_rule_files_changed():
    from golden_gate.action.scope import decide

    own = {"evals/golden.jsonl": "golden"}
    changed = ["src/x.py", ".github/workflows/gate.yml", "evals/golden.jsonl"]
    forced = decide(
        "pull_request", force=True, patterns=["src/**"], changed=changed, own_inputs=own
    )
    assert forced.run and forced.own_inputs_changed == changed[1:]
    capped = decide(
        "pull_request", force=False, patterns=[], changed=changed, capped=True, own_inputs=own
    )
    assert capped.run and capped.own_inputs_changed == changed[1:]
