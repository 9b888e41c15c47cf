"""The judge verdict cache carried between workflow runs by a cache service of the runner.

The verdict directory (`cache.VerdictCache`) is packed into one archive (`archive`) and
stored as an immutable cache entry under a per-run key (`golden-gate-judge-<judge hash>-<run>-
<attempt>`). A later run restores the newest entry whose key starts with the judge's prefix, so
verdicts accumulate run after run while each entry stays write-once, as the services require.

Which service: the one the runner exposes (`choose_service`), the Actions cache service v2 at
`ACTIONS_RESULTS_URL` or the legacy v1 REST service at `ACTIONS_CACHE_URL` (act, Gitea/Forgejo
act_runner, older GitHub Enterprise Server); `restore` and `save` are written once for both
(`service.CacheService`). The cache only saves judge calls, so nothing here may stop the
gate: every service, network or archive problem is a one-line `warning` (never carrying the
runtime token, a URL signature or a secret URL path) and a cold or unsaved result.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from golden_gate import redaction
from golden_gate.action.cache.archive import (
    COMPRESSIONS,
    ArchiveError,
    UnpackLimits,
    available_compression,
    pack,
    unpack,
)
from golden_gate.action.cache.service import CacheService, CacheServiceError, EntryExists
from golden_gate.core.report import CacheServiceKind, RestoreStatus
from golden_gate.errors import InputError

CACHE_MODES = ("auto", "actions", "directory", "off")
KEY_MAX_CHARS = 512

SERVICE_NAMES: dict[CacheServiceKind, str] = {
    "v2": "Actions cache service v2",
    "v1": "legacy cache service v1",
}

_SIG = re.compile(r"(sig=)[^&\s\"']+", re.IGNORECASE)
_WARNING_MAX_CHARS = 300
_KEY_SHOWN_CHARS = 100
_RESTORE_FAILED = "continuing without them"
_SAVE_FAILED = "this run's verdicts are not kept"


@dataclass(frozen=True)
class RestoreResult:
    """What a restore found: `restored`, a `miss` (nothing saved yet), or `failed` (a warning)."""

    status: RestoreStatus
    restored_key: str | None = None
    entries: int = 0  # verdicts in the restored archive
    bytes: int = 0  # archive size downloaded
    warning: str | None = None


@dataclass(frozen=True)
class SaveResult:
    saved: bool = False
    bytes: int = 0  # archive size uploaded
    warning: str | None = None
    entries: int = 0


# -- keys, versions, modes ------------------------------------------------------------------


def validate_key(key: str) -> None:
    """The services' key rules: not empty, at most 512 characters, no commas."""
    if not key:
        raise ValueError("a cache key must not be empty")
    if len(key) > KEY_MAX_CHARS:
        raise ValueError(f"a cache key is at most {KEY_MAX_CHARS} characters, got {len(key)}")
    if "," in key:
        # The services split restore keys on commas.
        raise ValueError(f"a cache key must not contain a comma: {key[:80]!r}")


def key_prefix(judge_identity_hash: str) -> str:
    """The prefix every save of this judge shares: what a restore matches on."""
    prefix = f"golden-gate-judge-{judge_identity_hash}-"
    validate_key(prefix)
    return prefix


def save_key(prefix: str, run_id: str | int, attempt: str | int) -> str:
    """A key unique to one run attempt: entries are immutable, so every save needs a new one."""
    key = f"{prefix}{run_id}-{attempt}"
    validate_key(key)
    return key


def cache_version(compression: str | None = None) -> str:
    """The entry version: a zstd archive is never offered to a runner that can only gunzip."""
    compression = compression or available_compression()
    if compression not in COMPRESSIONS:
        raise ValueError(f"unknown compression {compression!r}")
    # v2: entries record their key material (cache.FORMAT); v1 archives are not restored.
    return hashlib.sha256(f"golden-gate-judge-cache|{compression}|v2".encode()).hexdigest()


