"""Plain text helpers for every layer."""

from __future__ import annotations


def cut(text: str, limit: int) -> str:
    """At most `limit` characters, with an ellipsis when cut."""
    if limit > 0 and len(text) > limit:
        return text[: max(limit - 1, 0)].rstrip() + "…"
    return text
