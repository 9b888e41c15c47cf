"""A stand-in of Anthropic's Messages API on 127.0.0.1 that plays the judge.

`POST /v1/messages`, as the real `anthropic` SDK (under LangChain's `ChatAnthropic`) sends it:
openevals asks for structured output, which LangChain turns into one tool (`tools[0]`, its
`input_schema` the score schema) forced by `tool_choice`; the verdict comes back as that
tool's `tool_use` block. The verdict, the scripting (`enqueue`, `default`) and the records
are `JudgeServer`'s; only the wire format differs:

- errors are `{"type": "error", "error": {"type", "message"}}` (529 is `overloaded_error`);
- a refusal is `stop_reason: "refusal"` with no tool call, a cut-off reply
  `stop_reason: "max_tokens"`, plain text an `end_turn` text block;
- usage is `{"input_tokens", "output_tokens"}` (words of the prompt and of the verdict).
"""

from __future__ import annotations

import json
from typing import Any

from tests.fakes.judge_server import Behaviour, JudgeServer, user_text, verdict_for

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


class AnthropicServer(JudgeServer):
    """The Messages API; `base_url` is the server's root (the SDK adds `/v1/messages`)."""

    thread_name = "anthropic-server"

    @property
    def base_url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}"

    def accepts(self, path: str) -> bool:
        return path == "/v1/messages"

    def user_text(self, body: dict[str, Any]) -> str:
        return user_text(body)

    def sent_key(self, headers: dict[str, str]) -> str:
        return headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")

    def error(self, status: int, message: str) -> dict[str, Any]:
        kind = ERROR_TYPES.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}

    def unknown_model(self, model: str) -> dict[str, Any]:
        return {"type": "error", "error": {"type": "not_found_error", "message": f"model: {model}"}}

    def bad_key(self, key: str) -> tuple[int, dict[str, Any]]:
        error = {"type": "authentication_error", "message": "invalid x-api-key"}
        return 401, {"type": "error", "error": error}

    def reply(self, body: dict[str, Any], behaviour: Behaviour) -> dict[str, Any]:
        tool = (body.get("tools") or [{}])[0]
        properties = tool.get("input_schema", {}).get("properties", {})
        stop = "tool_use"
        content: list[dict[str, Any]]
        if behaviour.kind == "verdict":
            content = [self._tool_use(tool, verdict_for(self.user_text(body), properties))]
        elif behaviour.kind in ("content", "no_score"):
            content = [self._tool_use(tool, json.loads(behaviour.text))]
        elif behaviour.kind == "refusal":
            content, stop = [], "refusal"
        elif behaviour.kind == "cut_off":
            content, stop = [{"type": "text", "text": behaviour.text}], "max_tokens"
        else:  # plain text, or anything that is not a tool call
            content, stop = [{"type": "text", "text": behaviour.text}], "end_turn"
        number = self._number()
        output = json.dumps(content[0].get("input", content[0].get("text"))) if content else ""
        return {
            "id": f"msg_fake_{number}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "fake"),
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {
                "input_tokens": len(self.user_text(body).split()),
                "output_tokens": len(output.split()),
            },
        }

    def _tool_use(self, tool: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
        name = tool.get("name", "score")
        return {"type": "tool_use", "id": "toolu_fake", "name": name, "input": arguments}
