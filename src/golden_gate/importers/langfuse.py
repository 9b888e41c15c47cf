"""Langfuse dataset items (the API's or the UI's JSON/JSONL export): `input`, `expectedOutput`,
`metadata`, `status` (an ARCHIVED item is listed, not written)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from golden_gate.errors import InputError
from golden_gate.importers.base import Options, Row
from golden_gate.importers.fields import answer_of, question_of
from golden_gate.importers.sources import records

name = "langfuse"
summary = "Langfuse dataset items: input, expectedOutput (JSON or JSONL export)"


def sniff(path: Path, head: str) -> bool:
    return '"datasetId"' in head or '"sourceTraceId"' in head


def rows(path: Path, options: Options) -> Iterator[Row]:
    for where, item in records(path, "data|items"):
        if not isinstance(item, dict):
            raise InputError(f"{where}: a dataset item is an object with `input`")
        row = Row(where=where)
        if str(item.get("status", "")).upper() == "ARCHIVED":
            row.skip = "archived in Langfuse"
            yield row
            continue
        row.question, origin, dropped = question_of(item.get("input"))
        row.mapped.append(f"{origin} → question")
        row.dropped += dropped
        expected = item.get("expectedOutput", item.get("expected_output"))
        if expected not in (None, "", {}):
            row.reference, origin = answer_of(expected)
            if row.reference:
                row.mapped.append(f"expectedOutput ({origin}) → reference")
            else:
                row.dropped.append("expectedOutput (no answer-like field)")
        if item.get("sourceTraceId"):
            row.dropped.append("sourceTraceId")
        yield row
