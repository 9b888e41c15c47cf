"""The judge client: openevals' request for a verdict, sent with no LangChain model in between.

openevals takes an OpenAI-style client as its judge (`judge.chat.completions.create(...)`).
For the providers that ask for a `json_schema` chat completion (`openai`, `azure_openai` and
the other OpenAI-compatible ones) `JudgeClient` is that client: it posts the very request body
LangChain's model sends (tests/evaluation/test_judge_paths.py compares the bytes) to the
provider's `ChatEndpoint` (providers/chat_completions.py; Azure's through the SDK client), and
reads the reply as LangChain does. The verdicts, the judge's identity and so the verdict cache
are the same either way; the CPU is not: a call through LangChain's model, its callbacks and
parsers costs about three times as much, and importing it a second and a half before the
first verdict (BENCHMARKS.md).

`Scorer` is what openevals' `create_async_llm_as_judge` does with such a client for a string
prompt (the same messages, schema and result), without importing openevals' LangChain and
LangSmith stack or running LangSmith's run-tree wrappers around every call (two a call, with
tracing off: most of the CPU openevals adds). tests/evaluation/test_judge_paths.py compares it
with openevals' own request.
"""

from __future__ import annotations

import json
from contextvars import ContextVar
from typing import Any

from pydantic import BaseModel, Field

from golden_gate.core.item_result import TokenUsage
from golden_gate.evaluation.providers.base import ChatEndpoint


class CallRecord(BaseModel):
    """What one judge call's reply said besides the verdict, kept even when the call fails."""

    tokens: TokenUsage = Field(default_factory=TokenUsage)
    served_model: str | None = None  # the `model` of the reply, as LangChain's usage keys it
    stopped: str | None = None  # why the model stopped (finish reason, or "refusal")


# The record of the call in progress: set by the judge around each call, filled here.
current_call: ContextVar[CallRecord | None] = ContextVar("golden_gate_judge_call", default=None)


class ReplyError(Exception):
    """The reply holds no verdict to read (cut off, filtered, refused, no choices)."""


class JudgeClient:
    """What openevals calls as `judge.chat.completions.create(**params)`."""

    def __init__(self, endpoint: ChatEndpoint) -> None:
        self.post = endpoint.post
        self.model = endpoint.model
        self.temperature = endpoint.temperature
        self.max_tokens = endpoint.max_tokens
        self.cap_field = endpoint.cap_field  # what the server calls the generation cap
        self.seed = endpoint.seed
        self.chat = _Chat(self)

    def body(self, params: dict[str, Any]) -> dict[str, Any]:
        """The request body LangChain sends for openevals' `params`, key for key in the order
        the SDK's `chat.completions.parse` writes them."""
        fmt = params["response_format"]["json_schema"]
        schema = fmt["schema"]
        body: dict[str, Any] = {
            "model": self.model,
            "stream": False,
            "messages": [{"content": m["content"], "role": m["role"]} for m in params["messages"]],
        }
        if self.max_tokens is not None:
            body[self.cap_field] = self.max_tokens
        # LangChain turns openevals' schema into a titled one, then back into this.
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {
                "name": fmt["name"],
                "description": schema["properties"]["score"]["description"],
                "strict": False,
                "schema": schema,
            },
        }
        if self.seed is not None:
            body["seed"] = self.seed
        if self.temperature is not None:
            body["temperature"] = self.temperature
        return body

    async def create(self, **params: Any) -> _Reply:
        response = await self.post(self.body(params))
        try:
            data = json.loads(response.content)
        except ValueError:
            kind = response.headers.get("content-type", "no content type").split(";")[0]
            raise ReplyError(f"the reply is not JSON ({kind})") from None
        return _Reply(self.read(data))

    def read(self, data: Any) -> str:
        """The verdict's JSON text in a chat completion, checked as LangChain checks it."""
        choices = data.get("choices") if isinstance(data, dict) else None
        if not choices or not isinstance(choices[0], dict):
            raise ReplyError("the reply has no choices")
        record = current_call.get()
        usage = data.get("usage")
        if record is not None and isinstance(usage, dict) and usage:
            record.tokens = TokenUsage(
                input_tokens=usage.get("prompt_tokens") or 0,
                output_tokens=usage.get("completion_tokens") or 0,
            )
            record.served_model = data.get("model", self.model)
        for choice in choices:  # the SDK's parse() checks every choice
            finish = choice.get("finish_reason") if isinstance(choice, dict) else None
            if finish in ("length", "content_filter"):
                if record is not None:
                    record.stopped = finish
                raise ReplyError(f"the reply stopped early (finish reason: {finish})")
        message = choices[0].get("message") or {}
        stopped = "refusal" if message.get("refusal") else choices[0].get("finish_reason")
        if record is not None and stopped is not None:
            record.stopped = str(stopped).lower()
        if stopped == "refusal":
            raise ReplyError("the model refused")
        return verdict_json(message.get("content") or "")


