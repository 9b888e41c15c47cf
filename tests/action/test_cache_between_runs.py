"""The judge verdict cache carried between workflow runs through a cache service of the runner
(v2, or the legacy v1 of act, Gitea and older GHES): the entrypoint run twice (and more) against
the fake cache services and the fake judge."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess

import pytest

from golden_gate.demo import baseline_path
from tests import bombs
from tests.action_world import World
from tests.fakes.cache_server import CacheServer, Fault
from tests.fakes.judge_server import JudgeServer
from tests.fakes.legacy_cache_server import LegacyCacheServer

V2_LINE = "golden-gate: judge cache: Actions cache service v2 (ACTIONS_RESULTS_URL)"
V1_LINE = "golden-gate: judge cache: legacy cache service v1 (ACTIONS_CACHE_URL)"


@pytest.fixture
def services(github_server, tmp_path):
    with CacheServer() as cache, JudgeServer() as judge:
        world = World(github_server, tmp_path)
        # workflow_dispatch reads the baseline from the workspace, as on main.
        shutil.copy(baseline_path(), world.workspace / "evals" / "baseline.json")
        yield world, cache, judge


def run(world, cache_server, judge, **inputs):
    """`cache_server`: a fake of either service, or None for a runner that offers neither."""
    # A fresh runner: the default cache directory is under this run's own RUNNER_TEMP.
    return world.run(
        "workflow_dispatch",
        world.event("workflow_dispatch"),
        extra_env={
            **(cache_server.runner_env() if cache_server is not None else {}),
            "OPENAI_API_KEY": "sk-test-key-for-the-fake-judge",
            "GITHUB_RUN_ATTEMPT": "1",
        },
        judge_model="openai:gpt-4.1-mini",
        judge_base_url=judge.base_url,
        **inputs,
    )


def plain(summary: str) -> str:
    """The summary as it reads: Markdown escapes, emphasis and reference-breaking spaces out."""
    return summary.replace("\u200b", "").replace("\\", "").replace("**", "")


def report_of(world) -> dict:
    return json.loads((world.workspace / "golden-gate" / "report.json").read_text())


def test_second_run_makes_zero_judge_calls_and_a_new_prompt_starts_cold(services, candidate):
    world, cache, judge = services
    first = run(world, cache, judge, assistant_url=candidate)
    assert first.returncode == 1, first.stdout + first.stderr
    judged = judge.calls
    assert judged > 0 and first.outputs["judge-calls"] == str(judged)
    # Each request counted, once: the items' and the judge preflight's (not a judge call).
    assert judge.preflights == 1
    assert first.outputs["judge-attempts"] == str(judged + 1)
    assert first.outputs["cache-restored-key"] == ""
    assert V2_LINE in first.stdout
    assert "golden-gate: saved" in first.stdout
    assert len(cache.finalized()) == 1
    prefix = cache.finalized()[0].key.rsplit("-", 2)[0] + "-"
    assert f"golden-gate: no saved verdicts for {prefix}*" in first.stdout
    assert (
        "Judge cache: Actions cache service v2 (ACTIONS_RESULTS_URL); no saved verdicts for "
        f"{prefix}*"
    ) in plain(first.summary)

    second = run(world, cache, judge, assistant_url=candidate)
    assert second.returncode == 1
    assert judge.calls == judged  # zero judge calls: every verdict was restored
    assert judge.preflights == 1  # the preflight's too: this judge answered it before
    assert second.outputs["judge-calls"] == "0" and second.outputs["judge-attempts"] == "0"
    assert int(second.outputs["cache-hits"]) == int(first.outputs["cache-hits"]) + judged
    assert second.outputs["cache-restored-key"].startswith("golden-gate-judge-")
    assert "nothing new was judged; the judge cache is not saved" in second.stdout
    assert len(cache.finalized()) == 1
    restored = second.outputs["cache-restored-key"]
    stored = judged + 1  # the items' verdicts and the preflight's
    assert f"; restored {stored} verdicts from {restored}" in plain(second.summary)
    assert report_of(world)["stats"]["judge_cache"] == {
        "service": "v2",
        "restore": "restored",
        "note": f"Actions cache service v2 (ACTIONS_RESULTS_URL); restored {stored} verdicts "
        f"from {restored}",
    }
    assert second.outputs["verdict"] == first.outputs["verdict"]
    assert second.outputs["regressions"] == first.outputs["regressions"]

    prompt = world.workspace / "judge-prompt.txt"
    prompt.write_text(
        "Be strict.\n<input>{inputs}</input>\n<output>{outputs}</output>\n"
        "<reference_outputs>{reference_outputs}</reference_outputs>\n"
    )
    third = run(world, cache, judge, assistant_url=candidate, judge_prompt="judge-prompt.txt")
    assert third.outputs["cache-restored-key"] == ""  # another rubric, another prefix
    assert judge.calls == 2 * judged
    assert len(cache.finalized()) == 2


@pytest.mark.parametrize(
    ("legacy", "fault"),
    [
        (False, Fault.error("GetCacheEntryDownloadURL", 500)),
        (False, Fault.error("CreateCacheEntry", 500)),
        (False, Fault.error("FinalizeCacheEntryUpload", 500)),
        (False, Fault.conflict("CreateCacheEntry")),
        (False, Fault.rate_limited("GetCacheEntryDownloadURL", retry_after=None)),
        (True, Fault.error("getCacheEntry", 500)),
        (True, Fault.conflict("reserveCache")),
    ],
    ids=[
        "restore-500",
        "create-500",
        "finalize-500",
        "create-409",
        "restore-429",
        "v1-restore-500",
        "v1-reserve-409",
    ],
)
def test_cache_faults_are_warnings_and_the_gate_is_unchanged(services, candidate, legacy, fault):
    world, cache, judge = services
    with LegacyCacheServer() if legacy else contextlib.nullcontext(cache) as cache:
        cache.inject(fault, fault)  # twice: the client retries once
        done = run(world, cache, judge, assistant_url=candidate)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.outputs["verdict"] == "failed" and done.outputs["regressions"] == "6"
    assert "::warning title=golden-gate cache::judge cache:" in done.stdout
    assert cache.token not in done.stdout.replace(f"::add-mask::{cache.token}", "")
    assert (V1_LINE if legacy else V2_LINE) in done.stdout
    if fault.target in ("GetCacheEntryDownloadURL", "getCacheEntry"):
        # A lookup that failed is said to have failed, with its status: not "no saved verdicts".
        assert "judge cache: could not look up saved verdicts for golden-gate-judge-" in done.stdout
        assert f"{fault.target}: HTTP {fault.status}" in done.stdout
        assert "no saved verdicts" not in done.stdout
        assert "could not look up saved verdicts" in plain(done.summary)
        assert report_of(world)["stats"]["judge_cache"]["restore"] == "failed"
    if fault.status == 409:
        assert "(another job saved it first)" in done.stdout


def test_the_legacy_service_carries_verdicts_between_runs(services, candidate):
    """act, Gitea/Forgejo act_runner and older GHES offer only the v1 service: it is used, and
    the log, the summary and report.json say so."""
    world, _, judge = services
    with LegacyCacheServer() as cache:
        first = run(world, cache, judge, assistant_url=candidate)
        judged = judge.calls
        second = run(world, cache, judge, assistant_url=candidate)

    assert first.returncode == second.returncode == 1, first.stdout + first.stderr
    assert V1_LINE in first.stdout and V1_LINE in second.stdout
    (saved,) = cache.finalized()
    assert f"golden-gate: no saved verdicts for {saved.key.rsplit('-', 2)[0]}-*" in first.stdout
    assert f"to the legacy cache service v1 as {saved.key}" in first.stdout
    assert judged > 0 and judge.calls == judged  # the second run judged nothing
    assert second.outputs["judge-calls"] == "0"
    assert second.outputs["cache-restored-key"] == saved.key
    assert second.outputs["regressions"] == first.outputs["regressions"] == "6"
    service = "legacy cache service v1 (ACTIONS_CACHE_URL)"
    note = f"{service}; restored {judged + judge.preflights} verdicts from {saved.key}"
    assert f"Judge cache: {note}" in plain(second.summary)
    assert report_of(world)["stats"]["judge_cache"] == {
        "service": "v1",
        "restore": "restored",
        "note": note,
    }
    assert cache.ops().count("downloadCache") == 1


def test_without_a_cache_service_the_log_and_summary_say_why(services, candidate):
    world, cache, judge = services
    done = run(world, None, judge, assistant_url=candidate, cache="actions")

    assert done.returncode == 1, done.stdout + done.stderr
    why = "the runner exposes no cache service (neither ACTIONS_RESULTS_URL nor ACTIONS_CACHE_URL)"
    assert f"::warning title=golden-gate cache::cache is 'actions' but {why}; using the" in (
        done.stdout
    )
    line = f"judge cache: directory only — {why}, so verdicts do not outlive this job"
    assert f"golden-gate: {line}" in done.stdout
    assert f"Judge cache: {line.removeprefix('judge cache: ')}" in plain(done.summary)
    assert report_of(world)["stats"]["judge_cache"] == {"note": line.removeprefix("judge cache: ")}
    assert cache.requests == []


def test_corrupt_archive_restores_cold(services, candidate):
    world, cache, judge = services
    run(world, cache, judge, assistant_url=candidate)
    calls = judge.calls
    cache.inject(Fault.corrupt("GetBlob"))
    done = run(world, cache, judge, assistant_url=candidate)
    assert done.returncode == 1
    assert "::warning title=golden-gate cache::judge cache:" in done.stdout
    assert judge.calls == 2 * calls  # judged again, cold, and the gate result is the same
    assert done.outputs["regressions"] == "6"


def test_unknown_cache_mode_is_bad_input(services, candidate):
    world, cache, judge = services
    done = run(world, cache, judge, assistant_url=candidate, cache="s3")
    assert done.returncode == 2
    assert "input 'cache' must be one of auto, actions, directory, off, got 's3'" in done.stdout
    assert judge.calls == 0


def _git(workspace, *args):
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=workspace,
        check=True,
        capture_output=True,
    )


def test_verdicts_committed_by_a_pull_request_are_never_read(world, candidate):
    shutil.copy(baseline_path(), world.workspace / "evals" / "baseline.json")
    # Honest verdicts first, to learn what a forger would compute from public data.
    honest = world.tmp / "honest"
    event = world.event("workflow_dispatch")
    first = world.run("workflow_dispatch", event, assistant_url=candidate, cache_dir=str(honest))
    assert first.returncode == 1 and first.outputs["regressions"] == "6", first.stdout
    judged = int(first.outputs["judge-calls"])
    assert judged > 0
    # The pull request commits a "passed" for every one of its wrong answers.
    planted_outside = world.tmp / "planted-outside"
    for path in honest.glob("??/*.json"):
        entry = json.loads(path.read_text())
        entry["verdict"].update(passed=True, score=True, comment="Looks right.")
        for root in (world.workspace / ".judge-cache", planted_outside):
            (root / path.parent.name).mkdir(parents=True, exist_ok=True)
            (root / path.parent.name / path.name).write_text(json.dumps(entry))
    _git(world.workspace, "init", "-q")
    _git(world.workspace, "add", "-A")
    _git(world.workspace, "commit", "-q", "-m", "forged verdicts")

    by_default = world.run("workflow_dispatch", event, assistant_url=candidate)
    named = world.run("workflow_dispatch", event, assistant_url=candidate, cache_dir=".judge-cache")
    for done in (by_default, named):
        assert done.returncode == 1, done.stdout + done.stderr
        assert done.outputs["regressions"] == "6"
    assert by_default.outputs["judge-calls"] == str(judged)  # every answer judged afresh
    # Refused: no cache at all, so every answer is judged again and nothing comes from it.
    assert named.outputs["judge-calls"] == str(judged) and named.outputs["cache-hits"] == "0"
    assert "git tracks '.judge-cache/" in named.stdout
    # Control: the same entries where no pull request can write them are taken as they are,
    # so only where they are kept the forgery out.
    control = world.run(
        "workflow_dispatch", event, assistant_url=candidate, cache_dir=str(planted_outside)
    )
    assert control.outputs["judge-calls"] == "0"
    assert int(control.outputs["regressions"]) < 6


def test_an_unwritable_cache_directory_is_one_warning_and_the_same_result(world, candidate):
    # A real filesystem refusal that holds for root: a path component is a file (ENOTDIR).
    shutil.copy(baseline_path(), world.workspace / "evals" / "baseline.json")
    (world.tmp / "a-file").write_text("not a directory")
    done = world.run(
        "workflow_dispatch",
        world.event("workflow_dispatch"),
        assistant_url=candidate,
        cache="directory",
        cache_dir=str(world.tmp / "a-file" / "cache"),
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.outputs["verdict"] == "failed" and done.outputs["regressions"] == "6"
    assert done.stdout.count("could not write to the judge cache") == 1
    assert "Traceback" not in done.stderr


def test_a_decompression_bomb_in_the_cache_service_is_a_cold_run(services, candidate):
    world, cache, judge = services
    first = run(world, cache, judge, assistant_url=candidate, cache_max_mb="1")
    calls = judge.calls
    (saved,) = cache.finalized()
    # Newer than the honest save, under the same prefix: 64 MiB of verdict-sized members.
    cache.put_entry(saved.key + "-bomb", saved.version, bombs.gzip_bomb(64 * 1024 * 1024))

    done = run(world, cache, judge, assistant_url=candidate, cache_max_mb="1")

    assert done.returncode == 1, done.stdout + done.stderr
    assert "the cache archive expands beyond 16777216 bytes" in done.stdout
    assert judge.calls == 2 * calls  # cold: judged again
    assert done.outputs["regressions"] == first.outputs["regressions"] == "6"


def test_sigterm_during_the_cache_save_keeps_the_written_results(services, candidate):
    """A job cancelled while verdicts upload: report, comment file, summary and outputs are
    already written, and the step ends with the gate's own exit code, not killed by the signal."""
    import signal
    import time

    world, cache, judge = services
    shutil.rmtree(world.workspace / ".judge-cache", ignore_errors=True)
    cache.inject(Fault.slow("CreateCacheEntry", 20))  # the save hangs here until signalled
    proc, files = world.start(
        "workflow_dispatch",
        world.event("workflow_dispatch"),
        extra_env={
            "ACTIONS_RESULTS_URL": cache.results_url,
            "ACTIONS_RUNTIME_TOKEN": cache.token,
            "OPENAI_API_KEY": "sk-test-key-for-the-fake-judge",
        },
        judge_model="openai:gpt-4.1-mini",
        judge_base_url=judge.base_url,
        assistant_url=candidate,
    )
    try:
        deadline = time.monotonic() + 60
        while "CreateCacheEntry" not in cache.ops() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "CreateCacheEntry" in cache.ops(), "the run never reached the cache save"
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    done = world.finished(proc, stdout, stderr, files)
    assert done.returncode == 1, done.stdout + done.stderr  # the gate failed: 6 regressions
    assert "Traceback" not in done.stderr
    assert "interrupted after the results were written" in done.stdout
    assert done.outputs["verdict"] == "failed" and done.outputs["regressions"] == "6"
    assert "regress" in done.summary.lower()
    assert (world.workspace / "golden-gate" / "report.json").is_file()
    assert (world.workspace / "golden-gate" / "comment.md").is_file()
    assert not cache.finalized()  # the save was cut short, and nothing half-saved remains


