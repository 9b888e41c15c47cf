"""deepeval goldens: a JSON array (`EvaluationDataset.save_as`), a dataset export (an object
with `goldens`, camelCase or snake_case fields), or CSV/JSONL of the same columns."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from golden_gate.errors import InputError
from golden_gate.importers.base import Options, Row
from golden_gate.importers.sources import records

name = "deepeval"
summary = "deepeval goldens: input, expected_output, context, tools (JSON array or export)"

DROPPED = (
    ("context", "context"), ("retrieval_context", "retrieval_context"),
    ("retrievalContext", "retrieval_context"), ("actual_output", "actual_output"),
    ("actualOutput", "actual_output"), ("additional_metadata", "additional_metadata"),
    ("additionalMetadata", "additional_metadata"), ("comments", "comments"),
    ("source_file", "source_file"), ("sourceFile", "source_file"),
    ("tools_called", "tools_called"), ("toolsCalled", "tools_called"),
)  # fmt: skip


def sniff(path: Path, head: str) -> bool:
    marks = ("expected_output", "expectedOutput", "additional_metadata", "retrieval_context")
    return (
        '"input"' in head
        and '"datasetId"' not in head  # Langfuse's items
        and (any(m in head for m in marks) or '"goldens"' in head)
    )


def _get(data: dict[str, Any], *names: str) -> Any:
    return next((data[n] for n in names if data.get(n) not in (None, "", [])), None)


def rows(path: Path, options: Options) -> Iterator[Row]:
    for where, golden in records(path, "goldens|conversationalGoldens"):
        if not isinstance(golden, dict):
            raise InputError(f"{where}: a golden is an object with `input`")
        row = Row(where=where)
        if _get(golden, "turns", "scenario") is not None:
            row.skip = "a conversational golden (scenario/turns): not imported"
            yield row
            continue
        question = _get(golden, "input")
        row.question = question if isinstance(question, str) else None
        row.mapped.append("input → question")
        expected = _get(golden, "expected_output", "expectedOutput")
        if isinstance(expected, str):
            row.reference = expected
            row.mapped.append("expected_output → reference")
        tools = _get(golden, "expected_tools", "expectedTools")
        if isinstance(tools, list):
            names = [t.get("name") for t in tools if isinstance(t, dict) and t.get("name")]
            if names:
                row.expected_tools = [{"name": str(n)} for n in names]
                row.mapped.append("expected_tools → expected_tools (names; arguments not compared)")
        for field, shown in DROPPED:
            if golden.get(field) not in (None, "", [], {}):
                row.dropped.append(shown)
        if isinstance(golden.get("name"), str):
            row.id = golden["name"]
        yield row
