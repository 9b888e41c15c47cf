"""The example assistant as an agent and as a chat: what the gate's trajectory and
conversation checks are shown on (docs/agents.md).

- `POST /agent {"text": q}`: the `/ask` answer, plus the tool calls it made in OpenAI's chat
  shape (`tool_calls[].function.{name, arguments}`, arguments a JSON string): `search_docs`
  with the page it looked up, for every question it answers (none for a refusal). The
  `candidate` variant calls the wrong tool (`open_ticket`) for questions answered from the
  pages in `WRONG_TOOL`; its answers are the baseline's.
- `POST /chat`: one turn of a conversation. Stateless, the request carries the conversation so
  far (`{"text": q, "history": [{"role", "content"}, ...]}`); stateful, its id
  (`{"text": q, "conversation_id": "..."}`) and the server keeps the history. A follow-up
  that matches nothing on its own ("can I take one while it runs?") is looked up together
  with the user's previous message. The
  `candidate` variant answers from the third turn on as the `/ask` candidate does (only the
  first sentence on some pages): a long conversation that regressed late.

Standard library only, as the server is.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any, Final, Protocol

WRONG_TOOL: Final = frozenset({"backups", "troubleshooting"})
LATE_TURN: Final = 3  # the candidate's chat regresses from this turn on
MAX_CONVERSATIONS: Final = 10_000  # a stateful server's memory is bounded

# server.answer(question, style): the /ask body (passed in: the server imports this module).
Respond = Callable[[str, str], dict[str, Any]]


class Index(Protocol):
    def best(self, question: str) -> tuple[Any, float]: ...


def _call(number: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"call_{number}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


def agent_answer(
    question: str, variant: str, index: Index, respond: Respond, min_score: float
) -> dict[str, Any]:
    """The `/ask` body with the tool calls that produced it."""
    body = respond(question, "baseline")
    section, score = index.best(question)
    if score < min_score:
        return {**body, "tool_calls": []}
    name, args = "search_docs", {"query": section.page}
    if variant == "candidate" and section.page in WRONG_TOOL:
        name, args = "open_ticket", {"topic": section.page}
    return {**body, "tool_calls": [_call(1, name, args)]}


class Conversations:
    """The stateful chat's memory: the messages of each conversation id (bounded)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.messages: dict[str, list[dict[str, str]]] = {}

    def history(self, conversation_id: str) -> list[dict[str, str]]:
        with self._lock:
            return list(self.messages.get(conversation_id, []))

    def add(self, conversation_id: str, said: list[dict[str, str]]) -> None:
        with self._lock:
            if conversation_id not in self.messages and len(self.messages) >= MAX_CONVERSATIONS:
                self.messages.pop(next(iter(self.messages)))
            self.messages.setdefault(conversation_id, []).extend(said)


def chat_answer(
    question: str,
    history: list[dict[str, str]],
    variant: str,
    index: Index,
    respond: Respond,
    min_score: float,
) -> dict[str, Any]:
    """One turn's body: looked up with the user's previous message, so a follow-up finds
    the page the conversation is about."""
    earlier = [m["content"] for m in history if m.get("role") == "user"]
    query = question
    if earlier and index.best(question)[1] < min_score:
        query = f"{question} {earlier[-1]}"  # a follow-up: about what was asked before
    turn = len(earlier) + 1
    style = "candidate" if variant == "candidate" and turn >= LATE_TURN else "baseline"
    return respond(query, style)


def read_history(document: dict[str, Any]) -> list[dict[str, str]]:
    """The request's `history`: chat messages with a role and string content (others are
    left out: the example trusts its caller no further than that)."""
    value = document.get("history")
    if not isinstance(value, list):
        return []
    return [
        {"role": str(m["role"]), "content": m["content"]}
        for m in value
        if isinstance(m, dict)
        and isinstance(m.get("role"), str)
        and isinstance(m.get("content"), str)
    ]
