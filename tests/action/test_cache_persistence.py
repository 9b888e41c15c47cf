"""What the log says about the judge cache: which service carried it, or why none did, and what
the restore found (a miss is not a failed lookup), on both services and on none."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from golden_gate.action.cache.persistence import PersistedCache, persisted_verdicts, prefix_for
from golden_gate.core.item_result import Verdict
from golden_gate.core.report import JudgeCacheStats
from tests.cache_backends import KINDS, Backend, running
from tests.fakes.cache_common import Fault

IDENTITY = "openai:gpt-4.1-mini|prompt|scoring"
PREFIX = prefix_for(IDENTITY)
DESCRIPTIONS = {
    "v2": "Actions cache service v2 (ACTIONS_RESULTS_URL)",
    "v1": "legacy cache service v1 (ACTIONS_CACHE_URL)",
}
NEITHER = "the runner exposes no cache service (neither ACTIONS_RESULTS_URL nor ACTIONS_CACHE_URL)"


@pytest.fixture(params=KINDS)
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    with running(request.param) as backend:
        yield backend


def run(
    directory: Path, env: dict[str, str], *, mode: str = "actions", judged: int = 1, run_id: int = 1
) -> PersistedCache:
    """One run: restore, judge `judged` new answers, save."""
    with persisted_verdicts(
        directory,
        mode=mode,
        env={**env, "GITHUB_RUN_ID": str(run_id)},
        identity=IDENTITY,
        attempt="1",
        cap_bytes=10**7,
    ) as persisted:
        cache = persisted.cache
        for n in range(judged):
            key = cache.key(judge_identity=IDENTITY, question=f"q{n}", answer="a", reference="r")
            if cache.get(key) is None:
                cache.put(key, Verdict(passed=True))
    return persisted


def test_the_log_names_the_service_and_a_miss_then_a_restore(
    tmp_path: Path, backend: Backend, capsys: pytest.CaptureFixture[str]
) -> None:
    service = DESCRIPTIONS[backend.kind]
    first = run(tmp_path / "first", backend.env())
    out = capsys.readouterr().out
    assert f"golden-gate: judge cache: {service}\n" in out
    assert f"golden-gate: no saved verdicts for {PREFIX}*\n" in out
    assert "::warning" not in out
    assert f"::add-mask::{backend.server.token}" in out
    assert first.stats() == JudgeCacheStats(
        service=backend.kind, restore="miss", note=f"{service}; no saved verdicts for {PREFIX}*"
    )
    assert first.saved_key == f"{PREFIX}1-1"

    second = run(tmp_path / "second", backend.env(), run_id=2)
    out = capsys.readouterr().out
    assert f"golden-gate: restored 1 verdicts from {PREFIX}1-1\n" in out
    assert second.stats() == JudgeCacheStats(
        service=backend.kind,
        restore="restored",
        note=f"{service}; restored 1 verdicts from {PREFIX}1-1",
    )
    assert "nothing new was judged; the judge cache is not saved" in out


def test_a_failed_lookup_is_a_warning_and_not_called_a_miss(
    tmp_path: Path, backend: Backend, capsys: pytest.CaptureFixture[str]
) -> None:
    backend.server.inject(*[Fault.error(backend.op("lookup"), 500)] * 2)
    persisted = run(tmp_path / "cache", backend.env(), judged=0)
    out = capsys.readouterr().out

    assert "no saved verdicts" not in out
    lookup = backend.op("lookup")
    assert (
        "::warning title=golden-gate cache::judge cache: could not look up saved verdicts for "
        f"{PREFIX}*: {lookup}: HTTP 500"
    ) in out
    assert out.count("; continuing without them.") == 1
    assert persisted.restore == "failed"
    assert persisted.note and persisted.note.startswith(
        f"{DESCRIPTIONS[backend.kind]}; could not look up saved verdicts for {PREFIX}*: "
    )


def test_the_secret_path_of_acts_cache_url_is_masked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with running("v1", check_token=False) as backend:
        run(tmp_path / "cache", {"ACTIONS_CACHE_URL": backend.url}, judged=0)  # as act gives it
        path_token = backend.server.path_token  # type: ignore[union-attr]
    out = capsys.readouterr().out
    assert f"::add-mask::{path_token}" in out
    note = "legacy cache service v1 (ACTIONS_CACHE_URL, no ACTIONS_RUNTIME_TOKEN)"
    assert f"golden-gate: judge cache: {note}\n" in out


@pytest.mark.parametrize(
    ("env", "inside", "note"),
    [
        ({}, True, f"directory only — {NEITHER}, so verdicts do not outlive this job"),
        (
            {"ACTIONS_RESULTS_URL": "http://127.0.0.1:9/"},
            True,
            "directory only — ACTIONS_RUNTIME_TOKEN is missing, and the v2 service at "
            "ACTIONS_RESULTS_URL needs it, so verdicts do not outlive this job",
        ),
        (
            {},
            False,
            f"directory only — {NEITHER}, so verdicts outlive this job only if a step of yours "
            "keeps {directory}",
        ),
    ],
    ids=["no service", "no token", "a directory of the user's"],
)
def test_without_a_service_the_log_says_why_and_for_how_long(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    env: dict[str, str],
    inside: bool,
    note: str,
) -> None:
    temp = tmp_path / "runner_temp"
    directory = temp / "golden-gate-judge-cache" if inside else tmp_path / "mine"
    for mode in ("actions", "directory"):  # `auto`/`actions` fall back to the directory
        persisted = run(directory, {**env, "RUNNER_TEMP": str(temp)}, mode=mode)
        expected = note.format(directory=directory)
        assert persisted.stats() == JudgeCacheStats(note=expected)
        assert f"golden-gate: judge cache: {expected}\n" in capsys.readouterr().out


def test_the_directory_by_choice_is_said_to_be_the_users(
    tmp_path: Path, backend: Backend, capsys: pytest.CaptureFixture[str]
) -> None:
    env = {**backend.env(), "RUNNER_TEMP": str(tmp_path / "temp")}
    default = run(tmp_path / "temp" / "golden-gate-judge-cache", env, mode="directory")
    mine = run(tmp_path / "mine", env, mode="directory")

    why = "directory only — the input cache is 'directory', so verdicts"
    assert default.stats() == JudgeCacheStats(note=f"{why} do not outlive this job")
    assert mine.stats() == JudgeCacheStats(
        note=f"{why} outlive this job only if a step of yours keeps {tmp_path / 'mine'}"
    )
    assert backend.server.requests == []
    assert f"golden-gate: judge cache: {why} do not outlive this job\n" in capsys.readouterr().out


def test_no_cache_says_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    persisted = run(tmp_path / "cache", {}, mode="off")
    assert persisted.stats() is None
    assert "judge cache" not in capsys.readouterr().out
