"""The verdict cache: content-addressed keys, atomic files, corrupt or forged entries ignored,
failed writes and concurrent pruners survived."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
from pathlib import Path

import pytest

from golden_gate.core.item_result import TokenUsage, Verdict
from golden_gate.evaluation.cache import VerdictCache

PARTS = {
    "judge_identity": '{"judge": "openai:gpt-4.1-mini"}',
    "question": "How long are cached verdicts kept?",
    "answer": "Seven days after their last use.",
    "reference": "- Entries unused for 7 days are evicted",
}
VERDICT = Verdict(
    passed=True,
    score=True,
    comment="Every key point is covered.",
    tokens=TokenUsage(input_tokens=120, output_tokens=14),
    latency_ms=812.5,
)


def test_the_key_is_sha256_hex_and_stable() -> None:
    key = VerdictCache.key(**PARTS).hex

    assert len(key) == 64 and set(key) <= set("0123456789abcdef")
    assert VerdictCache(None).key(**PARTS).hex == key


@pytest.mark.parametrize("part", sorted(PARTS))
def test_the_key_changes_when_any_part_changes(part: str) -> None:
    changed = {**PARTS, part: PARTS[part] + " "}

    assert VerdictCache.key(**changed).hex != VerdictCache.key(**PARTS).hex


def test_the_key_is_unambiguous_across_part_boundaries() -> None:
    a = VerdictCache.key(judge_identity="j", question="ab", answer="c", reference="r")
    b = VerdictCache.key(judge_identity="j", question="a", answer="bc", reference="r")

    assert a.hex != b.hex


def test_put_then_get_returns_the_verdict_marked_cached(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path)
    key = cache.key(**PARTS)

    assert cache.get(key) is None
    cache.put(key, VERDICT)
    cached = cache.get(key)

    assert cached == VERDICT.model_copy(update={"cached": True})
    assert (cache.hits, cache.misses, cache.written) == (1, 1, 1)
    assert cache.used_keys == {key.hex}
    assert (tmp_path / key.hex[:2] / f"{key.hex}.json").is_file()
    assert list(tmp_path.rglob("*.tmp")) == []


def test_entries_persist_for_the_next_run(tmp_path: Path) -> None:
    key = VerdictCache.key(**PARTS)
    VerdictCache(tmp_path).put(key, VERDICT.model_copy(update={"cached": True}))

    later = VerdictCache(tmp_path)
    cached = later.get(key)

    assert cached is not None and cached.cached is True
    assert cached.model_copy(update={"cached": False}) == VERDICT
    assert (later.hits, later.misses, later.written, later.used_keys) == (1, 0, 0, {key.hex})


@pytest.mark.parametrize(
    "content",
    [b"", b"{not json", b'{"comment": "no passed field"}', b"[1, 2]", b"\xff\xfe"],
    ids=["empty", "truncated", "not-a-verdict", "list", "not-utf8"],
)
def test_a_corrupt_entry_is_ignored_as_a_miss(tmp_path: Path, content: bytes) -> None:
    cache = VerdictCache(tmp_path)
    key = cache.key(**PARTS)
    path = cache.path(key)
    path.parent.mkdir()
    path.write_bytes(content)

    assert cache.get(key) is None
    assert (cache.hits, cache.misses) == (0, 1)

    cache.put(key, VERDICT)  # the next successful verdict replaces it
    assert cache.get(key) == VERDICT.model_copy(update={"cached": True})


def test_a_disabled_cache_misses_and_stores_nothing(tmp_path: Path) -> None:
    cache = VerdictCache(None)
    key = cache.key(**PARTS)

    cache.put(key, VERDICT)

    assert cache.get(key) is None
    assert not cache.enabled
    assert (cache.hits, cache.misses, cache.written) == (0, 1, 0)
    assert list(tmp_path.iterdir()) == []


def test_a_malformed_key_is_refused(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path)

    with pytest.raises(ValueError, match="not a verdict cache key"):
        cache.path("../escape")


def _write_many(directory: str, writer: str, count: int) -> int:
    """Worker: write shared keys (both writers) and own keys, reading each back."""
    cache = VerdictCache(Path(directory))
    torn = 0
    for round_ in range(3):
        for n in range(count):
            for name in (f"shared-{n}", f"{writer}-{n}"):
                key = cache.key(judge_identity="j", question=name, answer="a", reference="r")
                cache.put(key, VERDICT.model_copy(update={"comment": f"{writer} {round_}"}))
                if cache.get(key) is None:
                    torn += 1
    return torn


def test_concurrent_writers_in_two_processes_leave_valid_files(tmp_path: Path) -> None:
    count = 60
    context = multiprocessing.get_context("spawn")
    with context.Pool(2) as pool:
        results = [pool.apply_async(_write_many, (str(tmp_path), writer, count)) for writer in "AB"]
        torn = [r.get(timeout=60) for r in results]

    assert torn == [0, 0]
    cache = VerdictCache(tmp_path)
    for name in [f"{p}-{n}" for p in ("shared", "A", "B") for n in range(count)]:
        key = cache.key(judge_identity="j", question=name, answer="a", reference="r")
        verdict = cache.get(key)
        assert verdict is not None, name
        writer = name.split("-")[0]
        assert verdict.comment.split()[0] in ("AB" if writer == "shared" else writer)
    assert cache.misses == 0
    assert len(list(tmp_path.glob("??/*.json"))) == 3 * count
    assert list(tmp_path.rglob("*.tmp")) == []


# -- an entry is a verdict only for the material it records -----------------------------------


def _entry(cache: VerdictCache, key) -> dict:
    return json.loads(cache.path(key).read_text(encoding="utf-8"))


def test_an_entry_records_its_key_material(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path)
    key = cache.key(**PARTS)
    cache.put(key, VERDICT)

    recorded = _entry(cache, key)["key"]

    assert recorded["question"] == PARTS["question"] and recorded["answer"] == PARTS["answer"]
    assert recorded["reference"] == PARTS["reference"]
    assert (
        recorded["judge_identity_sha256"]
        == hashlib.sha256(PARTS["judge_identity"].encode()).hexdigest()
    )


FORGERIES = {
    # A "pass" for another judge (e.g. a lenient prompt) copied under this judge's key.
    "another judge": lambda e: e["key"].update(judge_identity_sha256="0" * 64),
    # A "pass" for a right answer copied under the key of a wrong one.
    "another answer": lambda e: e["key"].update(answer="The right answer."),
    "no material": lambda e: e.pop("key"),
    "material not text": lambda e: e["key"].update(question=["How", "long"]),
    "extra material": lambda e: e["key"].update(tenant="other"),
    "older format": lambda e: e.update(format="golden-gate/verdict/1"),
    "a bare verdict": lambda e: [e.pop(k) for k in list(e) if k != "verdict"],
}


@pytest.mark.parametrize("forge", FORGERIES.values(), ids=FORGERIES.keys())
def test_an_entry_that_is_not_what_its_name_claims_is_a_warned_miss(tmp_path: Path, forge) -> None:
    warnings: list[str] = []
    cache = VerdictCache(tmp_path, warn=warnings.append)
    key = cache.key(**PARTS)
    cache.put(key, VERDICT.model_copy(update={"passed": False, "score": False}))
    entry = _entry(cache, key)
    entry["verdict"]["passed"] = True
    forge(entry)
    cache.path(key).write_text(json.dumps(entry))
    other = cache.key(**{**PARTS, "question": "Another question?"})
    cache.path(other).parent.mkdir(exist_ok=True)
    cache.path(other).write_text(json.dumps(entry))

    assert cache.get(key) is None
    assert cache.get(other) is None
    assert (cache.hits, cache.misses, cache.rejected) == (0, 2, 2)
    assert len(warnings) == 1 and "does not match" in warnings[0]  # once, not per entry


# -- a failed write is one warning, never a failed run -----------------------------------------


def _put_under_a_file_size_limit(directory: str, count: int) -> dict:
    """Child process: every write to a file fails for real (RLIMIT_FSIZE 0, EFBIG)."""
    import resource
    import signal

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a failed write(2), not a killed process
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, resource.RLIM_INFINITY))
    warnings: list[str] = []
    cache = VerdictCache(Path(directory), warn=warnings.append)
    keys = [cache.key(**{**PARTS, "answer": f"answer {n}"}) for n in range(count)]
    for key in keys:
        cache.put(key, VERDICT)
    return {
        "warnings": warnings,
        "written": cache.written,
        "hits": sum(cache.get(key) is not None for key in keys),
        "files": sorted(str(p) for p in Path(directory).rglob("*") if p.is_file()),
    }


def test_a_write_the_filesystem_refuses_is_one_warning_and_no_crash(tmp_path: Path) -> None:
    # Tests run as root, so a read-only directory would not refuse; a file size limit does,
    # and the kernel applies it to root too: each write(2) to a file fails with EFBIG.
    context = multiprocessing.get_context("spawn")
    with context.Pool(1) as pool:
        result = pool.apply_async(_put_under_a_file_size_limit, (str(tmp_path), 20)).get(60)

    assert result["written"] == 0 and result["hits"] == 0
    assert len(result["warnings"]) == 1
    assert "could not write to the judge cache" in result["warnings"][0]
    assert "File too large" in result["warnings"][0]
    assert result["files"] == []  # no temporary file left behind


def test_a_cache_directory_that_cannot_exist_is_one_warning(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a directory")
    warnings: list[str] = []
    cache = VerdictCache(tmp_path / "a-file" / "cache", warn=warnings.append)
    for n in range(5):
        cache.put(cache.key(**{**PARTS, "answer": f"answer {n}"}), VERDICT)

    assert cache.written == 0 and cache.write_failures == 1
    assert len(warnings) == 1 and "Not a directory" in warnings[0]


# -- writers, readers and a pruner in several processes ------------------------------------------


def _hammer(directory: str, writer: str, seconds: float) -> tuple[int, list[str]]:
    """Worker: write, read back, and (writer "P") prune everything and pack, until time is up."""
    import time
    import traceback

    from golden_gate.action.cache import archive as cache_archive

    problems: list[str] = []
    cache = VerdictCache(Path(directory), warn=problems.append)
    rounds = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if writer == "P":
                cache_archive.prune(Path(directory), keep=set(), cap_bytes=0)
                archive = Path(directory).with_name(f"pack-{rounds % 2}.tar.gz")
                cache_archive.pack(Path(directory), archive, "gzip")
            else:
                for n in range(20):
                    key = cache.key(judge_identity="j", question=f"q{n}", answer="a", reference="r")
                    cache.put(key, VERDICT.model_copy(update={"comment": writer}))
                    got = cache.get(key)  # a hit, or a miss when pruned meanwhile
                    if got is not None and got.comment not in "ABC":
                        problems.append(f"read a verdict no writer wrote: {got.comment!r}")
        except Exception:
            problems.append(traceback.format_exc())
        rounds += 1
    return rounds, problems


def test_three_writers_and_a_pruner_in_four_processes_never_fail(tmp_path: Path) -> None:
    directory = tmp_path / "cache"
    context = multiprocessing.get_context("spawn")
    with context.Pool(4) as pool:
        jobs = [pool.apply_async(_hammer, (str(directory), w, 3.0)) for w in "ABCP"]
        results = [job.get(timeout=120) for job in jobs]

    assert [problems for _, problems in results] == [[], [], [], []]
    assert all(rounds > 0 for rounds, _ in results)
    assert list(directory.rglob("*.tmp")) == []
    cache = VerdictCache(directory)
    for path in directory.glob("??/*.json"):  # what survived is whole and verifiable
        entry = json.loads(path.read_text())
        assert (
            entry["key"]["question"].startswith("q")
            and path.stem
            == cache.key(
                judge_identity="j", question=entry["key"]["question"], answer="a", reference="r"
            ).hex
        )


def test_an_answer_holding_a_registered_secret_is_never_stored(tmp_path):
    from golden_gate import redaction
    from golden_gate.core.item_result import Verdict
    from golden_gate.evaluation.cache import VerdictCache, VerdictKey

    redaction.register("sk-SECRET-abcdef123456")
    warnings = []
    cache = VerdictCache(tmp_path, warn=warnings.append)
    key = VerdictKey(
        judge_identity_sha256="0" * 64,
        question="q?",
        answer="Echo: Authorization: Bearer sk-SECRET-abcdef123456",
        reference="- r",
    )
    cache.put(key, Verdict(passed=True, comment="ok"))
    assert not list(tmp_path.rglob("*.json")) and len(warnings) == 1
    clean = VerdictKey(judge_identity_sha256="0" * 64, question="q?", answer="a", reference="- r")
    cache.put(clean, Verdict(passed=True, comment="sk-SECRET-abcdef123456 again"))
    assert not list(tmp_path.rglob("*.json"))  # nor a judge comment that echoes one
