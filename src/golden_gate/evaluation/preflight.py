"""Before the first judge call: a judge that refuses connections stops the run once, at once.

Without this, every item's judge call would retry a refused connection with back-off (about
20 s an item) before the run gave up. Only a definite answer counts: a refused connection, a
name that does not resolve, a network that is unreachable. A slow or filtered endpoint, or one
behind a proxy, is left to the calls themselves.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import socket
import urllib.request
from urllib.parse import urlsplit

from golden_gate import redaction
from golden_gate.errors import IncompleteError

TIMEOUT_S = 3.0
_UNREACHABLE = {errno.ECONNREFUSED, errno.ENETUNREACH, errno.EHOSTUNREACH}


class JudgeUnreachable(IncompleteError):
    """The judge's endpoint cannot be reached at all."""


def _proxied(scheme: str, host: str) -> bool:
    return bool(urllib.request.getproxies().get(scheme)) and not urllib.request.proxy_bypass(host)


async def judge_endpoint(base_url: str | None, *, timeout_s: float = TIMEOUT_S) -> None:
    """Raise `JudgeUnreachable` when `base_url` definitely cannot be reached."""
    if not base_url:
        return  # the provider's own endpoint: a cloud API, reached like every other call
    parts = urlsplit(base_url)
    host = parts.hostname
    if not host or parts.scheme not in ("http", "https") or _proxied(parts.scheme, host):
        return
    port = parts.port or (443 if parts.scheme == "https" else 80)
    where = redaction.without_credentials(base_url)
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout_s)
    except socket.gaierror as exc:
        raise JudgeUnreachable(
            f"the judge at {where} cannot be reached: its host name does not resolve "
            f"({exc.strerror}); check judge-base-url"
        ) from None
    except OSError as exc:
        if exc.errno not in _UNREACHABLE:
            return  # timed out or filtered: not a definite answer
        why = "connection refused" if exc.errno == errno.ECONNREFUSED else exc.strerror or exc
        raise JudgeUnreachable(
            f"the judge at {where} cannot be reached ({why}): is it running? check judge-base-url"
        ) from None
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
