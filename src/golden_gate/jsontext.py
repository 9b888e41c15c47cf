"""`json.loads` for text others write, refusing what would crash us later.

The standard parser raises `RecursionError` on deep nesting and a bare `ValueError` on an
integer over 4,300 digits, and pydantic cannot serialise a value nested a few hundred deep.
Here each is a `json.JSONDecodeError`, which every reader already turns into one sentence.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_DEPTH = 64  # golden lines, reports and payloads are a handful deep
_LONG_NUMBER = re.compile(r"\d{4301,}")


def loads(text: str | bytes, *, check_depth: bool = True) -> Any:
    """Parse; `check_depth=False` when the caller bounds the depth itself (large reports)."""
    if isinstance(text, bytes | bytearray):
        text = text.decode("utf-8", "replace")
    try:
        data = json.loads(text)
    except RecursionError:
        raise json.JSONDecodeError(f"nested more than {MAX_DEPTH} deep", text, 0) from None
    except json.JSONDecodeError:
        raise
    except ValueError:  # the interpreter's limit on converting long digit strings
        found = _LONG_NUMBER.search(text)
        raise json.JSONDecodeError(
            "a number with more than 4300 digits", text, found.start() if found else 0
        ) from None
    if check_depth and nested_deeper(data, MAX_DEPTH):
        raise json.JSONDecodeError(f"nested more than {MAX_DEPTH} deep", text, 0)
    return data


def nested_deeper(value: Any, limit: int) -> bool:
    """True when lists and objects nest more than `limit` levels (walked level by level)."""
    level = [value] if isinstance(value, dict | list) else []
    for _ in range(limit):
        if not level:
            return False
        deeper: list[Any] = []
        for container in level:
            values = container.values() if isinstance(container, dict) else container
            deeper.extend(v for v in values if isinstance(v, dict | list))
        level = deeper
    return bool(level)
