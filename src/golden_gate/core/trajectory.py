"""Tool-call trajectories as the report keeps and shows them: bounded, one line a call."""

from __future__ import annotations

import json
from collections.abc import Sequence

from golden_gate.core.golden import ExpectedCall
from golden_gate.core.item_result import ToolCall

# A runaway agent cannot swell the report: the first calls, each with its arguments cut.
MAX_CALLS_KEPT = 50
MAX_ARGUMENT_CHARS = 1_000
NO_CALLS = "(no tool calls)"


def compact(value: object) -> str:
    """JSON text with sorted keys and no spaces: the same arguments, the same text."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def kept(calls: Sequence[tuple[str, object]]) -> list[ToolCall]:
    """(name, arguments) pairs as the report keeps them."""
    out = []
    for name, args in calls[:MAX_CALLS_KEPT]:
        text = compact(args) if args is not None else ""
        if len(text) > MAX_ARGUMENT_CHARS:
            text = text[: MAX_ARGUMENT_CHARS - 1] + "…"
        out.append(ToolCall(name=name[:200], arguments=text))
    return out


def call_text(name: str, arguments: str) -> str:
    return f"{name}({arguments})" if arguments and arguments != "{}" else f"{name}()"


def sequence(calls: Sequence[ToolCall] | None) -> str:
    """`search({"q":"x"}) → open_ticket()`; NO_CALLS for none."""
    if not calls:
        return NO_CALLS
    return " → ".join(call_text(c.name, c.arguments) for c in calls)


def expected_text(calls: Sequence[ExpectedCall]) -> list[str]:
    """An item's expected calls, one line each: `search({"q":"/refund/"})`, `x(*)` any args."""
    lines = []
    for call in calls:
        if call.args is None:
            lines.append(f"{call.name}(*)")
            continue
        shown = {
            key: (
                "*"
                if call.args_match.get(key) == "ignore"
                else f"/{value}/"
                if call.args_match.get(key) == "regex"
                else value
            )
            for key, value in call.args.items()
        }
        lines.append(call_text(call.name, compact(shown)))
    return lines
