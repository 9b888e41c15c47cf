"""The verdict cache: content-addressed judge verdicts on disk, one JSON file a key.

A key is the sha256 of everything that decides a verdict (the judge's identity, question,
answer, reference), so an unchanged answer is never judged twice and any change misses.
Each entry also records that key material, and a read checks it: an entry whose material does
not hash to its file name or is not what was asked is ignored (a miss and a warning), never a
verdict. Only successful verdicts are stored (an error is not a "no" and must be retried).

The cache is an optimisation, so it never stops a run: a write that fails (a full disk, a
read-only directory) is one warning and the run goes on uncached. Writes are atomic (a uniquely
named temporary file in the same directory, then a rename) and tolerate a pruner removing a
shard directory meanwhile, so writers and pruners in several processes leave whole files.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, fields
from functools import cached_property
from pathlib import Path

from pydantic import ValidationError

from golden_gate import redaction
from golden_gate.core.item_result import Verdict
from golden_gate.files import mkstemp_readable

_HEX = frozenset("0123456789abcdef")
FORMAT = "golden-gate/verdict/2"
# A pruner may remove an empty shard between our mkdir and our write: try again, a few times.
_WRITE_ATTEMPTS = 5


@dataclass(frozen=True)
class VerdictKey:
    """What a verdict was computed from; `hex` (its sha256) names the cache entry."""

    judge_identity_sha256: str
    question: str
    answer: str
    reference: str

    def material(self) -> dict[str, str]:
        """The fields by name, in order (`asdict` without its deep copy: they are strings)."""
        return {name: getattr(self, name) for name in _KEY_FIELDS}

    @cached_property
    def hex(self) -> str:
        parts = [FORMAT, *self.material().values()]
        # A JSON list is unambiguous whatever the parts contain.
        encoded = json.dumps(parts, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(encoded.encode("utf-8")).hexdigest()

    def __str__(self) -> str:
        return self.hex


_KEY_FIELDS = tuple(field.name for field in fields(VerdictKey))


def ensure_dir(path: Path) -> None:
    """mkdir -p that survives another process creating or removing the same directory."""
    for _ in range(_WRITE_ATTEMPTS):
        try:
            path.mkdir(parents=True, exist_ok=True)
            return
        except FileExistsError:
            # It existed, then a pruner removed it before mkdir could check: try again.
            continue
    path.mkdir(parents=True, exist_ok=True)


def _stderr_warning(message: str) -> None:
    print(f"golden-gate: warning: {message}", file=sys.stderr, flush=True)


class VerdictCache:
    """Verdicts under `directory/<2 hex>/<64 hex>.json`; `directory=None` disables caching.

    `warn` receives at most one message per kind of trouble (failed writes, forged or
    mismatched entries), however many items hit it.
    """

    def __init__(
        self, directory: Path | None, *, warn: Callable[[str], None] = _stderr_warning
    ) -> None:
        self.directory = Path(directory) if directory is not None else None
        self.warn = warn
        self.hits = 0
        self.misses = 0
        self.written = 0
        self.rejected = 0  # entries that were not what their name claims: never used
        self.write_failures = 0
        self.secret_skips = 0  # verdicts not stored because the material holds a secret
        # Keys this run looked up or stored: what is worth saving for the next run.
        self.used_keys: set[str] = set()

    @property
    def enabled(self) -> bool:
        return self.directory is not None

    @staticmethod
    def key(*, judge_identity: str, question: str, answer: str, reference: str) -> VerdictKey:
        # The identity (model, full prompt, scoring) is long and the same for every item.
        identity = hashlib.sha256(judge_identity.encode("utf-8")).hexdigest()
        return VerdictKey(identity, question, answer, reference)

    def path(self, key: VerdictKey | str) -> Path:
        name = key.hex if isinstance(key, VerdictKey) else key
        if self.directory is None:
            raise ValueError("the verdict cache is disabled")
        if len(name) != 64 or not _HEX.issuperset(name):
            raise ValueError(f"not a verdict cache key: {name!r}")
        return self.directory / name[:2] / f"{name}.json"

    def get(self, key: VerdictKey) -> Verdict | None:
        """The stored verdict (marked `cached`), or None; an unreadable entry is a miss."""
        if self.directory is None:
            self.misses += 1
            return None
        self.used_keys.add(key.hex)
        try:
            entry = json.loads(self.path(key).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            self.misses += 1  # absent, or torn by a crash: the next verdict replaces it
            return None
        verdict = self._verified(entry, key)
        if verdict is None:
            self.misses += 1
            self.rejected += 1
            if self.rejected == 1:
                self.warn(
                    f"ignored a judge cache entry in {self.directory} that does not match the "
                    "answer it is named for (forged, from another judge, or an older format); "
                    "the answer is judged afresh"
                )
            return None
        self.hits += 1
        return verdict.model_copy(update={"cached": True})

    def holds(self, key: VerdictKey) -> bool:
        """Whether a verified verdict for `key` is stored; not counted as a hit or a miss (the
        judge preflight's look: the judge answered this very request before)."""
        if self.directory is None:
            return False
        try:
            entry = json.loads(self.path(key).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            return False
        if self._verified(entry, key) is None:
            return False
        self.used_keys.add(key.hex)  # kept by the cache's pruning like any verdict used
        return True

    @staticmethod
    def _verified(entry: object, key: VerdictKey) -> Verdict | None:
        """The entry's verdict when it records exactly `key`'s material, else None."""
        if not isinstance(entry, dict) or entry.get("format") != FORMAT:
            return None
        material = entry.get("key")
        try:
            recorded = VerdictKey(**material) if isinstance(material, dict) else None
            verdict = Verdict.model_validate(entry.get("verdict"))
        except (TypeError, ValidationError):
            return None
        if recorded is None or any(not isinstance(v, str) for v in recorded.material().values()):
            return None
        score = verdict.score
        if isinstance(score, float) and not math.isfinite(score):
            return None  # no judge's verdict: written by something else
        # Equal material implies the same hash; both are checked so neither can be skipped.
        if recorded.hex != key.hex or recorded != key:
            return None
        return verdict

    def put(self, key: VerdictKey, verdict: Verdict) -> None:
        """Store a successful verdict (a no-op when disabled); a failed write is a warning."""
        if self.directory is None or self.write_failures:
            return
        if any(redaction.present(text) for text in (*key.material().values(), verdict.comment)):
            # The entry must keep its material to be verifiable, and cache archives are uploaded:
            # an answer that holds a registered secret is judged again rather than stored.
            self.secret_skips += 1
            if self.secret_skips == 1:
                self.warn("an answer holding a secret was not cached (it is judged each run)")
            return
        path = self.path(key)
        entry = {
            "format": FORMAT,
            "key": key.material(),
            "verdict": verdict.model_copy(update={"cached": False}).model_dump(exclude_none=True),
        }
        text = json.dumps(entry, ensure_ascii=False, separators=(",", ":"))
        problem: OSError = OSError("the cache directory keeps vanishing")
        for _ in range(_WRITE_ATTEMPTS):
            try:
                _write_atomic(path, text)
            except (FileNotFoundError, FileExistsError) as exc:
                problem = exc  # the shard was pruned meanwhile: try again
                continue
            except OSError as exc:
                problem = exc
                break
            self.used_keys.add(key.hex)
            self.written += 1
            return
        self._write_failed(problem)

    def _write_failed(self, exc: OSError) -> None:
        self.write_failures += 1
        detail = exc.strerror or type(exc).__name__
        self.warn(
            f"could not write to the judge cache {self.directory} ({detail}); "
            "the run goes on, and its new verdicts are not cached"
        )


def _write_atomic(path: Path, text: str) -> None:
    prefix = f".{path.name[:8]}."
    # An ordinary file's mode, not mkstemp's 0600: a later step (another uid) saves the cache.
    try:
        fd, tmp = mkstemp_readable(path.parent, prefix)
    except FileNotFoundError:  # the shard's first entry (mkdir on every write cost a syscall)
        ensure_dir(path.parent)
        fd, tmp = mkstemp_readable(path.parent, prefix)
    try:
        try:
            data = memoryview(text.encode("utf-8"))
            while data:  # one write for an entry of a few KiB; a short write goes on
                data = data[os.write(fd, data) :]
        finally:
            os.close(fd)
        # No fsync: a torn entry after a crash is ignored as a miss, and this runs per verdict.
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
