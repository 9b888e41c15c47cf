"""Verdicts are read only from storage a pull request cannot write: not from the checkout."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from golden_gate.evaluation.cache_location import default_cache_dir, untrusted_reason


def git(workspace: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=workspace,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A checked-out pull request that committed a forged verdict in `.judge-cache`."""
    workspace = tmp_path / "workspace"
    (workspace / ".judge-cache" / "ab").mkdir(parents=True)
    (workspace / ".judge-cache" / "ab" / ("ab" + "0" * 62 + ".json")).write_text("{}")
    (workspace / "evals").mkdir()
    (workspace / "evals" / "golden.jsonl").write_text("{}\n")
    git(workspace, "init", "-q")
    git(workspace, "add", ".")
    git(workspace, "commit", "-q", "-m", "a pull request")
    return workspace


def test_the_default_is_the_runners_temporary_directory(tmp_path: Path) -> None:
    assert default_cache_dir({"RUNNER_TEMP": "/github/runner_temp"}) == Path(
        "/github/runner_temp/golden-gate-judge-cache"
    )
    outside = default_cache_dir({"RUNNER_TEMP": str(tmp_path / "temp")})
    assert untrusted_reason(outside, workspace=tmp_path / "workspace") is None


def test_a_tracked_cache_directory_in_the_checkout_is_refused(checkout: Path) -> None:
    reason = untrusted_reason(checkout / ".judge-cache", workspace=checkout)
    assert reason and "git tracks '.judge-cache/ab/ab000" in reason


def test_an_untracked_cache_directory_in_the_checkout_is_used(checkout: Path) -> None:
    (checkout / "cache").mkdir()
    assert untrusted_reason(checkout / "cache", workspace=checkout) is None
    assert untrusted_reason(checkout / "not-yet-made", workspace=checkout) is None


def test_a_directory_above_a_tracked_file_or_the_whole_checkout_is_refused(checkout: Path) -> None:
    assert untrusted_reason(checkout / "evals", workspace=checkout)
    assert untrusted_reason(checkout, workspace=checkout)


def test_a_symlink_from_outside_into_the_checkout_is_refused(
    checkout: Path, tmp_path: Path
) -> None:
    link = tmp_path / "runner-temp" / "golden-gate-judge-cache"
    link.parent.mkdir()
    link.symlink_to(checkout / ".judge-cache")
    assert untrusted_reason(link, workspace=checkout)


def test_a_path_through_a_tracked_symlink_is_refused(checkout: Path, tmp_path: Path) -> None:
    # The pull request commits `cache -> /elsewhere`: files under it are not what git tracks.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (checkout / "cache").symlink_to(elsewhere)
    git(checkout, "add", "cache")
    git(checkout, "commit", "-q", "-m", "a symlink")
    assert untrusted_reason(checkout / "cache" / "verdicts", workspace=checkout)


def test_without_git_a_directory_in_the_checkout_is_refused(
    checkout: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (checkout / "cache").mkdir()
    monkeypatch.setenv("PATH", str(checkout / "no-git-here"))
    reason = untrusted_reason(checkout / "cache", workspace=checkout)
    assert reason and "git cannot tell" in reason
    assert untrusted_reason(checkout.parent / "outside", workspace=checkout) is None


def test_a_checkout_without_a_repository_is_refused_in_a_workflow(tmp_path: Path) -> None:
    # actions/checkout falls back to a tarball when the runner's git is too old: no `.git`.
    workspace = tmp_path / "workspace"
    (workspace / ".judge-cache").mkdir(parents=True)
    reason = untrusted_reason(workspace / ".judge-cache", workspace=workspace)
    assert reason and "not a git repository" in reason
    assert (
        untrusted_reason(workspace / ".judge-cache", workspace=workspace, require_git=False) is None
    )


def _resolved(directory: str):
    from golden_gate.option_values import Value, defaults

    resolved = defaults("cli")
    resolved.values["cache-dir"] = Value(directory, "flag --cache-dir")
    return resolved


def test_the_cli_does_not_read_a_tracked_cache_directory(
    checkout: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from golden_gate.cli.options import cache_dir

    monkeypatch.chdir(checkout)
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    (checkout / "local-cache").mkdir()

    assert cache_dir(_resolved(".judge-cache")) is None
    assert "git tracks" in capsys.readouterr().err
    assert cache_dir(_resolved("local-cache")) == Path("local-cache")
