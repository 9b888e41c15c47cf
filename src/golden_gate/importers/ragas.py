"""ragas testsets: 0.1 (`question`, `contexts`, `ground_truth`, `evolution_type`) and 0.2 and
later (`user_input`, `reference_contexts`, `reference`, `synthesizer_name`), as CSV, JSON or
JSONL (`to_pandas().to_csv`, `to_jsonl`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from golden_gate.errors import InputError
from golden_gate.importers.base import Options, Row
from golden_gate.importers.fields import listed
from golden_gate.importers.sources import records

name = "ragas"
summary = "ragas testset: question/user_input, ground_truth/reference, contexts (dropped)"


def sniff(path: Path, head: str) -> bool:
    first = head.splitlines()[0] if head else ""
    return ("ground_truth" in head and "question" in first) or (
        "user_input" in head and ("reference" in head or "synthesizer_name" in head)
    )


def rows(path: Path, options: Options) -> Iterator[Row]:
    for where, record in records(path, "samples"):
        if not isinstance(record, dict):
            raise InputError(f"{where}: a testset row is an object")
        if isinstance(record.get("eval_sample"), dict):  # Testset.to_jsonl of 0.2
            record = {
                **record["eval_sample"],
                **{k: v for k, v in record.items() if k != "eval_sample"},
            }
        row = Row(where=where)
        new = "user_input" in record
        q, ref, ctx, kind = (
            ("user_input", "reference", "reference_contexts", "synthesizer_name") if new
            else ("question", "ground_truth", "contexts", "evolution_type")
        )  # fmt: skip
        question = record.get(q)
        row.question = question if isinstance(question, str) else None
        row.mapped.append(f"{q} → question")
        reference = record.get(ref)
        if isinstance(reference, list):
            reference = "\n".join(map(str, reference))
        if isinstance(reference, str) and reference.strip() and reference.strip() != "nan":
            row.reference = reference
            row.mapped.append(f"{ref} → reference")
        if listed(record.get(ctx)):
            row.dropped.append(f"{ctx} (golden-gate has no per-item context)")
        if isinstance(record.get(kind), str) and record[kind].strip():
            row.tags.append(f"ragas-{record[kind].strip()}")
            row.mapped.append(f"{kind} → tag")
        for other in record:
            if other not in (q, ref, ctx, kind) and record[other] not in (None, "", "[]"):
                row.dropped.append(other)
        yield row
