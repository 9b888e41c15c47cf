"""LangSmith dataset examples (`list_examples` as JSON/JSONL, the UI's JSONL export): `inputs`
and `outputs` objects, `metadata`, `id`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from golden_gate.errors import InputError
from golden_gate.importers.base import Options, Row
from golden_gate.importers.fields import answer_of, question_of
from golden_gate.importers.sources import records

name = "langsmith"
summary = "LangSmith dataset examples: inputs, outputs (JSON or JSONL export)"


def sniff(path: Path, head: str) -> bool:
    return '"inputs"' in head and ('"outputs"' in head or '"dataset_id"' in head)


def rows(path: Path, options: Options) -> Iterator[Row]:
    for where, example in records(path, "examples"):
        if not isinstance(example, dict):
            raise InputError(f"{where}: an example is an object with `inputs`")
        row = Row(where=where)
        row.question, origin, dropped = question_of(example.get("inputs"))
        row.mapped.append(f"{origin.replace('input', 'inputs', 1)} → question")
        row.dropped += dropped
        outputs = example.get("outputs")
        if outputs not in (None, {}, ""):
            row.reference, origin = answer_of(outputs)
            if row.reference:
                row.mapped.append(f"{origin.replace('output', 'outputs', 1)} → reference")
            else:
                row.dropped.append("outputs (no answer-like field)")
        split = (example.get("metadata") or {}).get("dataset_split")
        if isinstance(split, list):
            row.tags += [str(s) for s in split]
        elif isinstance(split, str):
            row.tags.append(split)
        yield row
