"""A real OpenAI-compatible chat completions server on 127.0.0.1 that plays the judge.

It speaks the wire protocol LangChain's OpenAI client speaks (`POST /v1/chat/completions`,
also `/chat/completions`), so tests exercise the real SDK: serialisation, retries, timeouts,
structured-output parsing and usage accounting.

The verdict is derived from the prompt, never scripted:

- the answer is the text inside the first `<output>...</output>` of the user message and the
  reference the text inside the first `<reference_outputs>...</reference_outputs>` (the
  sections of openevals' CORRECTNESS_PROMPT; a custom prompt must use the same tags to be
  judged), read top-down as a model reads them: a section an answer forges before the real
  one is the one this judge follows; the lines of the gate's fence (`<untrusted_text id=..>`)
  are markers, not words;
- the reference's key points are its lines starting with `- ` (every non-blank line when
  there are none); words are runs of `[a-z0-9]` after lowercasing;
- a key point is covered when every one of its words occurs in the answer;
- the score is `true` when there is at least one key point and every key point is covered
  (boolean schema), or the covered fraction (number schema, i.e. `continuous=True`).

Other openevals prompts are recognised by their opening line, each with its own rule on
words of four or more letters ("long words"):

- groundedness (`<context>` and `<outputs>`), hallucination (`<context>`, `<output>`): the
  fraction of the answer's long words found in the context; true when all are;
- relevancy (`<input>`, `<output>`): the fraction of the question's long words in the answer;
  true at one half or more;
- retrieval relevance (`<inputs>`, `<retrieved_context>`): the fraction of the question's long
  words in the context; true at one half or more;
- conciseness: true when the answer has at most 40 words (score 1, else 40 / words);
- trajectory (`<trajectory>`, `<reference_trajectory>`): the fraction of the reference's tool
  names called in the trajectory's numbered steps (`1. name(...)`); true when all are.

The pairwise prompt (`<answer_a>`, `<answer_b>`, `<reference_outputs>`) scores 1 when answer A
covers more key points than B, 0 when fewer, 0.5 when as many; a model whose name contains
`biased` prefers A whatever the answers (a position bias).

A model whose name contains `lenient` passes at half the bar (covered fraction >= 0.5), so
two judges can disagree. A model whose name contains `blind` ignores the context (as a
template that lost it would): groundedness and hallucination check the answer against itself.

Faults are scripted with `enqueue(...)` (consumed one per request, in order) or made
permanent with `default`. Each chat completion request is recorded (`requests`: the parsed
JSON bodies; `bodies`: the same, byte for byte; `prompts`, `paths`, `headers`; `calls` counts
them), every request of any kind in `seen`, and the peak of concurrent requests in
`max_in_flight`. `latency_s` adds a fixed delay to every answer (for benchmarks). `slots`
serves at most that many chat completions at once and queues the rest, as llama-server's
parallel slots do (a queued request's wait counts against the client's timeout).
`served_model` is the `model` the replies name (default: the model asked for).

`models`: the model names the server knows; a call naming another is answered 404 in the
provider's own shape (`model_not_found`), and `key`: the one API key it takes (401 otherwise),
as a real provider answers every call. The gate's judge preflight (one call per judge before
any item, recognised by its mark) gets `preflight` (a verdict unless set) rather than the
script or `default`, which are for items' calls; it is counted in `preflights`, not `calls`.

    with JudgeServer() as server:
        server.base_url  # http://127.0.0.1:PORT/v1
        server.enqueue(Behaviour.rate_limited(retry_after=0.01), Behaviour.verdict())
"""

from __future__ import annotations

import functools
import json
import re
import ssl
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any, Literal

from golden_gate.evaluation.preflight import PREFLIGHT_MARK
from tests.fakes.background import BackgroundServer

Kind = Literal[
    "verdict",
    "status",
    "status_page",
    "slow",
    "malformed_json",
    "no_score",
    "plain_text",
    "content",
    "refusal",
    "cut_off",
    "blocked",
    "trickle",
    "gzip_bomb",
    "huge",
]

