"""Every mode reads its rules at the base on a pull request, and a mode that changes a
branch's state acts only for that branch. Through the Action's entrypoint with the runner's
environment (GITHUB_REF included) against the fake GitHub."""

from __future__ import annotations

import json
import shutil

from golden_gate.demo import baseline_path
from tests.action_world import REPO, ROOT

LABELS = "calibration/labels.jsonl"


def labels_text(*, flipped: bool) -> str:
    lines = (ROOT / "examples" / "calibration" / "labels.jsonl").read_text().splitlines()
    out = []
    for line in lines:
        row = json.loads(line)
        if flipped:
            row["label"] = "fail" if row["label"] == "pass" else "pass"
        out.append(json.dumps(row))
    return "\n".join(out) + "\n"


def test_calibrate_on_a_pull_request_reads_the_bases_labels(world):
    # The base's labels disagree with the judge (kappa far below min-kappa); the pull request
    # "corrects" them to the judge's verdicts.
    world.github.commit(REPO, "main", {LABELS: labels_text(flipped=True)})
    world.configure_options(labels=LABELS)
    (world.workspace / "calibration").mkdir()
    (world.workspace / LABELS).write_text(labels_text(flipped=False))
    pull = world.pull([LABELS])
    done = world.run("pull_request", world.event("pull_request.opened", pull), mode="calibrate")
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.outputs["verdict"] == "failed" and float(done.outputs["kappa"]) < 0
    assert f"labels {LABELS}: changed in this pull request, not used" in done.stdout
    # The checkout's file is untouched; the same labels on a dispatch of main pass.
    assert (world.workspace / LABELS).read_text() == labels_text(flipped=False)
    dispatched = world.run("workflow_dispatch", world.event("workflow_dispatch"), mode="calibrate")
    assert dispatched.returncode == 0 and float(dispatched.outputs["kappa"]) > 0.6


def test_calibrate_on_a_pull_request_cannot_loosen_min_kappa_or_bring_its_own_labels(world):
    world.configure_options(labels=LABELS)
    (world.workspace / "calibration").mkdir()
    (world.workspace / LABELS).write_text(labels_text(flipped=False))
    pull = world.pull([LABELS])
    event = world.event("pull_request.opened", pull)
    looser = world.run("pull_request", event, mode="calibrate", min_kappa="0.1")
    assert looser.returncode == 2, looser.stdout + looser.stderr
    assert "input 'min-kappa' (0.1) would loosen a rule" in looser.stdout
    own = world.run("pull_request", event, mode="calibrate")
    assert own.returncode == 2, own.stdout + own.stderr
    assert f"input 'labels': {LABELS} does not exist at main" in own.stdout
    assert "Traceback" not in own.stderr


def test_a_drift_run_on_a_feature_branch_leaves_mains_issue_alone(world, candidate, good_assistant):
    shutil.copy(baseline_path(), world.workspace / "evals" / "baseline.json")
    event = world.event("workflow_dispatch")
    first = world.run("schedule", event, mode="drift", assistant_url=candidate)
    assert first.returncode == 1, first.stdout + first.stderr
    (issue,) = world.github.issues(REPO, label="golden-gate-drift")
    body = issue.body
    feature = {"GITHUB_REF": "refs/heads/feature"}
    for assistant, code in ((good_assistant, 0), (candidate, 1)):  # would close, would rewrite
        done = world.run(
            "workflow_dispatch", event, mode="drift", assistant_url=assistant, extra_env=feature
        )
        assert done.returncode == code, done.stdout + done.stderr
        assert "the drift issue is left as it is: it tracks main, and this run is for " in (
            done.stdout
        )
        (same,) = world.github.issues(REPO, label="golden-gate-drift")
        assert same.state == "open" and same.body == body
        assert "issue-url" not in done.outputs


def test_a_baseline_promotion_from_another_branch_is_refused(world, candidate):
    for ref in ("refs/heads/feature", "refs/pull/3/merge", ""):
        done = world.run(
            "workflow_dispatch",
            world.event("workflow_dispatch"),
            mode="baseline",
            assistant_url=candidate,
            subset_tags="*",
            open_pr="true",
            extra_env={"GITHUB_REF": ref},
        )
        assert done.returncode == 2, done.stdout + done.stderr
        assert "input 'open-pr': mode baseline proposes main's baseline" in done.stdout
    assert not [p for p in world.github.repo(REPO).pulls.values() if "baseline" in p.head_ref]
