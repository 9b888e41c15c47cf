"""Conversations: a golden item's turns, one request each with the history so far, and simulated
users; a conversation paused at a turn the judge failed on resumes there."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from golden_gate.core.golden import GoldenItem, Turn
from golden_gate.core.item_result import RunResult, TurnResult
from golden_gate.core.report import RunStats
from golden_gate.evaluation.eval_settings import EvalSettings
from golden_gate.evaluation.evaluators import Panel
from golden_gate.evaluation.target import Answer, AssistantClient
from golden_gate.text import cut


class Conversations:
    """A conversation's turns, asked and judged in order (a mixin of evaluate.Evaluation)."""

    client: AssistantClient
    panel: Panel | None
    settings: EvalSettings
    stats: RunStats
    _nonce: str
    _conversations: dict[str, int]
    _unjudged: dict[int, tuple[RunResult, str, str | None, dict[str, object]]]
    _paused: dict[int, tuple[RunResult, Paused]]
    _user_model: object | None

    if TYPE_CHECKING:

        async def _judged(
            self,
            item: GoldenItem,
            answer: Answer,
            *,
            rerun: bool,
            keep: bool = True,
            per_turn: bool = False,
            asked: bool = True,
        ) -> RunResult: ...

        async def _evaluated(self, *args: Any, **kwargs: Any) -> RunResult: ...

    def conversation_id(self, item: GoldenItem) -> str:
        """A new conversation's id: stable for its turns, unique per item, run and evaluation."""
        number = self._conversations[item.id] = self._conversations.get(item.id, 0) + 1
        seed = json.dumps([self._nonce, item.id, number])
        return "gg-" + hashlib.sha256(seed.encode("utf-8")).hexdigest()[:20]

    async def _conversation(
        self, item: GoldenItem, turns: Sequence[Turn], *, rerun: bool, paused: Paused | None = None
    ) -> RunResult:
        """Each turn one request with the history so far, judged as an answer of its own (the
        judge reads the conversation up to it; the cache key covers it); the run passes when
        every turn does, and names the first that did not.

        A turn the judge failed on pauses the conversation (`Paused`): at the end of the run
        `judge_again` resumes it there, that turn's recorded answer judged again and the later
        turns asked then, so no turn is asked twice (turns are not independent)."""
        state = paused or Paused(conversation=self.conversation_id(item))
        run: RunResult | None = state.last
        for number, turn in enumerate(turns, start=1):
            if number < state.number:
                continue
            view = turn_view(item, turn, state.history)
            if paused is not None and number == paused.number:
                answer = paused.answer  # asked before; its tokens already counted
                assert answer is not None
                run = await self._judged(view, answer, rerun=rerun, per_turn=True, asked=False)
            else:
                self.stats.assistant_calls += 1
                answer = await self.client.ask(
                    item,
                    question=turn.question,
                    history=list(state.history),
                    conversation_id=state.conversation,
                )
                run = await self._judged(view, answer, rerun=rerun, per_turn=True)
            unjudged = self._unjudged.pop(id(run), None)
            state.latency += 0.0 if paused and number == paused.number else run.latency_ms or 0.0
            turn_result = TurnResult(
                turn=number,
                question=cut(turn.question, self.settings.answer_excerpt_chars),
                status=run.status,
                answer=run.answer,
                why=run.why,
                tool_calls=run.tool_calls,
            )
            if run.status == "error":  # no answer to go on with, or no verdict
                stopped = run.model_copy(
                    update={"turns": [*state.kept, turn_result], "failed_turn": number}
                )
                if unjudged is not None:  # the judge's failure: resumed at the end of the run
                    self._paused[id(stopped)] = (stopped, state.at(number, answer, run))
                return stopped
            state.kept.append(turn_result)
            if run.status == "fail" and state.failed is None:
                state.failed = (number, run)
            assert answer.text is not None
            state.history = [
                *state.history,
                {"role": "user", "content": turn.question},
                {"role": "assistant", "content": answer.text},
            ]
        assert run is not None
        final = await self._transcript_run(item, state.history, run)
        failed = state.failed
        if final is not None and final.status != "pass" and failed is None:
            return final.model_copy(update={"turns": state.kept})
        base = failed[1] if failed is not None else run
        whole = [*(base.evaluations or []), *(final.evaluations or [] if final else [])]
        return base.model_copy(
            update={
                "turns": state.kept,
                "failed_turn": failed[0] if failed is not None else None,
                "latency_ms": round(state.latency, 1),
                "evaluations": whole or None,
            }
        )

    async def _simulated(self, item: GoldenItem, *, rerun: bool) -> RunResult:
        """A simulated user's conversation (simulate.py), judged as a whole at its end."""
        from golden_gate.evaluation import simulate

        assert self.panel is not None  # checked before the run (evaluate)
        await self.panel.ready()
        if self._user_model is None:
            self._user_model = simulate.user_model(self.panel.evaluators[0].judges[0])
        conversation = self.conversation_id(item)
        unanswered: list[Answer] = []

        async def ask(text: str, history: list[dict[str, str]]) -> str:
            self.stats.assistant_calls += 1
            answer = await self.client.ask(
                item, question=text, history=history, conversation_id=conversation
            )
            if answer.text is None or answer.error is not None:
                unanswered.append(answer)
                raise Unanswered
            return answer.text

        try:
            history = await simulate.simulate(item, self._user_model, ask)
        except Unanswered:
            failed = unanswered[0]
            return RunResult(
                status="error",
                error_side="assistant",
                error=failed.error or "no answer",
                http_status=failed.http_status,
                rerun=rerun,
            )
        except Exception as exc:  # the simulated user's model: no verdict about the assistant
            reason = cut(" ".join(f"{type(exc).__name__}: {exc}".split()), 300)
            return RunResult(
                status="error", error_side="judge", error=f"simulated user: {reason}", rerun=rerun
            )
        limit = self.settings.answer_excerpt_chars
        turns = [
            TurnResult(
                turn=n,
                question=cut(history[2 * n - 2]["content"], limit),
                status="pass",  # answered; the transcript's evaluators judge the whole
                answer=cut(history[2 * n - 1]["content"], limit),
            )
            for n in range(1, len(history) // 2 + 1)
        ]
        last = RunResult(status="pass", rerun=rerun, answer=turns[-1].answer if turns else None)
        final = await self._transcript_run(item, history, last)
        assert final is not None  # a transcript evaluator is required (evaluate)
        return final.model_copy(update={"turns": turns})

    async def _transcript_run(
        self, item: GoldenItem, history: list[dict[str, str]], last: RunResult
    ) -> RunResult | None:
        """The evaluators that read the whole conversation (task completion), once an item."""
        if self.panel is None or not any(e.reads == "transcript" for e in self.panel.evaluators):
            return None
        whole = item.model_copy(update={"question": as_transcript(history[:1]), "turns": None})
        result = {k: v for k, v in last.model_dump().items() if k in RUN_FIELDS}
        return await self._evaluated(
            whole, "", None, result, transcript=as_transcript(history), only="transcript"
        )


RUN_FIELDS = frozenset(
    ["rerun", "http_status", "latency_ms", "surrogates_replaced", "answer", "sources", "checks",
     "tool_calls"]
)  # fmt: skip


@dataclass
class Paused:
    """A conversation's progress, to resume it at turn `number` (its `answer` judged again)."""

    conversation: str
    number: int = 1
    history: list[dict[str, str]] = field(default_factory=list)
    kept: list[TurnResult] = field(default_factory=list)
    failed: tuple[int, RunResult] | None = None
    latency: float = 0.0
    answer: Answer | None = None
    last: RunResult | None = None

    def at(self, number: int, answer: Answer, run: RunResult) -> Paused:
        return replace(self, number=number, answer=answer, last=run, kept=list(self.kept))


def turn_view(item: GoldenItem, turn: Turn, history: list[dict[str, str]]) -> GoldenItem:
    """A conversation's turn as an item of its own: the turn's checks and key points, and as
    its question the conversation up to it (what the judge reads and the cache key covers)."""
    said = [*history, {"role": "user", "content": turn.question}]
    fields = {name: getattr(turn, name) for name in Turn.model_fields if name != "question"}
    return item.model_copy(update={**fields, "question": as_transcript(said), "turns": None})


def as_transcript(messages: Sequence[dict[str, str]]) -> str:
    """Chat messages as the judge reads them: `user: …` / `assistant: …`, a message a block;
    a single user message as itself."""
    if len(messages) == 1:
        return messages[0]["content"]
    return "\n\n".join(f"{m['role']}: {m['content']}" for m in messages)


class Unanswered(Exception):
    """The assistant gave no answer in a simulated conversation: the run is its error."""
