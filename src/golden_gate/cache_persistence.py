"""Carrying the verdict cache from one workflow run to the next.

`actions`: restore the newest entry of this judge (model, prompt, scoring) before evaluating,
save a new one after, also when the gate failed, and only when something new was judged.
`directory`: the user's own `actions/cache` step persists the directory. `off`: no cache at all.
Nothing here can fail the gate: every cache problem is a warning and the run goes on cold.
A directory a pull request could have written (see `cache_location`) is not used at all.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from golden_gate import runner
from golden_gate.cache import VerdictCache


@dataclass
class PersistedCache:
    cache: VerdictCache
    mode: str
    restored_key: str | None = None
    saved_key: str | None = None
    warnings: list[str] = field(default_factory=list)


def prefix_for(identity: str) -> str:
    from golden_gate.actions_cache import key_prefix

    # A changed model, prompt or scoring config is another prefix: it starts cold by design.
    return key_prefix(hashlib.sha256(identity.encode("utf-8")).hexdigest()[:16])


def _warn(persisted: PersistedCache, message: str | None) -> None:
    if message:
        persisted.warnings.append(message)
        runner.warning(f"judge cache: {message}", title="golden-gate cache")


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
    from golden_gate.actions_cache import (
        CacheService,
        prune,
        restore,
        save,
        save_key,
        unpack_limits,
    )
    from golden_gate.cache_location import untrusted_reason

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
    if mode != "actions":
        try:
            yield persisted
        finally:
            prune(directory, keep=persisted.cache.used_keys, cap_bytes=cap_bytes)
        return
    prefix = prefix_for(identity)
    token = env["ACTIONS_RUNTIME_TOKEN"]
    runner.mask(token)
    with CacheService(results_url=env["ACTIONS_RESULTS_URL"], token=token) as service:
        with runner.group("Judge cache: restore"):
            restored = restore(
                service, directory=directory, prefix=prefix, limits=unpack_limits(cap_bytes)
            )
            persisted.restored_key = restored.restored_key
            print(
                f"golden-gate: restored {restored.entries} verdicts from {restored.restored_key}"
                if restored.restored_key
                else f"golden-gate: no saved verdicts for {prefix}*"
            )
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
                            f"as {key}; pruned {removed}"
                        )
                    _warn(persisted, saved.warning)