@dataclass(frozen=True)
class ServiceChoice:
    """The cache service the runner exposes, or None and why; `description` is the log's."""

    kind: CacheServiceKind | None
    why: str  # with a service, the variables it comes from; without, why there is none
    url: str = ""
    token: str = ""

    @property
    def description(self) -> str:
        return f"{SERVICE_NAMES[self.kind]} ({self.why})" if self.kind else self.why

    def open(self, **options: Any) -> CacheService:
        """A client of the chosen service (`options`: timeouts, retries, sizes)."""
        if self.kind == "v2":
            from golden_gate.action.cache.service_v2 import CacheServiceV2

            return CacheServiceV2(results_url=self.url, token=self.token, **options)
        if self.kind == "v1":
            from golden_gate.action.cache.service_v1 import CacheServiceV1

            return CacheServiceV1(cache_url=self.url, token=self.token, **options)
        raise ValueError(f"no cache service to open: {self.why}")


def choose_service(env: Mapping[str, str]) -> ServiceChoice:
    """The service the runner exposes: v2 at `ACTIONS_RESULTS_URL`, else v1 at
    `ACTIONS_CACHE_URL`, else none.

    Where both are set, v1 is taken when actions/cache itself takes it: on a server that is not
    GitHub's own (GitHub Enterprise Server, Gitea, Forgejo), and under act, whose
    `ACTIONS_RESULTS_URL` is its artifact server. v1 works without a runtime token (act gives
    none and checks none); v2 does not.
    """
    results = env.get("ACTIONS_RESULTS_URL", "").strip()
    legacy = env.get("ACTIONS_CACHE_URL", "").strip()
    token = env.get("ACTIONS_RUNTIME_TOKEN", "").strip()
    if legacy and (not results or not token or _legacy_runner(env)):
        why = "ACTIONS_CACHE_URL" if token else "ACTIONS_CACHE_URL, no ACTIONS_RUNTIME_TOKEN"
        if results and token:
            why += "; " + _legacy_runner(env)
        return ServiceChoice("v1", why, url=legacy, token=token)
    if results and token:
        return ServiceChoice("v2", "ACTIONS_RESULTS_URL", url=results, token=token)
    if results:
        why = "ACTIONS_RUNTIME_TOKEN is missing, and the v2 service at ACTIONS_RESULTS_URL needs it"
        return ServiceChoice(None, why)
    return ServiceChoice(
        None,
        "the runner exposes no cache service (neither ACTIONS_RESULTS_URL nor ACTIONS_CACHE_URL)",
    )


def _legacy_runner(env: Mapping[str, str]) -> str:
    """Why actions/cache would speak v1 on this runner although v2 looks available, or ""."""
    if env.get("ACT", "").strip():
        return "under act, ACTIONS_RESULTS_URL is its artifact server"
    server = env.get("GITHUB_SERVER_URL", "").strip() or "https://github.com"
    host = (urllib.parse.urlsplit(server).hostname or "").lower()
    # actions/toolkit's isGhes(): anything but github.com, *.ghe.com and *.localhost.
    if host == "github.com" or host.endswith((".ghe.com", ".localhost")):
        return ""
    return f"GITHUB_SERVER_URL is {host or server}, where actions/cache speaks v1"


def mode_from_env(env: Mapping[str, str], requested: str) -> str:
    """The cache mode to use: `actions`, `directory` or `off`.

    `auto` and `actions` use a cache service when the runner exposes one (`choose_service`),
    else fall back to the plain directory: a gate must not fail because a cache is unavailable
    (e.g. a self-hosted or local run).
    """
    mode = requested.strip().lower() or "auto"
    if mode not in CACHE_MODES:
        choices = ", ".join(CACHE_MODES)
        raise InputError(f"input 'cache' must be one of {choices}, got '{requested}'")
    if mode in ("directory", "off"):
        return mode
    return "actions" if choose_service(env).kind else "directory"


