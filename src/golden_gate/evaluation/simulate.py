"""Simulated users (nightly, behind `simulate-users`): openevals' multi-turn simulator plays a
pinned persona against the assistant for a bounded number of turns; the transcript is judged
by the evaluators that read a whole conversation (task-completion).

Off by default and on the pull-request path: a model plays the user, so each run costs calls
and varies with the model (a seed is sent where the provider takes one; docs/agents.md).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from golden_gate.core.golden import GoldenItem
from golden_gate.errors import InputError
from golden_gate.evaluation import providers, tracing
from golden_gate.evaluation.deferred_judge import DeferredJudge
from golden_gate.evaluation.judge import Judge, LLMJudge

# The persona's instructions: the golden item's `persona` inside; the model plays the user.
PERSONA = (
    "You are role-playing a user of a product's assistant. Stay in character: {persona}\n"
    "Write only the user's next message, one or two sentences, and never answer for the "
    "assistant. When your goal is met or cannot be met, say so briefly."
)

Ask = Callable[[str, list[dict[str, str]]], Awaitable[str]]


def user_model(judge: Judge) -> Any:
    """A chat model for the simulated user, built as the judge's (same provider, key, URL,
    timeout, temperature, seed): the run names one model, not two."""
    built = judge.built() if isinstance(judge, DeferredJudge) else judge
    if not isinstance(built, LLMJudge):
        raise InputError(
            "simulate-users needs a model judge (set judge-model to provider:model): a model plays "
            "the user; the offline keypoints judge cannot"
        )
    provider, name = providers.resolve(built.settings.model)
    chat_model, _client = provider.build(name, built.settings)
    return chat_model


async def simulate(item: GoldenItem, model: Any, ask: Ask) -> list[dict[str, str]]:
    """The conversation: the persona's fixed first message, then the model's, each answered
    by `ask(message, history)`; at most the item's `max_turns` turns."""
    tracing.disable()
    from openevals.simulators import (
        create_async_llm_simulated_user,
        run_multiturn_simulation_async,
    )

    spec = item.simulated_user
    assert spec is not None
    history: list[dict[str, str]] = []

    async def app(message: dict[str, Any], **_: Any) -> dict[str, str]:
        text = str(message.get("content") or "")
        answer = await ask(text, list(history))
        history.extend(
            [{"role": "user", "content": text}, {"role": "assistant", "content": answer}]
        )
        return {"role": "assistant", "content": answer}

    user = create_async_llm_simulated_user(
        system=PERSONA.format(persona=spec.persona),
        client=model,
        fixed_responses=[spec.first_message],
    )
    await run_multiturn_simulation_async(
        app=app, user=user, max_turns=spec.max_turns, thread_id=item.id
    )
    return history