_WORD = re.compile(r"[a-z0-9]+")
_OUTPUT = re.compile(r"<output>\s*(.*?)\s*</output>", re.DOTALL)
_REFERENCE = re.compile(r"<reference_outputs>\s*(.*?)\s*</reference_outputs>", re.DOTALL)
_OUTPUTS = re.compile(r"<outputs>\s*(.*?)\s*</outputs>", re.DOTALL)
_CONTEXT = re.compile(r"<context>\s*(.*?)\s*</context>", re.DOTALL)
_INPUT = re.compile(r"<input>\s*(.*?)\s*</input>", re.DOTALL)
_INPUTS = re.compile(r"<inputs>\s*(.*?)\s*</inputs>", re.DOTALL)
_RETRIEVED = re.compile(r"<retrieved_context>\s*(.*?)\s*</retrieved_context>", re.DOTALL)
_ANSWER_A = re.compile(r"<answer_a>\s*(.*?)\s*</answer_a>", re.DOTALL)
_ANSWER_B = re.compile(r"<answer_b>\s*(.*?)\s*</answer_b>", re.DOTALL)
_TRAJECTORY = re.compile(r"<trajectory>\s*(.*?)\s*</trajectory>", re.DOTALL)
_REFERENCE_TRAJECTORY = re.compile(
    r"<reference_trajectory>\s*(.*?)\s*</reference_trajectory>", re.DOTALL
)
_FENCE_LINE = re.compile(r'^</?untrusted_text id="[0-9a-f]+">$', re.MULTILINE)


@dataclass(frozen=True)
class Behaviour:
    """What the server does with one request."""

    kind: Kind = "verdict"
    status: int = 200
    retry_after: float | None = None
    delay_s: float = 0.0
    text: str = ""

    @classmethod
    def verdict(cls) -> Behaviour:
        """Answer with the verdict derived from the prompt."""
        return cls()

    @classmethod
    def rate_limited(cls, retry_after: float | None = 0.01) -> Behaviour:
        """429 with a Retry-After header (seconds, floats allowed)."""
        return cls(kind="status", status=429, retry_after=retry_after)

    @classmethod
    def server_error(cls, status: int = 500, retry_after: float | None = 0.01) -> Behaviour:
        """A 5xx; Retry-After keeps the SDK's backoff short in tests."""
        return cls(kind="status", status=status, retry_after=retry_after)

    @classmethod
    def unauthorized(cls) -> Behaviour:
        """401 whose message echoes the key it was sent, as real providers partly do."""
        return cls(kind="status", status=401, text="Incorrect API key provided: {key}")

    @classmethod
    def error_page(cls, status: int = 502) -> Behaviour:
        """An error status whose body is a proxy's HTML page, not the API's JSON error."""
        return cls(kind="status_page", status=status, text="<html><h1>Bad Gateway</h1></html>")

    @classmethod
    def slow(cls, delay_s: float) -> Behaviour:
        """Wait `delay_s` before answering (longer than the client timeout: a timeout)."""
        return cls(kind="slow", delay_s=delay_s)

    @classmethod
    def malformed_json(cls) -> Behaviour:
        """200 whose message content is not valid JSON."""
        return cls(kind="malformed_json", text='{"reasoning": "cut short", "score": tru}')

    @classmethod
    def no_score(cls) -> Behaviour:
        """200 whose content is JSON without `score`."""
        return cls(kind="no_score", text=json.dumps({"reasoning": "I forgot the score."}))

    @classmethod
    def plain_text(cls, text: str = "yes") -> Behaviour:
        """200 whose content is plain text instead of JSON."""
        return cls(kind="plain_text", text=text)

    @classmethod
    def content(cls, text: str) -> Behaviour:
        """200 whose message content is exactly `text`."""
        return cls(kind="content", text=text)

    @classmethod
    def refusal(cls, text: str = "I can't help with that.") -> Behaviour:
        """200 where the model declines, as its API says it (OpenAI: `message.refusal`)."""
        return cls(kind="refusal", text=text)

    @classmethod
    def cut_off(cls) -> Behaviour:
        """200 whose reply stopped at the token cap (OpenAI: `finish_reason` `length`)."""
        return cls(kind="cut_off", text='{"reasoning": "The answer covers')

    @classmethod
    def length(cls) -> Behaviour:
        """200 with `finish_reason: "length"`: the reply stopped at the generation cap."""
        return cls(kind="cut_off", text='{"reasoning": "Let me think step by step, and then')

    @classmethod
    def trickle(cls, every_s: float = 0.5) -> Behaviour:
        """200 at once, then the body one byte every `every_s` (each read well inside any
        timeout: only a deadline on the whole exchange stops it)."""
        return cls(kind="trickle", delay_s=every_s)

    @classmethod
    def gzip_bomb(cls, expanded_bytes: int = 2 * 1024**3) -> Behaviour:
        """200 with `Content-Encoding: gzip`: a few MB that expand to `expanded_bytes`."""
        return cls(kind="gzip_bomb", status=expanded_bytes)

    @classmethod
    def huge(cls, size: int = 200 * 1024 * 1024) -> Behaviour:
        """200 with a JSON reply of `size` bytes, streamed."""
        return cls(kind="huge", status=size)

    @classmethod
    def blocked(cls) -> Behaviour:
        """200 where the provider blocked the prompt (providers that have such a reply)."""
        return cls(kind="blocked")


