"""The named evaluators (`evaluators`): each preset's openevals prompt, whether it needs the
retrieved context, and what its judge reads. Plain data, so the settings table lists the names
in the `evaluators` help (and action.yml, the schema, the docs) without importing a judge."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

CORRECTNESS = "correctness"

# What an evaluator's judge reads as the output it judges: the answer, the tool calls with
# the answer (trajectory), or the whole conversation (transcript, judged once an item).
Reads = Literal["answer", "trajectory", "transcript"]


@dataclass(frozen=True)
class Preset:
    prompt: str  # the name in openevals.prompts
    needs_context: bool = False
    reads: Reads = "answer"


PRESETS = {
    CORRECTNESS: Preset("CORRECTNESS_PROMPT"),
    "relevancy": Preset("ANSWER_RELEVANCE_PROMPT"),
    "groundedness": Preset("RAG_GROUNDEDNESS_PROMPT", needs_context=True),
    "conciseness": Preset("CONCISENESS_PROMPT"),
    "hallucination": Preset("HALLUCINATION_PROMPT", needs_context=True),
    # The RAG triad's third leg: is what was retrieved relevant to the question (no answer, no
    # reference)? Beside groundedness (answer vs context) and correctness (answer vs reference).
    "retrieval-relevance": Preset("RAG_RETRIEVAL_RELEVANCE_PROMPT", needs_context=True),
    # The item's expected_tools are the reference trajectory; trajectory-free judges the path
    # on its own merits, tool-selection whether each tool suits the user's request.
    "trajectory": Preset("TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE", reads="trajectory"),
    "trajectory-free": Preset("TRAJECTORY_ACCURACY_PROMPT", reads="trajectory"),
    "tool-selection": Preset("TOOL_SELECTION_PROMPT", reads="trajectory"),
    "task-completion": Preset("TASK_COMPLETION_PROMPT", reads="transcript"),
    "knowledge-retention": Preset("KNOWLEDGE_RETENTION_PROMPT", reads="transcript"),
}
