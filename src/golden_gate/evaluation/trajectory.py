"""Tool-call trajectories: read from the assistant's response, checked against the golden item.

The matching is openevals' (`create_trajectory_match_evaluator`: strict, unordered, subset,
superset); what it does not do is here: reading the calls from a response's shapes, the
per-argument matchers (exact, ignore, regex) it takes as a callable per tool, forbidden tools
and a step limit. These are deterministic checks: free, before any judge call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from golden_gate.core.golden import ExpectedCall, GoldenItem, ToolsMatch, Turn
from golden_gate.core.item_result import CheckOutcome
from golden_gate.core.trajectory import compact, expected_text, sequence
from golden_gate.core.trajectory import kept as kept_calls

Call = tuple[str, object]  # (name, arguments: usually a dict)
_OURS = "__golden_gate_expected__"  # wraps an expected call's arguments for our matcher


class BadToolCalls(ValueError):
    """The value at tools-path is not a list of tool calls (one sentence, no retry)."""


def read_calls(value: Any, path: str) -> list[Call]:
    """Tool calls from the OpenAI chat shape (`[{function: {name, arguments}}]`, arguments a
    JSON string or an object) or a plain list of `{name, args}` (or `arguments`)."""
    if value is None:
        return []
    if isinstance(value, dict) and isinstance(value.get("tool_calls"), list):
        value = value["tool_calls"]  # the message itself
    if not isinstance(value, list):
        raise BadToolCalls(f"tool calls at '{path}' is not a list")
    calls: list[Call] = []
    for number, entry in enumerate(value, start=1):
        spec = entry.get("function", entry) if isinstance(entry, dict) else None
        name = spec.get("name") if isinstance(spec, dict) else None
        if not isinstance(name, str) or not name:
            raise BadToolCalls(f"tool call {number} at '{path}' has no name")
        assert isinstance(spec, dict)
        args = spec.get("arguments", spec.get("args"))
        if isinstance(args, str):
            try:
                args = json.loads(args) if args.strip() else {}
            except json.JSONDecodeError:
                args = {"(not JSON)": args}  # kept for the reader; matches no expected argument
        calls.append((name, args if args is not None else {}))
    return calls


def _argument_matches(actual: dict[str, Any], wrapped: dict[str, Any]) -> bool:
    expected = wrapped.get(_OURS)
    if expected is None:  # not ours: openevals' exact comparison
        return actual == wrapped
    args, modes = expected["args"], expected["match"]
    if args is None:
        return True
    if not isinstance(actual, dict):
        return False
    for key, want in args.items():
        mode = modes.get(key, "exact")
        if mode == "ignore":
            continue
        if key not in actual:
            return False
        got = actual[key]
        if mode == "regex":
            text = got if isinstance(got, str) else compact(got)
            if re.search(want, text) is None:
                return False
        elif got != want:
            return False
    return True


def _messages(calls: Sequence[tuple[str, object]]) -> list[dict[str, Any]]:
    # One assistant message a call: openevals' strict mode then compares the order too.
    return [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "", "type": "function", "function": {"name": n, "arguments": compact(a)}}
            ],
        }
        for n, a in calls
    ]


def matches(expected: Sequence[ExpectedCall], actual: Sequence[Call], mode: ToolsMatch) -> bool:
    """openevals' trajectory match, with our argument matchers."""
    from golden_gate.evaluation import tracing

    tracing.disable()
    from openevals.trajectory.match import create_trajectory_match_evaluator

    reference = [(c.name, {_OURS: {"args": c.args, "match": c.args_match}}) for c in expected]
    evaluator = create_trajectory_match_evaluator(
        trajectory_match_mode=mode,
        tool_args_match_mode="exact",
        tool_args_match_overrides={c.name: _argument_matches for c in expected},
    )
    outcome = evaluator(outputs=_messages(actual), reference_outputs=_messages(reference))
    # One result (openevals' evaluator type allows a list, for evaluators of several scores).
    (result,) = outcome if isinstance(outcome, list) else [outcome]
    return bool(result["score"])


def check_calls(rules: GoldenItem | Turn, calls: Sequence[Call]) -> list[CheckOutcome]:
    """The item's (or turn's) tool-call checks, in a fixed order: expected, forbidden, steps."""
    outcomes: list[CheckOutcome] = []
    got = sequence(kept_calls(calls))
    if rules.expected_tools is not None:  # first: its reason shows both sequences
        if matches(rules.expected_tools, calls, rules.tools_match):
            outcomes.append(CheckOutcome(name="tools", passed=True))
        else:
            want = " → ".join(expected_text(rules.expected_tools)) or "(no tool calls)"
            reason = f"expected {want} ({rules.tools_match}), got {got}"
            outcomes.append(CheckOutcome(name="tools", passed=False, reason=reason))
    if rules.forbidden_tools:
        called = [name for name, _ in calls if name in rules.forbidden_tools]
        reason = f"called {called[0]}" if called else ""
        outcomes.append(CheckOutcome(name="forbidden_tools", passed=not called, reason=reason))
    if rules.max_steps is not None:
        over = len(calls) > rules.max_steps
        reason = f"{len(calls)} tool calls, more than max_steps {rules.max_steps}" if over else ""
        outcomes.append(CheckOutcome(name="max_steps", passed=not over, reason=reason))
    return outcomes


def has_rules(rules: GoldenItem | Turn) -> bool:
    return (
        bool(rules.forbidden_tools)
        or rules.max_steps is not None
        or (rules.expected_tools is not None)
    )