def words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def key_points(reference: str) -> list[str]:
    lines = [line.strip() for line in reference.splitlines() if line.strip()]
    bullets = [line[2:].strip() for line in lines if line.startswith("- ")]
    return bullets or lines


def user_text(body: dict[str, Any]) -> str:
    """The text of the last user message (content may be a string or content blocks)."""
    for message in reversed(body.get("messages", [])):
        if message.get("role") != "user":
            continue
        content = message.get("content", "")
        if isinstance(content, str):
            return content
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


def _section(pattern: re.Pattern[str], prompt: str) -> str:
    found = pattern.search(prompt)
    return _FENCE_LINE.sub("", found.group(1)) if found else ""


def _long_words(text: str) -> set[str]:
    return {w for w in words(text) if len(w) >= 4}


def _fraction(part: set[str], whole: set[str]) -> float:
    return len(part & whole) / len(part) if part else 1.0


def evaluator_of(prompt: str) -> str:
    """Which openevals prompt this is, by its opening words (after the gate's notice about
    its fence, a paragraph of its own)."""
    if prompt.startswith("Text between <untrusted_text"):
        prompt = prompt.partition("\n\n")[2]
    head = prompt[:300].lower()
    for name, marker in (
        ("pairwise", "comparing two answers"),
        ("hallucination", "for hallucinations"),
        ("groundedness", "supported by the retrieved context"),
        ("relevancy", "relevant to the given input"),
        ("retrieval-relevance", "retrieved context for relevance"),
        ("conciseness", "for conciseness"),
        ("trajectory", "internal trajectory"),
    ):
        if marker in head:
            return name
    return "correctness"


def _other_verdict(
    kind: str, prompt: str, numeric: bool, bar: float, *, blind: bool = False
) -> tuple[float | bool, str]:
    if kind == "trajectory":
        # Each reference call's tool name, in the trajectory (any order); without a
        # reference, a trajectory with at least one call.
        said = _section(_TRAJECTORY, prompt)
        names = [p.split("(")[0] for p in key_points(_section(_REFERENCE_TRAJECTORY, prompt))]
        called = set(re.findall(r"^\s*\d+\. ([^(\s]+)\(", said, re.MULTILINE))
        fraction = _fraction(set(names), called) if names else float(bool(called))
    elif kind in ("groundedness", "hallucination"):
        answer = _section(_OUTPUTS if kind == "groundedness" else _OUTPUT, prompt)
        context = answer if blind else _section(_CONTEXT, prompt)
        fraction = _fraction(_long_words(answer), words(context))
    elif kind == "retrieval-relevance":
        question = _long_words(_section(_INPUTS, prompt))
        fraction = _fraction(question, words(_section(_RETRIEVED, prompt)))
        bar = min(bar, 0.5)
    elif kind == "relevancy":
        question = _long_words(_section(_INPUT, prompt))
        fraction = _fraction(question, words(_section(_OUTPUT, prompt)))
        bar = min(bar, 0.5)
    else:
        count = len(_section(_OUTPUT, prompt).split())
        fraction = 1.0 if count <= 40 else 40 / count
    reasoning = f"{kind}: {fraction:.2f} of the words check out."
    return (fraction if numeric else fraction >= bar), reasoning


def _pairwise(prompt: str, *, biased: bool) -> tuple[float, str]:
    if biased:
        return 1.0, "Answer A comes first, and reads well."
    points = key_points(_section(_REFERENCE, prompt))

    def covered(pattern: re.Pattern[str]) -> int:
        said = words(_section(pattern, prompt))
        return sum(words(p) <= said for p in points)

    a, b = covered(_ANSWER_A), covered(_ANSWER_B)
    score = 1.0 if a > b else 0.0 if a < b else 0.5
    return score, f"A covers {a} key points, B covers {b}."


