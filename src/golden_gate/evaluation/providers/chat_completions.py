"""A Chat Completions client of our own for the judge: one POST, no SDK.

The judge asks one kind of request (judge_client.py builds its body). Importing the OpenAI SDK
for it costs about 0.7 s of CPU (its type models) before the first verdict, and each call
through it about a millisecond of request building; LangChain's model on top of it a second
more. This client sends the body the SDK would send, byte for byte, over httpx (the
assistant's HTTP library, already loaded), and reads the variables the SDK and LangChain read:
the key from the provider's variable, OPENAI_ORG_ID (or OPENAI_ORGANIZATION) and
OPENAI_PROJECT_ID, the endpoint from the judge base URL, else OPENAI_API_BASE, else
OPENAI_BASE_URL. Retries are the judge's (retry.py); an error status is a `StatusError` worded
as the SDK words it, so a failed call reads the same on either path.
"""

from __future__ import annotations

import json
import os
from typing import Any

from golden_gate import __version__

OPENAI_URL = "https://api.openai.com/v1"  # the OpenAI SDK's own default


class StatusError(Exception):
    """The server answered with an error status."""

    def __init__(self, response: Any) -> None:
        self.response = response  # its headers say how long to wait (retry.retry_after)
        self.status_code = int(response.status_code)
        words = f"Error code: {self.status_code}"
        try:
            body = json.loads(response.text)
        except ValueError:
            body = None
        # The SDK's words: the body's error message only, never the rest of the body.
        error = body.get("error", body) if isinstance(body, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        if isinstance(message, str) and message:
            words += f" - {message}"
        super().__init__(words)


def base_url(configured: str | None) -> str:
    """Where requests go: the configured URL, else the variables LangChain and the SDK read."""
    for url in (configured, os.environ.get("OPENAI_API_BASE"), os.environ.get("OPENAI_BASE_URL")):
        if url:
            return url
    return OPENAI_URL


class Client:
    """POSTs Chat Completions bodies to `url`/chat/completions through `http` (an
    httpx.AsyncClient the caller closes)."""

    def __init__(self, *, url: str, api_key: str, timeout_s: float, http: Any) -> None:
        import httpx

        self.base_url = url
        self._url = httpx.URL(url.rstrip("/") + "/chat/completions")  # parsed once
        self._http = http
        self._timeout = httpx.Timeout(timeout_s)
        headers = {
            "Accept": "application/json",
            "Content-Type": "application/json",
            "User-Agent": f"golden-gate/{__version__}",
            "Authorization": f"Bearer {api_key}",
        }
        organization = os.environ.get("OPENAI_ORG_ID") or os.environ.get("OPENAI_ORGANIZATION")
        if organization:
            headers["OpenAI-Organization"] = organization
        if project := os.environ.get("OPENAI_PROJECT_ID"):
            headers["OpenAI-Project"] = project
        self._headers = headers

    async def post(self, body: dict[str, Any]) -> Any:
        """The response to `body` (read whole); StatusError when it is not a success."""
        # The SDK's serialisation (httpx's defaults): the bytes, and so the cache, are the same.
        content = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        response = await self._http.post(
            self._url, content=content.encode(), headers=self._headers, timeout=self._timeout
        )
        if not response.is_success:
            raise StatusError(response)
        return response
