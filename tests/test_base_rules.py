"""A pull request cannot loosen its own gate: the rule files are the base branch's, pairing
follows the baseline's own record, a ref that does not exist is bad input, and a missing judge
key is an error outside fork pull requests. Each attack runs through the Action's entrypoint
with the runner's environment against the OpenAPI-checked fake GitHub."""

from __future__ import annotations

import json

from tests.action_world import REPO


def error_lines(done) -> list[str]:
    return [line for line in done.stdout.splitlines() if line.startswith("::error")]


# -- a ref that does not exist ---------------------------------------------------------------


def test_a_baseline_ref_that_does_not_exist_is_bad_input_not_no_baseline(world):
    pull = world.pull(["prompts/answer.txt"])
    done = world.run(
        "pull_request",
        world.event("pull_request.opened", pull),
        assistant_url="http://127.0.0.1:9",  # never asked: the ref is read first
        baseline_ref="master",
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.outputs["verdict"] == "error"
    (line,) = error_lines(done)
    assert line == (
        "::error title=golden-gate::input 'baseline-ref': the ref 'master' does not exist in "
        f'{REPO} (GitHub answers 404 "No commit found for the ref master"); fix the ref (only '
        "a file missing at an existing ref means there is no baseline)"
    )
    assert "only the floor applies" not in done.stdout + done.summary
    assert "Traceback" not in done.stderr
    assert world.github.comments(REPO, pull.number) == []


def test_a_path_missing_at_an_existing_ref_is_still_no_baseline(world, good_assistant):
    pull = world.pull(["prompts/answer.txt"])
    done = world.run(
        "pull_request",
        world.event("pull_request.opened", pull),
        assistant_url=good_assistant,
        baseline="evals/nothere.json",
        baseline_ref="main",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (comment,) = world.github.comments(REPO, pull.number)
    assert "evals/nothere.json does not exist at main; only the floor applies." in comment.body
    report = json.loads((world.workspace / done.outputs["report-path"]).read_text())
    assert report["results"]
