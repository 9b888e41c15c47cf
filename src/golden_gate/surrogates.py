"""Lone UTF-16 surrogates, replaced with U+FFFD wherever untrusted text enters.

JSON may spell half an emoji (`"\\ud83d"`), and `json.loads` returns it as a lone surrogate: a
Python string that cannot be encoded as UTF-8, so the cache key, the report or the comment
would fail on it. Every reader of untrusted JSON repairs it on the way in and counts what it
replaced, so the result can say so.
"""

from __future__ import annotations

import re
from typing import Any

REPLACEMENT = "\ufffd"
_LONE = re.compile("[\ud800-\udfff]")  # in a str, a surrogate is always a lone one
_ESCAPED = re.compile(r"\\u[dD][89a-fA-F]")  # how a surrogate gets into JSON text


def repair(text: str) -> tuple[str, int]:
    """`text` with each lone surrogate replaced by U+FFFD, and how many were replaced."""
    if text.isascii():
        return text, 0
    return _LONE.subn(REPLACEMENT, text)


def repair_json(value: Any) -> tuple[Any, int]:
    """A parsed JSON value with every string (keys too) repaired, and how many were replaced."""
    if isinstance(value, str):
        return repair(value)
    if isinstance(value, list):
        total = 0
        items = []
        for child in value:
            fixed, count = repair_json(child)
            items.append(fixed)
            total += count
        return items, total
    if isinstance(value, dict):
        total = 0
        fields = {}
        for key, child in value.items():
            fixed_key, key_count = repair(key)
            fixed, count = repair_json(child)
            fields[fixed_key] = fixed
            total += key_count + count
        return fields, total
    return value, 0


def may_hold_surrogates(json_text: str) -> bool:
    """False when the JSON text cannot decode to a lone surrogate: repairing it can be skipped."""
    return _ESCAPED.search(json_text) is not None or _LONE.search(json_text) is not None
