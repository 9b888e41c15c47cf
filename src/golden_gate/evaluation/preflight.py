"""Before the first judge call: a judge that refuses connections stops the run once, at once;
then one judge call per configured judge (`judges`) proves its key, model name, endpoint and
structured output before any item is judged.

Without this, every item's judge call would retry a refused connection with back-off (about
20 s an item) before the run gave up. Only a definite answer counts: a refused connection, a
name that does not resolve, a network that is unreachable, an https endpoint whose certificate
the runner does not trust. A slow or filtered endpoint, or one
behind a proxy, is left to the calls themselves.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import socket
import ssl
import urllib.request
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from golden_gate import redaction
from golden_gate.core.item_result import TokenUsage
from golden_gate.errors import IncompleteError, InputError
from golden_gate.evaluation import tls
from golden_gate.evaluation.cache import VerdictCache
from golden_gate.evaluation.deferred_judge import DeferredJudge
from golden_gate.evaluation.evaluators import Panel
from golden_gate.evaluation.judge import Judge, JudgeError, LLMJudge

TIMEOUT_S = 3.0
_UNREACHABLE = {errno.ECONNREFUSED, errno.ENETUNREACH, errno.EHOSTUNREACH}


class JudgeUnreachable(IncompleteError):
    """The judge's endpoint cannot be reached at all."""

    spent: Spent | None = None  # what the preflight's calls cost before it gave up


class JudgeMisconfigured(InputError):
    """The judge refused the preflight's call: a key, model name or endpoint to set."""

    spent: Spent | None = None


@dataclass
class Spent:
    """What the preflight's calls cost: tokens and HTTP requests (retries included)."""

    tokens: TokenUsage = field(default_factory=TokenUsage)
    attempts: int = 0

    def add(self, tokens: TokenUsage | None, attempts: int) -> None:
        if tokens is not None:
            self.tokens.input_tokens += tokens.input_tokens
            self.tokens.output_tokens += tokens.output_tokens
        self.attempts += attempts


# The preflight's call: a question any judge can grade. The marker lets a stand-in server
# tell it from an item's call (tests/fakes/judge_server.py).
PREFLIGHT_MARK = "golden-gate judge preflight"
PREFLIGHT_QUESTION = f"({PREFLIGHT_MARK}) What colour is a clear daytime sky?"
PREFLIGHT_ANSWER = f"({PREFLIGHT_MARK}) A clear daytime sky is blue."
PREFLIGHT_REFERENCE = "- blue"
# Given to every prompt (one without a {context} placeholder ignores it).
PREFLIGHT_CONTEXT = f"({PREFLIGHT_MARK}) On a clear day the sky looks blue."


