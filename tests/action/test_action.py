"""The Action's entrypoint run as the runner runs it: a subprocess with `INPUT_*` variables
(hyphens kept), real webhook payloads at GITHUB_EVENT_PATH, the file commands, a fake GitHub
validated against GitHub's OpenAPI description, and the example assistant over HTTP."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from golden_gate.demo import baseline_path
from golden_gate.rendering.charts import TrendPoint, trend_chart
from tests.action_world import READ_TOKEN, REPO, ROOT, WRITE_TOKEN
from tests.fakes.assistant_server import AssistantServer


def test_readme_only_pr_is_skipped_without_the_judge_stack(world):
    pull = world.pull(["README.md", "docs/contributing.md"])
    done = world.run(
        "pull_request",
        world.event("pull_request.opened", pull),
        args=("-X", "importtime"),
        assistant_url="http://127.0.0.1:9",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.outputs == {"ran": "false", "verdict": "skipped"}
    assert done.summary.strip() == (
        "golden-gate skipped: 2 files changed and each is on the ignore list (`ignore-paths` "
        "extends it): answers cannot change.\n\n"
        "- <code>README.md</code> (ignored: \\*.md)\n"
        "- <code>docs/contributing.md</code> (ignored: \\*.md)"
    )
    assert "  skipped: docs/contributing.md (ignored: *.md)" in done.stdout
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines()}
    heavy = {"openevals", "langchain_core", "scipy", "openai", "anthropic", "google.genai"}
    heavy |= {"langchain_openai", "langchain_anthropic", "langchain_google_genai"}
    # Nor the evaluation and its HTTP clients (a tenth of a second or more each).
    heavy |= {
        "aiohttp",
        "httpx",
        "golden_gate.evaluation.evaluate",
        "golden_gate.evaluation.target",
    }
    assert not heavy & imported, heavy & imported
    print(f"skipped run: {done.elapsed:.2f} s")  # measured in bench/, never asserted


def test_a_change_to_the_assistant_in_any_layout_runs_the_gate(world, candidate):
    # Issue 30: the service's code, dependencies and image, none under a path the old default
    # `paths` named, were skipped as "answers cannot change". Now only ignored files skip.
    pull = world.pull(["app/server.py", "requirements.txt", "Dockerfile", "pyproject.toml"])
    done = world.run(
        "pull_request", world.event("pull_request.opened", pull), assistant_url=candidate
    )
    assert done.outputs["ran"] == "true", done.stdout + done.stderr
    assert done.returncode == 1 and done.outputs["verdict"] == "failed"
    assert "golden-gate: running: 4 of 4 changed files can change answers" in done.stdout
    assert "  matched: app/server.py (not on the ignore list)" in done.stdout


def test_prompt_change_runs_comments_and_a_second_push_edits(world, candidate):
    pull = world.pull(["prompts/answer.txt", "README.md"])
    event = world.event("pull_request.opened", pull)
    # A directory that outlives the run, outside the checkout (a self-hosted runner's disk).
    verdicts = str(world.tmp / "verdicts")
    done = world.run("pull_request", event, assistant_url=candidate, cache_dir=verdicts)
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.outputs
    assert out["ran"] == "true" and out["verdict"] == "failed"
    assert out["regressions"] == "6" and out["improvements"] == "0" and out["items"] == "14"
    assert float(out["p-value"]) == pytest.approx(1 / 64)
    assert re.fullmatch(r"0\.\d{4}", out["lower-bound"])
    assert out["comment-url"].endswith(
        f"/pull/{pull.number}#issuecomment-{world.github.comments(REPO, pull.number)[0].id}"
    )
    (comment,) = world.github.comments(REPO, pull.number)
    assert comment.user == "github-actions[bot]"
    assert comment.body.startswith("<!-- golden-gate:report id=docs -->\n")
    assert "### Regressed items (6)" in comment.body
    assert "::error title=golden-gate failed::failed: " in done.stdout
    assert "Regressed: backups-restore, backups-schedule" in done.stdout
    assert "::group::Baseline" in done.stdout
    assert "### Regressed items (6)" in done.summary
    report = json.loads((world.workspace / out["report-path"]).read_text())
    assert len(report["results"]) == 14
    assert (world.workspace / out["comment-file"]).read_text() == comment.body

    first_update = comment.updated_at
    again = world.run("pull_request", event, assistant_url=candidate, cache_dir=verdicts)
    assert again.returncode == 1
    (edited,) = world.github.comments(REPO, pull.number)
    assert edited.id == comment.id and edited.updated_at > first_update
    assert len(world.github.calls("PATCH", "*/issues/comments/*")) == 1
    assert again.outputs["comment-url"] == out["comment-url"]
    assert int(again.outputs["judge-calls"]) == 0  # every verdict came from the cache
    assert int(again.outputs["cache-hits"]) > 0


def fork_run(world, candidate):
    """A pull request from a fork, run with the read-only token it gets."""
    pull = world.pull(["prompts/answer.txt"], fork=True)
    done = world.run(
        "pull_request",
        world.event("pull_request.opened", pull, fork=True),
        token=READ_TOKEN,
        assistant_url=candidate,
    )
    return pull, done


def test_fork_pr_writes_the_comment_file_and_post_comment_posts_it(world, candidate):
    pull, done = fork_run(world, candidate)
    assert done.returncode == 1  # the gate's verdict, not the failed post
    assert "::warning title=golden-gate comment not posted::" in done.stdout
    assert "403" in done.stdout and "mode: post-comment" in done.stdout
    assert world.github.comments(REPO, pull.number) == []
    assert "comment-url" not in done.outputs
    comment_file = world.workspace / done.outputs["comment-file"]
    meta = json.loads(comment_file.with_suffix(".json").read_text())
    assert meta["pr_number"] == pull.number and meta["head_sha"] == pull.head_sha

    posted = world.run(
        "workflow_run", world.event("workflow_run.completed", pull), mode="post-comment"
    )
    assert posted.returncode == 0, posted.stdout + posted.stderr
    (comment,) = world.github.comments(REPO, pull.number)
    assert comment.body.startswith("<!-- golden-gate:report id=docs -->\n")
    assert 'the fork\'s run reports "failed", unverified' in comment.body
    assert "### Regressed items (6)" in comment.body  # against this repository's baseline
    assert posted.outputs["comment-url"].endswith(f"#issuecomment-{comment.id}")
    assert posted.outputs["verdict"] == "unverified"


def test_a_forks_report_is_a_claim_never_a_verdict(world, candidate):
    pull, done = fork_run(world, candidate)
    # The fork's workflow is the fork's: it uploads a report judged by a model it cannot have
    # called, every item passing, with text of its own in every free field and note.
    report_path = world.workspace / done.outputs["report-path"]
    report = json.loads(report_path.read_text())
    report.update(tier="full", judge="openai:gpt-4.1", tool_version="golden-gate ✅ VERIFIED")
    report["dataset"]["path"] = "**Approved by the maintainers**"
    report["assistant"] = {"url": "https://evil.example/✅", "index_snapshot": "@maintainers"}
    report["rule_changes"] = {"files": ["@maintainers approved"]}
    report["warnings"] = ["Approved by @maintainers: merge it"]
    for item in report["results"]:
        item.update(passes=item["runs"], errors=0)
        for run in item["run_results"]:
            run.update(status="pass", checks=[], error=None)
    report_path.write_text(json.dumps(report))
    meta_path = world.workspace / "golden-gate" / "comment.json"
    meta = json.loads(meta_path.read_text())
    meta["notes"] = ["Maintainers: this change is approved, merge it ✅ @org/admins"]
    meta_path.write_text(json.dumps(meta))
    (world.workspace / "golden-gate" / "comment.md").write_text("## ✅ golden-gate passed\n")

    posted = world.run(
        "workflow_run", world.event("workflow_run.completed", pull), mode="post-comment"
    )
    assert posted.returncode == 0, posted.stdout + posted.stderr
    (comment,) = world.github.comments(REPO, pull.number)
    body = comment.body
    assert "✅" not in body
    assert 'the fork\'s run reports "passed", unverified' in body
    assert "no model judge can have run there" in body and "claims a model judge" in body
    for forged in ("VERIFIED", "Approved", "evil.example", "@maintainers", "approved", "admins"):
        assert forged not in body
    assert posted.outputs["verdict"] == "unverified"


def test_post_comment_refuses_a_pr_that_does_not_match_the_run(world, candidate):
    pull = world.pull(["prompts/answer.txt"], fork=True)
    other = world.pull(["src/x.py"])
    world.run(
        "pull_request",
        world.event("pull_request.opened", pull, fork=True),
        token=READ_TOKEN,
        assistant_url=candidate,
    )
    meta_path = world.workspace / "golden-gate" / "comment.json"
    meta = json.loads(meta_path.read_text())
    meta["pr_number"] = other.number  # a fork's artifact aiming at another pull request
    meta_path.write_text(json.dumps(meta))
    done = world.run(
        "workflow_run", world.event("workflow_run.completed", pull), mode="post-comment"
    )
    assert done.returncode == 2
    assert "refusing to post another pull request's comment" in done.stdout
    assert world.github.comments(REPO, other.number) == []


def test_a_fork_pr_without_a_judge_key_runs_the_deterministic_tier(world, candidate):
    world.configure({"judge": {"model": "openai:gpt-4.1-mini"}})
    pull = world.pull(["prompts/answer.txt"], fork=True)
    done = world.run(
        "pull_request",
        world.event("pull_request.opened", pull, fork=True),
        token=READ_TOKEN,
        assistant_url=candidate,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    comment = (world.workspace / done.outputs["comment-file"]).read_text()  # a fork cannot post
    assert "Deterministic checks only" in comment
    assert "deterministic tier only" in done.stdout
    assert "a fork pull request gets no secrets" in done.stdout
    # Only the two dropped citations are visible without the judge.
    assert done.outputs["regressions"] == "2"
    report = json.loads((world.workspace / done.outputs["report-path"]).read_text())
    assert report["tier"] == "deterministic" and report["stats"]["judge_calls"] == 0


def test_bad_input_exits_2_before_anything_runs(world, candidate):
    pull = world.pull(["prompts/answer.txt"])
    done = world.run(
        "pull_request", world.event("pull_request.opened", pull), assistant_url=candidate, floor="2"
    )
    assert done.returncode == 2
    assert "::error title=golden-gate::input 'floor'" in done.stdout
    assert done.outputs == {"verdict": "error"}
    assert "Traceback" not in done.stderr
    assert world.github.comments(REPO, pull.number) == []


def test_fail_on_regression_false_turns_failure_into_a_warning(world, candidate):
    world.configure({"gate": {"fail-on-regression": False}})
    pull = world.pull(["prompts/answer.txt"])
    done = world.run(
        "pull_request",
        world.event("pull_request.opened", pull),
        assistant_url=candidate,
    )
    assert done.returncode == 0
    assert done.outputs["verdict"] == "failed"
    assert "::warning title=golden-gate failed::" in done.stdout


def test_workflow_dispatch_runs_with_a_local_baseline_and_passes(world, good_assistant):
    shutil.copy(baseline_path(), world.workspace / "evals" / "baseline.json")
    done = world.run(
        "workflow_dispatch",
        world.event("workflow_dispatch"),
        assistant_url=good_assistant,
        index_snapshot="snap-2026-11-30",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.outputs["verdict"] == "passed" and done.outputs["ran"] == "true"
    report = json.loads((world.workspace / done.outputs["report-path"]).read_text())
    assert report["assistant"]["index_snapshot"] == "snap-2026-11-30"


def test_missing_baseline_means_floor_only(world, good_assistant):
    world.configure({"baseline": "evals/nothere.json"})
    pull = world.pull(["evals/golden.jsonl"])
    done = world.run(
        "pull_request",
        world.event("pull_request.opened", pull),
        assistant_url=good_assistant,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (comment,) = world.github.comments(REPO, pull.number)
    assert "evals/nothere.json does not exist at main; only the floor applies." in comment.body
    assert done.outputs["p-value"] == ""


def test_secrets_are_masked_and_never_printed(world, candidate):
    pull = world.pull(["prompts/answer.txt"])
    done = world.run(
        "pull_request",
        world.event("pull_request.opened", pull),
        assistant_url=candidate,
        assistant_headers="Authorization: Bearer hdr-s3cret",
        extra_env={"OPENAI_API_KEY": "sk-judge-s3cret"},
    )
    assert "::add-mask::" + WRITE_TOKEN in done.stdout
    assert "::add-mask::Bearer hdr-s3cret" in done.stdout
    assert "::add-mask::sk-judge-s3cret" in done.stdout
    body = world.github.comments(REPO, pull.number)[0].body
    report = (world.workspace / done.outputs["report-path"]).read_text()
    logs = "\n".join(
        line
        for line in (done.stdout + done.stderr).splitlines()
        if not line.startswith("::add-mask::")
    )
    for secret in (WRITE_TOKEN, "hdr-s3cret", "sk-judge-s3cret"):
        assert secret not in body and secret not in report and secret not in done.summary
        assert secret not in logs
        assert secret not in "".join(done.outputs.values())


def test_secrets_echoed_by_the_assistant_or_in_its_url_reach_nothing_we_write(world):
    # The assistant is the pull request's code: it can echo the headers it was sent.
    echo = "echo: Bearer hdr_s3cret-echo, sk-judge-s3cret, http://gate:url-pa55word@x/"
    with AssistantServer(default_answer=echo) as server:
        plain = server.url
        url = plain.replace("http://", "http://gate:url-pa55word@")
        pull = world.pull(["prompts/answer.txt"])
        done = world.run(
            "pull_request",
            world.event("pull_request.opened", pull),
            assistant_url=url,
            assistant_headers="Authorization: Bearer hdr_s3cret-echo",
            extra_env={"OPENAI_API_KEY": "sk-judge-s3cret"},
            baseline="",
        )
    assert "::add-mask::url-pa55word" in done.stdout
    report = json.loads((world.workspace / done.outputs["report-path"]).read_text())
    assert report["assistant"]["url"] == plain  # recorded without the credentials
    assert "***" in report["results"][0]["run_results"][0]["answer"]
    body = world.github.comments(REPO, pull.number)[0].body
    comment_file = (world.workspace / done.outputs["comment-file"]).read_text()
    logs = "\n".join(
        line for line in done.stdout.splitlines() if not line.startswith("::add-mask::")
    )
    written = [json.dumps(report), body, comment_file, done.summary, logs, done.stderr]
    written.append("".join(done.outputs.values()))
    for secret in ("hdr_s3cret-echo", "sk-judge-s3cret", "url-pa55word"):
        assert not [text for text in written if secret in text], secret


def test_matrix_shards_then_merge_gate_and_comment_once(world, candidate):
    pull = world.pull(["prompts/answer.txt"])
    event = world.event("pull_request.opened", pull)
    for i in range(1, 4):
        done = world.run(
            "pull_request", event, assistant_url=candidate, shard=f"{i}/3", subset_tags="smoke,full"
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.outputs["verdict"] == "evaluated"
        assert done.outputs["report-path"].endswith(f"report-shard-{i}-of-3.json")
        assert world.github.comments(REPO, pull.number) == []  # shards never comment
    merged = world.run("pull_request", event, mode="merge")
    assert merged.returncode == 1, merged.stdout + merged.stderr
    assert merged.outputs["verdict"] == "failed" and merged.outputs["items"] == "24"
    assert merged.outputs["regressions"] == "7"
    (comment,) = world.github.comments(REPO, pull.number)
    assert "### Regressed items (7)" in comment.body


def test_merge_refuses_a_missing_shard(world, candidate):
    event = world.event("workflow_dispatch")
    for i in (1, 3):
        world.run("workflow_dispatch", event, assistant_url=candidate, shard=f"{i}/3")
    done = world.run("workflow_dispatch", event, mode="merge")
    assert done.returncode == 2
    assert "::error title=golden-gate::shard(s) 2/3 missing from the reports" in done.stdout


def test_calibrate_mode_and_the_kappa_line_in_the_gate_comment(world, candidate):
    shutil.copytree(ROOT / "examples" / "calibration", world.workspace / "calibration")
    done = world.run(
        "workflow_dispatch",
        world.event("workflow_dispatch"),
        mode="calibrate",
        labels="calibration/labels.jsonl",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.outputs["verdict"] == "passed" and float(done.outputs["kappa"]) > 0.6
    assert "Cohen" in done.summary or "κ" in done.summary
    calibration = done.outputs["calibration-path"]
    # Committed on main, as the calibration is a rule of the gate: a pull request reads the
    # base branch's (test_base_rules.py).
    committed = Path(calibration).relative_to(world.workspace).as_posix()
    world.github.commit(REPO, "main", {committed: Path(calibration).read_text()})
    world.configure({"comment": {"calibration": committed}})
    pull = world.pull(["prompts/answer.txt"])
    gated = world.run(
        "pull_request",
        world.event("pull_request.opened", pull),
        assistant_url=candidate,
    )
    (comment,) = world.github.comments(REPO, pull.number)
    assert "judge calibrated: kappa κ = 0.69" in comment.body
    assert gated.returncode == 1


@pytest.mark.parametrize("panel", ["keypoints,openai:x", "openai:judge-a,openai:judge-b"])
def test_calibrate_mode_refuses_a_panel_in_one_sentence(world, panel):
    shutil.copytree(ROOT / "examples" / "calibration", world.workspace / "calibration")
    done = world.run(
        "workflow_dispatch",
        world.event("workflow_dispatch"),
        mode="calibrate",
        labels="calibration/labels.jsonl",
        judge_model=panel,
        extra_env={"OPENAI_API_KEY": "sk-test-0123456789abcdef"},
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"judge-model '{panel}' is a panel; calibrate one judge at a time" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


def test_drift_opens_one_issue_updates_it_and_a_pass_closes_it(world, candidate, good_assistant):
    shutil.copy(baseline_path(), world.workspace / "evals" / "baseline.json")
    event = world.event("workflow_dispatch")
    # The baseline was rewritten once more on main: the issue shows its history.
    world.github.commit(REPO, "main", {"evals/baseline.json": baseline_path().read_text() + "\n"})
    first = world.run("schedule", event, mode="drift", assistant_url=candidate)
    assert first.returncode == 1, first.stdout + first.stderr
    (issue,) = world.github.issues(REPO, label="golden-gate-drift")
    assert issue.state == "open" and "golden-gate: quality drift on main (8/14)" in issue.title
    assert "### Regressed items (6)" in issue.body
    assert "The baseline across its rewrites" in issue.body and issue.body.count("| <code>") >= 8
    assert first.outputs["issue-url"].endswith(f"/issues/{issue.number}")

    second = world.run("schedule", event, mode="drift", assistant_url=candidate)
    assert second.returncode == 1
    assert len(world.github.issues(REPO, label="golden-gate-drift")) == 1  # updated, no duplicate
    assert second.outputs["issue-url"] == first.outputs["issue-url"]

    fixed = world.run("schedule", event, mode="drift", assistant_url=good_assistant)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    (closed,) = world.github.issues(REPO, label="golden-gate-drift")
    assert closed.state == "closed"
    assert "drift issue closed" in fixed.stdout


def test_baseline_promotion_opens_one_pr_listing_the_flipped_items(world, candidate):
    event = world.event("workflow_dispatch")
    done = world.run(
        "workflow_dispatch",
        event,
        mode="baseline",
        assistant_url=candidate,
        subset_tags="*",
        open_pr="true",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.outputs["verdict"] == "promoted" and done.outputs["flipped"] == "7"
    pulls = [
        p for p in world.github.repo(REPO).pulls.values() if p.head_ref == "golden-gate/baseline"
    ]
    (pull,) = pulls
    assert "### Now failing (accepted regressions) (7)" in pull.body
    for item_id in ("backups-restore", "upgrade-rollback", "trouble-sealed-503"):
        assert f"<code>{item_id}</code>" in pull.body
    files = world.github.branch_files(REPO, "golden-gate/baseline")
    written = json.loads(files["evals/baseline.json"])
    assert written["results"][0]["id"] == "install-ports"
    # Three runs an item by default (baseline-runs): a baseline is not one lucky sample.
    assert written["run_settings"]["runs"] == 3
    assert {result["runs"] for result in written["results"]} == {3}
    assert done.outputs["pr-url"].endswith(f"/pull/{pull.number}")

    again = world.run(
        "workflow_dispatch",
        event,
        mode="baseline",
        assistant_url=candidate,
        subset_tags="*",
        open_pr="true",
    )
    assert again.returncode == 0
    pulls = [
        p for p in world.github.repo(REPO).pulls.values() if p.head_ref == "golden-gate/baseline"
    ]
    assert len(pulls) == 1


def test_baseline_runs_sets_the_baselines_runs_and_is_checked(world, candidate):
    event = world.event("workflow_dispatch")
    common = {"mode": "baseline", "assistant_url": candidate, "subset_tags": "*"}
    one = world.run("workflow_dispatch", event, baseline_runs="1", **common)
    assert one.returncode == 0, one.stdout + one.stderr
    written = json.loads((world.workspace / "evals/baseline.json").read_text())
    assert written["run_settings"]["runs"] == 1
    bad = world.run("workflow_dispatch", event, baseline_runs="0", **common)
    assert bad.returncode == 2
    assert "input 'baseline-runs' must be a whole number from 1 to 100" in bad.stdout + bad.stderr


def test_a_baseline_that_cannot_be_read_is_incomplete_not_missing(world):
    # The contents API keeps failing and the workspace has no git history to fall back on:
    # that is not "no baseline" (the floor alone would decide), it is a run that cannot gate.
    pull = world.pull(["prompts/answer.txt"])
    world.github.fail("GET", "/repos/*/contents/evals/baseline.json", status=502, times=10)
    done = world.run(
        "pull_request",
        world.event("pull_request.opened", pull),
        assistant_url="http://127.0.0.1:9",  # never asked: the baseline is looked up first
    )
    assert done.returncode == 3, done.stdout + done.stderr
    assert done.outputs["verdict"] == "incomplete"
    assert "evals/baseline.json at main could not be read" in done.summary
    assert "does not exist" not in done.summary
    report = json.loads((world.workspace / done.outputs["report-path"]).read_text())
    assert report["complete"] is False and report["results"] == []
    assert "could not be read" in report["incomplete_reason"]
    (comment,) = world.github.comments(REPO, pull.number)
    assert "The evaluation is incomplete" in comment.body and "✅" not in comment.body
    assert "Traceback" not in done.stderr


def test_drift_with_an_unreadable_baseline_leaves_the_issue_alone(world, candidate):
    # The floor alone would fail this assistant and open an issue about the wrong thing.
    world.github.fail("GET", "/repos/*/contents/evals/baseline.json", status=502, times=10)
    done = world.run(
        "schedule",
        world.event("workflow_dispatch"),
        mode="drift",
        baseline_ref="main",
        assistant_url=candidate,
    )
    assert done.returncode == 3, done.stdout + done.stderr
    assert done.outputs["verdict"] == "incomplete"
    assert "could not be read" in done.summary
    assert (world.workspace / done.outputs["report-path"]).is_file()
    assert world.github.issues(REPO) == []


@pytest.mark.parametrize("changed", ["evals/baseline.json", ".github/workflows/eval.yml"])
def test_a_pr_changing_only_the_gates_inputs_is_gated(world, good_assistant, changed):
    # `paths` covers only the service; the baseline and the workflow are the gate's own rules.
    world.configure({"scope": {"paths": ["service/**"]}})
    pull = world.pull([changed, "README.md"])
    done = world.run(
        "pull_request",
        world.event("pull_request.opened", pull),
        assistant_url=good_assistant,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.outputs["ran"] == "true" and done.outputs["verdict"] == "passed"
    assert "golden-gate: running: the pull request changes what the gate itself reads" in (
        done.stdout
    )
    assert f"  matched: {changed} (" in done.stdout


def test_an_app_installation_token_keeps_one_sticky_comment(world, good_assistant):
    # GET /user is 403 for an installation token and it comments as <app>[bot].
    token = "ghs_appINSTALLATIONtokenAPPtoken0003"
    world.github.add_app_token(token, "golden-gate-ci")
    pull = world.pull(["prompts/answer.txt"])
    event = world.event("pull_request.opened", pull)
    for _ in range(2):  # five pushes for every token kind: tests/action/test_github.py
        done = world.run("pull_request", event, token=token, assistant_url=good_assistant)
        assert done.returncode == 0, done.stdout + done.stderr
    (comment,) = world.github.comments(REPO, pull.number)
    assert comment.user == "golden-gate-ci[bot]"
    assert done.outputs["comment-url"].endswith(f"#issuecomment-{comment.id}")


def test_a_pr_that_deletes_and_rewords_the_items_it_broke_still_fails(world, candidate):
    """The golden set is read at the base ref, as the baseline is: deleting, untagging or
    rewording the regressed items changes nothing in the comparison, and the comment says at
    the top that the pull request changes the gate's own rules."""
    golden = world.workspace / "evals" / "golden.jsonl"
    lines = [json.loads(line) for line in golden.read_text().splitlines()]
    edited = []
    for item in lines:
        if item["id"] in ("backups-restore", "backups-schedule"):
            continue  # deleted
        if item["id"] == "upgrade-versions":
            item["tags"] = ["full"]  # untagged from the smoke subset
        if item["id"] == "upgrade-rollback":
            item["reference_key_points"] = ["downgrades"]  # reworded to what the answer says
        edited.append(item)
    golden.write_text("".join(json.dumps(i) + "\n" for i in edited))
    pull = world.pull(["evals/golden.jsonl"])
    done = world.run(
        "pull_request", world.event("pull_request.opened", pull), assistant_url=candidate
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.outputs["regressions"] == "6"  # all six, compared as the base defines them
    (comment,) = world.github.comments(REPO, pull.number)
    top = "\n".join(comment.body.splitlines()[:8])
    assert "This pull request changes the gate's own rules:" in top
    assert "items removed: <code>backups-restore</code>, <code>backups-schedule</code>" in top
    assert "untagged: <code>upgrade-versions</code>" in top
    assert "reworded: <code>upgrade-rollback</code>" in top
    assert "rule files changed: <code>evals/golden.jsonl</code>" in top
    report = json.loads((world.workspace / done.outputs["report-path"]).read_text())
    origins = {r["id"]: r.get("origin") for r in report["results"]}
    assert origins["upgrade-rollback"] == "base"
    assert origins["upgrade-rollback@pull-request"] == "pull-request"
    assert report["rule_changes"]["removed"] == ["backups-restore", "backups-schedule"]


BASELINE = "evals/baseline.json"
LARGE = 1024 * 1024  # over this the contents API sends no content: the blob API does


def large_versions(world, count: int = 3) -> set[str]:
    """Commit `count` versions of the baseline on main, each over 1 MB (padded: still the same
    report); their blob shas."""
    text = baseline_path().read_text()
    for n in range(count):
        world.github.commit(REPO, "main", {BASELINE: text + " " * (LARGE + n)}, message=f"v{n}")
    repo = world.github.repo(REPO)
    return {c.tree[BASELINE] for c in repo.commits.values() if BASELINE in c.tree} - {
        sha for sha, data in repo.blobs.items() if len(data) <= LARGE
    }


def blob_downloads(world) -> list[str]:
    return sorted(r.path.rsplit("/", 1)[1] for r in world.github.calls("GET", "*/git/blobs/*"))


def reference_trend(world) -> list:
    """The trend read in-process the way it was before reuse: every version downloaded."""
    from golden_gate.action.baseline import baseline_trend
    from golden_gate.action.github import GitHub

    github = GitHub(token=WRITE_TOKEN, repository=REPO, api_url=world.github.api_url)
    points, _ = baseline_trend(
        BASELINE, ref="main", github=github, workspace=world.workspace, confidence=0.95
    )
    return points


def without_this_run(chart: str) -> str:
    return re.sub(r", [^,\]]+\]$", "]", chart, flags=re.MULTILINE)


def test_a_gate_run_downloads_each_baseline_version_once(world, candidate):
    # The gate's baseline is the trend's newest version: one download, not two.
    large = large_versions(world)
    pull = world.pull(["prompts/answer.txt"])
    done = world.run(
        "pull_request", world.event("pull_request.opened", pull), assistant_url=candidate
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert blob_downloads(world) == sorted(large)  # each large version exactly once
    contents = world.github.calls("GET", f"*/contents/{BASELINE}")
    assert len(contents) == len(large) + 2  # the gate's read at main, then each version's

    # The chart is the one every version read afresh draws (this run's point aside).
    points = reference_trend(world)
    assert len(points) == len(large) + 1  # and the first, small version
    this_run = TrendPoint(label="this run", pass_rate=0, lower_bound=0)
    title = "Pass rate: the baseline over time, then this run"
    expected = trend_chart([*points, this_run], floor=0.7, title=title)
    (comment,) = world.github.comments(REPO, pull.number)
    (chart,) = [
        b.removeprefix("mermaid\n").strip() for b in comment.body.split("```") if title in b
    ]
    assert without_this_run(chart) == without_this_run(expected)


def test_a_drift_issue_downloads_each_baseline_version_once(world, candidate):
    # Drift with baseline-ref: the gate's baseline is the history's newest version.
    large = large_versions(world)
    done = world.run(
        "schedule",
        world.event("workflow_dispatch"),
        mode="drift",
        assistant_url=candidate,
        baseline_ref="main",
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert blob_downloads(world) == sorted(large)
    (issue,) = world.github.issues(REPO, label="golden-gate-drift")
    rows = re.findall(r"^\| <code>[0-9a-f\u200b]+</code> \| 2024-", issue.body, re.MULTILINE)
    assert len(rows) == len(large) + 1  # every version, the first small one too
