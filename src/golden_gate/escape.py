"""Make untrusted text (questions, answers, judge comments, ids) inert in GitHub Markdown.

Answers come from the model under test and questions from the golden set: either may hold HTML,
a forged sticky marker, links, images, @mentions or table pipes. The output of `inline` is safe
inside a table cell or after a label on one line: no tag, no link, no autolink, no mention, no
issue reference, no line break and no pipe survives.
"""

from __future__ import annotations

import re
import unicodedata

ZWSP = "\u200b"  # breaks GitHub's mention, reference and autolink recognisers
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb]"
)
_WHITESPACE = re.compile(r"\s+")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;", "|": "&#124;"}
_MARKDOWN = set("\\`*_[]()!~{}^$")


def _strip_invisible(text: str) -> str:
    text = _INVISIBLE.sub("", text)
    # Other control and format characters (bidi isolates included) go too; tabs/newlines are
    # whitespace and are collapsed below.
    return "".join(
        ch for ch in text if ch in "\t\n\r" or unicodedata.category(ch) not in ("Cc", "Cf", "Co")
    )


def cut(text: str, limit: int) -> str:
    """At most `limit` characters, with an ellipsis when cut."""
    if limit > 0 and len(text) > limit:
        return text[: max(limit - 1, 0)].rstrip() + "…"
    return text


def inline(text: str | None, *, limit: int = 300) -> str:
    """Escape untrusted text for one line of GitHub Markdown (table cells included)."""
    if text is None:
        return ""
    text = _strip_invisible(text[: limit * 4 if limit > 0 else None])
    text = cut(_WHITESPACE.sub(" ", text).strip(), limit)
    out = []
    for i, ch in enumerate(text):
        if ch in _HTML:
            out.append(_HTML[ch])
        elif ch in _MARKDOWN:
            out.append("\\" + ch)
        elif ch in "@#":
            out.append(("\\#" if ch == "#" else "@") + ZWSP)
        elif ch == ":" and text[i + 1 : i + 2] == "/":
            out.append(":" + ZWSP)  # "scheme://" is what GitHub autolinks
        else:
            out.append(ch)
    escaped = "".join(out)
    # "www." autolinks without a scheme; the dot is already escaped, so split the letters.
    return re.sub(r"(?i)(w)(w)(w)", r"\1" + ZWSP + r"\2\3", escaped)


def code_span(text: str, *, limit: int = 120) -> str:
    """Untrusted text as inline code: still no pipes or line breaks, and no closing fence."""
    return f"<code>{inline(text, limit=limit)}</code>"


def marker_id(value: str) -> str:
    """A comment id safe inside the hidden marker."""
    cleaned = re.sub(r"[^A-Za-z0-9_.-]", "-", value.strip())[:64]
    return cleaned or "default"