async def judges(judge: Judge | Panel, cache: VerdictCache | None = None) -> Spent:
    """One call to each model judge of the run (each of a panel: the same models judge every
    evaluator); what they cost. Its verdict is never a judge call; it is kept in `cache`, so a
    judge that answered this very request before (same identity: model, endpoint, prompt) is
    not asked again and a re-run of unchanged answers still costs no judge request.

    Raises JudgeMisconfigured (exit 2) when a judge refuses it, naming the provider's words and
    the setting; JudgeUnreachable (exit 3) when a fault lasted every retry (an outage).
    """
    panel = judge if isinstance(judge, Panel) else Panel.of(judge)
    await panel.ready()  # a build that failed (a key, an extra) is said here
    spent = Spent()
    for member in panel.evaluators[0].judges:
        built = await member.ready() if isinstance(member, DeferredJudge) else member
        if not isinstance(built, LLMJudge):
            continue  # keypoints: offline, nothing to prove
        key = VerdictCache.key(
            judge_identity=built.identity(),
            question=PREFLIGHT_QUESTION,
            answer=PREFLIGHT_ANSWER,
            reference=PREFLIGHT_REFERENCE,
        )
        if cache is not None and cache.holds(key):
            continue
        try:
            verdict = await built.judge(
                question=PREFLIGHT_QUESTION,
                answer=PREFLIGHT_ANSWER,
                reference=PREFLIGHT_REFERENCE,
                context=PREFLIGHT_CONTEXT,
            )
        except JudgeError as exc:
            spent.add(exc.tokens, exc.attempts)
            failure: JudgeUnreachable | JudgeMisconfigured
            if exc.fault or exc.transport:  # an outage, or a TLS failure: no reply read
                failure = JudgeUnreachable(
                    f"the judge preflight got no verdict: {exc}; no item was judged"
                )
                failure.spent = spent
                raise failure from None
            if exc.status is None:  # a reply was read: not the verdict asked for
                fix = (
                    "the judge must answer with the JSON verdict asked for (structured output, "
                    "docs/judges.md) within judge-max-tokens"
                )
            else:
                fix = built.provider.remedy(exc.status, str(exc))
            failure = JudgeMisconfigured(
                f"the judge preflight failed: {exc}; {fix}; no item was judged"
            )
            failure.spent = spent
            raise failure from None
        spent.add(verdict.tokens, verdict.attempts or 1)
        if cache is not None:
            cache.put(key, verdict)
    return spent


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
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    try:
        found = await asyncio.wait_for(
            loop.getaddrinfo(host, port, type=socket.SOCK_STREAM), timeout_s
        )
    except socket.gaierror as exc:
        raise JudgeUnreachable(
            f"the judge at {where} cannot be reached: its host name does not resolve "
            f"({exc.strerror}); check judge-base-url"
        ) from None
    except OSError:  # timed out (TimeoutError is one): not a definite answer
        return
    # Every address the name resolves to (localhost: ::1 and 127.0.0.1, say) must refuse:
    # the calls would try the others.
    first: OSError | None = None
    for family, kind, proto, _, address in found:
        try:
            await _connect(loop, family, kind, proto, address, deadline - loop.time())
        except OSError as exc:
            if exc.errno not in _UNREACHABLE:
                return  # timed out or filtered: not a definite answer
            first = first or exc
        else:
            if parts.scheme == "https":
                await _certificate(host, address, where, deadline - loop.time())
            return
    if first is None:
        return  # the name resolved to nothing to try
    why = "connection refused" if first.errno == errno.ECONNREFUSED else first.strerror or first
    raise JudgeUnreachable(
        f"the judge at {where} cannot be reached ({why}): is it running? check judge-base-url"
    )


async def _certificate(host: str, address: tuple[Any, ...], where: str, timeout_s: float) -> None:
    """Raise `JudgeUnreachable` when the judge's certificate is not one this runner trusts:
    every call would fail the same way (the CAs the judge's clients trust: tls.py)."""
    try:
        _, writer = await asyncio.wait_for(
            asyncio.open_connection(
                address[0], address[1], ssl=tls.context(), server_hostname=host
            ),
            max(timeout_s, 0.1),
        )
    except ssl.SSLCertVerificationError as exc:
        said = exc.verify_message or exc.reason or "not verified"
        if tls.wrong_host(said):
            fix = "it is for another host: use a name it is for in judge-base-url"
        else:
            fix = f"its certificate is not trusted here ({tls.HINT})"
        raise JudgeUnreachable(f"the judge at {where} cannot be reached ({said}): {fix}") from None
    except (OSError, TimeoutError):  # other TLS faults, a reset, slowness: left to the calls
        return
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()


async def _connect(
    loop: asyncio.AbstractEventLoop,
    family: int,
    kind: int,
    proto: int,
    address: tuple[Any, ...],
    timeout_s: float,
) -> None:
    """Open a connection to one address and close it again; OSError when it cannot."""
    if timeout_s <= 0:
        raise TimeoutError
    with socket.socket(family, kind, proto) as sock:
        sock.setblocking(False)
        await asyncio.wait_for(loop.sock_connect(sock, address), timeout_s)
