"""Issue 44, item 6: a pull request that changes only the Markdown the assistant answers from
is gated, through the config `golden-gate init` writes and the Action's scope decision; a
README-only one still skips, naming the rule that skipped it."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

import pytest

from golden_gate.action.scope import decide
from tests.helpers import golden_gate

PIN = "someorg/golden-gate-action@" + "0123456789abcdef" * 2 + "01234567"


def _repo(where: Path, files: dict[str, str]) -> Path:
    subprocess.run(["git", "init", "-q", str(where)], check=True)
    for name, text in files.items():
        (where / name).parent.mkdir(parents=True, exist_ok=True)
        (where / name).write_text(text)
    return where


def _init(repo: Path, *args: object) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    done = golden_gate("init", "--dir", repo, "--action", PIN, *args)
    assert done.returncode == 0, done.stdout + done.stderr
    config = tomllib.loads((repo / "golden-gate.toml").read_text())
    return done, config.get("scope", {}).get("ignore-paths", [])


def _scope(ignore: list[str], changed: list[str]):
    return decide("pull_request", force=False, patterns=[], ignore=ignore, changed=changed)


COMPOSE = """\
services:
  assistant:
    build:
      context: service
    volumes:
      - ./handbook:/srv/handbook:ro
      - type: bind
        source: ./faq
        target: /srv/faq
      - cache:/var/cache
volumes:
  cache: {}
"""
DOCKERFILE = """\
FROM python:3.11-slim
COPY --from=builder /wheels /wheels
COPY app.py \\
     /app/
