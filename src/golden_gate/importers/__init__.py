"""Importers: other tools' datasets as golden items, one module a format behind one small
interface (`base.Importer`) and one registry, like the judge's providers.

Each importer turns a file into rows (one foreign record each, with its file and line, what it
mapped and what it dropped); `base.assemble` makes golden items of them: an expected answer is
the reference the judge reads, as written (key points drawn from it only with --key-points,
tagged needs-review); an item with nothing to judge it by is listed, never written.
"""

from __future__ import annotations

from pathlib import Path

from golden_gate.errors import InputError
from golden_gate.importers import (
    deepeval,
    langfuse,
    langsmith,
    openai_evals,
    promptfoo,
    ragas,
    table,
)
from golden_gate.importers.base import Importer, Options, Outcome, assemble
from golden_gate.importers.sources import head

# In the order `detect` tries them: the most specific first, the plain table last.
FORMATS: dict[str, Importer] = {
    m.name: m for m in (promptfoo, openai_evals, ragas, langfuse, deepeval, langsmith, table)
}


def detect(path: Path) -> Importer:
    start = head(path)
    for importer in FORMATS.values():
        if importer.sniff(path, start):
            return importer
    raise InputError(f"{path}: cannot tell its format: say --format ({', '.join(FORMATS)})")


def import_file(path: Path, fmt: str | None, options: Options) -> tuple[str, Outcome]:
    """(the format read, the items and what was mapped, dropped and left out)."""
    if fmt is not None and fmt not in FORMATS:
        raise InputError(f"--format: '{fmt}' is not one of {', '.join(FORMATS)}")
    importer = FORMATS[fmt] if fmt else detect(path)
    outcome = assemble(importer.rows(path, options), importer.name, options)
    return importer.name, outcome
