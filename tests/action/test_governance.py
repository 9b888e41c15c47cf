"""Governance: `init` makes the gate's rules code-owned, and the comment's rule-change banner
names the owners who must approve, from CODEOWNERS at the base branch (last match wins)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from golden_gate.core.codeowners import approvers, owners_of, parse
from tests.action_world import REPO
from tests.helpers import golden_gate

PIN = "someorg/golden-gate-action@" + "0123456789abcdef" * 2 + "01234567"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return tmp_path


def _init(repo: Path, *args: object) -> subprocess.CompletedProcess[str]:
    return golden_gate("init", "--dir", repo, "--action", PIN, *args)


def test_codeowners_last_match_wins_as_github_reads_it() -> None:
    rules = parse(
        "# comment\n"
        "*        @acme/everyone\n"
        "/evals/  @acme/qa @lead  # the gate's rules\n"
        "*.toml   @acme/config\n"
        "/evals/notes.md\n"  # no owners: unowned again
        "docs/    docs@acme.test\n"
        "!/src/   @ignored\n"
        "\\#odd   @hash\n"
    )
    assert owners_of(rules, "evals/golden.jsonl") == ("@acme/qa", "@lead")
    assert owners_of(rules, "evals/notes.md") == ()
    assert owners_of(rules, "golden-gate.toml") == ("@acme/config",)
    assert owners_of(rules, "evals/x.toml") == ("@acme/config",)  # later line wins
    assert owners_of(rules, "a/docs/page.md") == ("docs@acme.test",)  # docs/ anywhere
    assert owners_of(rules, "src/app.py") == ("@acme/everyone",)
    assert owners_of(rules, "#odd") == ("@hash",)
    assert owners_of(parse("/evals/ @qa\n"), "src/app.py") is None
    assert approvers(rules, ["evals/golden.jsonl", "golden-gate.toml", "evals/notes.md"]) == (
        ["@acme/qa", "@lead", "@acme/config"],
        ["evals/notes.md"],
    )


def test_init_writes_a_codeowners_stanza_for_the_gates_rules(repo: Path) -> None:
    done = _init(repo, "--owners", "@acme/ml-platform, @lead")
    assert done.returncode == 0, done.stderr
    assert f"golden-gate: wrote {repo / '.github/CODEOWNERS'}" in done.stdout
    rules = parse((repo / ".github" / "CODEOWNERS").read_text())
    owners = ("@acme/ml-platform", "@lead")
    for path in [
        "evals/golden.jsonl",
        "evals/baseline.json",
        "evals/judge-prompt.txt",
        "golden-gate.toml",
        "golden-gate/calibration.json",
        ".github/workflows/golden-gate.yml",
        ".github/workflows/golden-gate-baseline.yml",
        ".github/workflows/golden-gate-comment.yml",
    ]:
        assert owners_of(rules, path) == owners, path
    assert owners_of(rules, "src/app.py") is None


def test_init_appends_to_an_existing_codeowners_never_clobbers_it(repo: Path) -> None:
    (repo / "CODEOWNERS").write_text("*   @acme/everyone\n/evals/ @acme/old-qa")  # no newline
    done = _init(repo, "--owners", "@acme/qa")
    assert done.returncode == 0, done.stderr
    text = (repo / "CODEOWNERS").read_text()
    assert text.startswith("*   @acme/everyone\n/evals/ @acme/old-qa\n\n# golden-gate: ")
    assert not (repo / ".github" / "CODEOWNERS").exists()  # GitHub reads the first it finds
    assert owners_of(parse(text), "evals/golden.jsonl") == ("@acme/qa",)  # appended: it wins
    # Again (with --force for the other files): the stanza is there, nothing is added.
    again = _init(repo, "--owners", "@acme/someone-else", "--force")
    assert again.returncode == 0, again.stderr
    assert (repo / "CODEOWNERS").read_text() == text


def test_init_without_owners_prints_the_stanza_and_writes_none(repo: Path) -> None:
    done = _init(repo)
    assert done.returncode == 0, done.stderr
    assert not (repo / ".github" / "CODEOWNERS").exists()
    assert "golden-gate: CODEOWNERS: own the gate's rules" in done.stdout
    assert "/evals/" in done.stdout and "@OWNER" in done.stdout
    bad = _init(repo, "--owners", "acme-team", "--force")
    assert bad.returncode == 2
    assert "--owners: 'acme-team' is not a code owner" in bad.stderr


def test_the_rule_change_banner_names_the_base_branchs_owners(world, candidate) -> None:
    world.github.commit(
        REPO,
        "main",
        {".github/CODEOWNERS": "*  @acme/everyone\n/evals/  @acme/qa @acme/lead\n"},
    )
    # The pull request rewords an item and names itself the owner of the golden set.
    golden = world.workspace / "evals" / "golden.jsonl"
    lines = golden.read_text().splitlines(keepends=True)
    first = json.loads(lines[0])
    first["reference_key_points"] = ["anything"]
    golden.write_text(json.dumps(first) + "\n" + "".join(lines[1:]))
    (world.workspace / ".github").mkdir(exist_ok=True)
    (world.workspace / ".github" / "CODEOWNERS").write_text("/evals/ @mallory\n")
    pull = world.pull(["evals/golden.jsonl", ".github/CODEOWNERS"])
    done = world.run(
        "pull_request", world.event("pull_request.opened", pull), assistant_url=candidate
    )
    assert done.returncode in (0, 1), done.stdout + done.stderr
    report = json.loads((world.workspace / done.outputs["report-path"]).read_text())
    changes = report["rule_changes"]
    assert changes["approvers"] == ["@acme/qa", "@acme/lead"]
    assert changes["codeowners"] == ".github/CODEOWNERS at main"
    (comment,) = world.github.comments(REPO, pull.number)
    assert (
        "**Code owners who must approve this rule change** (<code>.github/CODEOWNERS at "
        "main</code>): <code>@\u200bacme/qa</code>, <code>@\u200bacme/lead</code>."
    ) in comment.body
    assert "mallory" not in comment.body  # the pull request's own CODEOWNERS is not read
    # Named, never pinged: a zero-width space after each @ (rendering/escape.py).


def test_a_rule_change_no_owner_covers_says_so(world, candidate) -> None:
    golden = world.workspace / "evals" / "golden.jsonl"
    lines = golden.read_text().splitlines(keepends=True)
    first = json.loads(lines[0])
    first["reference_key_points"] = ["anything"]
    golden.write_text(json.dumps(first) + "\n" + "".join(lines[1:]))
    pull = world.pull(["evals/golden.jsonl"])
    done = world.run(
        "pull_request", world.event("pull_request.opened", pull), assistant_url=candidate
    )
    assert done.returncode in (0, 1), done.stdout + done.stderr
    (comment,) = world.github.comments(REPO, pull.number)
    assert (
        "**No code owner covers** <code>evals/golden.jsonl</code> (no CODEOWNERS at the base "
        "branch): anyone with write access can approve it"
    ) in comment.body
