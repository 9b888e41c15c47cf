"""Reading values the foreign formats share: a question from text, a dict or chat messages,
lists given as JSON text, names people give to fields."""

from __future__ import annotations

import ast
import json
from typing import Any

QUESTION_KEYS = ("question", "query", "input", "user_input", "prompt", "message", "q", "text")
ANSWER_KEYS = (
    "answer", "expected", "expected_output", "expectedOutput", "reference", "ground_truth",
    "ideal", "output", "target", "response",
)  # fmt: skip


def text_of(value: Any) -> str | None:
    """Text of a value: a string, or a message's content parts joined."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # content parts: [{"type": "text", "text": ...}]
        parts = [text_of(p.get("text") or p.get("content")) if isinstance(p, dict) else text_of(p)
                 for p in value]  # fmt: skip
        joined = "\n".join(p for p in parts if p)
        return joined or None
    return None


def last_user(messages: list[Any]) -> tuple[str | None, int]:
    """The last user message's text and how many other messages there were."""
    users = [m for m in messages if isinstance(m, dict) and m.get("role") in ("user", "human")]
    if not users:
        return None, len(messages)
    return text_of(users[-1].get("content")), len(messages) - 1


def pick(data: dict[str, Any], keys: tuple[str, ...]) -> tuple[str | None, Any]:
    for key in keys:
        if data.get(key) not in (None, "", []):
            return key, data[key]
    return None, None


def question_of(value: Any) -> tuple[str | None, str, list[str]]:
    """(question, from where, what was dropped) of an input: text, messages or a dict."""
    if isinstance(value, str):
        return value, "input", []
    if isinstance(value, list):
        text, others = last_user(value)
        dropped = [f"the conversation's other {others} message(s)"] if others else []
        return text, "the last user message", dropped
    if isinstance(value, dict):
        if isinstance(value.get("messages"), list):
            return question_of(value["messages"])
        key, found = pick(value, QUESTION_KEYS)
        if key is None and len(value) == 1:
            key, found = next(iter(value.items()))
        rest = [k for k in value if k != key]
        text, _, dropped = question_of(found) if found is not None else (None, "", [])
        return text, f"input.{key}", dropped + ([f"input fields {', '.join(rest)}"] if rest else [])
    return None, "", []


def answer_of(value: Any) -> tuple[str | None, str]:
    """An expected answer: text, a message, or the answer-like field of a dict."""
    if isinstance(value, str):
        return value, "output"
    if isinstance(value, list):
        text, _ = last_user([{**m, "role": "user"} for m in value if isinstance(m, dict)])
        return text, "the last message"
    if isinstance(value, dict):
        if "content" in value and "role" in value:
            return text_of(value["content"]), "output.content"
        key, found = pick(value, ANSWER_KEYS)
        if key is None and len(value) == 1:
            key, found = next(iter(value.items()))
        if key is not None:
            text, _ = answer_of(found)
            return text, f"output.{key}"
    return None, ""


def listed(value: Any) -> list[str]:
    """A list given as a list, as JSON or Python literal text (ragas CSVs), or one string."""
    if value is None or value == "":
        return []
    if isinstance(value, list):
        return [str(v) for v in value if str(v).strip()]
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            for parse in (json.loads, ast.literal_eval):
                try:
                    parsed = parse(text)
                except (ValueError, SyntaxError, MemoryError, RecursionError):
                    continue
                if isinstance(parsed, list):
                    return [str(v) for v in parsed if str(v).strip()]
        return [text] if text else []
    return [str(value)]
