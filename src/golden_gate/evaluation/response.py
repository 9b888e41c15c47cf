"""The assistant's settings (where it is, how to ask it, where its response holds what) and
reading its response: the answer at answer-path, and beside it the sources,
the retrieved context, the tool calls, the token usage and the model it names, each at its
path; a body that is not what the settings say to expect is a BadResponse, one sentence."""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from golden_gate import jsontext, redaction
from golden_gate.core.cost import read_usage
from golden_gate.core.item_result import TokenUsage
from golden_gate.errors import InputError
from golden_gate.evaluation.runner_host import names_runner_host
from golden_gate.limits import MAX_CONCURRENCY, MAX_RETRIES, MAX_TIMEOUT_S

_SOURCE_KEYS = ("url", "source", "path", "id")
MAX_BACKOFF_S = 30.0  # one backoff sleep never exceeds this, however many retries
EXCERPT_CHARS = 80  # of a body that is not JSON, or of an error body
_HEADER_NAME = re.compile(r"[^!#$%&'*+.^_`|~0-9A-Za-z-]")  # RFC 9110 token characters
_HEADER_VALUE = re.compile(r"[^\t\x20-\x7e]")


class AssistantSettings(BaseModel):
    """Where the assistant is and how to talk to it."""

    model_config = ConfigDict(extra="forbid")

    url: str = ""  # empty: the compose-started service's address, known once it runs
    path: str = "/ask"
    request_template: str = '{"text": "{question}"}'
    answer_path: str = "answer"
    sources_path: str | None = None
    context_path: str | None = None  # the retrieved passages, for groundedness/hallucination
    model_path: str | None = None  # the model that answered, to warn of a judge that is it
    usage_path: str | None = None  # the assistant's own token usage, for the cost (c_sys)
    tools_path: str | None = None  # the tool calls the answer made (evaluation/trajectory.py)
    headers: dict[str, str] = Field(default_factory=dict)
    concurrency: int = Field(default=8, ge=1, le=MAX_CONCURRENCY)
    timeout_s: float = Field(default=60.0, gt=0, le=MAX_TIMEOUT_S, allow_inf_nan=False)
    retries: int = Field(default=3, ge=0, le=MAX_RETRIES)
    backoff_s: float = Field(default=0.5, ge=0, le=MAX_BACKOFF_S)
    max_body_bytes: int = Field(default=5_000_000, ge=1)

    @field_validator("url")
    @classmethod
    def _url_is_http(cls, value: str) -> str:
        # Caught here, a bad URL is one clear message instead of one transport error per item.
        if value and not value.startswith(("http://", "https://")):
            raise ValueError(
                f"the assistant URL must start with http:// or https:// (got {value!r})"
            )
        if value and (problem := redaction.url_problem(value)):
            shown = redaction.without_credentials(value)
            raise ValueError(f"the assistant URL {shown!r} is not a usable URL ({problem})")
        if names_runner_host(value) and not value.lower().startswith("http://"):
            raise ValueError(
                "runner-host is reached by its address, which no certificate names: "
                "use http://runner-host:PORT"
            )
        return value

    @field_validator(
        "answer_path", "sources_path", "context_path", "model_path", "usage_path", "tools_path"
    )
    @classmethod
    def _paths_are_dotted(cls, value: str | None, info: ValidationInfo) -> str | None:
        # An empty segment ("", "a..b", ".x") matches nothing: every run would fail alike.
        if value is not None and any(not part.strip() for part in value.split(".")):
            flag = info.field_name.replace("_", "-") if info.field_name else "path"
            raise ValueError(
                f"{flag} {value!r} has an empty segment; write keys and array indexes "
                "joined by dots (retrieval.passages)"
            )
        return value

    @field_validator("headers")
    @classmethod
    def _headers_are_http(cls, value: dict[str, str]) -> dict[str, str]:
        # Refused here, not by the transport on every request (retried, then exit 3).
        for name, text in value.items():
            bad = _HEADER_NAME.search(name) if name else None
            if not name or bad is not None:
                where = f"has {bad.group()!r} after {name[: bad.start()]!r}" if bad else "is empty"
                raise ValueError(f"a header name {where}: use letters, digits and -")
            if _HEADER_VALUE.search(text):
                # The value is often a secret: name the header, never show the value.
                raise ValueError(
                    f"the value of header '{name}' holds a line break, a control or a "
                    "non-ASCII character"
                )
        return value

    @field_validator("request_template")
    @classmethod
    def _template_is_json_with_question(cls, value: str) -> str:
        try:
            document = jsontext.loads(value)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"request-template is not valid JSON ({exc.msg} at column {exc.colno}): {value!r}"
            ) from None
        if not any("{question}" in text for text in strings(document)):
            raise InputError(
                'request-template must contain "{question}" in a string value, '
                f'e.g. {{"text": "{{question}}"}} (got {value!r})'
            )
        return value


class BadResponse(Exception):
    """The body is not the answer we were told to expect (never retried: it would not change)."""


def usage_of(settings: AssistantSettings, raw: bytes) -> TokenUsage | None:
    """The token usage at usage_path; None without one. Read apart from the answer (a
    second parse, only when set) so the answer's reading stays as it is."""
    path = settings.usage_path
    if path is None:
        return None
    try:
        return read_usage(lookup(jsontext.loads(raw, check_depth=False), path, what="usage"))
    except (ValueError, BadResponse):
        return None  # a response that does not say is still an answer


# The optional paths into an answer, by the setting that names each.
OPTIONAL_PATHS = {
    "sources-path": "sources_path",
    "context-path": "context_path",
    "tools-path": "tools_path",
    "usage-path": "usage_path",
    "model-path": "model_path",
}
_KEY = re.compile(r"^[A-Za-z0-9_.-]{1,40}$")


