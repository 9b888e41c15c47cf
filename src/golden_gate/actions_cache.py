"""The judge verdict cache carried between workflow runs by the GitHub Actions cache service (v2).

The verdict directory (`cache.VerdictCache`) is packed into one tar archive, compressed with zstd
when the `zstd` binary or the `zstandard` module is there and with gzip otherwise, and stored as
an immutable cache entry under a per-run key (`golden-gate-judge-<judge hash>-<run>-<attempt>`).
A later run restores the newest entry whose key starts with the judge's prefix, so verdicts
accumulate run after run while each entry stays write-once, as the service requires.

The service speaks Twirp JSON (`CacheService`); the archive itself goes to and comes from Azure
blob storage through signed URLs. The cache only saves judge calls, so nothing here may stop the
gate: `restore` and `save` turn every service, network or archive problem into a one-line
`warning` (never carrying the runtime token or a signed URL) and a cold or unsaved result.
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import hashlib
import importlib
import io
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import time
import urllib.parse
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import httpx

from golden_gate.cache import ensure_dir
from golden_gate.errors import InputError

MODES = ("auto", "actions", "directory", "off")
COMPRESSIONS = ("zstd", "gzip")
KEY_MAX_CHARS = 512
SINGLE_PUT_MAX_BYTES = 128 * 1024 * 1024  # one Put Blob above this is refused or unreliable
BLOCK_BYTES = 32 * 1024 * 1024
# A verdict is a few kilobytes; anything bigger in an archive was not written by us.
ENTRY_MAX_BYTES = 1024 * 1024
# What a restore unpacks at most (see `unpack_limits`): a small archive may expand without end.
UNPACKED_MAX_BYTES = 256 * 1024 * 1024
MEMBERS_MAX = 200_000

_SERVICE_PATH = "twirp/github.actions.results.api.v1.CacheService/"
_ENTRY = re.compile(r"(?:\./)?([0-9a-f]{2})/([0-9a-f]{64})\.json")
_SHARD = re.compile(r"(?:\./)?(?:[0-9a-f]{2})?/?|\.")
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_GZIP_MAGIC = b"\x1f\x8b"
_SIG = re.compile(r"(sig=)[^&\s\"']+", re.IGNORECASE)
_WARNING_MAX_CHARS = 300


class CacheServiceError(Exception):
    """A failed call to the cache service or the blob store; the message is safe to log."""

    def __init__(self, message: str, *, status: int | None = None, code: str | None = None):
        super().__init__(message)
        self.status = status
        self.code = code


class ArchiveError(Exception):
    """An archive that is corrupt, unsafe, or not a verdict cache archive."""


@dataclass(frozen=True)
class DownloadURL:
    ok: bool
    signed_download_url: str = ""
    matched_key: str = ""


@dataclass(frozen=True)
class UploadURL:
    ok: bool
    signed_upload_url: str = ""
    message: str = ""


@dataclass(frozen=True)
class Finalized:
    ok: bool
    entry_id: int = 0
    message: str = ""


@dataclass(frozen=True)
class RestoreResult:
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
    """The service's key rules: not empty, at most 512 characters, no commas."""
    if not key:
        raise ValueError("a cache key must not be empty")
    if len(key) > KEY_MAX_CHARS:
        raise ValueError(f"a cache key is at most {KEY_MAX_CHARS} characters, got {len(key)}")
    if "," in key:
        # The service splits restore keys on commas.
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


def available_compression() -> str:
    """`zstd` when this machine can both write and read it, else `gzip`."""
    return "zstd" if shutil.which("zstd") or _zstandard() is not None else "gzip"


def cache_version(compression: str | None = None) -> str:
    """The entry version: a zstd archive is never offered to a runner that can only gunzip."""
    compression = compression or available_compression()
    if compression not in COMPRESSIONS:
        raise ValueError(f"unknown compression {compression!r}")
    # v2: entries record their key material (cache.FORMAT); v1 archives are not restored.
    return hashlib.sha256(f"golden-gate-judge-cache|{compression}|v2".encode()).hexdigest()


