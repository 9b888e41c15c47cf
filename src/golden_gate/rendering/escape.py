"""Make untrusted text (questions, answers, judge comments, ids) inert in GitHub Markdown.

Answers come from the model under test and questions from the golden set: either may hold HTML,
a forged sticky marker, links, images, @mentions, references (`#1`, `GH-1`, `owner/repo#1`,
commit SHAs) or table pipes. The output of `inline` is safe inside a table cell or after a
label on one line: no tag, no link, no autolink, no mention, no reference, no line break, no
pipe and no registered secret survives.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

from golden_gate import redaction
from golden_gate.text import cut

ZWSP = "\u200b"  # breaks GitHub's mention, reference and autolink recognisers
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb]"
)
_ASCII_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # all that ASCII loses
_WWW = re.compile(r"(?i)(w)(w)(w)")
# GitHub links GH-123 like #123, and a hex word of 7 or more characters to the commit it may
# name: a zero-width space after "GH-", and in hex words every 6 characters. One pass for both.
_REFERENCE = re.compile(r"(?i)\bgh-(?=\d)|(?<![0-9a-z])[0-9a-f]{7,}(?![0-9a-z])")
# In every hex word _REFERENCE breaks. Spelt out, not (?i): the same characters (no other
# character folds to one of them), found in half the time.
_HEX_RUN = re.compile(r"[0-9a-fA-F]{7}")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;", "|": "&#124;"}
_MARKDOWN = set("\\`*_[]()!~{}^$")
# Every character that is escaped, and how: one regex pass finds them (most text has few),
# which is several times faster than `str.translate` with multi-character replacements.
_ESCAPES = {**_HTML, **{ch: "\\" + ch for ch in _MARKDOWN}, "@": "@" + ZWSP, "#": "\\#" + ZWSP}
_SPECIAL = re.compile("[" + re.escape("".join(_ESCAPES)) + "]")


class _Deletions(dict[int, int | None]):
    """A `str.translate` table that deletes what `_strip_invisible` must, learnt per character.

    Each code point is classified once (by `_INVISIBLE` and its Unicode category) and then
    looked up in C, instead of a Python call per character of every text.
    """

    def __missing__(self, code: int) -> int | None:
        ch = chr(code)
        keep = ch in "\t\n\r" or (
            not _INVISIBLE.match(ch) and unicodedata.category(ch) not in ("Cc", "Cf", "Co")
        )
        value = code if keep else None
        if len(self) < 65_536:  # bounded, whatever the input
            self[code] = value
        return value


_DELETIONS = _Deletions()


def _strip_invisible(text: str) -> str:
    # The listed invisibles, then other control and format characters (bidi isolates
    # included); tabs/newlines are whitespace and are collapsed by the caller. Of ASCII, only
    # the C0 controls but tab, newline and carriage return, and DEL, are either.
    if text.isascii():
        return _ASCII_CONTROL.sub("", text)
    return text.translate(_DELETIONS)


def _escape(match: re.Match[str]) -> str:
    return _ESCAPES[match.group()]


def _break_reference(match: re.Match[str]) -> str:
    word = match.group()
    if word[-1] == "-":
        return word + ZWSP
    return ZWSP.join(word[i : i + 6] for i in range(0, len(word), 6))


def inline(text: str | None, *, limit: int = 300) -> str:
    """Escape untrusted text for one line of GitHub Markdown (table cells included)."""
    if text is None:
        return ""
    text = _strip_invisible(text[: limit * 4 + redaction.longest() if limit > 0 else None])
    # Runs of whitespace become one space, none at either end (split() and `\s` agree on
    # what whitespace is: Py_UNICODE_ISSPACE). Secrets go after invisibles (one hidden inside
    # a secret would split it) and before the cut (which could leave half of one).
    text = cut(redaction.scrub(" ".join(text.split())), limit)
    # "scheme://" is what GitHub autolinks: a zero-width space after every ":" before a "/"
    # (no escape produces or removes a ":" or a "/", so this can follow them).
    escaped = _SPECIAL.sub(_escape, text).replace(":/", ":" + ZWSP + "/")
    # The last two passes scan every character, and most text has nothing for them: a test
    # for what each needs at least (three w's; "gh-" or seven hex digits) goes first.
    lowered = escaped.lower()
    if "www" in lowered:
        # "www." autolinks without a scheme; the dot is already escaped, so split the letters.
        escaped = _WWW.sub(r"\1" + ZWSP + r"\2\3", escaped)
    if "gh-" in lowered or _HEX_RUN.search(escaped):
        escaped = _REFERENCE.sub(_break_reference, escaped)
    return escaped


def code_span(text: str, *, limit: int = 120) -> str:
    """Untrusted text as inline code: still no pipes or line breaks, and no closing fence."""
    return f"<code>{inline(text, limit=limit)}</code>"


_SAFE_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def marker_id(value: str) -> str:
    """A comment id safe inside the hidden marker, one for each id: an id of `[A-Za-z0-9_.-]`
    (at most 64) as it is; any other, a readable part and `~` (never in the first kind) with a
    hash of the exact id, so `検索`/`翻訳` or `docs+api`/`docs api` stay apart."""
    if _SAFE_ID.fullmatch(value):
        return value
    if not value.strip():
        return "default"
    readable = re.sub(r"[^A-Za-z0-9_.-]", "-", value.strip())[:40]
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{readable}~{digest}"


def legacy_marker_id(value: str) -> str:
    """The id as markers wrote it before they were one an id (read for one release)."""
    cleaned = re.sub(r"[^A-Za-z0-9_.-]", "-", value.strip())[:64]
    return cleaned or "default"


def terminal(text: str | None, *, limit: int = 2000) -> str:
    """Untrusted text for a terminal: no escape sequence, control or bidi character (an answer
    cannot recolour, move the cursor or hide text), no registered secret; lines kept."""
    if text is None:
        return ""
    text = _strip_invisible(text[: limit * 4 + redaction.longest() if limit > 0 else None])
    lines = [" ".join(line.split()) for line in text.replace("\r", "\n").split("\n")]
    return cut(redaction.scrub("\n".join(line for line in lines if line)), limit)