def paths_found(settings: AssistantSettings, raw: bytes) -> tuple[set[str], list[str]]:
    """Which of the optional paths set (OPTIONAL_PATHS' names) lead to a value in this
    response, and its top-level keys (plain names only: the text is the assistant's), for
    naming a path that finds nothing in any answer."""
    wanted = {
        name: path for name, attr in OPTIONAL_PATHS.items() if (path := getattr(settings, attr))
    }
    try:
        document = jsontext.loads(raw, check_depth=False)
    except ValueError:
        return set(), []
    found = set()
    for name, path in wanted.items():
        try:
            if lookup(document, path, what=name) is not None:
                found.add(name)
        except BadResponse:
            pass
    keys = [k for k in document if _KEY.match(k)][:20] if isinstance(document, dict) else []
    return found, keys


def read_answer(
    settings: AssistantSettings, raw: bytes, content_type: str
) -> tuple[str, list[str] | None, str | None, list[tuple[str, object]] | None, str | None]:
    """The answer, its sources, context and tool calls, and the model the response names."""
    if not raw.strip():
        raise BadResponse("response body is empty")
    try:
        document = jsontext.loads(raw, check_depth=False)  # only the answer is kept
    except ValueError:
        kind = content_type.split(";")[0].strip() or "no content type"
        excerpt = one_line(raw[:EXCERPT_CHARS].decode("utf-8", "replace"))
        raise BadResponse(f"response is not JSON ({kind}, starts with {excerpt!r})") from None
    answer_path = settings.answer_path
    text = lookup(document, answer_path, what="answer")
    if not isinstance(text, str):
        raise BadResponse(f"answer at '{answer_path}' is not a string (got {json_type(text)})")
    return (
        text,
        sources_of(settings, document),
        context_of(settings, document),
        tool_calls_of(settings, document),
        model_of(settings, document),
    )


def tool_calls_of(settings: AssistantSettings, document: Any) -> list[tuple[str, object]] | None:
    """The calls at `tools_path`: none when the response has no such key (an answer
    without tools); a value that is not tool calls is a bad response."""
    from golden_gate.evaluation.trajectory import BadToolCalls, read_calls

    path = settings.tools_path
    if path is None:
        return None
    try:
        value = lookup(document, path, what="tool calls")
    except BadResponse:
        return []
    try:
        return read_calls(value, path)
    except BadToolCalls as exc:
        raise BadResponse(str(exc)) from None


def model_of(settings: AssistantSettings, document: Any) -> str | None:
    """The model the response says answered (model_path), kept for the judge check."""
    path = settings.model_path
    if path is None:
        return None
    try:
        value = lookup(document, path, what="model")
    except BadResponse:
        return None  # a response that does not say is still an answer
    if isinstance(value, str) and value.strip():
        return value.strip()[:200]
    return None


def context_of(settings: AssistantSettings, document: Any) -> str | None:
    """Every string under `context_path` (passages, or objects holding them), joined."""
    path = settings.context_path
    if path is None:
        return None
    try:
        value = lookup(document, path, what="context")
    except BadResponse:
        return None  # no context: the evaluators that need one say so (evaluators.py)
    passages = [text.strip() for text in strings(value) if text.strip()]
    return "\n\n".join(passages) if passages else None


def sources_of(settings: AssistantSettings, document: Any) -> list[str] | None:
    path = settings.sources_path
    if path is None:
        return None
    try:
        value = lookup(document, path, what="sources")
    except BadResponse:
        return None  # an answer without sources (e.g. a refusal) is still an answer
    if value is None:
        return None
    if not isinstance(value, list):
        raise BadResponse(f"sources at '{path}' is not a list (got {json_type(value)})")
    return [source for entry in value if (source := source_name(entry)) is not None]


def strings(node: Any) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, list):
        return [text for child in node for text in strings(child)]
    if isinstance(node, dict):
        return [text for child in node.values() for text in strings(child)]
    return []


def lookup(document: Any, path: str, *, what: str) -> Any:
    """Follow a dotted path; integer segments index arrays (`choices.0.message.content`)."""
    node = document
    for segment in path.split("."):
        if isinstance(node, dict):
            if segment not in node:
                raise BadResponse(f"no {what} at '{path}' (no key '{segment}')")
            node = node[segment]
        elif isinstance(node, list):
            try:
                index = int(segment)
            except ValueError:
                raise BadResponse(
                    f"no {what} at '{path}' ('{segment}' is not an index into an array)"
                ) from None
            if not -len(node) <= index < len(node):
                raise BadResponse(
                    f"no {what} at '{path}' (index {index} out of range, array of {len(node)})"
                )
            node = node[index]
        else:
            raise BadResponse(
                f"no {what} at '{path}' (cannot look up '{segment}' in {json_type(node)})"
            )
    return node


def source_name(entry: Any) -> str | None:
    """A source as a string: itself, or the first of url/source/path/id in it or its metadata."""
    if isinstance(entry, str):
        return entry
    if not isinstance(entry, dict):
        return None
    for fields in (entry, entry.get("metadata")):
        if not isinstance(fields, dict):
            continue
        for key in _SOURCE_KEYS:
            value = fields.get(key)
            if isinstance(value, str) and value:
                return value
            if isinstance(value, int) and not isinstance(value, bool):
                return str(value)
    return None


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def one_line(value: object) -> str:
    text = " ".join(str(value).split())
    if not text and isinstance(value, BaseException):
        return type(value).__name__  # e.g. a bare httpx.ReadError()
    return text
