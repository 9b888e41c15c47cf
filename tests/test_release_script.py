"""scripts/release-image.sh without Docker: checking the version, pinning action.yml, the release
commit and its tags (what .github/workflows/release.yml runs after the image is pushed). The
build and push themselves are in tests/container/test_release.py, against a real registry."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "release-image.sh"
IMAGE = "registry.invalid/owner/golden-gate"
REF = f"{IMAGE}@sha256:{'ab' * 32}"
OTHER_REF = f"{IMAGE}@sha256:{'cd' * 32}"
PUBLISHED = "acme-tools/golden-gate"  # the repository a release is published from
PLACEHOLDER = "org/golden-gate-action"
# The files naming the Action's repository: the package, and docs and examples with the stand-in.
STAMPED = (
    "README.md",
    "docs/action.md",
    "docs/getting-started.md",
    "examples/workflows/pr-gate.yml",
    "src/golden_gate/__init__.py",
)


def script(
    *args: str | Path, cwd: Path, env: dict[str, str] | None = None, ok: bool = True
) -> subprocess.CompletedProcess:
    done = subprocess.run(
        ["bash", str(SCRIPT), *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if ok:
        assert done.returncode == 0, done.stderr
    else:
        assert done.returncode != 0
        # One clear sentence, never a trace of the shell.
        assert done.stderr.startswith("release-image: error: "), done.stderr
        assert done.stderr.count("\n") == 1, done.stderr
    return done


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository holding what the script reads (action.yml, the versions), committed on main,
    with a bare repository as origin."""
    home = tmp_path / "home"
    home.mkdir()
    for key, value in {
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "releaser",
        "GIT_AUTHOR_EMAIL": "releaser@example.invalid",
        "GIT_COMMITTER_NAME": "releaser",
        "GIT_COMMITTER_EMAIL": "releaser@example.invalid",
    }.items():
        monkeypatch.setenv(key, value)
    repo = tmp_path / "repo"
    for path in ("action.yml", "pyproject.toml", "docs/index.md", *STAMPED):
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / path, repo / path)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "main")
    git(tmp_path, "init", "-q", "--bare", "origin.git")
    git(repo, "remote", "add", "origin", str(tmp_path / "origin.git"))
    git(repo, "push", "-q", "origin", "main")
    return repo


def version_of(repo: Path) -> str:
    return tomllib.loads((repo / "pyproject.toml").read_text())["project"]["version"]


def bump(repo: Path, version: str) -> None:
    """A new version on main, as a maintainer bumps it before releasing."""
    old = version_of(repo)
    for path in ("pyproject.toml", "src/golden_gate/__init__.py"):
        file = repo / path
        file.write_text(file.read_text().replace(f'"{old}"', f'"{version}"', 1))
    git(repo, "commit", "-q", "-am", f"version {version}")


def remote_tag(repo: Path, tag: str) -> str:
    """The commit the tag names in origin."""
    return git(repo, "--git-dir", str(repo.parent / "origin.git"), "rev-parse", f"{tag}^{{commit}}")


def test_check_version_wants_the_project_version(repo: Path) -> None:
    version = version_of(repo)
    script("check-version", version, cwd=repo)
    wrong = script("check-version", "9.9.9", cwd=repo, ok=False).stderr
    assert f"version 9.9.9 is not pyproject.toml's ({version})" in wrong
    assert "X.Y.Z" in script("check-version", f"v{version}", cwd=repo, ok=False).stderr
    assert "X.Y.Z" in script("check-version", f"{version}-rc.1", cwd=repo, ok=False).stderr


def test_pin_rewrites_only_the_image(tmp_path: Path) -> None:
    out = tmp_path / "out" / "action.yml"
    script("pin", REF, ROOT / "action.yml", out, cwd=tmp_path)
    before = (ROOT / "action.yml").read_text().splitlines()
    after = out.read_text().splitlines()
    assert [(a, b) for a, b in zip(before, after, strict=True) if a != b] == [
        ("  image: Dockerfile", f"  image: docker://{REF}")
    ]
    assert yaml.safe_load(out.read_text())["runs"]["image"] == f"docker://{REF}"
    # Pinning a pinned file again names the new digest.
    script("pin", OTHER_REF, out, cwd=tmp_path)
    assert yaml.safe_load(out.read_text())["runs"]["image"] == f"docker://{OTHER_REF}"


