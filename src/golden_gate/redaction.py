"""The secrets this run knows, and `scrub`, which keeps them out of everything it writes.

Registered: the GitHub token, judge provider keys, assistant header values and passwords in
URLs. Scrubbed at the writing edges: report.json, the rendered comment and summary, outputs,
workflow commands and error messages. A URL's credentials are removed wherever one appears.
The one scrubber for every caller: the assistant's client adds its own header values (`also`),
the judge, whose errors an SDK words, every secret-named variable and key-shaped word too
(`third_party`), so neither depends on what the run registered.

GitHub's `::add-mask::` masks a secret of any length in the log; `scrub` cannot: a value under
`MIN_LENGTH` characters would also replace ordinary text ("ab" in "about"), so such a value is
registered as too short and callers say it is not scrubbed.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, unquote, urlsplit

MIN_LENGTH = 4
MASK = "***"  # shorter than MIN_LENGTH: scrubbing never makes a text longer
_TOKEN_PART = 8  # in "Bearer <token>", a part this long is a secret on its own
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/?#\s@\"'<>]+@")

_values: set[str] = set()
_ordered: list[str] = []  # longest first, so no part of a longer secret is left behind
_too_short: set[str] = set()


def _forms(value: str) -> set[str]:
    # As given, as percent-encoded in a URL, and as escaped inside a JSON string.
    return {value, quote(value, safe=""), json.dumps(value)[1:-1]}


def _variants(value: str) -> set[str]:
    """What to scrub for one secret: it and, in "Bearer <token>", each part long enough to be
    a secret on its own, each as written in text, a URL or a JSON string."""
    found = _forms(value)
    for part in value.split():
        if len(part) >= _TOKEN_PART:
            found |= _forms(part)
    return {v for v in found if len(v) >= MIN_LENGTH}


def register(value: str | None) -> bool:
    """Remember a secret; False when it is too short to be scrubbed (it is still masked)."""
    value = (value or "").strip()
    if not value:
        return True
    if len(value) < MIN_LENGTH:
        _too_short.add(value)
        return False
    _values.update(_variants(value))
    _ordered[:] = sorted(_values, key=len, reverse=True)
    return True


# Environment variables whose name says they hold a secret, and words shaped like an API key
# or a bearer credential: what an SDK's error may echo although nobody registered it.
_SECRET_NAME = ("KEY", "TOKEN", "SECRET", "PASSWORD")
_KEY_SHAPED = re.compile(r"\b(sk-[A-Za-z0-9_*-]{6,}|Bearer\s+\S+)")


def _environment_secrets() -> set[str]:
    return {
        value
        for name, value in os.environ.items()
        if len(value) >= _TOKEN_PART and any(n in name.upper() for n in _SECRET_NAME)
    }


# A query parameter whose name says it carries a credential: `?subscription-key=`, `?api-key=`,
# `?access_token=`, `?code=`, Azure's SAS `?sig=` ... (its value is treated as a password).
_SECRET_PARAM = re.compile(
    r"(?i)(key|token|secret|sig|signature|password|passwd|pwd|auth|credential|code|session)"
)
_QUERY_PAIR = re.compile(r"([?&;])([^=&;#\s]+)=([^&;#\s\"'<>]*)")


def _query_secrets(query: str) -> list[str]:
    return [
        unquote(value)
        for _, name, value in _QUERY_PAIR.findall("?" + query)
        if value and _SECRET_PARAM.search(unquote(name))
    ]


def url_problem(url: str) -> str | None:
    """Why `url` is no http(s) URL a client can use (`http://[fd00::1/v1`, a port that is not a
    number, no host), or None; the reason never holds its credentials."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not one
    except ValueError as exc:
        return str(exc)
    if parts.scheme.lower() not in ("http", "https"):
        return "it must start with http:// or https://"
    if not parts.hostname:
        return "it names no host"
    if any(ch.isspace() or ord(ch) < 32 for ch in url):
        return "it holds white space or a control character"
    if ":" not in parts.hostname:  # not an IPv6 address
        try:  # as the HTTP client encodes it: an empty or over-long label fails every request
            parts.hostname.encode("idna")
        except UnicodeError:
            return f"the host name {parts.hostname!r} has an empty or over-long label"
    return None


