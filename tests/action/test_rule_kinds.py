"""Every rule holds with or without golden-gate.toml at the base: walked over every option whose
kind is a rule (the option table's `rule`, not a hand list). On a pull request, the base's rule
is what the base branch's own workflow gives this step (read at the base ref, as the runner
names it in GITHUB_WORKFLOW_REF), else the default; a pull request's input may only tighten it
and its own golden-gate.toml only proposes. The real resolver, the real git, a real checkout."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from golden_gate.action.context import Context
from golden_gate.action.yardstick import env_name, resolve_for_event
from golden_gate.errors import InputError
from golden_gate.option_values import clean, tightens
from golden_gate.options import OPTIONS, Option
from tests.action_world import toml_text

RULES = [o for o in OPTIONS if o.rule is not None and "action" in o.doors]
WORKFLOW = ".github/workflows/gate.yml"
REPO = "acme/app"


def strict_and_looser(option: Option) -> tuple[str, str]:
    """(what the base's workflow gives, as the input's text; an input that loosens it), chosen
    from the option's kind and how its rule may move: a new rule kind fails here first."""
    kind, rule = option.kind, option.rule
    if rule == "same":
        if kind == "choice":
            return option.choices[0], option.choices[1]
        if kind == "path":
            return "rules/base.txt", "rules/mine.txt"
        if kind in ("int", "float"):
            return ("5", "3") if kind == "int" else ("0.5", "0.25")
        return {
            "judge-model": ("openai:gpt-4.1-mini", "keypoints"),
            "judge-base-url": ("https://judge.example/v1", "https://mine.example/v1"),
            "evaluators": ("correctness", "conciseness"),
        }.get(option.name, ("main", "mine"))
    if kind == "floats":
        return ("refusal = 0.9", "refusal = 0.5") if rule == "higher" else ("", "")
    if kind in ("int", "float"):
        strict, loose = ("3", "2") if kind == "int" else ("0.9", "0.5")
        return (strict, loose) if rule == "higher" else (loose, strict)
    if kind in ("tags", "lines"):
        sep = "," if kind == "tags" else "\n"
        if rule == "superset":
            if option.name == "paths":
                return "src/**", sep.join(["src/**", "!src/**"])  # a take-back selects less
            return "smoke", "extended"
        if rule == "subset":
            if option.name == "ignore-paths":
                return sep.join(["kb/**", "!kb/**"]), "kb/**"  # dropping a take-back ignores more
            return "OPENAI_BASE_URL", sep.join(["OPENAI_BASE_URL", "OTHER_VAR"])  # one name more
    if kind == "bool":
        return ("true", "false") if rule == "on" else ("false", "true")
    raise AssertionError(f"no strict/looser pair for rule {rule!r} of kind {kind!r}")


def git(where: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid",
         "-c", "commit.gpgsign=false", *args],
        cwd=where, check=True, capture_output=True,
    )  # fmt: skip