def test_the_evaluation_puts_back_the_signal_handlers_it_found(tmp_path):
    """asyncio's remove_signal_handler resets SIGTERM to "die": after an evaluation, the handler
    installed before (SIGTERM -> KeyboardInterrupt, so results and teardown still happen) holds."""
    import signal

    from golden_gate.core.verdict import GateSettings
    from golden_gate.evaluation.response import AssistantSettings
    from golden_gate.pipeline import evaluate_report
    from golden_gate.settings import Settings
    from tests.fakes.assistant_server import AssistantServer

    golden = tmp_path / "g.jsonl"
    golden.write_text('{"id": "a", "question": "Why?", "reference_key_points": ["because"]}\n')

    def handler(signum, frame):
        raise KeyboardInterrupt

    before = signal.signal(signal.SIGTERM, handler)
    try:
        with AssistantServer(default_answer="Because.") as assistant:
            settings = Settings(
                golden=golden,
                target=AssistantSettings(url=assistant.url),
                cache_dir=None,
                progress=False,
                gate=GateSettings(floor=0),  # one item: no floor it could clear
            )
            report = evaluate_report(settings)
        assert len(report.results) == 1
        assert signal.getsignal(signal.SIGTERM) is handler
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGTERM, before)


@pytest.mark.parametrize("legacy", [False, True], ids=["v2", "v1"])
@pytest.mark.parametrize("kind", ["gzip bomb", "200 MB"])
def test_a_huge_lookup_reply_is_a_cold_run_with_its_cause(services, candidate, legacy, kind):
    # The JSON API's reply is read at most MAX_SERVICE_REPLY_BYTES decoded (http_bounds.py).
    from golden_gate.limits import MAX_SERVICE_REPLY_BYTES
    from tests.fakes.judge_server import Behaviour

    world, cache, judge = services
    behaviour = (
        Behaviour.gzip_bomb(256 * 1024 * 1024)
        if kind == "gzip bomb"
        else Behaviour.huge(200 * 1024 * 1024)
    )
    with LegacyCacheServer() if legacy else contextlib.nullcontext(cache) as cache:
        target = "getCacheEntry" if legacy else "GetCacheEntryDownloadURL"
        cache.inject(Fault.hostile(target, behaviour))
        done = run(world, cache, judge, assistant_url=candidate)
    assert done.returncode == 1, done.stdout + done.stderr  # the gate's own verdict, unchanged
    assert done.outputs["regressions"] == "6"
    assert f"the reply is larger than {MAX_SERVICE_REPLY_BYTES} bytes" in done.stdout
    assert report_of(world)["stats"]["judge_cache"]["restore"] == "failed"
    assert "Traceback" not in done.stderr