def url_credentials(url: str | None) -> list[str]:
    """The password in a URL (or its user name when it has no password: a token as user),
    and the value of every query parameter named like a credential."""
    try:
        parts = urlsplit(url or "")
    except ValueError:
        return []
    secret = parts.password if parts.password is not None else parts.username
    return ([unquote(secret)] if secret else []) + _query_secrets(parts.query)


def without_credentials(url: str) -> str:
    """`url` with any `user:password@` removed and every credential-named query parameter's
    value masked: what a report, a log line or a summary may show."""
    url = _USERINFO.sub(r"\1", url)
    if "?" not in url:
        return url

    def masked(match: re.Match[str]) -> str:
        sep, name, value = match.groups()
        secret = value and _SECRET_PARAM.search(unquote(name))
        return f"{sep}{name}={MASK}" if secret else match.group()

    head, _, tail = url.partition("?")
    return head + _QUERY_PAIR.sub(masked, "?" + tail)


def longest() -> int:
    """The length of the longest registered secret (0 when none is)."""
    return len(_ordered[0]) if _ordered else 0


def too_short() -> int:
    """How many registered secrets are too short to be scrubbed."""
    return len(_too_short)


def clear() -> None:
    """Forget every secret (tests, and a process that runs the gate twice)."""
    _values.clear()
    _ordered.clear()
    _too_short.clear()


def present(text: str) -> bool:
    """Whether `scrub` would change `text`."""
    return any(value in text for value in _ordered) or (
        "://" in text and "@" in text and _USERINFO.search(text) is not None
    )


def scrub(text: str, *, also: Iterable[str] = (), third_party: bool = False) -> str:
    """`text` with every registered secret, every URL's credentials and each of `also` (a
    client's own secrets, whether or not the run registered them) replaced by `***`.

    `third_party`: text a provider's SDK or server wrote (an error): every secret-named
    environment variable's value and every key-shaped word go too.
    """
    if not text:
        return text
    if "://" in text and "@" in text:  # both in every URL with credentials: a cheap test first
        text = _USERINFO.sub(r"\1" + MASK + "@", text)
    values = _ordered
    extra = {v for value in also for v in _variants(value.strip())}
    if third_party:
        extra |= _environment_secrets()
    if extra:
        values = sorted(extra.union(_ordered), key=len, reverse=True)  # longest first
    for value in values:
        if value in text:
            text = text.replace(value, MASK)
    return _KEY_SHAPED.sub(MASK, text) if third_party else text


def scrub_json(value: Any) -> Any:
    """A parsed JSON value with every string in it (keys too) scrubbed."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, list):
        return [scrub_json(child) for child in value]
    if isinstance(value, dict):
        return {scrub(key): scrub_json(child) for key, child in value.items()}
    return value


# Personal data in text from production (traces turned into candidate items): e-mail
# addresses, phone numbers, card-like digit runs and IP addresses, each replaced by a label.
_PERSONAL = (
    (re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}"), "[email]"),
    (re.compile(r"\b(?:\d[ -]?){13,19}\b"), "[card number]"),
    (
        re.compile(r"(?<![\w.])\+?\d{1,3}[ .-]?\(?\d{2,4}\)?[ .-]?\d{3,4}[ .-]?\d{3,4}(?![\w.])"),
        "[phone]",
    ),
    (re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}\b"), "[ip]"),
)


def scrub_personal(text: str) -> str:
    """`text` scrubbed as a third party's (`scrub`), and its personal data replaced by labels."""
    text = scrub(text, third_party=True)
    for pattern, label in _PERSONAL:
        text = pattern.sub(label, text)
    return text