# -- what the Action calls ------------------------------------------------------------------


def restore(
    service: CacheService,
    *,
    directory: Path,
    prefix: str,
    version: str | None = None,
    limits: UnpackLimits | None = None,
) -> RestoreResult:
    """Merge the newest saved verdicts whose key starts with `prefix` into `directory`.

    A miss is no warning; a failed lookup, download or unpack (an archive past `limits` too) is
    one, with a cold result. Never raises for service, network or archive problems.
    """
    try:
        version = version or cache_version()
        validate_key(prefix)
        found = service.find(prefix, [prefix], version)
    except Exception as exc:  # the cache is an optimisation: never let it stop the gate
        subject = f"could not look up saved verdicts for {_shown(prefix)}*"
        return RestoreResult("failed", warning=_failure(subject, exc, service, _RESTORE_FAILED))
    if found is None:
        return RestoreResult("miss")
    key = found.key or prefix
    limits = limits or UnpackLimits()
    try:
        with tempfile.TemporaryDirectory(prefix="golden-gate-restore-") as work:
            archive = Path(work) / "cache.archive"
            size = service.download(found.download_url, archive, max_bytes=limits.max_bytes)
            entries = unpack(archive, Path(directory), limits)
    except Exception as exc:
        subject = f"could not restore saved verdicts from {_shown(key)}"
        return RestoreResult("failed", warning=_failure(subject, exc, service, _RESTORE_FAILED))
    return RestoreResult("restored", restored_key=key, entries=entries, bytes=size)


def save(
    service: CacheService,
    *,
    directory: Path,
    key: str,
    version: str | None = None,
    compression: str | None = None,
) -> SaveResult:
    """Save the verdicts of `directory` as a new entry under `key`.

    `compression` defaults to what `version` was made for (or to what this machine has);
    nothing is saved when the directory holds no verdict. Never raises for service, network or
    archive problems, including a key another job saved first (409).
    """
    subject = "could not save the judge verdict cache"
    try:
        compression = compression or _compression_of(version) or available_compression()
        version = version or cache_version(compression)
        validate_key(key)
        with tempfile.TemporaryDirectory(prefix="golden-gate-save-") as work:
            archive = Path(work) / f"cache.tar.{'zst' if compression == 'zstd' else 'gz'}"
            entries = pack(Path(directory), archive, compression)
            if entries == 0:
                return SaveResult()
            size = archive.stat().st_size
            service.store(key, version, archive)
    except EntryExists:
        taken = f"the cache entry {_shown(key)} already exists (another job saved it first)"
        return SaveResult(warning=_failure(subject, taken, service, _SAVE_FAILED))
    except Exception as exc:  # the cache is an optimisation: never let it stop the gate
        return SaveResult(warning=_failure(subject, exc, service, _SAVE_FAILED))
    return SaveResult(saved=True, bytes=size, entries=entries)


def _compression_of(version: str | None) -> str | None:
    return next((c for c in COMPRESSIONS if version and cache_version(c) == version), None)


def _shown(key: str) -> str:
    return key if len(key) <= _KEY_SHOWN_CHARS else key[: _KEY_SHOWN_CHARS - 1] + "…"


def _failure(subject: str, problem: object, service: CacheService, consequence: str) -> str:
    """One line, no secret: the service's secrets and URL signatures are blanked out."""
    expected = (str, CacheServiceError, ArchiveError, ValueError, OSError)
    detail = str(problem) or type(problem).__name__
    if not isinstance(problem, expected):
        detail = f"{type(problem).__name__}: {detail}"
    text = f"{subject}: {detail}"
    text = redaction.scrub(text, also=service.secrets)
    text = _SIG.sub(r"\1***", " ".join(text.split()))
    if len(text) > _WARNING_MAX_CHARS:
        text = text[: _WARNING_MAX_CHARS - 1] + "…"
    return f"{text}; {consequence}."
