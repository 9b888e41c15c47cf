"""Carrying the verdict cache from one workflow run to the next.

`actions`: restore the newest entry of this judge (model, prompt, scoring) from the cache service
the runner exposes (v2 or the legacy v1, see `entries.choose_service`) before evaluating,
save a new one after, also when the gate failed, and only when something new was judged.
`directory`: the user's own `actions/cache` step persists the directory. `off`: no cache at all.
The log says which service was used, or why none was, and what the restore found; the same line
is kept for the job summary and report.json (`PersistedCache.stats`).
Nothing here can fail the gate: every cache problem is a warning and the run goes on cold.
A directory a pull request could have written (see `cache_location`) is not used at all.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from golden_gate import runner
from golden_gate.evaluation.cache import VerdictCache

if TYPE_CHECKING:
    from golden_gate.action.cache.entries import RestoreResult
    from golden_gate.core.report import CacheServiceKind, JudgeCacheStats, RestoreStatus


@dataclass
class PersistedCache:
    cache: VerdictCache
    mode: str
    service: CacheServiceKind | None = None
    restore: RestoreStatus | None = None
    restored_key: str | None = None
    saved_key: str | None = None
    # What the log said of where verdicts are kept and what the restore found; None when off.
    note: str | None = None
    warnings: list[str] = field(default_factory=list)

    def stats(self) -> JudgeCacheStats | None:
        from golden_gate.core.report import JudgeCacheStats

        if self.note is None:
            return None
        return JudgeCacheStats(service=self.service, restore=self.restore, note=self.note)


def prefix_for(identity: str) -> str:
    from golden_gate.action.cache.entries import key_prefix

    # A changed model, prompt or scoring config is another prefix: it starts cold by design.
    return key_prefix(hashlib.sha256(identity.encode("utf-8")).hexdigest()[:16])


def _warn(persisted: PersistedCache, message: str | None) -> None:
    if message:
        persisted.warnings.append(message)
        runner.warning(f"judge cache: {message}", title="golden-gate cache")


def _say(persisted: PersistedCache, note: str) -> None:
    persisted.note = note
    print(f"golden-gate: judge cache: {note}")


def _directory_only(directory: Path, env: Mapping[str, str]) -> str:
    """Why the directory alone keeps the verdicts, and for how long."""
    from golden_gate.action.cache.entries import choose_service

    choice = choose_service(env)
    why = "the input cache is 'directory'" if choice.kind is not None else choice.why
    temp = env.get("RUNNER_TEMP", "").strip()
    if temp and Path(temp).absolute() in Path(directory).absolute().parents:
        lasts = "verdicts do not outlive this job"
    else:
        lasts = f"verdicts outlive this job only if a step of yours keeps {directory}"
    return f"directory only — {why}, so {lasts}"


def _restore_outcome(restored: RestoreResult, prefix: str) -> str:
    if restored.status == "restored":
        return f"restored {restored.entries} verdicts from {restored.restored_key}"
    if restored.status == "miss":
        return f"no saved verdicts for {prefix}*"
    return (restored.warning or "the restore failed").rstrip(".")


@contextmanager
def persisted_verdicts(
    directory: Path | None,
    *,
    mode: str,
    env: Mapping[str, str],
    identity: str,
    attempt: str,
    cap_bytes: int,
    workspace: Path | None = None,
) -> Iterator[PersistedCache]:
    """A VerdictCache restored before the block and saved after it (mode `actions`).

    With `workspace` (the checkout), a `directory` inside it that git does not vouch for is
    refused with a warning and the run judges everything afresh.
    """
    from golden_gate.action.cache.archive import prune, unpack_limits
    from golden_gate.action.cache.entries import (
        SERVICE_NAMES,
        choose_service,
        restore,
        save,
        save_key,
    )
    from golden_gate.evaluation.cache_location import untrusted_reason

    refused = None
    if mode != "off" and directory is not None and workspace is not None:
        refused = untrusted_reason(directory, workspace=workspace)
    if mode == "off" or directory is None or refused:
        off = PersistedCache(cache=VerdictCache(None), mode="off")
        if refused:
            _warn(off, f"not using {directory}: {refused}; every answer is judged afresh")
        yield off
        return
    persisted = PersistedCache(cache=VerdictCache(directory), mode=mode)
    persisted.cache.warn = lambda message: _warn(persisted, message)
    choice = choose_service(env)
    if mode != "actions" or choice.kind is None:
        _say(persisted, _directory_only(directory, env))
        try:
            yield persisted
        finally:
            prune(directory, keep=persisted.cache.used_keys, cap_bytes=cap_bytes)
        return
    prefix = prefix_for(identity)
    persisted.service = choice.kind
    with choice.open() as service:
        for secret in service.secrets:
            runner.mask(secret)
        print(f"golden-gate: judge cache: {choice.description}")
        with runner.group("Judge cache: restore"):
            restored = restore(
                service, directory=directory, prefix=prefix, limits=unpack_limits(cap_bytes)
            )
            persisted.restore = restored.status
            persisted.restored_key = restored.restored_key
            persisted.note = f"{choice.description}; {_restore_outcome(restored, prefix)}"
            if restored.status != "failed":
                print(f"golden-gate: {_restore_outcome(restored, prefix)}")
            _warn(persisted, restored.warning)
        try:
            yield persisted
        finally:
            cache = persisted.cache
            if cache.written == 0:
                print("golden-gate: nothing new was judged; the judge cache is not saved")
            else:
                with runner.group("Judge cache: save"):
                    removed = prune(directory, keep=cache.used_keys, cap_bytes=cap_bytes)
                    key = save_key(prefix, env.get("GITHUB_RUN_ID", "local"), attempt)
                    saved = save(service, directory=directory, key=key)
                    if saved.saved:
                        persisted.saved_key = key
                        print(
                            f"golden-gate: saved {saved.entries} verdicts ({saved.bytes} bytes) "
                            f"to the {SERVICE_NAMES[choice.kind]} as {key}; "
                            f"pruned {removed}"
                        )
                    _warn(persisted, saved.warning)
