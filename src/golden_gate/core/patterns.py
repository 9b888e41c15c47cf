"""What `must_include`, `must_not_include` and `forbidden` look for, matched within a time bound.

An entry is a substring (case-insensitive) or, written `/.../`, a regular expression. A pattern
can come from a pull request (its own golden items), and a backtracking pattern such as
`(a+)+$` on a long answer would stall the job for hours with the standard `re`. So patterns are
compiled and matched by `regex`, whose matcher takes a timeout: a match that runs past
`MATCH_TIMEOUT_S` is a `PatternTimeout`, which the check turns into an errored run (never a
pass, never a stalled job).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

MATCH_TIMEOUT_S = 1.0  # per pattern and answer; `regex` checks it while it backtracks


class PatternTimeout(Exception):
    """A pattern took longer than MATCH_TIMEOUT_S on an answer."""


@dataclass(frozen=True)
class Needle:
    """One entry: `text` as written; a regex when written `/.../`."""

    text: str

    @property
    def is_regex(self) -> bool:
        return len(self.text) >= 2 and self.text.startswith("/") and self.text.endswith("/")

    @property
    def body(self) -> str:
        return self.text[1:-1] if self.is_regex else self.text

    def found_in(self, answer: str) -> bool:
        """Whether the answer holds it; PatternTimeout when a regex runs out of time."""
        if not self.is_regex:
            return self.text.casefold() in answer.casefold()
        return search(self.body, answer)


def compiled(pattern: str) -> Any:
    """The compiled pattern; ValueError saying why it is not one."""
    return _compile(pattern)


@lru_cache(maxsize=1024)
def _compile(pattern: str) -> Any:
    import regex  # lazily: a run without patterns never pays for it

    try:
        return regex.compile(pattern)
    except (regex.error, ValueError, TypeError) as exc:
        raise ValueError(f"'{pattern}' is not a regular expression ({exc})") from None


def search(pattern: str, text: str, *, timeout_s: float = MATCH_TIMEOUT_S) -> bool:
    """`pattern` found in `text`, within `timeout_s`; PatternTimeout otherwise."""
    try:
        return compiled(pattern).search(text, timeout=timeout_s) is not None
    except TimeoutError:
        raise PatternTimeout(
            f"pattern '{pattern}' took more than {timeout_s:g} s on the answer "
            "(catastrophic backtracking?)"
        ) from None


def check_entries(entries: list[str], *, what: str) -> list[str]:
    """`entries` as given; ValueError naming the first that is a broken `/regex/` or empty."""
    for entry in entries:
        if not isinstance(entry, str) or not entry.strip():
            raise ValueError(f"{what}: an entry is empty")
        needle = Needle(entry)
        if needle.is_regex:
            try:
                compiled(needle.body)
            except ValueError as exc:
                raise ValueError(f"{what}: {exc}") from None
    return entries


def check_schema(schema: Any, *, what: str) -> None:
    """ValueError when `schema` is not a JSON Schema (an object, valid against its dialect's
    meta-schema: a typo such as `"type": "objet"` stops the run instead of passing all)."""
    if not isinstance(schema, dict):
        raise ValueError(f"{what}: a JSON Schema is an object, got {type(schema).__name__}")
    from jsonschema import SchemaError, validators  # lazily: only sets that use it pay

    try:
        validators.validator_for(schema).check_schema(schema)
    except SchemaError as exc:
        raise ValueError(f"{what}: not a valid JSON Schema ({exc.message})") from None


def schema_problem(schema: dict[str, Any], value: Any) -> str | None:
    """Why `value` does not validate against `schema` (the first problem, with its path), or
    None when it does."""
    from jsonschema import validators

    validator = validators.validator_for(schema)(schema)
    error = next(iter(sorted(validator.iter_errors(value), key=lambda e: list(e.path))), None)
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path)
    message = error.message if len(error.message) <= 300 else error.message[:299] + "…"
    return f"at /{where}: {message}" if where else message
