"""Production traces → candidate items: the questions users asked, found in OpenTelemetry GenAI
spans (OTLP JSON: v1.37+'s `gen_ai.input.messages`/`gen_ai.output.messages`, and the older
`gen_ai.user.message`/`gen_ai.choice` events and `gen_ai.prompt.N.*` attributes), a Langfuse
trace export or LangSmith runs. Each becomes an item tagged `from-traces` and `needs-reference`
(never selected, so never gated, until `review --candidates` accepts it), the answer it got kept
as `observed_answer` for the reviewer; secrets and personal data are scrubbed from both; a
question already in the golden set, or asked before in the traces, is not a candidate again."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from golden_gate.core.golden import GoldenItem
from golden_gate.errors import InputError
from golden_gate.importers.base import (
    FROM_TRACES,
    NEEDS_REFERENCE,
    Options,
    Outcome,
    Row,
    assemble,
)
from golden_gate.importers.fields import answer_of, question_of, text_of
from golden_gate.importers.sources import head, records
from golden_gate.redaction import scrub_personal

FORMATS = ("otlp", "langfuse", "langsmith")
ANSWER_CHARS = 4000


def _value(v: Any) -> Any:
    """An OTLP AnyValue as Python."""
    if not isinstance(v, dict):
        return v
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in v:
            return v[key]
    if "intValue" in v:
        return int(v["intValue"])
    if "arrayValue" in v:
        return [_value(x) for x in (v["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in v:
        return _attributes((v["kvlistValue"] or {}).get("values", []))
    return None


def _attributes(pairs: Any) -> dict[str, Any]:
    if not isinstance(pairs, list):
        return {}
    return {p["key"]: _value(p.get("value")) for p in pairs if isinstance(p, dict) and "key" in p}


def _json(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _parts_text(message: Any) -> str | None:
    """A v1.37+ message's text: `{role, parts: [{type: text, content}]}`."""
    if not isinstance(message, dict):
        return None
    parts = message.get("parts")
    if isinstance(parts, list):
        texts = [p.get("content") for p in parts if isinstance(p, dict) and p.get("type") == "text"]
        joined = "\n".join(t for t in texts if isinstance(t, str))
        return joined or None
    return text_of(message.get("content"))


def _span_exchange(span: dict[str, Any]) -> tuple[str | None, str | None]:
    """(question, answer) of one GenAI span, read from whichever convention it follows."""
    attrs = _attributes(span.get("attributes"))
    question = answer = None
    inputs = _json(attrs.get("gen_ai.input.messages"))
    if isinstance(inputs, list):
        users = [m for m in inputs if isinstance(m, dict) and m.get("role") == "user"]
        question = _parts_text(users[-1]) if users else None
    outputs = _json(attrs.get("gen_ai.output.messages"))
    if isinstance(outputs, list) and outputs:
        answer = _parts_text(outputs[0])
    for event in span.get("events") or []:  # v1.36 and older: one event a message
        if not isinstance(event, dict):
            continue
        fields = _attributes(event.get("attributes"))
        if event.get("name") == "gen_ai.user.message":
            content = _json(fields.get("content"))
            question = text_of(content) or question
        elif event.get("name") == "gen_ai.choice" and answer is None:
            message = _json(fields.get("message"))
            answer = text_of(message.get("content")) if isinstance(message, dict) else None
            answer = answer or text_of(fields.get("content"))
    if question is None:  # the indexed attributes of early instrumentations
        n = 0
        while f"gen_ai.prompt.{n}.role" in attrs:
            if attrs[f"gen_ai.prompt.{n}.role"] == "user":
                question = text_of(attrs.get(f"gen_ai.prompt.{n}.content")) or question
            n += 1
    if answer is None:
        answer = text_of(attrs.get("gen_ai.completion.0.content"))
    return question, answer


def _otlp(path: Path) -> Iterator[tuple[str, str | None, str | None, str]]:
    for where, request in records(path, "resourceSpans"):
        batches = request.get("resourceSpans") if isinstance(request, dict) else None
        if batches is None and isinstance(request, dict) and "scopeSpans" in request:
            batches = [request]  # the export's resourceSpans array, element by element
        if not isinstance(batches, list):
            raise InputError(f"{where}: not OTLP JSON (no resourceSpans)")
        for batch in batches:
            for scope in (batch or {}).get("scopeSpans") or []:
                for span in (scope or {}).get("spans") or []:
                    if not isinstance(span, dict):
                        raise InputError(f"{where}: a span is an object")
                    question, answer = _span_exchange(span)
                    if question is not None:
                        yield where, question, answer, str(span.get("traceId", ""))


def _langfuse(path: Path) -> Iterator[tuple[str, str | None, str | None, str]]:
    for where, trace in records(path, "data|traces"):
        if not isinstance(trace, dict):
            raise InputError(f"{where}: a Langfuse trace is an object with `input`")
        question, _, _ = question_of(trace.get("input"))
        answer, _ = answer_of(trace.get("output"))
        yield where, question, answer, str(trace.get("id", ""))


def _langsmith(path: Path) -> Iterator[tuple[str, str | None, str | None, str]]:
    for where, run in records(path, "runs"):
        if not isinstance(run, dict):
            raise InputError(f"{where}: a LangSmith run is an object with `inputs`")
        if run.get("parent_run_id"):  # a step inside a trace: the root run has the exchange
            continue
        question, _, _ = question_of(run.get("inputs"))
        answer, _ = answer_of(run.get("outputs")) if run.get("outputs") else (None, "")
        yield where, question, answer, str(run.get("trace_id") or run.get("id") or "")


def _detect(path: Path) -> str:
    start = head(path)
    if "resourceSpans" in start or "scopeSpans" in start:
        return "otlp"
    if '"run_type"' in start or '"parent_run_id"' in start:
        return "langsmith"
    if '"input"' in start:
        return "langfuse"
    raise InputError(f"{path}: cannot tell the traces' format: say --format ({', '.join(FORMATS)})")


def candidates(path: Path, fmt: str | None, golden: Sequence[GoldenItem]) -> tuple[str, Outcome]:
    """Candidate items from a traces file, none whose question the golden set has."""
    if fmt is not None and fmt not in FORMATS:
        raise InputError(f"--format: '{fmt}' is not a traces format ({', '.join(FORMATS)})")
    fmt = fmt or _detect(path)
    read = {"otlp": _otlp, "langfuse": _langfuse, "langsmith": _langsmith}[fmt]
    known = {" ".join(item.question.casefold().split()) for item in golden}

    def rows() -> Iterator[Row]:
        for where, question, answer, trace in read(path):
            row = Row(where=where, tags=[FROM_TRACES, NEEDS_REFERENCE])
            if question is None or not question.strip():
                row.skip = "no user message"
                yield row
                continue
            row.question = scrub_personal(question)
            if " ".join(row.question.casefold().split()) in known:
                row.skip = "the golden set has this question"
                yield row
                continue
            row.mapped.append("the user's message → question (scrubbed)")
            if answer:
                row.extra["observed_answer"] = scrub_personal(answer)[:ANSWER_CHARS]
                row.mapped.append("the answer given → observed_answer, for the reviewer")
            if trace:
                row.extra["source_trace"] = trace
            row.extra["review"] = ""  # a person writes accept or reject here
            yield row

    return fmt, assemble(rows(), "trace", Options(without_reference=True))