def derive_verdict(body: dict[str, Any]) -> dict[str, Any]:
    """The verdict JSON for a request, by the rule in the module docstring."""
    schema = (
        body.get("response_format", {}).get("json_schema", {}).get("schema", {})
        if isinstance(body.get("response_format"), dict)
        else {}
    )
    return verdict_for(
        user_text(body), schema.get("properties", {}), model=str(body.get("model", ""))
    )


def verdict_for(prompt: str, properties: dict[str, Any], *, model: str = "") -> dict[str, Any]:
    """The verdict for a prompt and the `properties` of the score schema it asks for; a
    `lenient` model passes at half the bar."""
    bar = 0.5 if "lenient" in model else 1.0
    answer_words = words(_section(_OUTPUT, prompt))
    points = key_points(_section(_REFERENCE, prompt))
    missing = [p for p in points if not words(p) <= answer_words]
    covered = len(points) - len(missing)
    numeric = properties.get("score", {}).get("type") == "number"
    kind = evaluator_of(prompt)
    score: bool | float
    if kind == "pairwise":
        score, reasoning = _pairwise(prompt, biased="biased" in model)
    elif kind != "correctness":
        score, reasoning = _other_verdict(kind, prompt, numeric, bar, blind="blind" in model)
    else:
        if numeric:
            score = covered / len(points) if points else 0.0
        else:
            score = bool(points) and covered >= bar * len(points)
        reasoning = (
            "Every key point is covered." if not missing else "Missing: " + "; ".join(missing) + "."
        )
    reasoning += f" Thus, the score should be: {str(score).lower()}."
    verdict: dict[str, Any] = {"score": score}
    if "reasoning" in properties or not properties:
        verdict = {"reasoning": reasoning, "score": score}
    return verdict


