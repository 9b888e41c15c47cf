"""`runner-host` in the assistant's URL: the machine the runner runs on, where an earlier
workflow step started the pull request's own assistant.

The Action runs in a container of its own: on the default bridge network, or on the job's
network when the job has `services:` or `container:`. Either way the runner's host is that
network's gateway (the container's default route, read from /proc/net/route), so a server an
earlier `run:` step started is reachable there when it listens on all interfaces (0.0.0.0) and
not when it binds 127.0.0.1 only. A container that shares the host's network namespace (act
runs the Action so) reaches it on 127.0.0.1, as the command does outside a container: loopback
is tried first, then the gateway. The address found is said once; when nothing answers, one
sentence says what was tried and what to change.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import socket
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlsplit, urlunsplit

from golden_gate import redaction
from golden_gate.errors import IncompleteError

RUNNER_HOST = "runner-host"
LOOPBACK = "127.0.0.1"
ROUTE_FILE = Path("/proc/net/route")
# A test (or a runtime with its route table elsewhere) names the file to read instead; naming
# one also says this process is in a container of its own.
ROUTE_FILE_ENV = "GOLDEN_GATE_ROUTE_FILE"
CONTAINER_MARKS = (Path("/.dockerenv"), Path("/run/.containerenv"))  # Docker's, Podman's
TIMEOUT_S = 5.0
_RTF_UP, _RTF_GATEWAY = 0x1, 0x2


class RunnerHostUnreachable(IncompleteError):
    """Nothing answers at `runner-host`'s port on any address it can mean."""


class Candidate(NamedTuple):
    address: str
    what: str  # how the log names it


def names_runner_host(url: str) -> bool:
    """Whether `url`'s host is `runner-host` (any case, as host names are)."""
    try:
        # A trailing dot is the same name, written fully qualified.
        return (urlsplit(url).hostname or "").lower().rstrip(".") == RUNNER_HOST
    except ValueError:
        return False


def default_gateway(route_file: Path) -> str | None:
    """The gateway of the lowest-metric default route in a /proc/net/route table, or None."""
    try:
        lines = route_file.read_text(encoding="ascii", errors="replace").splitlines()
    except OSError:
        return None
    best: tuple[int, str] | None = None
    for line in lines[1:]:
        fields = line.split()
        if len(fields) < 8:
            continue
        try:
            destination, gateway, flags = (int(fields[i], 16) for i in (1, 2, 3))
            metric, mask = int(fields[6]), int(fields[7], 16)
        except ValueError:
            continue
        if destination or mask or not gateway or flags & (_RTF_UP | _RTF_GATEWAY) != 3:
            continue
        # The kernel writes the address in host byte order: little-endian on every runner.
        address = socket.inet_ntoa(gateway.to_bytes(4, "little"))
        if best is None or metric < best[0]:
            best = (metric, address)
    return best[1] if best else None


def candidates(
    env: Mapping[str, str] | None = None, *, marks: tuple[Path, ...] = CONTAINER_MARKS
) -> tuple[list[Candidate], str]:
    """The addresses `runner-host` can mean here, in the order tried, and a note for when the
    gateway could not be read."""
    env = os.environ if env is None else env
    named = env.get(ROUTE_FILE_ENV, "")
    route_file = Path(named) if named else ROUTE_FILE
    found = [Candidate(LOOPBACK, "loopback")]
    if not named and not any(mark.exists() for mark in marks):
        return found, ""  # not in a container: this machine is the runner
    gateway = default_gateway(route_file)
    if gateway is None:
        return found, f"no default route in {route_file} to find the runner's address by"
    if gateway != LOOPBACK:
        found.append(Candidate(gateway, f"the gateway of this container's network, {route_file}"))
    return found, ""


async def _answers(address: str, port: int, timeout_s: float) -> str:
    """'' when a TCP connection to address:port opens, else why not, in a few words."""
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(address, port), timeout_s)
    except TimeoutError:
        return f"no answer within {timeout_s:g} s"
    except OSError as exc:
        if exc.errno == errno.ECONNREFUSED:
            return "connection refused"
        return exc.strerror or str(exc)
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return ""


async def resolve(
    url: str, *, env: Mapping[str, str] | None = None, timeout_s: float = TIMEOUT_S
) -> str:
    """`url` with `runner-host` replaced by the first address where its port answers, said in
    the log; other URLs as they are. RunnerHostUnreachable when no address answers."""
    if not names_runner_host(url):
        return url
    parts = urlsplit(url)
    port = parts.port or 80
    tried, note = candidates(env)
    reasons = []
    for candidate in tried:
        why = await _answers(candidate.address, port, timeout_s)
        if not why:
            netloc = parts.netloc.rsplit("@", 1)
            netloc[-1] = f"{candidate.address}:{port}"  # user info, if any, kept
            resolved = urlunsplit(parts._replace(netloc="@".join(netloc)))
            print(
                f"golden-gate: runner-host is {candidate.address} ({candidate.what}): "
                f"the assistant at {redaction.without_credentials(resolved)}"
            )
            return resolved
        reasons.append(f"{candidate.address} ({candidate.what}): {why}")
    if len(tried) == 1 and not note:
        advice = "is the assistant running on this machine?"
    elif reasons[-1].endswith("connection refused"):
        advice = (
            "a server an earlier step started on the runner must listen on all interfaces "
            "(bind 0.0.0.0, not 127.0.0.1) and be up before this step"
        )
    else:  # dropped, not refused: something between the container and the runner
        advice = (
            "a firewall on the runner may drop what containers send to it: allow the port "
            "from Docker's networks, and bind the server to 0.0.0.0"
        )
    raise RunnerHostUnreachable(
        f"nothing answers at runner-host port {port}: tried "
        + "; ".join(reasons)
        + (f" ({note})" if note else "")
        + f"; {advice}"
    )