@pytest.mark.parametrize(
    ("ref", "says"),
    [
        ("golden-gate@sha256:" + "ab" * 32, "is not <registry>/<path>"),
        ("owner/golden-gate@sha256:" + "ab" * 32, "starts with no registry host"),
        ("Registry.invalid/Owner/golden-gate@sha256:" + "ab" * 32, "in lower case"),
        (f"{IMAGE}:1.4.0@sha256:" + "ab" * 32, "without a tag or digest"),
        (f"{IMAGE}@sha256:abc", "is not a sha256 digest"),
        (f"{IMAGE}:1.4.0", "is not IMAGE@sha256:<digest>"),
    ],
)
def test_pin_refuses_what_is_not_an_image_by_digest(tmp_path: Path, ref: str, says: str) -> None:
    out = tmp_path / "action.yml"
    assert says in script("pin", ref, ROOT / "action.yml", out, cwd=tmp_path, ok=False).stderr
    assert not out.exists()


def test_pin_wants_one_docker_image_line(tmp_path: Path) -> None:
    node = tmp_path / "node.yml"
    node.write_text("name: x\nruns:\n  using: node20\n  main: index.js\n")
    assert "not one" in script("pin", REF, node, cwd=tmp_path, ok=False).stderr


def test_the_release_commit_is_on_no_branch_and_tagged(repo: Path) -> None:
    version = version_of(repo)
    major = f"v{version.split('.')[0]}"
    main = git(repo, "rev-parse", "HEAD")
    commit = script("commit-tag", version, REF, PUBLISHED, cwd=repo).stdout.strip()

    # main and the work tree still build from source.
    assert git(repo, "rev-parse", "HEAD") == main
    assert git(repo, "status", "--porcelain") == ""
    assert "  image: Dockerfile" in (repo / "action.yml").read_text().splitlines()
    assert git(repo, "branch", "--contains", commit) == ""
    # The release commit is main with action.yml pinned and the repository stamped, and
    # nothing else.
    assert git(repo, "rev-parse", f"{commit}^") == main
    changed = git(repo, "diff", "--name-only", main, commit).splitlines()
    assert sorted(changed) == sorted(["action.yml", *STAMPED])
    released = yaml.safe_load(git(repo, "show", f"{commit}:action.yml"))
    assert released["runs"]["image"] == f"docker://{REF}"
    assert git(repo, "rev-parse", f"v{version}^{{commit}}") == commit
    assert git(repo, "rev-parse", f"{major}^{{commit}}") == commit
    assert REF in git(repo, "tag", "-l", "-n1", f"v{version}")

    script("push-tags", version, cwd=repo)
    assert remote_tag(repo, f"v{version}") == commit
    assert remote_tag(repo, major) == commit
    assert git(repo, "ls-remote", "--heads", "origin").endswith("refs/heads/main")

    # The same version again is refused: a released version never moves.
    again = script("commit-tag", version, OTHER_REF, PUBLISHED, cwd=repo, ok=False).stderr
    assert f"tag v{version} exists already" in again


def test_the_next_release_moves_only_the_major_tag(repo: Path) -> None:
    first = version_of(repo)
    major_number, minor, patch = (int(part) for part in first.split("."))
    major = f"v{major_number}"
    old = script("commit-tag", first, REF, PUBLISHED, cwd=repo).stdout.strip()
    script("push-tags", first, cwd=repo)

    second = f"{major_number}.{minor}.{patch + 1}"
    bump(repo, second)
    # The repository from the runner's environment, as the release workflow also has it.
    env = {**os.environ, "GITHUB_REPOSITORY": PUBLISHED}
    new = script("commit-tag", second, OTHER_REF, cwd=repo, env=env).stdout.strip()
    script("push-tags", second, cwd=repo)

    assert remote_tag(repo, f"v{first}") == old
    assert remote_tag(repo, f"v{second}") == new
    assert remote_tag(repo, major) == new
    released = yaml.safe_load(git(repo, "show", f"{major}:action.yml"))
    assert released["runs"]["image"] == f"docker://{OTHER_REF}"


