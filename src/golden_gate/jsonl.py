"""JSON Lines files a user writes (golden sets, labels): every bad line named at once.

A line whose first non-blank character is `#` is a comment (no JSON value starts with one), so
a golden set can explain itself; comments are not part of any item or its fingerprint.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from golden_gate import jsontext
from golden_gate.errors import InputError
from golden_gate.surrogates import repair_json

M = TypeVar("M", bound=BaseModel)
MAX_SHOWN = 20


def describe(error: ValidationError) -> str:
    """A validation error as the fields a user has to fix."""
    parts = []
    for problem in error.errors():
        where = ".".join(str(p) for p in problem["loc"])
        message = problem["msg"].removeprefix("Value error, ")
        if problem["type"] == "missing":
            parts.append(f"missing field '{where}'")
        elif problem["type"] == "literal_error":
            expected = str((problem.get("ctx") or {}).get("expected", "")).replace("'", '"')
            got = json.dumps(problem["input"], ensure_ascii=False)
            got = got if len(got) <= 40 else got[:39] + "…"
            parts.append(f"field '{where}' must be {expected}, got {got}")
        elif where:
            parts.append(f"field '{where}': {message}")
        else:
            parts.append(message)
    return "; ".join(parts)


class Problems(list[str]):
    """Problems collected while reading; `raise_if_any` turns them into one InputError.

    `repaired` is not a problem: line number -> lone surrogates replaced with U+FFFD on it.
    """

    def __init__(self) -> None:
        super().__init__()
        self.repaired: dict[int, int] = {}

    def raise_if_any(self) -> None:
        if self:
            more = f" (and {len(self) - MAX_SHOWN} more problems)" if len(self) > MAX_SHOWN else ""
            raise InputError("; ".join(self[:MAX_SHOWN]) + more)


def lines(text: str) -> list[str]:
    """The lines of a JSON Lines text: split at "\n" only (a "\r" before it dropped), never at
    the other breaks `str.splitlines` knows (U+2028, U+0085, ...), which JSON may hold raw
    inside a string."""
    parts = text.split("\n")
    if parts and parts[-1] == "":
        parts.pop()
    return [part.removesuffix("\r") for part in parts]


def records(
    lines: Iterable[str], *, source: str, model: type[M], problems: Problems
) -> Iterator[tuple[str, int, M]]:
    """(`source:line`, line number, record) for each valid line; bad lines go to `problems`.

    Ids are checked too: a duplicate `id` is a problem naming the line it first appeared on.
    """
    first_line: dict[str, int] = {}
    for number, raw in enumerate(lines, start=1):
        text = raw.strip()
        if not text or text.startswith("#"):  # blank, or a comment: no JSON value starts with #
            continue
        where = f"{source}:{number}"
        try:
            data = jsontext.loads(text)
        except json.JSONDecodeError as exc:
            problems.append(f"{where}: invalid JSON ({exc.msg}, column {exc.colno})")
            continue
        if not isinstance(data, dict):
            problems.append(f"{where}: expected a JSON object, got {type(data).__name__}")
            continue
        data, replaced = repair_json(data)  # half an emoji would fail every later encode
        if replaced:
            problems.repaired[number] = replaced
        try:
            record = model.model_validate(data)
        except ValidationError as exc:
            problems.append(f"{where}: {describe(exc)}")
            continue
        record_id = getattr(record, "id", None)
        if isinstance(record_id, str):
            if record_id in first_line:
                problems.append(
                    f"{where}: duplicate id '{record_id}' (first on line {first_line[record_id]})"
                )
                continue
            first_line[record_id] = number
        yield where, number, record
