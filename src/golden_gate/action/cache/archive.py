"""The judge verdict cache as one archive: packed for a save, checked and unpacked on a restore,
and the directory kept small between runs.

The verdict directory (`cache.VerdictCache`) is packed into one tar archive, compressed with zstd
when the `zstd` binary or the `zstandard` module is there and with gzip otherwise. An archive
comes from a cache service, that is from elsewhere: every member is checked before anything is
written, and what it may expand to is capped (`UnpackLimits`), so a hostile or corrupt archive is
refused whole (`ArchiveError`) and never writes outside the directory.
"""

from __future__ import annotations

import contextlib
import gzip
import importlib
import io
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from golden_gate.evaluation.cache import ensure_dir

COMPRESSIONS = ("zstd", "gzip")
# A verdict is a few kilobytes; anything bigger in an archive was not written by us.
ENTRY_MAX_BYTES = 1024 * 1024
# What a restore unpacks at most (see `unpack_limits`): a small archive may expand without end.
UNPACKED_MAX_BYTES = 256 * 1024 * 1024
MEMBERS_MAX = 200_000

_ENTRY = re.compile(r"(?:\./)?([0-9a-f]{2})/([0-9a-f]{64})\.json")
_SHARD = re.compile(r"(?:\./)?(?:[0-9a-f]{2})?/?|\.")
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_GZIP_MAGIC = b"\x1f\x8b"


class ArchiveError(Exception):
    """An archive that is corrupt, unsafe, or not a verdict cache archive."""


def available_compression() -> str:
    """`zstd` when this machine can both write and read it, else `gzip`."""
    return "zstd" if shutil.which("zstd") or _zstandard() is not None else "gzip"


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


def _open_tar(target: Path, *, gzipped: bool) -> tarfile.TarFile:
    if gzipped:
        return tarfile.open(target, "w:gz", format=tarfile.PAX_FORMAT, compresslevel=6)
    return tarfile.open(target, "w", format=tarfile.PAX_FORMAT)


def pack(directory: Path, archive: Path, compression: str) -> int:
    """Write the verdict entries of `directory` to `archive`; returns how many."""
    if compression not in COMPRESSIONS:
        raise ValueError(f"unknown compression {compression!r}")
    count = 0
    plain = archive.with_name(archive.name + ".tar")
    target = archive if compression == "gzip" else plain
    with _open_tar(target, gzipped=compression == "gzip") as tar:
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
