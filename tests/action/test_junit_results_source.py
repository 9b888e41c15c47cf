"""`junit-results` on a pull request: only a results file the job wrote is gated. A file the
pull request committed (or reaches through a committed symlink, or puts in .git or outside the
workspace) is its own verdict and is refused, exit 2, in one sentence; git decides what is
committed, so a workspace git cannot speak for is refused on a pull request too."""

from __future__ import annotations

import json
import os

import pytest

from tests.action_world import REPO
from tests.evaluation.test_import_junit import _surefire

REPORTS = "target/surefire-reports"
RESULTS = f"{REPORTS}/TEST-GoldenSetTest.xml"
IDS = tuple(f"item-{i:02d}" for i in range(30))  # 30 of 30 passing clears the floor


def _baseline(world) -> None:
    """A baseline of the suite at main: every item passed."""
    baseline = json.dumps({"judge": "junit", "results": [
        {"id": i, "tags": ["GoldenSetTest"], "passes": 1, "runs": 1} for i in IDS
    ]})  # fmt: skip
    world.github.commit(REPO, "main", {"evals/baseline.json": baseline}, message="baseline")
    (world.workspace / "evals" / "baseline.json").write_text(baseline)


def _write(world, path: str, outcome: str = "pass") -> None:
    """The suite's results at `path`, every item `outcome` (a forged file says "pass")."""
    file = world.workspace / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(_surefire({i: [outcome] for i in IDS}, classname="GoldenSetTest"))


def _gate(world, path: str, event: str = "pull_request"):
    if event == "pull_request":
        pull = world.pull(["src/main/java/Assistant.java"])
        return world.run(event, world.event("pull_request.opened", pull), junit_results=path)
    if event == "push":  # the Action reads nothing from a push's payload but its repository
        payload = world.tmp / "push.json"
        payload.write_text(
            json.dumps({"ref": "refs/heads/main", "repository": {"full_name": REPO}})
        )
        return world.run(event, payload, junit_results=path)
    return world.run(event, world.event(event), junit_results=path)


def _refused(done, *words: str) -> str:
    said = done.stdout + done.stderr
    assert done.returncode == 2, said
    assert done.outputs["verdict"] == "error"
    assert "input 'junit-results'" in said and "no judge called" not in said
    for word in words:
        assert word in said, said
    return said


def _gated(done, code: int = 0) -> None:
    said = done.stdout + done.stderr
    assert done.returncode == code, said
    assert "no assistant started, no judge called" in done.stdout, said


@pytest.mark.parametrize("how", ["committed", "overwritten by the job", "ignored, force-added"])
def test_a_results_file_the_pull_request_committed_is_refused(world, how):
    _baseline(world)
    world.check_out()
    if how == "ignored, force-added":
        (world.workspace / ".gitignore").write_text("target/\n")
        world.commit_files(".gitignore")
    _write(world, RESULTS)  # forged: every item passes
    world.commit_files(RESULTS, force=how == "ignored, force-added")
    if how == "overwritten by the job":
        _write(world, RESULTS, "fail")  # still the committed path: who wrote it cannot be told
    done = _gate(world, RESULTS)
    said = _refused(done, f"({RESULTS})", f"{RESULTS} is committed in the checkout")
    assert "on a pull_request event the results file must be one this job wrote" in said
    (pull,) = world.github.repo(REPO).pulls.values()
    assert world.github.comments(REPO, pull.number) == []  # refused before anything


def test_the_file_the_job_wrote_is_gated_beside_one_the_pull_request_committed(world):
    _baseline(world)
    world.check_out()
    # The pull request adds a results file in the directory the job writes to, and one
    # that differs only in case from the job's: neither is what is read.
    _write(world, f"{REPORTS}/TEST-Other.xml")
    _write(world, f"{REPORTS}/TEST-GOLDENSETTEST.xml")
    world.commit_files(REPORTS)
    _write(world, RESULTS, "fail")
    done = _gate(world, RESULTS)
    _gated(done, 1)  # the job's results: every item failed
    _refused(_gate(world, f"{REPORTS}/TEST-Other.xml"), "TEST-Other.xml is committed")


def test_a_symlink_to_a_committed_file_or_a_committed_symlink_is_refused(world):
    _baseline(world)
    world.check_out()
    _write(world, "evals/forged.xml")
    (world.workspace / "reports").symlink_to("evals")  # a committed directory symlink
    (world.workspace / "committed-link.xml").symlink_to(RESULTS)
    world.commit_files("evals/forged.xml", "reports", "committed-link.xml")
    # the job's own symlink, to the committed file
    os.makedirs(world.workspace / "target")
    (world.workspace / "target" / "link.xml").symlink_to("../evals/forged.xml")
    _refused(
        _gate(world, "target/link.xml"),
        "evals/forged.xml is committed in the checkout (reached through a symlink)",
    )
    # through a committed symlinked directory, via `..` too
    for path in ("reports/forged.xml", "target/../reports/forged.xml"):
        _refused(_gate(world, path), "the path goes through reports, a symlink committed")
    # a committed symlink to the file the job writes: the pull request chose what is read
    _write(world, RESULTS)
    _refused(_gate(world, "committed-link.xml"), "goes through committed-link.xml, a symlink")
    _gated(_gate(world, RESULTS))


def test_a_path_outside_the_workspace_or_into_git_is_refused(world, tmp_path):
    _baseline(world)
    world.check_out()
    outside = tmp_path / "forged.xml"
    outside.write_text(_surefire({i: ["pass"] for i in IDS}, classname="GoldenSetTest"))
    for path in (str(outside), "../forged.xml"):
        _refused(_gate(world, path), "outside the workspace")
    _write(world, ".git/forged.xml")  # git tracks nothing there: refused by where it is
    _refused(_gate(world, ".git/forged.xml"), "resolves into the git directory")
    (world.workspace / "in-git.xml").symlink_to(".git/forged.xml")
    _refused(_gate(world, "in-git.xml"), "resolves into the git directory")
    (world.workspace / "loop.xml").symlink_to("loop.xml")
    _refused(_gate(world, "loop.xml"), "symlinks on the way")


def test_a_checkout_under_a_path_is_its_own_repository(world):
    """actions/checkout with `path: app`: the workspace itself is no repository; git asks the
    one that holds the file."""
    _baseline(world)
    app = world.workspace / "app"
    _write(world, "app/evals/forged.xml")
    world.check_out(app)
    _refused(_gate(world, "app/evals/forged.xml"), "evals/forged.xml is committed")
    _write(world, f"app/{RESULTS}")
    _gated(_gate(world, f"app/{RESULTS}"))


def test_a_workspace_git_cannot_speak_for_is_refused_on_a_pull_request_only(world):
    _baseline(world)
    _write(world, RESULTS)  # no checkout: nothing tells the job's file from a committed one
    _refused(
        _gate(world, RESULTS),
        "git cannot tell whether it is committed",
        "is not in a git checkout (check the repository out with actions/checkout",
    )
    # A push or a manual run gates its branch's own commits: no checkout needed, and a
    # committed file is the branch's (reviewed) own.
    _gated(_gate(world, RESULTS, event="push"))
    world.check_out()
    _gated(_gate(world, RESULTS, event="workflow_dispatch"))
