"""A judge's prompt template: read, and checked that openevals can fill it; and how the judge's
messages quote what an SDK said (one line, secrets scrubbed)."""

from __future__ import annotations

import string
from pathlib import Path

from golden_gate import redaction
from golden_gate.errors import InputError

PLACEHOLDERS = ("inputs", "outputs", "reference_outputs")


def redact(text: str) -> str:
    return redaction.scrub(text, third_party=True)  # an SDK wrote it: redaction.py


def one_line(text: str, limit: int = 200) -> str:
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return line if len(line) <= limit else line[: limit - 3] + "..."


def load_prompt(
    path: Path,
    *,
    required: tuple[str, ...] = PLACEHOLDERS,
    allowed: tuple[str, ...] = PLACEHOLDERS,
) -> str:
    """Read a prompt template and check openevals can fill it; InputError otherwise."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise InputError(f"{path}: cannot read the judge prompt file ({reason})") from None
    check_prompt(text, source=str(path), required=required, allowed=allowed)
    return text


def check_prompt(
    text: str,
    *,
    source: str,
    required: tuple[str, ...] = PLACEHOLDERS,
    allowed: tuple[str, ...] = PLACEHOLDERS,
) -> None:
    """A prompt must use every `required` placeholder and none outside `allowed`.

    By default (the correctness prompt): `{inputs}`, `{outputs}`, `{reference_outputs}`.
    """
    fields: set[str] = set()
    try:
        fields = {f for _, f, _, _ in string.Formatter().parse(text) if f is not None}
        text.format(**dict.fromkeys(allowed, ""))
    except (ValueError, KeyError, IndexError, AttributeError) as exc:
        unknown = sorted(fields - set(allowed)) if isinstance(exc, KeyError) else []
        problem = (
            f"uses the placeholder {{{unknown[0]}}}, which is never filled"
            if unknown
            else f"is not a valid template ({one_line(str(exc))})"
        )
        raise InputError(
            f"{source}: the judge prompt {problem}; write literal braces as {{{{ and }}}}"
        ) from None
    for name in required:
        if name not in fields:
            raise InputError(f"{source}: the judge prompt has no {{{name}}} placeholder")
