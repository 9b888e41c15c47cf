"""One settings table (options.py), one config file (golden-gate.toml): what both front doors
derive from them, and what a pull request may do to the rules they hold."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest
import yaml

from golden_gate import config_file, options
from golden_gate.errors import InputError
from golden_gate.option_values import Value, defaults, tightens
from golden_gate.options import BY_NAME, OPTIONS, Option
from tests.action_world import REPO

ROOT = Path(__file__).resolve().parents[2]


def golden_gate(*args, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "golden_gate", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


# -- the table --------------------------------------------------------------------------------


def test_every_option_is_declared_once_with_a_name_help_and_a_place():
    names = [o.name for o in OPTIONS]
    assert len(names) == len(set(names))
    places = [(o.group, o.key) for o in OPTIONS if "file" in o.doors]
    assert len(places) == len(set(places)), "two options at one place in golden-gate.toml"
    for option in OPTIONS:
        assert option.help.endswith("."), option.name
        assert option.name == option.name.lower() and "_" not in option.name
        if option.field is not None:
            options.engine_field(option.field)  # the engine setting it fills exists
        option.default_for("cli")  # and every default can be found


def test_action_yml_and_the_schema_are_what_the_table_makes():
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "generate.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    action = yaml.safe_load((ROOT / "action.yml").read_text())["inputs"]
    assert set(action) == {o.name for o in OPTIONS if "action" in o.doors}
    # An empty default, so golden-gate.toml (and the option's own default) applies.
    assert {name: spec["default"] for name, spec in action.items() if spec["default"]} == {
        "github-token": "${{ github.token }}"
    }


def test_action_yml_out_of_step_with_the_table_is_found(tmp_path, monkeypatch):
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import generate
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    stale = tmp_path / "action.yml"
    stale.write_text((ROOT / "action.yml").read_text().replace("Minimum Wilson", "Some"))
    monkeypatch.setattr(generate, "ACTION", stale)
    monkeypatch.setattr(generate, "SCHEMA", ROOT / "golden-gate.schema.json")
    assert generate.main(["--check"]) == 1


def test_the_committed_schema_validates_a_real_file_and_refuses_a_typo():
    schema = json.loads((ROOT / "golden-gate.schema.json").read_text())
    good = {"golden": "g.jsonl", "subset-tags": ["smoke"], "gate": {"floor": 0.7}}
    jsonschema.validate(good, schema)
    for bad in ({"gate": {"flor": 0.7}}, {"evaluation": {"runs": 0}}, {"judges": {}}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)


def test_a_new_verdict_changing_option_changes_the_judges_identity(monkeypatch, tmp_path):
    from golden_gate.evaluation.judge import make_judge
    from golden_gate.settings import build

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-never-sent-anywhere")

    def identity() -> str:
        resolved = defaults("cli")
        resolved.values["judge-model"] = Value("openai:gpt-4.1-mini", "test")
        resolved.values["judge-base-url"] = Value("http://127.0.0.1:9/v1", "test")
        resolved.values["assistant-url"] = Value("http://127.0.0.1:9", "test")
        settings = build(resolved, root=tmp_path, env={}, evaluating=True, cache_dir=None)
        return make_judge(settings.judge).identity()

    before = identity()
    assert identity() == before
    knob = Option(name="judge-seed", help="A seed.", kind="int", default=7, verdict=True)
    monkeypatch.setattr(options, "OPTIONS", (*OPTIONS, knob))
    monkeypatch.setitem(options.BY_NAME, "judge-seed", knob)
    assert identity() != before
    monkeypatch.setattr(options, "OPTIONS", (*OPTIONS, replace(knob, verdict=False)))
    monkeypatch.setitem(options.BY_NAME, "judge-seed", replace(knob, verdict=False))
    assert identity() == before


@pytest.mark.parametrize(
    ("name", "base", "given", "tighter"),
    [
        ("floor", 0.8, 0.9, True),
        ("floor", 0.8, 0.1, False),
        ("floor", 0.8, 0.0, False),  # 0 switches the floor off
        ("alpha", 0.05, 0.1, True),
        ("alpha", 0.05, 0.0001, False),
        ("min-drop", 0.02, 0.01, True),
        ("min-drop", 0.02, 0.5, False),
        ("max-error-rate", 0.1, 0.5, False),
        ("runs", 3, 1, False),
        ("subset-tags", ["smoke"], ["smoke", "full"], True),
        ("subset-tags", ["smoke"], [], True),  # every item
        ("subset-tags", ["smoke", "safety"], ["smoke"], False),
        ("subset-tags", [], ["smoke"], False),
        ("paths", ["src/**"], ["src/**", "app/**"], True),
        ("paths", ["src/**", "app/**"], ["docs/**"], False),
        ("paths", [], ["src/**"], False),  # no allow-list: every file not ignored runs
        ("paths", ["src/**"], [], False),  # the ignore list decides then: not provably more
        ("ignore-paths", [], ["notebooks/"], False),  # a wider ignore list skips more
        ("ignore-paths", ["notebooks/", "*.ipynb"], ["*.ipynb"], True),
        ("refusal-phrases", ["can't answer", "no information"], ["can't answer"], True),
        # A pull request that counts a polite answer as a refusal passes more: looser.
        ("refusal-phrases", ["can't answer"], ["can't answer", "sorry"], False),
        ("require-comparable", False, True, True),
        ("fail-on-regression", True, False, False),
        ("judge-model", "openai:a", "openai:b", False),
        ("golden", "evals/golden.jsonl", "./evals/golden.jsonl", True),
        ("golden", "evals/golden.jsonl", "evals/copy.jsonl", False),
    ],
)
def test_what_tightens_a_rule(name, base, given, tighter):
    assert tightens(BY_NAME[name], base, given) is tighter


# -- the file ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            "[gate]\nflor = 0.7\n",
            "g.toml:2: unknown setting '[gate] flor' (did you mean [gate] floor?)",
        ),
        ("floor = 0.7\n", "g.toml:1: unknown setting 'floor' (did you mean [gate] floor?)"),
        ('[judges]\nmodel = "x"\n', "g.toml:1: unknown table [judges] (did you mean [judge]?)"),
        ('[gate]\nfloor = "high"\n', "g.toml:2: [gate] floor must be a number, got 'high'"),
        ("[gate]\nfloor = 1.5\n", None),  # a number: the range is the engine's (below)
        ("subset-tags = 3\n", "g.toml:1: subset-tags must be a list of tags, got '3'"),
        ("[evaluation]\nruns = 2.5\n", "g.toml:2: [evaluation] runs must be a whole number"),
        ("[gate\nfloor = 0.7\n", "g.toml: not valid TOML"),
        ('[judge]\nmodel = "x"\nmodel = "y"\n', "g.toml: not valid TOML"),
    ],
)
def test_a_bad_file_is_one_sentence_naming_file_line_and_setting(text, said):
    if said is None:
        assert config_file.parse(text, source="g.toml").values == {"floor": 1.5}
        return
    with pytest.raises(InputError) as caught:
        config_file.parse(text, source="g.toml")
    assert str(caught.value).startswith(said)
    assert "\n" not in str(caught.value)


def test_a_value_out_of_range_in_the_file_names_its_line(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "golden-gate.toml").write_text(
        '[assistant]\nurl = "http://127.0.0.1:9"\n[gate]\nfloor = 1.5\n'
    )
    (tmp_path / "r.json").write_text(
        '{"judge": "j", "results": [{"id": "a", "tags": [], "passes": 1, "runs": 1}]}'
    )
    done = golden_gate("gate", "r.json", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "golden-gate: error: golden-gate.toml:4: [gate] floor: floor must be in [0, 1) "
        "(0 switches that test off), got 1.5"
    )


def test_the_file_is_found_upward_but_not_above_the_repository(tmp_path):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "a" / "b").mkdir(parents=True)
    (tmp_path / "golden-gate.toml").write_text("# above the repository: never read\n")
    assert config_file.find(repo / "a" / "b") is None
    (repo / "golden-gate.toml").write_text("")
    assert config_file.find(repo / "a" / "b") == (repo / "golden-gate.toml").absolute()


def test_paths_in_the_file_are_relative_to_the_file(tmp_path):
    (tmp_path / "evals").mkdir()
    found = config_file.read(
        _write(tmp_path / "evals" / "golden-gate.toml", 'golden = "golden.jsonl"\n'),
        relative_to=tmp_path,
    )
    assert Path(found.values["golden"]) == tmp_path / "evals" / "golden.jsonl"


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


# -- the command line -------------------------------------------------------------------------


def test_config_show_origin_says_where_each_value_came_from(tmp_path):
    (tmp_path / ".git").mkdir()
    _write(
        tmp_path / "golden-gate.toml",
        'golden = "evals/g.jsonl"\n\n[judge]\nmodel = "keypoints"\n\n[gate]\nfloor = 0.7\n',
    )
    done = golden_gate("config", "--show-origin", "--alpha", "0.1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = {line.split("=")[0].strip(): line for line in done.stdout.splitlines() if "=" in line}
    assert lines["golden"].endswith("# golden-gate.toml:1")
    assert lines["floor"].endswith("# golden-gate.toml:7")
    assert lines["alpha"].endswith("# flag --alpha")
    assert lines["min-drop"].endswith("# default")
    assert "[gate]" in done.stdout and "[assistant]" in done.stdout


def test_config_show_origin_is_toml_that_reads_back_as_the_same_settings(tmp_path):
    import tomllib

    (tmp_path / ".git").mkdir()
    _write(
        tmp_path / "golden-gate.toml",
        'golden = "g.jsonl"\n[assistant]\nsources-path = "refs"\nprices = "0.1,0.2"\n'
        '[judge]\nmodel = "keypoints"\n[gate]\nfloor = 0.7\n',
    )
    shown = golden_gate("config", "--show-origin", "--alpha", "0.1", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    tables = [line for line in shown.stdout.splitlines() if line.startswith("[")]
    assert len(tables) == len(set(tables))  # each table once: TOML refuses a table twice
    data = tomllib.loads(shown.stdout)
    assert data["gate"]["floor"] == 0.7 and data["gate"]["alpha"] == 0.1
    assert data["assistant"]["sources-path"] == "refs" and data["judge"]["model"] == "keypoints"
    (tmp_path / "again").mkdir()
    (tmp_path / "again" / ".git").mkdir()
    _write(tmp_path / "again" / "golden-gate.toml", shown.stdout)
    again = golden_gate("config", cwd=tmp_path / "again")
    assert again.returncode == 0, again.stderr
    assert tomllib.loads(again.stdout) == data


def test_every_cli_option_is_shown_by_config(tmp_path):
    done = golden_gate("config", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    for option in OPTIONS:
        if option.name != "config" and {"cli", "file"} & option.doors:
            key = option.key if "file" in option.doors else f"# {option.key}"  # flag only
            assert f"\n{key} = " in done.stdout or f"# {option.key} is unset" in done.stdout, (
                option.name
            )


def test_config_schema_prints_the_committed_schema(tmp_path):
    done = golden_gate("config", "--schema", cwd=tmp_path)
    assert done.stdout == (ROOT / "golden-gate.schema.json").read_text()


def test_a_flag_overrides_the_file_and_an_old_flag_still_works_with_a_warning(tmp_path):
    (tmp_path / ".git").mkdir()
    _write(tmp_path / "golden-gate.toml", 'subset-tags = ["smoke"]\n[gate]\nfloor = 0.7\n')
    done = golden_gate("config", "--show-origin", "--tags", "a,b", "--floor", "0.9", cwd=tmp_path)
    assert done.returncode == 0
    assert done.stderr == (
        "golden-gate: warning: --tags is deprecated and goes in the next minor release: use "
        "--subset-tags\n"
    )
    assert 'subset-tags = ["a", "b"]' in done.stdout and "# flag --tags" in done.stdout
    assert "floor = 0.9" in done.stdout


def test_header_values_are_read_from_the_environment_never_the_file(tmp_path, monkeypatch):
    from golden_gate.settings import expand_headers

    resolved = defaults("cli")
    resolved.values["assistant-headers"] = Value(
        {"Authorization": "$ASSISTANT_TOKEN", "X-Team": "docs"}, "golden-gate.toml:3"
    )
    headers = expand_headers(resolved, {"ASSISTANT_TOKEN": "Bearer s3cr3t-value"})
    assert headers == {"Authorization": "Bearer s3cr3t-value", "X-Team": "docs"}
    with pytest.raises(InputError, match=r"golden-gate.toml:3: \[assistant\] headers: header "):
        expand_headers(resolved, {})


# -- the Action: what a pull request may do to the rules ---------------------------------------


def pr_run(world, assistant_url="http://127.0.0.1:9", **inputs):
    pull = world.pull(["prompts/answer.txt"])
    return pull, world.run(
        "pull_request",
        world.event("pull_request.opened", pull),
        assistant_url=assistant_url,
        **inputs,
    )


@pytest.mark.parametrize(
    ("inputs", "said"),
    [
        (
            {"floor": "0.1"},
            "input 'floor' (0.1) would loosen a rule of the gate on a pull request: "
            "the rule is 0.7 (golden-gate.toml at main) and an input may only raise it",
        ),
        ({"alpha": "0.0001"}, "input 'alpha' (0.0001) would loosen a rule"),
        ({"min-drop": "0.5"}, "input 'min-drop' (0.5) would loosen a rule"),
        ({"subset-tags": "other"}, "input 'subset-tags' ([other]) would loosen a rule"),
        ({"fail-on-regression": "false"}, "input 'fail-on-regression' (False) would loosen"),
        ({"golden": "evals/copy.jsonl"}, "input 'golden' (evals/copy.jsonl) would loosen a rule"),
        ({"judge-prompt": "lenient.txt"}, "input 'judge-prompt' (lenient.txt) would loosen"),
        ({"judge-base-url": "http://127.0.0.1:1/v1"}, "input 'judge-base-url'"),
        ({"paths": "docs/**"}, "input 'paths' ([docs/**]) cannot be proved to select every file"),
        ({"ignore-paths": "app/**"}, "input 'ignore-paths' ([app/**]) cannot be proved"),
        ({"baseline-ref": "my-branch"}, "input 'baseline-ref' (my-branch) would loosen a rule"),
    ],
)
def test_an_input_that_loosens_a_rule_is_refused_on_a_pull_request(world, inputs, said):
    pull, done = pr_run(world, **inputs)
    assert done.returncode == 2, done.stdout + done.stderr
    errors = [line for line in done.stdout.splitlines() if line.startswith("::error")]
    assert len(errors) == 1 and errors[0].startswith(f"::error title=golden-gate::{said}")
    assert done.outputs == {"verdict": "error"}
    assert world.github.comments(REPO, pull.number) == []


def test_without_golden_gate_toml_at_the_base_the_thresholds_hold_their_defaults(world):
    world.without_config()
    _, done = pr_run(world, floor="0.1")
    assert done.returncode == 2
    assert (
        "input 'floor' (0.1) would loosen a rule of the gate on a pull request: the rule is "
        "0.8 (its default)" in done.stdout
    )
    assert "no golden-gate.toml at main" in done.stdout


def test_an_input_that_tightens_a_rule_is_taken(world, good_assistant):
    _, done = pr_run(world, good_assistant, floor="0.9", **{"subset-tags": "*"})
    # every item (24, not the base's 14), a higher floor: both stricter than the base's, both
    # taken; and 24 items cannot clear 0.9 even all passing, said before anything is asked
    assert done.returncode == 2, done.stdout + done.stderr
    assert (
        "::error title=golden-gate::floor: with 24 items even 24/24 passing gives a lower bound "
        "of 0.862 < floor 0.90: select at least 35 items or lower the floor" in done.stdout
    )


def test_a_prs_own_golden_gate_toml_is_proposed_not_used(world, candidate):
    world.configure({"gate": {"floor": 0.1, "min-drop": 0.9}}, base=False)  # the PR's own file
    pull = world.pull(["golden-gate.toml", "prompts/answer.txt"])
    done = world.run(
        "pull_request", world.event("pull_request.opened", pull), assistant_url=candidate
    )
    assert done.returncode == 1, done.stdout + done.stderr  # the base's rules: still failing
    (comment,) = world.github.comments(REPO, pull.number)
    assert "Changed in this pull request, not used" in comment.body
    assert (
        "\\[gate\\] floor = 0.1 in this pull request&#39;s golden-gate.toml \\(in force: 0.7, "
        "golden-gate.toml at main:"
    ) in comment.body
    # What they would have decided costs a second look at the same results: said, not used.
    assert (
        "With this pull request&#39;s own thresholds \\(floor 0.1, min-drop 0.9\\) the gate would "
        "have passed; the base branch&#39;s decided."
    ) in comment.body
    report = json.loads((world.workspace / done.outputs["report-path"]).read_text())
    assert any("min-drop = 0.9" in s for s in report["rule_changes"]["settings_not_used"])


def test_a_prs_own_floor_basis_is_decided_as_the_gate_decides_it(world, candidate):
    # The note on a pull request's own thresholds is the gate's one decision, human basis
    # included: without a calibration of the judge, that basis has no result.
    world.configure({"gate": {"floor-basis": "human"}}, base=False)
    pull = world.pull(["golden-gate.toml", "prompts/answer.txt"])
    done = world.run(
        "pull_request", world.event("pull_request.opened", pull), assistant_url=candidate
    )
    assert done.returncode == 1, done.stdout + done.stderr  # the base's rules decide
    (comment,) = world.github.comments(REPO, pull.number)
    assert (
        "With this pull request&#39;s own thresholds \\(floor-basis human\\) the gate would "
        "have had no result; the base branch&#39;s decided."
    ) in comment.body


def test_a_config_input_cannot_step_around_the_bases_file(world):
    (world.workspace / "lenient.toml").write_text("[gate]\nfloor = 0.0\n")
    _, done = pr_run(world, config="lenient.toml")
    assert done.returncode == 2
    assert "input 'config' names lenient.toml, which is not the base's config file" in done.stdout


def test_on_a_push_the_commits_own_file_and_inputs_decide(world, good_assistant):
    world.configure({"gate": {"floor": 0.1}}, base=False)
    done = world.run(
        "workflow_dispatch",
        world.event("workflow_dispatch"),
        assistant_url=good_assistant,
        alpha="0.01",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "floor 0.10" in done.stdout or "0.10" in done.summary


def test_a_bad_golden_gate_toml_in_the_checkout_is_one_sentence(world):
    (world.workspace / "golden-gate.toml").write_text("[gate]\nflor = 0.7\n")
    done = world.run(
        "workflow_dispatch", world.event("workflow_dispatch"), assistant_url="http://127.0.0.1:9"
    )
    assert done.returncode == 2
    assert (
        "::error title=golden-gate::golden-gate.toml:2: unknown setting '[gate] flor' "
        "(did you mean [gate] floor?)"
    ) in done.stdout
    assert "Traceback" not in done.stderr


def test_a_pr_that_renames_the_golden_set_in_its_own_golden_gate_toml_is_still_gated(
    world, candidate
):
    # The pull request moves the golden set and points its own golden-gate.toml at the new
    # place: the base's rule still names the old path, which the checkout no longer has.
    old = world.workspace / "evals" / "golden.jsonl"
    old.rename(world.workspace / "evals" / "questions.jsonl")
    world.configure({"golden": "evals/questions.jsonl"}, base=False)
    pull = world.pull(["evals/golden.jsonl", "evals/questions.jsonl", "golden-gate.toml"])
    done = world.run(
        "pull_request", world.event("pull_request.opened", pull), assistant_url=candidate
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.outputs["regressions"] == "6"  # the base's items, as the base defines them
    (comment,) = world.github.comments(REPO, pull.number)
    assert "golden = evals/questions.jsonl in this pull request" in comment.body


def test_a_golden_set_gone_from_the_checkout_and_the_base_is_one_sentence(world):
    (world.workspace / "evals" / "golden.jsonl").unlink()
    world.github.commit(REPO, "main", {"evals/golden.jsonl": None})
    pull = world.pull(["evals/golden.jsonl"])
    done = world.run(
        "pull_request", world.event("pull_request.opened", pull), assistant_url="http://127.0.0.1:9"
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert (
        "::error title=golden-gate::evals/golden.jsonl: golden set not found, neither in the "
        "checkout nor at main"
    ) in done.stdout
