"""The verdict cache: content-addressed keys, atomic files, corrupt entries ignored."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

from golden_gate.cache import VerdictCache
from golden_gate.report import TokenUsage, Verdict

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
    key = VerdictCache.key(**PARTS)

    assert len(key) == 64 and set(key) <= set("0123456789abcdef")
    assert VerdictCache(None).key(**PARTS) == key


@pytest.mark.parametrize("part", sorted(PARTS))
def test_the_key_changes_when_any_part_changes(part: str) -> None:
    changed = {**PARTS, part: PARTS[part] + " "}

    assert VerdictCache.key(**changed) != VerdictCache.key(**PARTS)


def test_the_key_is_unambiguous_across_part_boundaries() -> None:
    a = VerdictCache.key(judge_identity="j", question="ab", answer="c", reference="r")
    b = VerdictCache.key(judge_identity="j", question="a", answer="bc", reference="r")

    assert a != b


def test_put_then_get_returns_the_verdict_marked_cached(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path)
    key = cache.key(**PARTS)

    assert cache.get(key) is None
    cache.put(key, VERDICT)
    cached = cache.get(key)

    assert cached == VERDICT.model_copy(update={"cached": True})
    assert (cache.hits, cache.misses, cache.written) == (1, 1, 1)
    assert cache.used_keys == {key}
    assert (tmp_path / key[:2] / f"{key}.json").is_file()
    assert list(tmp_path.rglob("*.tmp")) == []


def test_entries_persist_for_the_next_run(tmp_path: Path) -> None:
    key = VerdictCache.key(**PARTS)
    VerdictCache(tmp_path).put(key, VERDICT.model_copy(update={"cached": True}))

    later = VerdictCache(tmp_path)
    cached = later.get(key)

    assert cached is not None and cached.cached is True
    assert cached.model_copy(update={"cached": False}) == VERDICT
    assert (later.hits, later.misses, later.written, later.used_keys) == (1, 0, 0, {key})


@pytest.mark.parametrize(
    "content",
    [b"", b"{not json", b'{"comment": "no passed field"}', b"[1, 2]", b"\xff\xfe"],
    ids=["empty", "truncated", "not-a-verdict", "list", "not-utf8"],
)
def test_a_corrupt_entry_is_ignored_as_a_miss(tmp_path: Path, content: bytes) -> None:
    cache = VerdictCache(tmp_path)
    key = cache.key(**PARTS)
    path = tmp_path / key[:2] / f"{key}.json"
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
        cache.put("../escape", VERDICT)
    assert cache.get("../escape") is None


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