def pull_request(tmp_path: Path, base_inputs: dict[str, str] | None, *, workflow_ref=True):
    """A checkout whose main branch has the gate's workflow giving `base_inputs` (None: no
    workflow at the base), and the runner's environment for a pull request into main."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    git(workspace, "init", "-q", "-b", "main")
    if base_inputs is not None:
        step = {"id": "gate", "uses": "acme/golden-gate-action@v1", "with": base_inputs}
        text = yaml.safe_dump({"on": "pull_request", "jobs": {"gate": {"steps": [step]}}})
        (workspace / WORKFLOW).parent.mkdir(parents=True)
        (workspace / WORKFLOW).write_text(text)
        git(workspace, "add", ".")
    git(workspace, "commit", "-q", "--allow-empty", "-m", "base")
    event = tmp_path / "event.json"
    head = {"ref": "change", "repo": {"full_name": REPO, "fork": False}}
    pr = {"number": 7, "base": {"ref": "main"}, "head": head}
    event.write_text(json.dumps({"pull_request": pr}))
    env = {
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_JOB": "gate",
        "GITHUB_ACTION": "gate",
        "GITHUB_ACTION_REPOSITORY": "acme/golden-gate-action",
    }
    if workflow_ref:
        env["GITHUB_WORKFLOW_REF"] = f"{REPO}/{WORKFLOW}@refs/pull/7/merge"
    return workspace, env


def resolve(workspace: Path, env: dict[str, str], **inputs: str):
    env = {**env, **{env_name(k): v for k, v in inputs.items()}}
    return resolve_for_event(env, workspace=workspace, ctx=Context(env))


def refused(resolved, name: str) -> list[str]:
    return [why for value, why in resolved.refusals if value.origin == f"input '{name}'"]


@pytest.mark.parametrize("option", RULES, ids=[o.name for o in RULES])
def test_an_input_cannot_loosen_the_rule_the_bases_workflow_gives(tmp_path, option):
    strict, loose = strict_and_looser(option)
    where = f"input '{option.name}'"
    assert tightens(option, clean(option, strict, where), clean(option, strict, where))
    assert not tightens(option, clean(option, strict, where), clean(option, loose, where))
    workspace, env = pull_request(tmp_path, {option.name: strict})
    resolved = resolve(workspace, env, **{option.name: loose})
    (why,) = refused(resolved, option.name)
    assert why.startswith(f"input '{option.name}' (")
    assert f"the inputs of {WORKFLOW} at main" in why
    # The rule in force is the base's, never the pull request's.
    assert resolved[option.name] == clean(option, strict, where)
    # Repeating the base's rule is taken.
    again = resolve(workspace, env, **{option.name: strict})
    assert refused(again, option.name) == []
    assert again[option.name] == clean(option, strict, where)


@pytest.mark.parametrize("option", RULES, ids=[o.name for o in RULES])
def test_the_prs_own_config_file_only_proposes_a_rule(tmp_path, option):
    strict, loose = strict_and_looser(option)
    where = f"input '{option.name}'"
    workspace, env = pull_request(tmp_path, {option.name: strict})
    value = clean(option, loose, where)
    table = {option.group: {option.key: value}} if option.group else {option.name: value}
    (workspace / "golden-gate.toml").write_text(toml_text(table))
    resolved = resolve(workspace, env)
    assert resolved[option.name] == clean(option, strict, where)
    assert resolved.proposed[option.name] == value


@pytest.mark.parametrize("unreadable", ["no workflow ref", "not at the base", "expression"])
@pytest.mark.parametrize("option", RULES, ids=[o.name for o in RULES])
def test_where_the_bases_workflow_cannot_say_each_rule_is_its_default(tmp_path, option, unreadable):
    strict, loose = strict_and_looser(option)
    where = f"input '{option.name}'"
    base_inputs = {option.name: "${{ vars.RULE }}"} if unreadable == "expression" else {}
    workspace, env = pull_request(
        tmp_path,
        None if unreadable == "not at the base" else base_inputs,
        workflow_ref=unreadable != "no workflow ref",
    )
    default = option.default_for("action")
    for given in (strict, loose):
        value = clean(option, given, where)
        resolved = resolve(workspace, env, **{option.name: given})
        if tightens(option, default, value):
            assert refused(resolved, option.name) == [] and resolved[option.name] == value
        else:  # held to the default, never the pull request's value
            (why,) = refused(resolved, option.name)
            assert "(its default)" in why or "its default" in why
            assert resolved[option.name] == default


def test_the_issues_cases_are_refused_without_a_config_file(tmp_path):
    base = {"subset-tags": "smoke", "evaluator-rule": "all", "evaluators": "correctness"}
    base["baseline"] = "evals/baseline.json"
    workspace, env = pull_request(tmp_path, base)
    resolved = resolve(
        workspace,
        env,
        **{
            "subset-tags": "extended",
            "evaluator-rule": "any",
            "evaluators": "conciseness",
            "baseline": "evals/nothere.json",
        },
    )
    assert sorted(v.origin for v, _ in resolved.refusals) == [
        "input 'baseline'", "input 'evaluator-rule'", "input 'evaluators'", "input 'subset-tags'"
    ]  # fmt: skip
    assert resolved["subset-tags"] == ["smoke"] and resolved["evaluator-rule"] == "all"


def test_several_steps_of_the_action_pick_this_steps_id(tmp_path):
    workspace, env = pull_request(tmp_path, None)
    steps = [
        {"id": "nightly", "uses": "acme/golden-gate-action@v1", "with": {"floor": "0.5"}},
        {"id": "gate", "uses": "acme/golden-gate-action@v1", "with": {"floor": "0.9"}},
        {"uses": "actions/checkout@v4", "with": {"floor": "0.1"}},
    ]
    (workspace / WORKFLOW).parent.mkdir(parents=True)
    (workspace / WORKFLOW).write_text(yaml.safe_dump({"jobs": {"gate": {"steps": steps}}}))
    git(workspace, "add", ".")
    git(workspace, "commit", "-q", "-m", "two steps")
    resolved = resolve(workspace, env, floor="0.8")
    (why,) = refused(resolved, "floor")
    assert "the rule is 0.9" in why
    # Without this step's id, two steps of the action cannot be told apart: bad input, never
    # the defaults (a pull request could rename its step to reach them).
    unnamed = {**env, "GITHUB_ACTION": "__acme_golden-gate-action"}
    with pytest.raises(InputError, match="has 2 steps of this action with different rules"):
        resolve(workspace, unnamed, floor="0.7")
    # Steps that agree on every rule need no id.
    same = [{**s, "with": {"floor": "0.9"}} if "id" in s else s for s in steps]
    (workspace / WORKFLOW).write_text(yaml.safe_dump({"jobs": {"gate": {"steps": same}}}))
    git(workspace, "commit", "-q", "-am", "the same rules")
    (why,) = refused(resolve(workspace, unnamed, floor="0.7"), "floor")
    assert "the rule is 0.9" in why


def two_gate_steps(workspace: Path, *, job: str = "gate") -> None:
    steps = [
        {"id": "nightly", "uses": "acme/golden-gate-action@v1", "with": {"mode": "drift"}},
        {"id": "gate", "uses": "acme/golden-gate-action@v1", "with": {"floor": "0.9"}},
        {"id": "other", "uses": "acme/golden-gate-action@v1", "with": {"floor": "0.95"}},
    ]
    jobs = {"lint": {"steps": [{"run": "true"}]}, job: {"steps": steps}}
    (workspace / WORKFLOW).parent.mkdir(parents=True, exist_ok=True)
    (workspace / WORKFLOW).write_text(yaml.safe_dump({"jobs": jobs}))
    git(workspace, "add", ".")
    git(workspace, "commit", "-q", "-m", "gates")


@pytest.mark.parametrize("renamed", ["job", "step", "both"])
def test_renaming_the_job_or_step_in_the_pr_does_not_reach_the_defaults(tmp_path, renamed):
    workspace, env = pull_request(tmp_path, None)
    two_gate_steps(workspace)
    if renamed in ("job", "both"):
        env["GITHUB_JOB"] = "lint"  # a job the base has, without the action
    if renamed in ("step", "both"):
        env["GITHUB_ACTION"] = "__acme_golden-gate-action"
    else:  # the step's id still pins it, in whichever job
        (why,) = refused(resolve(workspace, env, floor="0.8"), "floor")
        assert "the rule is 0.9" in why
        return
    with pytest.raises(InputError) as caught:
        resolve(workspace, env, floor="0.8")
    assert str(caught.value) == (
        f"{WORKFLOW} at main has 2 steps of this action with different rules, and this step "
        f"(job '{env['GITHUB_JOB']}', id '{env['GITHUB_ACTION']}') is none of them: give each "
        "step an `id:` and keep it, or change the workflow in a pull request of its own"
    )


def test_a_step_of_another_mode_is_not_this_steps_base(tmp_path):
    workspace, env = pull_request(tmp_path, None)
    steps = [
        {"id": "nightly", "uses": "acme/golden-gate-action@v1", "with": {"mode": "drift"}},
        {"id": "gate", "uses": "acme/golden-gate-action@v1", "with": {"floor": "0.9"}},
    ]
    (workspace / WORKFLOW).parent.mkdir(parents=True)
    (workspace / WORKFLOW).write_text(yaml.safe_dump({"jobs": {"gate": {"steps": steps}}}))
    git(workspace, "add", ".")
    git(workspace, "commit", "-q", "-m", "gates")
    # The pull request names its gate step after the drift step: still the gate's rules.
    (why,) = refused(resolve(workspace, {**env, "GITHUB_ACTION": "nightly"}, floor="0.8"), "floor")
    assert "the rule is 0.9" in why


def commit(workspace: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text)
    git(workspace, "add", ".")
    git(workspace, "commit", "-q", "-m", "files")


def test_the_bases_config_file_is_the_one_its_workflow_names(tmp_path):
    # The base keeps its rules in ci/gate.toml, named by its workflow's `config` input; the
    # pull request's workflow drops the input (or names another file the base also has).
    workspace, env = pull_request(tmp_path, {"config": "ci/gate.toml"})
    commit(workspace, {"ci/gate.toml": "[gate]\nfloor = 0.9\n", "old.toml": "[gate]\nfloor = 0\n"})
    (why,) = refused(resolve(workspace, env, config="ci/gate.toml", floor="0.8"), "floor")
    assert "the rule is 0.9 (ci/gate.toml at main)" in why
    for given in ({}, {"config": "old.toml"}):
        with pytest.raises(InputError, match=r"the rules of the gate are in ci/gate\.toml at main"):
            resolve(workspace, env, **given)


def test_the_bases_file_and_its_workflow_both_hold(tmp_path):
    # golden-gate.toml at the base, and the base's workflow tightening it further.
    workspace, env = pull_request(tmp_path, {"floor": "0.95"})
    commit(workspace, {"golden-gate.toml": "[gate]\nfloor = 0.9\nmin-drop = 0.01\n"})
    resolved = resolve(workspace, env, floor="0.92", **{"min-drop": "0.02"})
    assert sorted(v.origin for v, _ in resolved.refusals) == ["input 'floor'", "input 'min-drop'"]
    assert resolved["floor"] == 0.95 and resolved["min-drop"] == 0.01


def test_a_baseline_where_the_base_has_none_is_stricter_and_taken(tmp_path):
    workspace, env = pull_request(tmp_path, {"subset-tags": "smoke"})
    resolved = resolve(workspace, env, baseline="evals/baseline.json")
    assert resolved.refusals == [] and resolved["baseline"] == "evals/baseline.json"
    # Where the base has one, it cannot move (a path the base lacks is "no baseline").
    (tmp_path / "b").mkdir()
    workspace, env = pull_request(tmp_path / "b", {"baseline": "evals/baseline.json"})
    (why,) = refused(resolve(workspace, env, baseline="evals/nothere.json"), "baseline")
    assert "the rule is evals/baseline.json" in why