def mode_from_env(env: Mapping[str, str], requested: str) -> str:
    """The cache mode to use: `actions`, `directory` or `off`.

    `auto` and `actions` use the Actions cache when the runner exposes it (both
    `ACTIONS_RESULTS_URL` and `ACTIONS_RUNTIME_TOKEN`), else fall back to the plain directory:
    a gate must not fail because a cache is unavailable (e.g. a self-hosted or local run).
    """
    mode = requested.strip().lower() or "auto"
    if mode not in MODES:
        raise InputError(f"input 'cache' must be one of {', '.join(MODES)}, got '{requested}'")
    if mode in ("directory", "off"):
        return mode
    if env.get("ACTIONS_RESULTS_URL", "").strip() and env.get("ACTIONS_RUNTIME_TOKEN", "").strip():
        return "actions"
    return "directory"


# -- the service ----------------------------------------------------------------------------


class CacheService:
    """A client of the Actions cache service (Twirp JSON) and of the blob store behind it.

    Calls raise `CacheServiceError` for any failure; `restore` and `save` turn those into
    warnings. 429, 5xx and connection failures are retried `retries` times (Retry-After is
    honoured up to `max_retry_wait_s`); a timeout is not, since it has already cost `timeout_s`.
    """

    def __init__(
        self,
        *,
        results_url: str,
        token: str,
        timeout_s: float = 30,
        client: httpx.Client | None = None,
        single_put_max_bytes: int = SINGLE_PUT_MAX_BYTES,
        block_bytes: int = BLOCK_BYTES,
        retries: int = 1,
        backoff_s: float = 1.0,
        max_retry_wait_s: float = 5.0,
    ) -> None:
        if block_bytes <= 0 or single_put_max_bytes < 0:
            raise ValueError("block_bytes must be positive and single_put_max_bytes not negative")
        # ACTIONS_RESULTS_URL ends with "/", but a hand-set one may not.
        self.base_url = results_url.rstrip("/") + "/" + _SERVICE_PATH
        self.token = token
        self.timeout_s = timeout_s
        self.single_put_max_bytes = single_put_max_bytes
        self.block_bytes = block_bytes
        self.retries = retries
        self.backoff_s = backoff_s
        self.max_retry_wait_s = max_retry_wait_s
        self._owns_client = client is None
        self._client = client or httpx.Client(timeout=httpx.Timeout(timeout_s))

    def close(self) -> None:
        if self._owns_client:
            self._client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- Twirp methods --------------------------------------------------------------------

    def get_cache_entry_download_url(
        self, key: str, restore_keys: Sequence[str], version: str
    ) -> DownloadURL:
        body = {"key": key, "restore_keys": list(restore_keys), "version": version}
        reply = self._twirp("GetCacheEntryDownloadURL", body)
        return DownloadURL(
            ok=bool(reply.get("ok", False)),
            signed_download_url=str(_field(reply, "signed_download_url") or ""),
            matched_key=str(_field(reply, "matched_key") or ""),
        )

    def create_cache_entry(self, key: str, version: str) -> UploadURL:
        reply = self._twirp("CreateCacheEntry", {"key": key, "version": version})
        return UploadURL(
            ok=bool(reply.get("ok", False)),
            signed_upload_url=str(_field(reply, "signed_upload_url") or ""),
            message=str(reply.get("message") or ""),
        )

    def finalize_cache_entry_upload(self, key: str, version: str, size_bytes: int) -> Finalized:
        # int64 goes as a string in proto3 JSON; the service accepts both forms.
        body = {"key": key, "version": version, "size_bytes": str(size_bytes)}
        reply = self._twirp("FinalizeCacheEntryUpload", body)
        try:
            entry_id = int(_field(reply, "entry_id") or 0)
        except (TypeError, ValueError):
            entry_id = 0
        return Finalized(
            ok=bool(reply.get("ok", False)),
            entry_id=entry_id,
            message=str(reply.get("message") or ""),
        )

    # -- blobs ----------------------------------------------------------------------------

    def upload(self, signed_url: str, path: Path) -> None:
        """Put the file at the signed URL: one Put Blob when small, else staged blocks."""
        size = path.stat().st_size
        if size <= self.single_put_max_bytes:

            def put_blob() -> httpx.Response:
                with path.open("rb") as handle:
                    return self._client.put(
                        signed_url,
                        content=handle,
                        headers={"x-ms-blob-type": "BlockBlob", "Content-Length": str(size)},
                    )

            self._blob("upload", put_blob)
            return
        ids: list[str] = []
        with path.open("rb") as handle:
            while chunk := handle.read(self.block_bytes):
                # Azure wants every block id of a blob to have the same length.
                block_id = base64.b64encode(f"golden-gate-{len(ids):08d}".encode()).decode()
                ids.append(block_id)
                url = _with_query(signed_url, f"comp=block&blockid={_quote(block_id)}")
                self._blob("upload a block", lambda u=url, c=chunk: self._client.put(u, content=c))
        xml = '<?xml version="1.0" encoding="utf-8"?><BlockList>'
        xml += "".join(f"<Latest>{block_id}</Latest>" for block_id in ids) + "</BlockList>"
        url = _with_query(signed_url, "comp=blocklist")
        self._blob(
            "commit the block list",
            lambda: self._client.put(
                url, content=xml.encode(), headers={"Content-Type": "application/xml"}
            ),
        )

    def download(self, signed_url: str, path: Path, *, max_bytes: int | None = None) -> int:
        """Stream the blob to `path`; returns its size. Past `max_bytes` it is refused."""

        def get() -> httpx.Response:
            written = 0
            with self._client.stream("GET", signed_url) as response:
                if response.status_code >= 300:
                    response.read()
                    return response
                with path.open("wb") as handle:
                    for chunk in response.iter_bytes(1024 * 1024):
                        written += len(chunk)
                        if max_bytes is not None and written > max_bytes:
                            too_big = f"the cache archive is larger than {max_bytes} bytes"
                            raise ArchiveError(too_big)
                        handle.write(chunk)
            if written == 0:
                raise CacheServiceError("the cache archive download was empty")
            return response

        self._blob("download", get)
        return path.stat().st_size

    # -- plumbing -------------------------------------------------------------------------

    def _twirp(self, method: str, body: dict[str, Any]) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"}

        def call() -> httpx.Response:
            return self._client.post(self.base_url + method, json=body, headers=headers)

        response = self._retrying(method, call)
        if response.status_code >= 300:
            raise CacheServiceError(
                f"{method}: HTTP {response.status_code}{_twirp_error(response)}",
                status=response.status_code,
                code=_twirp_code(response),
            )
        try:
            reply = response.json()
        except ValueError:
            raise CacheServiceError(f"{method}: the reply is not JSON") from None
        if not isinstance(reply, dict):
            raise CacheServiceError(f"{method}: the reply is not a JSON object")
        return reply

    def _blob(self, what: str, call: Callable[[], httpx.Response]) -> None:
        response = self._retrying(what, call)
        if response.status_code >= 300:
            raise CacheServiceError(
                f"blob {what}: HTTP {response.status_code}{_azure_error(response)}",
                status=response.status_code,
            )

    def _retrying(self, what: str, call: Callable[[], httpx.Response]) -> httpx.Response:
        attempt = 0
        while True:
            try:
                response = call()
            except httpx.TimeoutException:
                raise CacheServiceError(f"{what}: timed out after {self.timeout_s:g} s") from None
            except httpx.TransportError as exc:
                if attempt >= self.retries:
                    raise CacheServiceError(f"{what}: {type(exc).__name__}: {exc}") from None
                wait = self.backoff_s * 2**attempt
            else:
                retryable = response.status_code == 429 or response.status_code >= 500
                if not retryable or attempt >= self.retries:
                    return response
                wait = _retry_after(response) or self.backoff_s * 2**attempt
            time.sleep(min(wait, self.max_retry_wait_s))
            attempt += 1


