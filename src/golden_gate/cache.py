"""The verdict cache: content-addressed judge verdicts on disk, one JSON file a key.

A key is the sha256 of everything that decides a verdict (the judge's identity, question,
answer, reference), so an unchanged answer is never judged twice and any change misses.
Only successful verdicts are stored: callers put a verdict only after the judge returned
one, never for a failed call (an error is not a "no" and must be retried next time).
Writes are atomic (temporary file in the same directory, then rename), so concurrent
writers, in threads or processes, leave either no file or a whole one.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from pydantic import ValidationError

from golden_gate.report import Verdict

_HEX = frozenset("0123456789abcdef")


class VerdictCache:
    """Verdicts under `directory/<2 hex>/<64 hex>.json`; `directory=None` disables caching."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = Path(directory) if directory is not None else None
        self.hits = 0
        self.misses = 0
        self.written = 0
        # Keys this run looked up or stored: what is worth saving for the next run.
        self.used_keys: set[str] = set()

    @property
    def enabled(self) -> bool:
        return self.directory is not None

    @staticmethod
    def key(*, judge_identity: str, question: str, answer: str, reference: str) -> str:
        """sha256 hex of the JSON list of the parts: unambiguous whatever the parts contain."""
        parts = ["golden-gate/verdict/1", judge_identity, question, answer, reference]
        encoded = json.dumps(parts, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(encoded.encode("utf-8")).hexdigest()

    def path(self, key: str) -> Path:
        if self.directory is None:
            raise ValueError("the verdict cache is disabled")
        if len(key) != 64 or not _HEX.issuperset(key):
            raise ValueError(f"not a verdict cache key: {key!r}")
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> Verdict | None:
        """The stored verdict (marked `cached`), or None; an unreadable entry is a miss."""
        if self.directory is None:
            self.misses += 1
            return None
        self.used_keys.add(key)
        try:
            text = self.path(key).read_text(encoding="utf-8")
            verdict = Verdict.model_validate_json(text)
        except (OSError, UnicodeDecodeError, ValidationError, ValueError):
            self.misses += 1
            return None
        self.hits += 1
        return verdict.model_copy(update={"cached": True})

    def put(self, key: str, verdict: Verdict) -> None:
        """Store a successful verdict under `key` (a no-op when disabled)."""
        if self.directory is None:
            return
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        text = verdict.model_copy(update={"cached": False}).model_dump_json(exclude_none=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{key[:8]}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            # No fsync: a torn entry after a crash is ignored as a miss, and this runs per verdict.
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self.used_keys.add(key)
        self.written += 1
