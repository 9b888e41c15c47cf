"""Benchmark: carrying 10,000 judge verdicts through the Actions cache service and back.

The fake cache service (tests/fakes/cache_server.py) runs on 127.0.0.1 in this process; the
numbers measure packing, compression, the HTTP round trips and unpacking, not a real network.

    .venv/bin/python bench/cache_bench.py
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from golden_gate.action.cache import entries as ac
from golden_gate.action.cache.archive import available_compression
from golden_gate.action.cache.service_v2 import CacheServiceV2
from golden_gate.core.item_result import TokenUsage, Verdict
from golden_gate.evaluation.cache import VerdictCache
from tests.fakes.cache_server import CacheServer

VERDICTS = 10_000
WORDS = [
    "answer",
    "states",
    "covers",
    "mentions",
    "omits",
    "deadline",
    "refund",
    "policy",
    "seven",
    "days",
    "evicted",
    "entries",
    "cache",
    "key",
    "branch",
    "default",
    "scope",
    "restore",
    "prefix",
    "immutable",
    "version",
    "compression",
    "archive",
]


def comment(i: int) -> str:
    """About 200 characters of judge reasoning, varied like real ones (not one repeated text)."""
    words = [WORDS[(i * 7 + j * 13 + j * j) % len(WORDS)] for j in range(40)]
    text = f"The answer {' '.join(words)}"[:170]
    passed = i % 4 != 0
    return f"{text}. Thus, the score should be: {str(passed).lower()}."


def write_verdicts(directory: Path, count: int) -> int:
    cache = VerdictCache(directory)
    for i in range(count):
        key = cache.key(
            judge_identity='{"model": "openai:gpt-4.1-mini", "prompt": "sha256:0123"}',
            question=f"Question {i}?",
            answer=f"The answer states fact {i}.",
            reference=f"- fact {i}",
        )
        passed = i % 4 != 0
        verdict = Verdict(
            passed=passed,
            score=passed,
            comment=comment(i),
            tokens=TokenUsage(input_tokens=350 + i % 200, output_tokens=60 + i % 40),
            latency_ms=round(400 + (i * 37) % 900 + 0.25, 2),
        )
        cache.put(key, verdict)
    return sum(p.stat().st_size for p in directory.rglob("*.json"))


def bench(compression: str, source: Path, work: Path, server: CacheServer) -> None:
    version = ac.cache_version(compression)
    prefix = ac.key_prefix(f"bench{compression}")
    target = work / f"restored-{compression}"
    with CacheServiceV2(results_url=server.results_url, token=server.token) as service:
        started = time.perf_counter()
        saved = ac.save(service, directory=source, key=ac.save_key(prefix, 1, 1), version=version)
        save_s = time.perf_counter() - started
        started = time.perf_counter()
        restored = ac.restore(service, directory=target, prefix=prefix, version=version)
        restore_s = time.perf_counter() - started
    if not saved.saved or restored.entries != VERDICTS:
        raise SystemExit(f"{compression}: failed: {saved} {restored}")
    print(
        f"{compression:>5}: archive {saved.bytes / 1024:8.1f} KiB "
        f"({saved.bytes / VERDICTS:5.1f} B/verdict)  "
        f"save {save_s * 1000:7.1f} ms  restore {restore_s * 1000:7.1f} ms"
    )


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="golden-gate-cache-bench-") as tmp:
        work = Path(tmp)
        source = work / "verdicts"
        started = time.perf_counter()
        raw = write_verdicts(source, VERDICTS)
        print(
            f"{VERDICTS} verdicts: {raw / 1024:.1f} KiB of JSON ({raw / VERDICTS:.0f} B/verdict), "
            f"written in {(time.perf_counter() - started) * 1000:.0f} ms"
        )
        compressions = ["gzip"]
        if available_compression() == "zstd":
            compressions.append("zstd")
            how = "zstd binary" if shutil.which("zstd") else "zstandard module"
            print(f"zstd via the {how}")
        else:
            print("zstd: not available here (neither the binary nor the module)")
        with CacheServer() as server:
            for compression in compressions:
                bench(compression, source, work, server)


if __name__ == "__main__":
    main()
