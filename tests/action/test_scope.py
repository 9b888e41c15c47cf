import subprocess

import pytest

from golden_gate.action.scope import decide, git_changed_files, matching

# An allow-list as a team may set `paths` (the default is none: the ignore list decides).
ALLOW = ["prompts/**", "config/model*", "ingest/**", "evals/**", "src/**"]


def test_only_pull_requests_can_skip():
    for event in ("workflow_dispatch", "schedule", "workflow_call", "push", ""):
        assert decide(event, force=False, patterns=ALLOW, changed=["README.md"]).run
    assert not decide("pull_request", force=False, patterns=ALLOW, changed=["README.md"]).run


def test_force_runs():
    assert decide("pull_request", force=True, patterns=ALLOW, changed=["README.md"]).run


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
    assert matching(files, ALLOW) == [
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
        patterns=ALLOW,
        changed=["README.md", "docs/a.md"],
        source="api",
    )
    assert not skipped.run and skipped.changed == 2
    assert "2 files changed and none matches" in skipped.reason
    ran = decide(
        "pull_request",
        force=False,
        patterns=ALLOW,
        changed=["README.md", "prompts/answer.txt"],
    )
    assert ran.run and ran.matched == ["prompts/answer.txt"]


def test_cap_and_unknown_run():
    capped = decide(
        "pull_request",
        force=False,
        patterns=ALLOW,
        changed=["README.md"] * 3000,
        capped=True,
    )
    assert capped.run and "3000" in capped.reason
    assert decide("pull_request", force=False, patterns=ALLOW, changed=None).run


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
        patterns=ALLOW,
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
    # The config file is always one of them (and the compose file's:
    # tests/action/test_adversary.py).
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


# The PR of issue 30: the service's code, dependencies and image, in a layout `paths` never named.
SERVICE_CHANGE = ["app/server.py", "requirements.txt", "Dockerfile", "pyproject.toml"]


@pytest.mark.parametrize("paths", [[], ["prompts/**"]])
def test_by_default_a_change_to_the_assistant_runs_whatever_its_layout(paths):
    scope = decide("pull_request", force=False, patterns=[], changed=SERVICE_CHANGE)
    assert scope.run and scope.matched == SERVICE_CHANGE
    assert scope.triggers[0] == "app/server.py (not on the ignore list)"
    # An explicit allow-list is still one: a team that sets `paths` gets what it asked for.
    allowed = decide("pull_request", force=False, patterns=["prompts/**"], changed=SERVICE_CHANGE)
    assert not allowed.run and allowed.skipped["app/server.py"] == "not in `paths`"


def test_only_a_change_made_entirely_of_ignored_files_is_skipped_each_file_with_its_rule():
    changed = [
        "README.md",
        "docs/setup/index.html",
        "LICENSE",
        "assets/logo.png",
        ".github/ISSUE_TEMPLATE/bug.yml",
        ".github/pull_request_template.md",
    ]
    skipped = decide("pull_request", force=False, patterns=[], changed=changed)
    assert not skipped.run
    assert "each is on the ignore list" in skipped.reason
    assert skipped.skipped == {
        "README.md": "ignored: *.md",
        "docs/setup/index.html": "ignored: docs/",
        "LICENSE": "ignored: LICENSE*",
        "assets/logo.png": "ignored: *.png",
        ".github/ISSUE_TEMPLATE/bug.yml": "ignored: .github/ISSUE_TEMPLATE/",
        ".github/pull_request_template.md": "ignored: .github/pull_request_template.md",
    }
    # One file outside the list is enough.
    assert decide("pull_request", force=False, patterns=[], changed=[*changed, "x.cfg"]).run


@pytest.mark.parametrize(
    "prompt", ["prompts/system.md", "app/prompts/answer.md", "docs/prompt.md", "RAG_PROMPT.md"]
)
def test_a_markdown_prompt_is_never_ignored(prompt):
    # Markdown is a common format for prompts: a file or folder named for one always runs.
    assert decide("pull_request", force=False, patterns=[], changed=["README.md", prompt]).run


def test_ignore_paths_extends_the_list_and_takes_files_back():
    changed = ["notebooks/explore.ipynb", "README.md"]
    assert decide("pull_request", force=False, patterns=[], changed=changed).run
    extended = decide(
        "pull_request", force=False, patterns=[], changed=changed, ignore=["notebooks/"]
    )
    assert not extended.run
    assert extended.skipped["notebooks/explore.ipynb"] == "ignored: notebooks/"
    # A docs assistant whose corpus is Markdown takes it back with `!`.
    corpus = decide(
        "pull_request", force=False, patterns=[], changed=["kb/faq.md"], ignore=["!kb/**"]
    )
    assert corpus.run


def test_a_bad_ignore_pattern_names_its_input():
    from golden_gate.errors import InputError

    with pytest.raises(InputError, match="input 'ignore-paths': 'a/\\[z-a\\]'"):
        decide("pull_request", force=False, patterns=[], changed=["x"], ignore=["a/[z-a]"])