def _field(reply: Mapping[str, Any], name: str) -> Any:
    """A field by its proto name or its JSON (lowerCamel) name: both are valid proto3 JSON."""
    if name in reply:
        return reply[name]
    head, *rest = name.split("_")
    camel = head + "".join(part[:1].upper() + part[1:] for part in rest)
    # Go's protojson spells "URL" fields as written in the .proto, e.g. signedDownloadUrl.
    return reply.get(camel)


def _twirp_code(response: httpx.Response) -> str | None:
    with contextlib.suppress(ValueError):
        data = response.json()
        if isinstance(data, dict) and isinstance(data.get("code"), str):
            return str(data["code"])
    return None


def _twirp_error(response: httpx.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        return ""
    if not isinstance(data, dict):
        return ""
    code, msg = data.get("code"), data.get("msg")
    return "".join(f" {part}" for part in (code, msg) if isinstance(part, str) and part)


def _azure_error(response: httpx.Response) -> str:
    match = re.search(r"<Code>([^<]{1,100})</Code>", response.text)
    return f" {match.group(1)}" if match else ""


def _retry_after(response: httpx.Response) -> float | None:
    try:
        return max(0.0, float(response.headers.get("Retry-After", "")))
    except ValueError:
        return None


def _with_query(url: str, query: str) -> str:
    # Appended as text: re-encoding the signed query could break its signature.
    return f"{url}{'&' if '?' in url else '?'}{query}"


def _quote(value: str) -> str:
    return urllib.parse.quote(value, safe="")


# -- archives -------------------------------------------------------------------------------


def _zstandard() -> Any:
    try:
        return importlib.import_module("zstandard")
    except ImportError:
        return None


def _listing(directory: Path) -> list[Path]:
    """The directory's entries; none when another process removed it or it cannot be read."""
    try:
        return sorted(directory.iterdir())
    except OSError:
        return []


def _entries(directory: Path) -> Iterator[tuple[str, Path]]:
    """(archive name, path) of each verdict file: temporary files and strangers are left out."""
    if not directory.is_dir():
        return
    for shard in _listing(directory):
        if not (len(shard.name) == 2 and shard.is_dir() and not shard.is_symlink()):
            continue
        for path in _listing(shard):
            name = f"{shard.name}/{path.name}"
            match = _ENTRY.fullmatch(name)
            if match and match.group(2).startswith(match.group(1)) and _is_regular(path):
                yield name, path


def _is_regular(path: Path) -> bool:
    return path.is_file() and not path.is_symlink()


def pack(directory: Path, archive: Path, compression: str) -> int:
    """Write the verdict entries of `directory` to `archive`; returns how many."""
    if compression not in COMPRESSIONS:
        raise ValueError(f"unknown compression {compression!r}")
    count = 0
    plain = archive.with_name(archive.name + ".tar")
    mode = "w:gz" if compression == "gzip" else "w"
    target = archive if compression == "gzip" else plain
    options: dict[str, Any] = {"compresslevel": 6} if compression == "gzip" else {}
    with tarfile.open(target, mode, format=tarfile.PAX_FORMAT, **options) as tar:
        for name, path in _entries(directory):
            try:
                data = path.read_bytes()  # whole, so a file pruned meanwhile is left out whole
                mtime = path.stat().st_mtime
            except FileNotFoundError:
                continue
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = int(mtime)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
            count += 1
    if compression == "zstd":
        _zstd_compress(plain, archive)
        plain.unlink()
    return count


def _zstd_compress(source: Path, target: Path) -> None:
    binary = shutil.which("zstd")
    if binary:
        args = [binary, "-q", "-f", "-T0", "-3", "-o", str(target), str(source)]
        done = subprocess.run(args, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            detail = (done.stderr.strip().splitlines() or ["failed"])[-1]
            raise ArchiveError(f"zstd: {detail}")
        return
    module = _zstandard()
    if module is None:
        raise ArchiveError("neither zstd nor zstandard is here to compress the archive")
    with source.open("rb") as src, target.open("wb") as dst:
        module.ZstdCompressor(level=3, write_checksum=True, threads=-1).copy_stream(src, dst)


@dataclass(frozen=True)
class UnpackLimits:
    """What one restore may unpack: a 500 KiB archive can expand to gigabytes (a "bomb")."""

    max_bytes: int = UNPACKED_MAX_BYTES  # the decompressed tar, and the verdicts in it
    max_members: int = MEMBERS_MAX


def unpack_limits(cap_bytes: int) -> UnpackLimits:
    """Room for what our own save of a directory pruned to `cap_bytes` holds, with slack:
    kept verdicts may exceed the cap, and tar pads each small file to 1 KiB."""
    max_bytes = max(4 * cap_bytes, 16 * 1024 * 1024)
    return UnpackLimits(max_bytes=max_bytes, max_members=max(max_bytes // 1024, 1000))


def _copy_capped(read: Callable[[int], bytes], target: Path, max_bytes: int) -> None:
    written = 0
    with target.open("wb") as dst:
        while chunk := read(1024 * 1024):
            written += len(chunk)
            if written > max_bytes:
                raise ArchiveError(f"the cache archive expands beyond {max_bytes} bytes")
            dst.write(chunk)


def _decompress(archive: Path, plain: Path, max_bytes: int) -> None:
    """Decompress to `plain`, stopping (ArchiveError) once it passes `max_bytes`."""
    with archive.open("rb") as handle:
        magic = handle.read(4)
    if magic.startswith(_GZIP_MAGIC):
        # All of it first: the CRC is checked before a single verdict is written.
        with gzip.open(archive, "rb") as src:
            _copy_capped(src.read, plain, max_bytes)
        return
    if not magic.startswith(_ZSTD_MAGIC):
        raise ArchiveError("the cache archive is neither zstd nor gzip")
    binary = shutil.which("zstd")
    if binary:
        with subprocess.Popen(
            [binary, "-d", "-q", "-c", str(archive)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        ) as process:
            assert process.stdout is not None and process.stderr is not None
            try:
                _copy_capped(process.stdout.read, plain, max_bytes)
            except BaseException:
                process.kill()
                raise
            stderr = process.stderr.read().decode("utf-8", "replace")
        if process.returncode != 0:
            raise ArchiveError(f"zstd: {(stderr.strip().splitlines() or ['failed'])[-1]}")
        return
    module = _zstandard()
    if module is None:
        raise ArchiveError("the archive is zstd-compressed, but neither zstd nor zstandard is here")
    with archive.open("rb") as src:
        reader = module.ZstdDecompressor().stream_reader(src, read_across_frames=True)
        _copy_capped(reader.read, plain, max_bytes)


def unpack(archive: Path, directory: Path, limits: UnpackLimits | None = None) -> int:
    """Merge the verdicts of `archive` into `directory`; returns how many the archive holds.

    Every member is checked before anything is written, and only verdict files in the cache's
    own layout (`<2 hex>/<64 hex>.json`, regular, small) are accepted: absolute paths, `..`,
    links, devices, sparse files or strangers make the whole archive refused (`ArchiveError`),
    as does an archive that expands past `limits` (bytes or members). This does not lean on
    tarfile's extraction filters, which not every Python 3.11 patch release has.
    An entry already present locally is kept as it is: entries are content-addressed.
    """
    limits = limits or UnpackLimits()
    corrupt = (gzip.BadGzipFile, EOFError, zlib.error, tarfile.TarError)
    if archive.stat().st_size > limits.max_bytes:
        raise ArchiveError(f"the cache archive is larger than {limits.max_bytes} bytes")
    with tempfile.TemporaryDirectory(prefix="golden-gate-unpack-") as work:
        plain = Path(work) / "cache.tar"
        try:
            _decompress(archive, plain, limits.max_bytes)
            with tarfile.open(plain, "r:") as tar:
                members = _checked_members(tar, limits)
                ensure_dir(directory)
                for member, name in members:
                    if name is not None:
                        _extract(tar, member, directory / name)
        except corrupt as exc:
            # Other OSErrors (a full disk, a read-only directory) keep their own message.
            raise ArchiveError(f"the cache archive is corrupt ({type(exc).__name__})") from None
        return sum(1 for _, name in members if name is not None)


def _checked_members(
    tar: tarfile.TarFile, limits: UnpackLimits
) -> list[tuple[tarfile.TarInfo, str | None]]:
    """Every member with its verdict path, checked, counted and sized before any is written."""
    members: list[tuple[tarfile.TarInfo, str | None]] = []
    total = 0
    for member in tar:
        if len(members) >= limits.max_members:
            raise ArchiveError(f"the cache archive holds more than {limits.max_members} members")
        members.append((member, _check_member(member)))
        total += member.size
        if total > limits.max_bytes:
            raise ArchiveError(f"the cache archive expands beyond {limits.max_bytes} bytes")
    return members


def _check_member(member: tarfile.TarInfo) -> str | None:
    """The member's relative path when it is a verdict, None for a shard directory."""
    name = member.name
    if member.isdir() and _SHARD.fullmatch(name):
        return None
    if not member.isreg() or member.issparse():
        # A sparse member's declared size is not what the archive carries: refused too.
        raise ArchiveError(f"the cache archive holds a link or a special file: {name[:80]!r}")
    if name.startswith(("/", "\\")) or ".." in name.replace("\\", "/").split("/"):
        raise ArchiveError(f"the cache archive holds an unsafe path: {name[:80]!r}")
    match = _ENTRY.fullmatch(name)
    if not match or not match.group(2).startswith(match.group(1)):
        raise ArchiveError(f"the cache archive holds a file that is not a verdict: {name[:80]!r}")
    if member.size > ENTRY_MAX_BYTES:
        raise ArchiveError(f"the cache archive holds an oversized verdict: {name[:80]!r}")
    return f"{match.group(1)}/{match.group(2)}.json"


def _extract(tar: tarfile.TarFile, member: tarfile.TarInfo, path: Path) -> bool:
    """Write one verdict unless it is already there; True when written."""
    source = tar.extractfile(member)
    if source is None:
        raise ArchiveError(f"cannot read {member.name[:80]!r} from the cache archive")
    data = source.read(ENTRY_MAX_BYTES + 1)
    # Written in place, not through a temporary file and a rename: restore runs before any
    # reader, a torn file would be a miss that VerdictCache.put replaces atomically, and the
    # rename and the random name cost as much as the write for 10,000 small files.
    for attempt in range(5):
        ensure_dir(path.parent)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
            break
        except FileExistsError:
            return False
        except FileNotFoundError:
            if attempt == 4:  # a pruner keeps removing the shard: give this one up
                return False
    try:
        os.write(fd, data)
        # Keep the last-use time it had (see prune), so eviction is least recently used.
        os.utime(fd, (member.mtime, member.mtime))
    except BaseException:
        os.close(fd)
        path.unlink(missing_ok=True)
        raise
    os.close(fd)
    return True


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

    A miss is no warning; a failure (an archive past `limits` too) is, with a cold result.
    Never raises for service, network or archive problems.
    """
    version = version or cache_version()
    limits = limits or UnpackLimits()
    try:
        validate_key(prefix)
        found = service.get_cache_entry_download_url(prefix, [prefix], version)
        if not found.ok or not found.signed_download_url:
            return RestoreResult()
        with tempfile.TemporaryDirectory(prefix="golden-gate-restore-") as work:
            archive = Path(work) / "cache.archive"
            size = service.download(found.signed_download_url, archive, max_bytes=limits.max_bytes)
            entries = unpack(archive, Path(directory), limits)
        return RestoreResult(restored_key=found.matched_key or prefix, entries=entries, bytes=size)
    except (CacheServiceError, ArchiveError, ValueError, OSError) as exc:
        return RestoreResult(warning=_warning("restore", exc, service.token))
    except Exception as exc:  # the cache is an optimisation: never let it stop the gate
        return RestoreResult(warning=_warning("restore", exc, service.token, unexpected=True))


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
            try:
                created = service.create_cache_entry(key, version)
            except CacheServiceError as exc:
                if exc.status == 409 or exc.code == "already_exists":
                    message = f"the cache entry {key} already exists (another job saved it first)"
                    return SaveResult(warning=_warning("save", message, service.token))
                raise
            if not created.ok or not created.signed_upload_url:
                why = created.message or "the service refused to create the entry"
                return SaveResult(warning=_warning("save", f"{key}: {why}", service.token))
            service.upload(created.signed_upload_url, archive)
            finalized = service.finalize_cache_entry_upload(key, version, size)
            if not finalized.ok:
                why = finalized.message or "the service refused to finalize the entry"
                return SaveResult(warning=_warning("save", f"{key}: {why}", service.token))
        return SaveResult(saved=True, bytes=size, entries=entries)
    except (CacheServiceError, ArchiveError, ValueError, OSError) as exc:
        return SaveResult(warning=_warning("save", exc, service.token))
    except Exception as exc:  # the cache is an optimisation: never let it stop the gate
        return SaveResult(warning=_warning("save", exc, service.token, unexpected=True))


def _compression_of(version: str | None) -> str | None:
    return next((c for c in COMPRESSIONS if version and cache_version(c) == version), None)


def _warning(what: str, problem: object, token: str, *, unexpected: bool = False) -> str:
    """One line, no secret: the runtime token and URL signatures are blanked out."""
    detail = str(problem) or type(problem).__name__
    if unexpected:
        detail = f"{type(problem).__name__}: {detail}"
    text = f"Could not {what} the judge verdict cache: {detail}"
    if token:
        text = text.replace(token, "***")
    text = _SIG.sub(r"\1***", " ".join(text.split()))
    if len(text) > _WARNING_MAX_CHARS:
        text = text[: _WARNING_MAX_CHARS - 1] + "…"
    action = "continuing without it" if what == "restore" else "this run's verdicts are not kept"
    return f"{text}; {action}."


# -- keeping the directory small --------------------------------------------------------------


def prune(directory: Path, *, keep: set[str], cap_bytes: int) -> int:
    """Delete verdicts not in `keep`, oldest first (mtime), until the directory is under the cap.

    Run before `save`, with the keys this run used (`VerdictCache.used_keys`). Kept verdicts
    are marked as used now (their mtime), and that time travels in the archive, so across runs
    the verdicts evicted first are the least recently used: answers no longer given age out and
    the archive does not grow without bound. Kept keys are never removed, even if they alone
    exceed the cap. Returns how many files were removed. Never raises for the files: another
    process may add or remove them meanwhile, and a read-only directory just stays as it is.
    """
    directory = Path(directory)
    now = time.time()
    files: list[tuple[float, str, int, Path]] = []
    total = 0
    for name, path in _entries(directory):
        key = name.split("/", 1)[1].removesuffix(".json")
        if key in keep:
            with contextlib.suppress(OSError):
                os.utime(path, (now, now))
        try:
            stat = path.stat()
        except OSError:
            continue  # removed meanwhile
        total += stat.st_size
        if key not in keep:
            files.append((stat.st_mtime, key, stat.st_size, path))
    removed = 0
    for _, _, size, path in sorted(files):
        if total <= cap_bytes:
            break
        try:
            path.unlink()
            removed += 1
        except FileNotFoundError:
            pass  # another pruner was first
        except OSError:
            break  # read-only, or not ours to remove: leave the rest alone too
        total -= size
        with contextlib.suppress(OSError):
            path.parent.rmdir()  # only succeeds once the shard is empty
    return removed