def test_outside_a_repository_it_says_so(tmp_path: Path) -> None:
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(tmp_path)}
    done = script("check-version", "1.0.0", cwd=tmp_path, env=env, ok=False)
    assert "is not in a git work tree" in done.stderr


def test_the_release_stamps_its_repository_into_the_package_and_the_docs(repo: Path) -> None:
    version = version_of(repo)
    commit = script("commit-tag", version, REF, PUBLISHED, cwd=repo).stdout.strip()
    package = git(repo, "show", f"{commit}:src/golden_gate/__init__.py")
    assert f'ACTION_REPOSITORY = "{PUBLISHED}"' in package.splitlines()
    for path in STAMPED[:-1]:
        before = git(repo, "show", f"HEAD:{path}")
        after = git(repo, "show", f"{commit}:{path}")
        assert PLACEHOLDER in before and PLACEHOLDER not in after, path
        assert after == before.replace(PLACEHOLDER, PUBLISHED), path
    # A page without the stand-in is left as it is.
    assert git(repo, "diff", "--name-only", "HEAD", commit, "--", "docs/index.md") == ""
    # main keeps the empty name: a build from a branch is no release.
    assert 'ACTION_REPOSITORY = ""' in (repo / "src/golden_gate/__init__.py").read_text()


def test_init_from_a_release_writes_its_repository_into_the_workflows(
    repo: Path, tmp_path: Path
) -> None:
    """The released package, as a user installs it: `init` with no --action names the
    repository the release stamped, at the release's version."""
    version = version_of(repo)
    commit = script("commit-tag", version, REF, PUBLISHED, cwd=repo).stdout.strip()
    released = tmp_path / "released" / "src"
    shutil.copytree(ROOT / "src" / "golden_gate", released / "golden_gate")
    shutil.copytree(ROOT / "templates", released.parent / "templates")
    (released / "golden_gate" / "__init__.py").write_text(
        git(repo, "show", f"{commit}:src/golden_gate/__init__.py") + "\n"
    )
    user = tmp_path / "user"
    user.mkdir()
    git(user, "init", "-q")
    # git ls-remote goes through a proxy on loopback that refuses: nothing leaves the machine.
    env = {
        **os.environ,
        "PYTHONPATH": str(released),
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "https_proxy": "http://127.0.0.1:9",
    }
    done = subprocess.run(
        [sys.executable, "-m", "golden_gate", "init", "--dir", str(user)],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    for name in ("golden-gate.yml", "golden-gate-comment.yml", "golden-gate-baseline.yml"):
        text = (user / ".github" / "workflows" / name).read_text()
        assert f"uses: {PUBLISHED}@v{version}" in text, name
        assert PLACEHOLDER not in text, name


@pytest.mark.parametrize(
    ("args", "env", "says"),
    [
        ((), {}, "no repository to stamp into the release"),
        (("acme",), {}, "is not OWNER/NAME"),
        (("acme/x y",), {}, "is not OWNER/NAME"),
        (("acme/x|y",), {}, "is not OWNER/NAME"),
        ((PLACEHOLDER,), {}, "is the docs' stand-in"),
        ((), {"GITHUB_REPOSITORY": "Org/Golden-Gate-Action"}, "is the docs' stand-in"),
    ],
)
def test_a_release_without_a_real_repository_is_refused(
    repo: Path, args: tuple[str, ...], env: dict[str, str], says: str
) -> None:
    version = version_of(repo)
    environment = {k: v for k, v in os.environ.items() if k != "GITHUB_REPOSITORY"} | env
    done = script("commit-tag", version, REF, *args, cwd=repo, env=environment, ok=False)
    assert says in done.stderr
    assert git(repo, "tag", "-l") == ""
