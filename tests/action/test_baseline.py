"""Finding the baseline: only GitHub's 404 for the path, or git resolving the ref without the
path, means "no baseline"; a ref that does not exist is bad input (exit 2); any other failure to
read it is `BaselineUnavailable` (exit 3)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from golden_gate.action.baseline import (
    BaselineUnavailable,
    find_baseline,
    from_github,
    known_texts,
)
from golden_gate.action.github import GitHub
from golden_gate.action.github.client import RefNotFound
from golden_gate.demo import baseline_path
from tests.fakes.github_server import GitHubServer

REPO = "octo/docs"
TOKEN = "ghp_FAKEbaselineTOKEN0123456789abcdefABCD"
PATH = "evals/baseline.json"


@pytest.fixture
def github(github_server: GitHubServer) -> GitHub:
    github_server.add_user("gate-bot", token=TOKEN)
    github_server.add_repo(REPO, files={PATH: baseline_path().read_text()})
    return GitHub(
        token=TOKEN, repository=REPO, api_url=github_server.api_url, retries=1, backoff_s=0.01
    )


def checkout(tmp_path: Path, files: dict[str, str]) -> Path:
    """A clone whose `origin/main` holds `files`."""

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("config", "user.email", "t@example.invalid")
    git("config", "user.name", "t")
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "README.md").write_text("x")
    git("add", ".")
    git("commit", "-qm", "base")
    git("update-ref", "refs/remotes/origin/main", "HEAD")
    return tmp_path


def test_found_through_the_api(github: GitHub, tmp_path: Path) -> None:
    found = find_baseline(PATH, ref="main", github=github, workspace=tmp_path)
    assert found.report is not None and found.source == f"{PATH} at main"


def test_a_404_is_no_baseline(github: GitHub, tmp_path: Path) -> None:
    found = find_baseline("evals/nothere.json", ref="main", github=github, workspace=tmp_path)
    assert found.report is None and "does not exist at main" in found.source


def test_an_api_outage_without_git_is_unavailable(
    github: GitHub, github_server: GitHubServer, tmp_path: Path
) -> None:
    github_server.fail("GET", f"/repos/{REPO}/contents/{PATH}", status=502, times=5)
    with pytest.raises(BaselineUnavailable) as caught:
        find_baseline(PATH, ref="main", github=github, workspace=tmp_path)
    assert caught.value.exit_code == 3
    assert "502" in str(caught.value) and "could not be read" in str(caught.value)


def test_an_api_outage_falls_back_to_git(
    github: GitHub, github_server: GitHubServer, tmp_path: Path
) -> None:
    workspace = checkout(tmp_path, {PATH: baseline_path().read_text()})
    github_server.fail("GET", f"/repos/{REPO}/contents/{PATH}", status=502, times=5)
    found = find_baseline(PATH, ref="main", github=github, workspace=workspace)
    assert found.report is not None and found.source.endswith("(from git)")


def test_git_saying_the_path_is_not_at_the_ref_is_no_baseline(
    github: GitHub, github_server: GitHubServer, tmp_path: Path
) -> None:
    workspace = checkout(tmp_path, {})
    github_server.fail("GET", f"/repos/{REPO}/contents/{PATH}", status=502, times=5)
    found = find_baseline(PATH, ref="main", github=github, workspace=workspace)
    assert found.report is None and "does not exist at main" in found.source


def shallow_clone(tmp_path: Path) -> Path:
    """A depth-1 clone of a two-commit repository, as actions/checkout makes by default."""
    (tmp_path / "origin").mkdir()
    origin = checkout(tmp_path / "origin", {PATH: "{}"})
    (origin / "README.md").write_text("y")
    subprocess.run(["git", "commit", "-qam", "two"], cwd=origin, check=True, capture_output=True)
    clone = tmp_path / "clone"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{origin}", str(clone)],
        check=True,
        capture_output=True,
    )
    return clone


def test_no_token_and_a_shallow_checkout_is_unavailable(tmp_path: Path) -> None:
    # A shallow clone may just not have fetched the ref: that cannot say it does not exist.
    workspace = shallow_clone(tmp_path)
    with pytest.raises(BaselineUnavailable, match="no GitHub token"):
        find_baseline(PATH, ref="release-1", github=None, workspace=workspace)


def test_a_ref_a_complete_clone_does_not_know_is_bad_input(tmp_path: Path) -> None:
    workspace = checkout(tmp_path, {PATH: "{}"})
    with pytest.raises(RefNotFound) as caught:
        find_baseline(PATH, ref="release-1", github=None, workspace=workspace)
    assert caught.value.exit_code == 2
    assert "the ref 'release-1' does not exist in the checkout" in str(caught.value)


def test_a_ref_github_does_not_know_is_bad_input_not_no_baseline(
    github: GitHub, tmp_path: Path
) -> None:
    with pytest.raises(RefNotFound) as caught:
        find_baseline(PATH, ref="master", github=github, workspace=tmp_path)
    assert caught.value.exit_code == 2
    assert str(caught.value) == (
        f"the ref 'master' does not exist in {REPO} "
        '(GitHub answers 404 "No commit found for the ref master")'
    )


def test_a_version_read_already_is_not_downloaded_again_only_its_exact_bytes(
    github: GitHub, github_server: GitHubServer, tmp_path: Path
) -> None:
    large = baseline_path().read_text() + " " * (1024 * 1024)  # over 1 MB: the blob API
    github_server.commit(REPO, "main", {PATH: large})

    def blobs() -> int:
        return len(github_server.calls("GET", "*/git/blobs/*"))

    found = find_baseline(PATH, ref="main", github=github, workspace=tmp_path)
    assert found.text == large and blobs() == 1
    fresh = from_github(github, PATH, ref="main", limit=2)
    assert blobs() == 2 and fresh[0].text == large
    crlf = known_texts(large.replace("\n", "\r\n"))  # a checkout's line ends: other bytes
    assert from_github(github, PATH, ref="main", limit=2, known=crlf) == fresh
    assert blobs() == 3
    assert from_github(github, PATH, ref="main", limit=2, known=known_texts(found.text)) == fresh
    assert blobs() == 3
