"""The judge: decides whether an answer says what the reference key points say.

Two judges share one interface (`Judge`):

- `KeypointsJudge`, offline and deterministic (token overlap with the key points), the
  default, and what runs when there is no model or no key;
- `LLMJudge`, an openevals LLM-as-judge: over the OpenAI SDK's client for the providers that
  speak Chat Completions (judge_client.py), over a LangChain chat model for the others
  (docs/architecture.md#the-judge-openevals); what differs between providers is theirs
  (providers/).

A judge returns a `Verdict` or raises `JudgeError`: a call that failed is an error, never a
"no", and is never cached. openevals and LangChain cost about a second and 130 MB to import,
so they are imported only when an `LLMJudge` is built.

Both judges share the interface, the verdict record and the identity that keys the verdict
cache; the prompt's checks are judge_prompt.py's, LangChain's usage callback judge_usage.py's.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import json
import re
import sys
import time
from abc import ABC, abstractmethod
from contextvars import ContextVar
from importlib import metadata
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, field_validator

from golden_gate import redaction
from golden_gate.core.item_result import TokenUsage, Verdict
from golden_gate.errors import InputError
from golden_gate.evaluation import (
    fence,
    judge_client,
    judge_usage,
    openevals_prompts,
    providers,
    retry,
    tracing,
)
from golden_gate.evaluation.judge_prompt import load_prompt, one_line, redact
from golden_gate.limits import MAX_CONCURRENCY, MAX_JUDGE_TOKENS, MAX_RETRIES, MAX_TIMEOUT_S
from golden_gate.surrogates import repair

KEYPOINTS = "keypoints"
KEYPOINTS_RULE_VERSION = "keypoints/1"


class JudgeSettings(BaseModel):
    """How answers are judged; everything here except transport settings changes verdicts."""

    model: str = KEYPOINTS
    prompt_file: Path | None = None
    base_url: str | None = None
    temperature: float = Field(default=0.0, ge=0, le=2, allow_inf_nan=False)
    timeout_s: float = Field(default=60.0, gt=0, le=MAX_TIMEOUT_S, allow_inf_nan=False)
    max_retries: int = Field(default=6, ge=0, le=MAX_RETRIES)
    # A verdict with its reasoning takes a few hundred tokens; the cap stops a runaway reply.
    max_tokens: int = Field(default=providers.DEFAULT_MAX_TOKENS, ge=1, le=MAX_JUDGE_TOKENS)
    concurrency: int = Field(default=8, ge=1, le=MAX_CONCURRENCY)
    continuous: bool = False
    choices: list[float] | None = None
    use_reasoning: bool = True
    keypoint_threshold: float = Field(default=0.6, gt=0, le=1)
    # Every verdict-changing option (options.verdict_identity), in the cache identity: a new
    # one cannot be forgotten there.
    yardstick: str = ""

    _supported_model = field_validator("model")(providers.check_model)

    @field_validator("base_url")
    @classmethod
    def _base_url_is_a_url(cls, value: str | None) -> str | None:
        # Said here, once, not as a ValueError deep in the preflight or the SDK.
        if value and (problem := redaction.url_problem(value)):
            shown = redaction.without_credentials(value)
            raise ValueError(f"{shown!r} is not a URL the judge can be reached at ({problem})")
        return value


class JudgeError(Exception):
    """A judge call failed after the SDK's own retries; the message is one line, no secrets."""

    def __init__(
        self,
        message: str,
        *,
        tokens: TokenUsage | None = None,
        timed_out: bool = False,
        final: bool = False,
        attempts: int = 0,
        fault: bool = False,
        status: int | None = None,
        transport: bool = False,
    ) -> None:
        super().__init__(message)
        self.tokens = tokens  # spent before the failure, for cost accounting
        self.attempts = attempts  # requests sent to the judge's server (retry.py)
        self.timed_out = timed_out  # every try timed out: a sign of too few server slots
        # Asking again cannot help (the reply hit the generation cap): never re-asked.
        self.final = final
        # A fault asking again could cure (a timeout, 5xx) that lasted every try: an outage,
        # not a setting to fix; `status`: the HTTP status the judge answered, if any.
        self.fault = fault
        self.status = status
        self.transport = transport  # no reply was read (a connection or TLS failure)