class JudgeServer(BackgroundServer):
    """The server, run in a background thread; use as a context manager.

    It speaks OpenAI's chat completions, and Azure OpenAI's deployments path
    (`/openai/deployments/NAME/chat/completions?api-version=...`). Stand-ins of other
    providers' APIs subclass it and override the wire format (the `dialect` methods below).
    """

    def __init__(
        self,
        *,
        latency_s: float = 0.0,
        default: Behaviour | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        slots: int | None = None,
        served_model: str | None = None,
        ssl_context: ssl.SSLContext | None = None,
        models: set[str] | None = None,
        key: str | None = None,
        preflight: Behaviour | None = None,
    ) -> None:
        """`host`/`port`: where to listen (port 0: any free one); `ssl_context`: serve HTTPS."""
        super().__init__(ssl_context=ssl_context)
        self.models = models
        self.key = key
        self.preflight = preflight or Behaviour.verdict()
        self.preflights = 0
        self._slots = threading.BoundedSemaphore(slots) if slots else None
        self.served_model = served_model
        self.host = host
        self.listen_port = port
        # GET paths answered with the JSON the function returns (e.g. "/_fake/stats" for a
        # server run in another process); not recorded as chat completion requests.
        self.control: dict[str, Callable[[], Any]] = {}
        self.latency_s = latency_s
        self.default = default or Behaviour.verdict()
        self.requests: list[dict[str, Any]] = []
        self.bodies: list[bytes] = []  # each request's body, byte for byte
        self.paths: list[str] = []
        self.queries: list[str] = []  # the query string of each recorded request
        self.headers: list[dict[str, str]] = []  # names lowercased
        self.seen: list[str] = []  # "METHOD /path" of every request, chat completions or not
        self.in_flight = 0
        self.max_in_flight = 0
        self._script: deque[Behaviour] = deque()
        self._lock = threading.Lock()
        self._completions = 0

    # -- scripting and inspection ---------------------------------------------------------

    def enqueue(self, *behaviours: Behaviour) -> None:
        """Behaviours for the next requests, in order; then `default` again."""
        with self._lock:
            self._script.extend(behaviours)

    @property
    def calls(self) -> int:
        with self._lock:
            return len(self.requests)

    @property
    def prompts(self) -> list[str]:
        """The user message text of every request, in arrival order."""
        with self._lock:
            return [self.user_text(body) for body in self.requests]

    # -- the dialect: the provider's wire format (subclasses override) --------------------

    _AZURE = re.compile(r"^/openai/deployments/[^/]+/chat/completions$")

    def accepts(self, path: str) -> bool:
        """Whether `path` is where this API takes a judge call."""
        return path in ("/v1/chat/completions", "/chat/completions") or bool(
            self._AZURE.match(path)
        )

    def user_text(self, body: dict[str, Any]) -> str:
        return user_text(body)

    def sent_key(self, headers: dict[str, str]) -> str:
        """The API key a request carried (headers lowercased)."""
        return headers.get("api-key") or headers.get("authorization", "").removeprefix("Bearer ")

    def error(self, status: int, message: str) -> dict[str, Any]:
        return {"error": {"message": message, "type": "server_error"}}

    def model_of(self, path: str, body: dict[str, Any]) -> str:
        return str(body.get("model", ""))

    def unknown_model(self, model: str) -> dict[str, Any]:
        """OpenAI's 404 for a model it does not serve."""
        return {
            "error": {
                "message": f"The model `{model}` does not exist or you do not have access to it.",
                "type": "invalid_request_error",
                "param": None,
                "code": "model_not_found",
            }
        }

    def bad_key(self, key: str) -> tuple[int, dict[str, Any]]:
        """OpenAI's 401 for a key it does not take (it shows the key's end only)."""
        message = f"Incorrect API key provided: ...{key[-4:]}. You can find your API key at ..."
        return 401, {"error": {"message": message, "type": "invalid_request_error",
                               "param": None, "code": "invalid_api_key"}}  # fmt: skip

    def reply(self, body: dict[str, Any], behaviour: Behaviour) -> dict[str, Any]:
        """The 200 answer to a call for every kind of behaviour but status and slow."""
        refusal, finish = None, "stop"
        if behaviour.kind == "verdict":
            content: str | None = json.dumps(derive_verdict(body))
        elif behaviour.kind == "refusal":
            content, refusal = None, behaviour.text
        elif behaviour.kind == "cut_off":
            content, finish = behaviour.text, "length"
        else:
            content = behaviour.text
        return self._completion(body, content, refusal=refusal, finish=finish)

    @property
    def base_url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}/v1"

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the judge server is not running")
        return self._httpd.server_address[1]

    # -- lifecycle --------------------------------------------------------------------------

    thread_name = "judge-server"

    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        return _Handler

    def address(self) -> tuple[str, int]:
        return (self.host, self.listen_port)

    # -- request handling (server threads) --------------------------------------------------

    def _next(
        self, path: str, query: str, headers: dict[str, str], body: dict[str, Any], raw: bytes
    ) -> Behaviour:
        if PREFLIGHT_MARK in self.user_text(body):
            with self._lock:
                self.preflights += 1
                return self.preflight
        with self._lock:
            self.requests.append(body)
            self.bodies.append(raw)
            self.paths.append(path)
            self.queries.append(query)
            self.headers.append(headers)
            return self._script.popleft() if self._script else self.default

    def _enter(self, method: str, path: str) -> None:
        with self._lock:
            self.seen.append(f"{method} {path}")
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _sleep(self, seconds: float) -> bool:
        """Wait; False when the server is stopping."""
        return seconds <= 0 or not self._stopping.wait(seconds)

    def _acquire_slot(self) -> bool:
        """Wait for a free slot; False when the server is stopping."""
        while self._slots is not None and not self._slots.acquire(timeout=0.05):
            if self._stopping.is_set():
                return False
        return True

    def _release_slot(self) -> None:
        if self._slots is not None:
            self._slots.release()

    def _number(self) -> int:
        with self._lock:
            self._completions += 1
            return self._completions

    def _completion(
        self,
        body: dict[str, Any],
        content: str | None,
        *,
        refusal: str | None = None,
        finish: str = "stop",
    ) -> dict[str, Any]:
        number = self._number()
        prompt_tokens = sum(len(user_text({"messages": [m]}).split()) for m in body["messages"])
        completion_tokens = len((content or refusal or "").split())
        return {
            "id": f"chatcmpl-fake-{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.served_model or body.get("model", "fake"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": refusal},
                    "logprobs": None,
                    "finish_reason": finish,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }


