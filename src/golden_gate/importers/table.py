"""A plain CSV/TSV/JSONL/JSON file with a column map: `--map question=Prompt,reference=Answer`
(the fields: question, reference, key_points, urls, tags, id, must_refuse); without one the
usual names are recognised (question/input/prompt, expected/answer/reference, …)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from golden_gate.errors import InputError
from golden_gate.importers.base import Options, Row
from golden_gate.importers.fields import ANSWER_KEYS, QUESTION_KEYS, listed
from golden_gate.importers.sources import records

name = "table"
summary = "plain CSV/TSV/JSONL with a column map (--map question=COL,reference=COL,…)"
_SPLIT = re.compile(r"\s*[|;\n]\s*")
FIELDS = ("question", "reference", "key_points", "urls", "tags", "id", "must_refuse")
GUESS = {
    "question": QUESTION_KEYS,
    "reference": ANSWER_KEYS,
    "key_points": ("reference_key_points", "key_points", "keypoints"),
    "urls": ("reference_urls", "urls", "sources"),
    "tags": ("tags", "tag", "category"),
    "id": ("id", "key"),
    "must_refuse": ("must_refuse",),
}


def sniff(path: Path, head: str) -> bool:
    return path.suffix.lower() in (".csv", ".tsv", ".jsonl", ".ndjson", ".json")


def _columns(record: dict, options: Options, where: str) -> dict[str, str]:
    unknown = [f for f in options.columns if f not in FIELDS]
    if unknown:
        raise InputError(f"--map: unknown field '{unknown[0]}' (the fields: {', '.join(FIELDS)})")
    chosen = dict(options.columns)
    for field, names in GUESS.items():
        if field not in chosen:
            lowered = {str(k).strip().lower(): k for k in record}
            found = next((lowered[n.lower()] for n in names if n.lower() in lowered), None)
            if found is not None:
                chosen[field] = found
    missing = [c for c in options.columns.values() if c not in record]
    if missing:
        raise InputError(f"{where}: --map names column '{missing[0]}', which the file lacks")
    return chosen


def rows(path: Path, options: Options) -> Iterator[Row]:
    columns: dict[str, str] | None = None
    for where, record in records(path):
        if not isinstance(record, dict):
            raise InputError(f"{where}: a record is an object (or a CSV row)")
        if columns is None or not options.columns:  # guessed per record without a map
            columns = _columns(record, options, where)
        row = Row(where=where)
        for field, column in columns.items():
            value = record.get(column)
            if value in (None, "", []):
                continue
            if field in ("question", "reference", "id"):
                text = "\n".join(map(str, value)) if isinstance(value, list) else str(value)
                setattr(row, field, text)
            elif field == "must_refuse":
                row.must_refuse = str(value).strip().lower() in ("true", "1", "yes")
            else:
                # A list field: a list, or one cell holding several (`a | b`, `a; b`).
                setattr(row, field, [p for v in listed(value) for p in _SPLIT.split(v) if p])
            row.mapped.append(f"{column} → {field}")
        for other in record:
            if other not in columns.values() and record[other] not in (None, ""):
                row.dropped.append(str(other))
        yield row