def verdict_json(content: str) -> str:
    """`content` when it is JSON; else what LangChain's JSON parser makes of it (it takes JSON
    in Markdown fences too), as JSON; OutputParserException when it is not JSON at all."""
    try:
        json.loads(content)
    except ValueError:
        from langchain_core.output_parsers import JsonOutputParser

        return json.dumps(JsonOutputParser().parse(content))
    return content


# openevals 0.2.2's `_construct_default_output_json_schema`, word for word (the request, and so
# the verdicts, depend on it; tests/evaluation/test_judge_paths.py checks it against openevals'
# own).
_CHOICES = "A number that represents the degree to which the criteria in the prompt are met."
_CONTINUOUS = (
    "A number that represents the degree to which the criteria in the prompt are met, from 0.0"
    " to 1.0. 1.0 means the criteria are met perfectly. 0.0 means none of the criteria are met,"
    " 0.5 means exactly half of the criteria are met."
)
_BOOLEAN = "A score that is true if criteria in the prompt are met, and false otherwise."
_REASONING = (
    "A human-readable explanation of the score. You MUST end the reasoning with a sentence that"
    " says: Thus, the score should be: SCORE_YOU_ASSIGN."
)


def output_schema(
    *, continuous: bool = False, choices: list[float] | None = None, use_reasoning: bool = True
) -> dict[str, Any]:
    """The JSON schema openevals asks the verdict in."""
    score: dict[str, Any]
    if choices:
        score = {"type": "number", "description": _CHOICES, "enum": choices}
    elif continuous:
        score = {"type": "number", "description": _CONTINUOUS}
    else:
        score = {"type": "boolean", "description": _BOOLEAN}
    schema: dict[str, Any] = {"type": "object", "additionalProperties": False}
    if use_reasoning:
        schema["properties"] = {"reasoning": {"type": "string", "description": _REASONING}}
        schema["properties"]["score"] = score
        schema["required"] = ["reasoning", "score"]
    else:
        schema["properties"] = {"score": score}
        schema["required"] = ["score"]
    return schema


class Scorer:
    """`create_async_llm_as_judge(prompt=<a string>, judge=client, model=...)`, called with
    strings: the prompt filled in, one user message, the verdict read as openevals reads it
    (`{"key": "score", "score": ..., "comment": reasoning, "metadata": None}`)."""

    def __init__(
        self,
        client: JudgeClient,
        prompt: str,
        *,
        continuous: bool = False,
        choices: list[float] | None = None,
        use_reasoning: bool = True,
    ) -> None:
        self.client = client
        self.prompt = prompt
        self.use_reasoning = use_reasoning
        self.choices, self.continuous = choices, continuous

    def params(self, **values: str | None) -> dict[str, Any]:
        """The `params` openevals hands to `chat.completions.create`, built afresh each call (as
        openevals builds them)."""
        content = self.prompt.format(**{k: v for k, v in values.items() if v is not None})
        schema = output_schema(
            continuous=self.continuous, choices=self.choices, use_reasoning=self.use_reasoning
        )
        return {
            "messages": [{"role": "user", "content": content}],
            "model": self.client.model,
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "score", "strict": True, "schema": schema},
            },
        }

    async def __call__(
        self,
        *,
        inputs: str | None = None,
        outputs: str | None = None,
        reference_outputs: str | None = None,
        **kwargs: str | None,
    ) -> dict[str, Any]:
        params = self.params(
            inputs=inputs, outputs=outputs, reference_outputs=reference_outputs, **kwargs
        )
        response = await self.client.create(**params)
        parsed = json.loads(response.choices[0].message.content)
        if self.use_reasoning:
            score, comment = parsed["score"], parsed["reasoning"]
        else:
            score, comment = parsed["score"], None
        return {"key": "score", "score": score, "comment": comment, "metadata": None}


class _Message:
    __slots__ = ("content",)

    def __init__(self, content: str) -> None:
        self.content = content


class _Choice:
    __slots__ = ("message",)

    def __init__(self, content: str) -> None:
        self.message = _Message(content)


class _Reply:
    """The part of a chat completion openevals reads: `choices[0].message.content`."""

    __slots__ = ("choices",)

    def __init__(self, content: str) -> None:
        self.choices = [_Choice(content)]


class _Completions:
    def __init__(self, client: JudgeClient) -> None:
        self.create = client.create


class _Chat:
    def __init__(self, client: JudgeClient) -> None:
        self.completions = _Completions(client)