def hostile_body(behaviour: Behaviour) -> Any:
    """The pieces of a trickled, bomb or huge reply (never all in memory)."""
    if behaviour.kind == "trickle":
        for byte in b'{"choices": [{"message": {"content": "' + b"x" * 100_000:
            yield bytes([byte])
        return
    if behaviour.kind == "huge":
        yield b'{"choices": [{"message": {"content": "'
        block = b"x" * (1024 * 1024)
        for _ in range(behaviour.status // len(block)):
            yield block
        yield b'"}}]}'
        return
    yield from gzip_stream(behaviour.status)


def gzip_stream(expanded_bytes: int) -> Any:
    """A gzip stream of `expanded_bytes` of JSON-looking zeros in 64 KiB pieces (about 1,000 to
    1: 2 GB in about 2 MB, compressed once)."""
    data = _gzip_bomb(expanded_bytes)
    for start in range(0, len(data), 64 * 1024):
        yield data[start : start + 64 * 1024]


@functools.cache
def _gzip_bomb(expanded_bytes: int) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    pieces = [packer.compress(b'{"choices": [{"message": {"content": "')]
    block = b"0" * (1024 * 1024)
    pieces += [packer.compress(block) for _ in range(expanded_bytes // len(block))]
    return b"".join(pieces) + packer.flush()


class _Handler(BaseHTTPRequestHandler):
    owner: JudgeServer
    protocol_version = "HTTP/1.1"  # keep-alive, as the SDK's pooled client expects
    # Headers and body go out in separate writes: without TCP_NODELAY the client's delayed
    # ACK adds ~40 ms to every response.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if (control := self.owner.control.get(path)) is not None:
            self._send(200, control())
            return
        self.owner._enter("GET", path)
        try:
            self._send(404, {"error": {"message": f"no route {path}", "type": "not_found"}})
        finally:
            self.owner._leave()

    def do_POST(self) -> None:
        path, _, query = self.path.partition("?")
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        self.owner._enter("POST", path)
        try:
            self._post(path, query, raw)
        finally:
            self.owner._leave()

    def _post(self, path: str, query: str, raw: bytes) -> None:
        owner = self.owner
        if not owner.accepts(path):
            self._send(404, owner.error(404, f"no route {path}"))
            return
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            self._send(400, owner.error(400, "invalid JSON body"))
            return
        headers = {name.lower(): value for name, value in self.headers.items()}
        if owner.key is not None and (sent := owner.sent_key(headers)) != owner.key:
            with owner._lock:
                owner.preflights += PREFLIGHT_MARK in owner.user_text(body)
            self._send(*owner.bad_key(sent))
            return
        if owner.models is not None and (model := owner.model_of(path, body)) not in owner.models:
            with owner._lock:
                owner.preflights += PREFLIGHT_MARK in owner.user_text(body)
            self._send(404, owner.unknown_model(model))
            return
        behaviour = owner._next(path, query, headers, body, raw)
        if not owner._acquire_slot():
            return
        try:
            slept = owner._sleep(owner.latency_s + behaviour.delay_s)
        finally:
            owner._release_slot()
        if not slept:
            return
        if behaviour.kind == "status":
            key = owner.sent_key(headers)
            message = behaviour.text.format(key=key) or f"fake judge says {behaviour.status}"
            extra = {}
            if behaviour.retry_after is not None:
                extra["Retry-After"] = f"{behaviour.retry_after:g}"
            self._send(behaviour.status, owner.error(behaviour.status, message), extra)
            return
        if behaviour.kind == "status_page":
            self._send_raw(behaviour.status, behaviour.text.encode(), "text/html")
            return
        if behaviour.kind in ("trickle", "gzip_bomb", "huge"):
            self._send_hostile(behaviour)
            return
        self._send(200, owner.reply(body, behaviour))

    def _send_hostile(self, behaviour: Behaviour) -> None:
        """A reply no client should read whole or wait for: streamed, stopped when the client
        hangs up or the server stops."""
        owner = self.owner
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            if behaviour.kind == "gzip_bomb":
                self.send_header("Content-Encoding", "gzip")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for piece in hostile_body(behaviour):
                if owner._stopping.is_set():
                    return
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                if behaviour.kind == "trickle" and not owner._sleep(behaviour.delay_s):
                    return
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client hung up: what it should do

    def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None):
        self._send_raw(status, json.dumps(payload).encode(), "application/json", headers)

    def _send_raw(
        self, status: int, data: bytes, kind: str, headers: dict[str, str] | None = None
    ) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout): nothing to tell it