COPY ["prompts", "/app/prompts"]
"""


def test_init_finds_the_knowledge_base_where_the_service_reads_it(tmp_path):
    repo = _repo(
        tmp_path / "r",
        {
            "docker-compose.eval.yml": COMPOSE,
            "service/Dockerfile": DOCKERFILE,
            "service/app.py": "",
            "service/prompts/system.md": "You answer.",
            "handbook/install.md": "# Install",
            "faq/billing/refunds.md": "# Refunds",
            "kb/vault.md": "# Vault",
            "data/rows.csv": "a,b",  # no Markdown: nothing to take back
            "docs/contributing.md": "# The project's own docs, not read by the service",
            "README.md": "# hi",
        },
    )
    done, ignore = _init(repo)
    assert ignore == ["!handbook/**", "!faq/**", "!service/prompts/**", "!kb/**"]
    said = "is gated (the assistant's knowledge base:"
    assert f"kb/ {said} a common name for a knowledge base" in done.stdout
    assert f"handbook/ {said} bind-mounted by docker-compose.eval.yml" in done.stdout
    assert f"service/prompts/ {said} copied into the image by service/Dockerfile" in done.stdout
    text = (repo / "golden-gate.toml").read_text()
    assert "#   faq/: bind-mounted by docker-compose.eval.yml" in text
    # Each folder's change now runs the gate; the README and the project's docs still skip.
    for changed in ("handbook/install.md", "faq/billing/refunds.md", "kb/vault.md"):
        assert _scope(ignore, [changed]).run, changed
    skipped = _scope(ignore, ["README.md", "docs/contributing.md"])
    assert not skipped.run
    assert skipped.skipped == dict.fromkeys(["README.md", "docs/contributing.md"], "ignored: *.md")


def test_without_one_init_says_how_to_name_it_and_the_flag_does(tmp_path):
    repo = _repo(tmp_path / "r", {"content/guide/a.md": "# A", "README.md": "# hi"})
    done, ignore = _init(repo)
    assert ignore == []
    assert "--knowledge-base DIR" in done.stdout
    text = (repo / "golden-gate.toml").read_text()
    assert '# ignore-paths = ["!kb/**"]' in text and "--knowledge-base kb" in text
    assert not _scope(ignore, ["content/guide/a.md"]).run  # Markdown, skipped as documentation
    # Asked non-interactively: the flag names it, and a re-run adds it to the kept file.
    again, ignore = _init(repo, "--knowledge-base", "content/guide/")
    assert ignore == ["!content/guide/**"]
    assert "added [scope] ignore-paths" in again.stdout
    assert _scope(ignore, ["content/guide/a.md"]).run
    readme = _scope(ignore, ["README.md"])
    assert not readme.run and readme.skipped == {"README.md": "ignored: *.md"}


def test_a_docs_folder_counts_only_when_the_service_reads_it(tmp_path):
    repo = _repo(
        tmp_path / "r",
        {
            "compose.yaml": "services:\n  a:\n    image: x\n    volumes: ['./docs:/srv/docs']\n",
            "docs/a.md": "# A",
            "docs/sub/b.txt": "b",
        },
    )
    _, ignore = _init(repo)
    assert ignore == ["!docs/**"]
    assert _scope(ignore, ["docs/sub/b.txt"]).run  # under docs/, on the list by its folder


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("../outside", "not a folder inside the repository"),
        ("/etc", "not a folder inside the repository"),
        (".", "not a folder inside the repository"),
        ("missing", "not a folder of the repository"),
    ],
)
def test_a_knowledge_base_outside_or_missing_is_one_sentence(tmp_path, value, why):
    repo = _repo(tmp_path / "r", {"README.md": "# hi"})
    done = golden_gate("init", "--dir", repo, "--action", PIN, "--knowledge-base", value)
    assert done.returncode == 2
    assert done.stderr.startswith("golden-gate: error: --knowledge-base:") and why in done.stderr
    assert "Traceback" not in done.stderr
    assert not (repo / "golden-gate.toml").exists()


def test_a_folder_name_with_pattern_characters_is_taken_back_literally(tmp_path):
    repo = _repo(tmp_path / "r", {"kb [v2]/a.md": "# A", "kb v/a.md": "# other"})
    _, ignore = _init(repo, "--knowledge-base", "kb [v2]")
    assert ignore == ["!kb \\[v2\\]/**"]
    assert _scope(ignore, ["kb [v2]/a.md"]).run
    assert not _scope(ignore, ["kb v/a.md"]).run  # `[v2]` is no character class here


def test_the_action_gates_a_knowledge_base_only_pull_request(world, tmp_path, candidate):
    # The ignore-paths `init` wrote, as the base branch's rules, through the real entrypoint.
    repo = _repo(tmp_path / "r", {"kb/vault.md": "# Vault"})
    _, ignore = _init(repo)
    world.configure({"scope": {"ignore-paths": ignore}})
    readme = world.pull(["README.md"])
    done = world.run(
        "pull_request",
        world.event("pull_request.opened", readme),
        assistant_url="http://127.0.0.1:9",  # never asked: the pull request is skipped
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.outputs == {"ran": "false", "verdict": "skipped"}
    assert "  skipped: README.md (ignored: *.md)" in done.stdout
    kb = world.pull(["kb/vault.md"])
    done = world.run(
        "pull_request", world.event("pull_request.opened", kb), assistant_url=candidate
    )
    assert done.outputs["ran"] == "true", done.stdout + done.stderr
    assert "golden-gate: running: 1 of 1 changed files can change answers" in done.stdout
    assert "  matched: kb/vault.md" in done.stdout


def test_init_again_keeps_the_teams_scope_and_says_what_to_add(tmp_path):
    repo = _repo(tmp_path / "r", {"kb/a.md": "# A", "README.md": "# hi"})
    config = repo / "golden-gate.toml"
    config.write_text('[scope]\nignore-paths = ["notebooks/"]  # ours\n')
    done, ignore = _init(repo)
    assert ignore == ["notebooks/"]  # kept as written, never rewritten
    assert 'ignore-paths = ["notebooks/"]  # ours' in config.read_text()
    assert 'add "!kb/**" to it' in done.stdout
    # With an allow-list the ignore list is not used: nothing to take back, nothing added.
    config.write_text('[scope]\npaths = ["src/**"]\n')
    done, ignore = _init(repo)
    assert ignore == [] and "ignore-paths" not in tomllib.loads(config.read_text())["scope"]
    assert "kb/ is gated" not in done.stdout
    assert "[scope] paths is an allow-list and names none of kb/: add them" in done.stdout
    config.write_text('[scope]\npaths = ["src/**", "kb/**"]\n')
    done, _ = _init(repo)
    assert "allow-list" not in done.stdout and "kb/ is gated" in done.stdout


def test_a_root_dockerfile_copy_and_a_comma_list_name_folders(tmp_path):
    repo = _repo(
        tmp_path / "r",
        {
            "Dockerfile": "FROM x\nCOPY --chown=1:1 handbook/ /srv/handbook/\nADD https://e/x /x\n"
            "COPY . /app\nCOPY <<EOF /etc/x\nEOF\n",
            "handbook/a.md": "# A",
            "guides/b.rst": "B",
            "faq/c.adoc": "C",
        },
    )
    done, ignore = _init(repo)
    assert ignore == ["!handbook/**"]  # `COPY .` is the whole repository: nothing to take back
    assert "copied into the image by Dockerfile" in done.stdout
    (repo / "golden-gate.toml").unlink()
    _, ignore = _init(repo, "--knowledge-base", "guides,faq/")
    assert ignore == ["!guides/**", "!faq/**"]
    assert _scope(ignore, ["guides/b.rst"]).run and _scope(ignore, ["faq/c.adoc"]).run
