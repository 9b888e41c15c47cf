"""A stand-in of Google's Gemini API (`generateContent`, REST) on 127.0.0.1 that plays the judge.

`POST /{v1,v1beta}/models/MODEL:generateContent`, as the real `google-genai` SDK (under
LangChain's `ChatGoogleGenerativeAI`) sends it: openevals asks for structured output, which
LangChain sends as `generationConfig.responseMimeType` `application/json` with the score
schema in `responseJsonSchema`; the verdict comes back as the JSON text of the first
candidate. The verdict, the scripting and the records are `JudgeServer`'s; the wire format:

- errors are `{"error": {"code", "message", "status"}}` (429 `RESOURCE_EXHAUSTED`, ...);
- a refusal is a candidate with `finishReason: "SAFETY"` and no content, a blocked prompt
  `promptFeedback.blockReason` with no candidates, a cut-off reply `MAX_TOKENS`;
- usage is `usageMetadata` (words of the prompt and of the reply).
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.fakes.judge_server import Behaviour, JudgeServer, verdict_for

STATUSES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
_PATH = re.compile(r"^/v1(beta)?/models/(?P<model>[^/:]+):generateContent$")


def contents_text(body: dict[str, Any]) -> str:
    """The text of the last user turn."""
    for content in reversed(body.get("contents", [])):
        if content.get("role", "user") == "user":
            return "".join(p.get("text", "") for p in content.get("parts", []))
    return ""


class GeminiServer(JudgeServer):
    """The Gemini API; `base_url` is the server's root (the SDK adds version and path)."""

    thread_name = "gemini-server"

    @property
    def base_url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}"

    def accepts(self, path: str) -> bool:
        return bool(_PATH.match(path))

    def user_text(self, body: dict[str, Any]) -> str:
        return contents_text(body)

    def sent_key(self, headers: dict[str, str]) -> str:
        return headers.get("x-goog-api-key", "")

    def error(self, status: int, message: str) -> dict[str, Any]:
        return {"error": {"code": status, "message": message, "status": STATUSES.get(status)}}

    def model_of(self, path: str, body: dict[str, Any]) -> str:
        found = _PATH.match(path)
        return found.group("model") if found else ""

    def unknown_model(self, model: str) -> dict[str, Any]:
        message = (
            f"models/{model} is not found for API version v1beta, or is not supported for "
            "generateContent. Call ListModels to see the list of available models and their "
            "supported methods."
        )
        return {"error": {"code": 404, "message": message, "status": "NOT_FOUND"}}

    def bad_key(self, key: str) -> tuple[int, dict[str, Any]]:
        message = "API key not valid. Please pass a valid API key."
        return 400, {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}

    def reply(self, body: dict[str, Any], behaviour: Behaviour) -> dict[str, Any]:
        config = body.get("generationConfig", {})
        schema = config.get("responseJsonSchema") or config.get("responseSchema") or {}
        text: str | None
        finish = "STOP"
        if behaviour.kind == "verdict":
            text = json.dumps(verdict_for(self.user_text(body), schema.get("properties", {})))
        elif behaviour.kind == "refusal":
            text, finish = None, "SAFETY"
        elif behaviour.kind == "cut_off":
            text, finish = behaviour.text, "MAX_TOKENS"
        elif behaviour.kind == "blocked":
            text = None
        else:
            text = behaviour.text
        self._number()
        prompt_tokens = len(self.user_text(body).split())
        output_tokens = len((text or "").split())
        reply: dict[str, Any] = {
            "usageMetadata": {
                "promptTokenCount": prompt_tokens,
                "candidatesTokenCount": output_tokens,
                "totalTokenCount": prompt_tokens + output_tokens,
            },
            "modelVersion": "gemini-fake",
        }
        if behaviour.kind == "blocked":
            reply["promptFeedback"] = {"blockReason": "SAFETY"}
            return reply
        candidate: dict[str, Any] = {"finishReason": finish, "index": 0}
        if text is not None:
            candidate["content"] = {"role": "model", "parts": [{"text": text}]}
        reply["candidates"] = [candidate]
        return reply
