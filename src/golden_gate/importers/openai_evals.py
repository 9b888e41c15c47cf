"""OpenAI evals samples (JSONL): `input` chat messages (or text) and `ideal`, a string or a list
of acceptable answers."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from golden_gate.errors import InputError
from golden_gate.importers.base import Options, Row
from golden_gate.importers.fields import question_of
from golden_gate.importers.sources import records

name = "openai-evals"
summary = "OpenAI evals samples.jsonl: input (chat messages) and ideal (text or a list)"


def sniff(path: Path, head: str) -> bool:
    return '"ideal"' in head and '"input"' in head


def rows(path: Path, options: Options) -> Iterator[Row]:
    for where, sample in records(path):
        if not isinstance(sample, dict):
            raise InputError(f"{where}: a sample is an object with `input` and `ideal`")
        row = Row(where=where)
        row.question, origin, dropped = question_of(sample.get("input"))
        row.mapped.append(f"{origin} → question")
        systems = [m for m in sample.get("input") or [] if isinstance(m, dict)
                   and m.get("role") == "system"]  # fmt: skip
        row.dropped += [f"{d} (its system prompt included)" if systems else d for d in dropped]
        ideal = sample.get("ideal")
        answers = [ideal] if isinstance(ideal, str) else ideal if isinstance(ideal, list) else []
        answers = [str(a) for a in answers if str(a).strip()]
        if len(answers) == 1:
            row.reference = answers[0]
            row.mapped.append("ideal → reference")
        elif answers:
            # Any one of them is right (the evals' Match/Includes): one pattern, any of them.
            alternatives = "|".join(re.escape(a).replace("/", "\\/") for a in answers)
            row.must_include.append(f"/(?:{alternatives})/")
            row.mapped.append("ideal (several answers) → must_include, any of them")
        if isinstance(sample.get("id"), (str, int)):
            row.id = str(sample["id"])
        for other in sample:
            if other not in ("input", "ideal", "id"):
                row.dropped.append(other)
        yield row
