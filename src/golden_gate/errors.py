"""Errors a user can act on, each carrying the exit code the CLI and the Action use."""

from __future__ import annotations

import sys
from collections.abc import Mapping

EXIT_PASSED = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INCOMPLETE = 3


class GateError(Exception):
    """Base class: the message is one sentence a user can act on."""

    exit_code = EXIT_INCOMPLETE


class InputError(GateError):
    """Bad input or configuration (a golden line, a report, a setting)."""

    exit_code = EXIT_BAD_INPUT


class IncompleteError(GateError):
    """The evaluation could not be completed (assistant down, judge unreachable, errors)."""

    exit_code = EXIT_INCOMPLETE


class OutputError(IncompleteError):
    """A result (report, comment, summary, outputs) could not be written: not a gate verdict."""


def unexpected(exc: BaseException, env: Mapping[str, str]) -> str:
    """One sentence for an error no check foresaw (exit 3, never the 1 of a failed gate); the
    traceback goes to stderr only with debug logging on (RUNNER_DEBUG=1, GOLDEN_GATE_DEBUG=1)."""
    if "1" in (env.get("RUNNER_DEBUG"), env.get("GOLDEN_GATE_DEBUG")):
        import traceback

        traceback.print_exception(exc, file=sys.stderr)
    detail = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ""
    return (
        f"golden-gate could not complete: an unexpected {type(exc).__name__}"
        + (f" ({detail})" if detail else "")
        + "; please report it (debug logging shows the traceback)"
    )


def causes(exc: BaseException, *, implicit: bool = False) -> list[BaseException]:
    """`exc` and what it was raised from, outermost first (a library wraps another's errors:
    LangChain the SDK's, the SDK httpx's); `implicit`: also what it was raised while handling
    (some libraries re-raise without `from`); at most ten, so a cycle ends."""
    chain: list[BaseException] = []
    seen: BaseException | None = exc
    while seen is not None and len(chain) < 10:
        chain.append(seen)
        seen = seen.__cause__ or (seen.__context__ if implicit else None)
    return chain