class Judge(ABC):
    """Judges one answer against its reference key points."""

    name: str
    prompt_hash: str | None
    temperature: float | None = None  # sampling temperature, for models that have one
    endpoint: str | None = None  # where verdicts come from (a model judge's server)
    seed: int | None = None  # the seed sent with each call, where the provider takes one

    @abstractmethod
    def identity(self) -> str:
        """Everything besides question, answer and reference that can change a verdict."""

    @abstractmethod
    async def judge(
        self, *, question: str, answer: str, reference: str, context: str | None = None
    ) -> Verdict:
        """The verdict on `answer`; raises JudgeError when no verdict could be obtained.

        `context`: the retrieved passages, for prompts with a `{context}` placeholder.
        """

    async def aclose(self) -> None:  # noqa: B027 - optional hook, most judges hold nothing
        """Release connections; call once at the end, inside the event loop that judged."""


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def key_points(reference: str) -> list[str]:
    """The key points of a reference: its `- ` bullets, or every non-blank line if none."""
    lines = [line.strip() for line in reference.splitlines() if line.strip()]
    bullets = [line[2:].strip() for line in lines if line.startswith(("- ", "* "))]
    return bullets or lines


# -- the offline judge ----------------------------------------------------------------------

_STOP_WORDS_TEXT = """
    a an the and or but if of to in on at by for from with without into onto as is are was
    were be been being it its this that these those there their them they you your we our
    do does did can could should would will shall may might must not no so than then too very
    just also only any all each some such which who whom what when where how why"""
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())
_TOKEN = re.compile(r"\w+")


def content_tokens(text: str) -> set[str]:
    """Lowercased word tokens without punctuation and stop words."""
    return {t for t in _TOKEN.findall(text.lower()) if t not in STOP_WORDS}


class KeypointsJudge(Judge):
    """Offline, deterministic judge by token overlap with the key points.

    The rule, in plain words: lowercase the answer and each key point, split them into words
    (punctuation is dropped) and drop common stop words ("the", "is", "of", ...). A key point
    is covered when at least `threshold` (default 0.6) of its remaining words occur somewhere
    in the answer. The answer passes when every key point is covered; a reference with no key
    points passes. The score is the fraction of key points covered, and the comment names
    each key point that is not.
    """

    def __init__(self, threshold: float = 0.6) -> None:
        self.threshold = threshold
        self.name = KEYPOINTS
        self._rule = json.dumps(
            {"rule": KEYPOINTS_RULE_VERSION, "threshold": threshold, "stop": sorted(STOP_WORDS)}
        )
        self.prompt_hash = _sha256(self._rule)

    def identity(self) -> str:
        return self._rule

    def covered(self, point: str, answer_tokens: set[str]) -> bool:
        wanted = content_tokens(point) or set(_TOKEN.findall(point.lower()))
        if not wanted:
            return True
        return len(wanted & answer_tokens) >= self.threshold * len(wanted)

    async def judge(
        self, *, question: str, answer: str, reference: str, context: str | None = None
    ) -> Verdict:
        start = time.perf_counter()
        answer_tokens = set(_TOKEN.findall(answer.lower()))
        points = key_points(reference)
        missing = [p for p in points if not self.covered(p, answer_tokens)]
        if not points:
            comment = "no key points to check"
        elif missing:
            comment = "; ".join(f'missing key point: "{p}"' for p in missing)
        else:
            comment = f"all {len(points)} key points covered"
        return Verdict(
            passed=not missing,
            score=(len(points) - len(missing)) / len(points) if points else 1.0,
            comment=comment,
            tokens=TokenUsage(),
            latency_ms=(time.perf_counter() - start) * 1000,
        )


# -- the LLM judge ----------------------------------------------------------------------------


def endpoint(url: str | None) -> str | None:
    """The URL verdicts come from, normalised: scheme, host, port and path, no credentials."""
    if not url:
        return None
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return redaction.without_credentials(url)
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme.lower()}://{host}{port}{parts.path.rstrip('/')}"


class _Binding:
    """The chat model, evaluator and HTTP client used inside one event loop."""

    def __init__(
        self, evaluator: Any, client: Any, concurrency: int, endpoint: str | None, *, direct: bool
    ) -> None:
        self.evaluator = evaluator
        self.client = client
        self.endpoint = endpoint
        self.direct = direct  # openevals calls the SDK's client, not the LangChain model
        self.loop: asyncio.AbstractEventLoop | None = None
        self.semaphore: asyncio.Semaphore | None = None
        self.concurrency = concurrency
        self.closed = False


