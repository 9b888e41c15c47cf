"""The aiohttp session of both clients of an item (the assistant's, the judge's own): its shape
set once, so the two cannot drift apart.

As httpx was used before them (BENCHMARKS.md step 27 for why aiohttp): connect, the wait for a
connection and each read limited separately; at most as many connections as requests in
flight (fewer, and requests would queue for one and burn their timeout there); no cookie kept
(each request is a new visitor, whatever order they run in); no proxy or ~/.netrc read from
the environment (aiohttp's `trust_env` stays off); header lines up to 16 KiB (httpx read a
16 KiB head, aiohttp's default is 8 KiB a line: a big cookie or token header would fail).
"""

from __future__ import annotations

import base64
from typing import Any

import aiohttp
from yarl import URL

MAX_HEADER_BYTES = 16 * 1024


def timeout(seconds: float) -> aiohttp.ClientTimeout:
    return aiohttp.ClientTimeout(
        total=None, connect=seconds, sock_connect=seconds, sock_read=seconds
    )


def session(*, connections: int, timeout_s: float, ssl: Any) -> aiohttp.ClientSession:
    """A session holding at most `connections` connections; `ssl` as aiohttp takes it."""
    connector = aiohttp.TCPConnector(limit=max(1, connections), limit_per_host=0, ssl=ssl)
    return aiohttp.ClientSession(
        connector=connector,
        cookie_jar=aiohttp.DummyCookieJar(),
        timeout=timeout(timeout_s),
        max_line_size=MAX_HEADER_BYTES,
        max_field_size=MAX_HEADER_BYTES,
    )


def credentials_as_header(url: URL, headers: dict[str, str]) -> URL:
    """`url` without its user:password, which go into `headers` as Basic authorisation,
    replacing any Authorization header, as httpx sent them (aiohttp refuses a URL with
    credentials beside an Authorization header)."""
    if url.user is None and url.password is None:
        return url
    pair = f"{url.user or ''}:{url.password or ''}".encode()
    for name in [name for name in headers if name.lower() == "authorization"]:
        del headers[name]
    headers["Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
    return url.with_user(None)


async def read_capped(response: aiohttp.ClientResponse, limit: int) -> bytes | None:
    """The body, decoded, or None once it passes `limit` bytes (the rest is never read).

    aiohttp decompresses at most a buffer's worth at a time: a gzip bomb is cut off at the
    cap, never expanded whole."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_any():  # decoded bytes
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)
