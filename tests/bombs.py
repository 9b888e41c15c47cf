"""Decompression bombs, made in the test: a small archive that expands far beyond its size."""

from __future__ import annotations

import gzip
import io
import tarfile

MEMBER_BYTES = 1024 * 1024  # each member as big as a verdict may be: only the total is a bomb


def tar_of_zeros(expanded_bytes: int) -> bytes:
    """A tar of verdict-named members of zeros, `expanded_bytes` in all."""
    out = bytearray()
    for n in range(max(1, expanded_bytes // MEMBER_BYTES)):
        info = tarfile.TarInfo(f"ab/ab{n:062x}.json")
        info.size = min(MEMBER_BYTES, expanded_bytes)
        out += info.tobuf(tarfile.PAX_FORMAT) + bytes(info.size + -info.size % tarfile.BLOCKSIZE)
    return bytes(out + bytes(2 * tarfile.BLOCKSIZE))


def gzip_bomb(expanded_bytes: int) -> bytes:
    """About 1,000 to 1 (deflate's limit): 64 MiB of zeros in 64 KiB."""
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=9) as out:
        out.write(tar_of_zeros(expanded_bytes))
    return buffer.getvalue()


def zstd_bomb(expanded_bytes: int) -> bytes:
    import zstandard

    return zstandard.ZstdCompressor(level=19).compress(tar_of_zeros(expanded_bytes))


def many_members(count: int) -> bytes:
    """`count` tiny verdict-named members: a bomb of entries rather than bytes."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for n in range(count):
            name = f"{n % 256:02x}/{n % 256:02x}{n:062x}.json"
            info = tarfile.TarInfo(name)
            info.size = 2
            tar.addfile(info, io.BytesIO(b"{}"))
    return gzip.compress(buffer.getvalue())