class LLMJudge(Judge):
    """openevals' LLM-as-judge with a chat model built from `provider:model`.

    The model is built here (not by openevals) so timeout, retries, temperature and base URL
    apply. For the Chat Completions providers, openevals is given the model's SDK client instead
    of the model (judge_client.py): the same request, a fraction of the CPU. Its HTTP connections
    belong to one event loop: a call from another loop (a second `asyncio.run`) gets a fresh
    model and client instead of a pool of dead connections (LangChain's default client is
    shared process-wide and fails with "Event loop is closed").
    Call `aclose()` before each loop ends so its connections are closed, not left to the GC.
    """

    def __init__(self, settings: JudgeSettings, *, prompt: str | None = None) -> None:
        """`prompt`: an already checked template (an evaluator preset's), else the settings'."""
        tracing.keep_off()
        self.settings = settings
        self.temperature = settings.temperature
        self.name = settings.model
        if prompt is not None:
            self.prompt = prompt
        elif settings.prompt_file is not None:
            self.prompt = load_prompt(settings.prompt_file)
        else:
            self.prompt = openevals_prompts.prompt("CORRECTNESS_PROMPT")
        self.prompt_hash = _sha256(self.prompt)
        self._delimiters = fence.delimiter_lines(self.prompt)
        self._retry = retry.RetryPolicy(settings.max_retries)  # the only retries (retry.py)
        self.provider, self._model_name = providers.resolve(settings.model)
        self._binding = self._bind()  # builds the model now: bad names and keys fail early
        self.endpoint = self._binding.endpoint
        self.seed = self.provider.seed
        self._identity = json.dumps(
            {
                "judge": self.name,
                # Two servers behind one model name are two judges: their verdicts never mix.
                "endpoint": self._binding.endpoint,
                "prompt": self.prompt,
                # Verdicts given before untrusted text was fenced may be an injection's.
                "fence": fence.FENCE_VERSION,
                "continuous": settings.continuous,
                "choices": settings.choices,
                "use_reasoning": settings.use_reasoning,
                "temperature": settings.temperature,
                "max_tokens": settings.max_tokens,
                "openevals": metadata.version("openevals"),
                **({"seed": self.seed} if self.seed is not None else {}),
                **({"yardstick": settings.yardstick} if settings.yardstick else {}),
            },
            sort_keys=True,
        )

    def identity(self) -> str:
        return self._identity

    @property
    def direct(self) -> bool:
        """openevals calls the SDK's client itself, with no LangChain model in between."""
        return self._binding.direct

    @property
    def numeric(self) -> bool:
        """Scores are numbers (continuous or choices) rather than true/false."""
        return self.settings.continuous or bool(self.settings.choices)

    def _bind(self) -> _Binding:
        s = self.settings
        provider = self.provider
        prompt = fence.fenced_prompt(self.prompt)
        scale: dict[str, Any] = {
            "continuous": s.continuous,
            "choices": s.choices,
            "use_reasoning": s.use_reasoning,
        }
        evaluator: Any
        try:
            chat = provider.chat_endpoint(self._model_name, s)
            if chat is not None:  # openevals' own steps, without LangChain and LangSmith
                client, url = chat.http_client, chat.url
                evaluator = judge_client.Scorer(judge_client.JudgeClient(chat), prompt, **scale)
            else:
                if (missing := providers.missing_extra(s.model)) is not None:
                    raise InputError(missing)
                tracing.disable()
                judge_usage.register_hook()
                chat_model, client = provider.build(self._model_name, s)
                # As the SDK resolved it where it can be read: its own variables
                # (ANTHROPIC_BASE_URL, ...) can send a judge elsewhere than the settings say.
                url = provider.sdk_url(chat_model)
                from openevals.llm import create_async_llm_as_judge

                evaluator = create_async_llm_as_judge(prompt=prompt, judge=chat_model, **scale)
        except InputError:
            raise
        except Exception as exc:
            detail = redact(one_line(str(exc)))
            raise InputError(f"judge model '{s.model}' could not be set up: {detail}") from None
        url = endpoint(url or s.base_url or provider.default_endpoint)
        return _Binding(evaluator, client, s.concurrency, url, direct=chat is not None)

    def _current(self) -> _Binding:
        loop = asyncio.get_running_loop()
        binding = self._binding
        if binding.closed or (binding.loop is not None and binding.loop is not loop):
            binding = self._binding = self._bind()
        if binding.loop is None:
            binding.loop = loop
            binding.semaphore = asyncio.Semaphore(binding.concurrency)
        return binding

    async def judge(
        self, *, question: str, answer: str, reference: str, context: str | None = None
    ) -> Verdict:
        binding = self._current()
        untraced: Any = contextlib.nullcontext  # the direct path has no LangSmith wrapper
        if not binding.direct:
            from langsmith import tracing_context

            untraced = functools.partial(tracing_context, enabled=False)
        assert binding.semaphore is not None
        outcome = retry.Outcome()
        spent = TokenUsage()  # over every try: a failed try that got a reply is paid for
        records: list[judge_client.CallRecord] = []

        def keep(record: judge_client.CallRecord) -> None:
            records.append(record)
            spent.input_tokens += record.tokens.input_tokens
            spent.output_tokens += record.tokens.output_tokens

        async def attempt() -> Any:
            record = judge_client.CallRecord()
            # The direct client fills the record itself; LangChain reports to a callback.
            handler = None if binding.direct else providers.reply_recorder()
            var: ContextVar[Any] = judge_usage.usage_var
            if handler is None:
                var = judge_client.current_call
            token = var.set(record if handler is None else handler)
            try:
                # The judge timeout bounds the whole try, whatever the provider's client
                # times itself: a judge that sends a byte every half second is stopped too.
                async with asyncio.timeout(self.settings.timeout_s):
                    with untraced():
                        # Everything but the golden set's reference is untrusted: fenced.
                        d = self._delimiters
                        extra = {"context": fence.fence(context, d)} if context is not None else {}
                        result = await binding.evaluator(
                            inputs=fence.fence(question, d),
                            outputs=fence.fence(answer, d),
                            reference_outputs=reference,
                            **extra,
                        )
            except Exception as exc:
                keep(judge_usage.recorded(self.provider, handler, record, exc))
                raise
            else:
                keep(judge_usage.recorded(self.provider, handler, record))
            finally:
                var.reset(token)
            return result

        async with binding.semaphore:
            start = time.perf_counter()
            try:
                result = await self._retry.call(attempt, outcome)
            except Exception as exc:
                last = records[-1] if records else judge_client.CallRecord()
                record = last.model_copy(update={"tokens": spent})
                raise self._error(exc, record, outcome.attempts) from None
            latency_ms = (time.perf_counter() - start) * 1000
        record = records[-1]
        passed = self._passed(result, spent, outcome.attempts)
        return Verdict(
            passed=passed,
            score=result["score"],
            comment=repair(str(result.get("comment") or ""))[0],  # the model's text, untrusted
            tokens=spent,
            latency_ms=latency_ms,
            # The `model` of the server's reply (usage is keyed by it): what really judged.
            served_model=record.served_model,
            attempts=outcome.attempts,
        )

    def _error(
        self, exc: Exception, record: judge_client.CallRecord, attempts: int = 1
    ) -> JudgeError:
        return JudgeError(
            self._describe(exc, record.stopped, retries=max(attempts - 1, 0)),
            tokens=record.tokens,
            timed_out=self.provider.is_timeout(exc),
            final=bool(record.stopped),
            attempts=attempts,
            fault=retry.retryable(exc),
            status=retry.status_of(exc),
            transport=providers.transport_error(providers.sdk_cause(exc), self.settings)
            is not None,
        )

    def _passed(self, result: Any, tokens: TokenUsage, attempts: int = 1) -> bool:
        score: Any = result.get("score") if isinstance(result, dict) else None
        if self.numeric:
            # A score on another scale (3 of 10), NaN or infinity is no verdict: read as
            # asked, 3 would pass every threshold in [0, 1].
            choices = self.settings.choices
            number = isinstance(score, int | float) and not isinstance(score, bool)
            if choices:
                if number and score in choices:
                    return score >= 0.5
                expected = "one of " + ", ".join(f"{c:g}" for c in choices)
            elif number and 0 <= score <= 1:  # NaN fails both comparisons
                return score >= 0.5
            else:
                expected = "a number from 0 to 1"
        else:
            if isinstance(score, bool):
                return score
            expected = "true or false"
        shown = redact(one_line(repr(score), 60))
        raise JudgeError(
            f"judge {self.name} failed: the score was {shown}, expected {expected}",
            tokens=tokens,
            attempts=attempts,
        )

    def _describe(self, exc: Exception, stopped: str | None = None, *, retries: int = 0) -> str:
        # The retries really made (retry.py), not the most allowed.
        s = self.settings.model_copy(update={"max_retries": retries})
        reason = f"{type(exc).__name__}: {one_line(str(exc))}"
        parser = sys.modules.get("langchain_core.exceptions")  # imported if it parsed a reply

        if (special := providers.describe_error(self.provider, exc, s, stopped)) is not None:
            reason = special
        elif parser is not None and isinstance(exc, parser.OutputParserException):
            reason = "the reply was not the JSON verdict asked for"
        elif isinstance(exc, KeyError):
            reason = f"the reply has no {exc.args[0]!r}" if exc.args else reason
        return redact(one_line(f"judge {self.name} failed: {reason}", 300))

    async def aclose(self) -> None:
        binding = self._binding
        binding.closed = True  # a later call builds a fresh model and client
        if binding.client is not None and binding.loop in (None, asyncio.get_running_loop()):
            await binding.client.aclose()


def make_judge(settings: JudgeSettings) -> Judge:
    """The judge `settings.model` names: `keypoints`, or a `provider:model` LLM judge."""
    if "," in settings.model:  # panels are built per member (evaluators.py)
        raise InputError(
            f"judge-model '{settings.model}' is a panel; calibrate one judge at a time "
            "(each member's agreement with the human labels is its own kappa)"
        )
    if settings.model.strip().lower() == KEYPOINTS:
        return KeypointsJudge(settings.keypoint_threshold)
    return LLMJudge(settings)
