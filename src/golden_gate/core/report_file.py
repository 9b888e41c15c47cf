"""Reading and writing a report file: a bad one is an InputError naming the file; what is
written has every registered secret scrubbed (core/report.py holds the records)."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError

from golden_gate import jsontext, redaction, surrogates
from golden_gate.core.item_result import ItemResult
from golden_gate.core.report import Report
from golden_gate.errors import InputError
from golden_gate.files import read_text, write_result


def parse_report(text: str, *, source: str) -> Report:
    """Parse a report or baseline; a bad one is an InputError naming the file."""
    try:
        # Depth is bounded below, on the few unknown fields, not on every item (a large
        # report's whole walk would cost half its parse).
        data = jsontext.loads(text, check_depth=False)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{source}: not a report: invalid JSON at line {exc.lineno} ({exc.msg})"
        ) from None
    if surrogates.may_hold_surrogates(text):  # rare: a walk over every string only then
        data, _ = surrogates.repair_json(data)
    if not isinstance(data, dict) or "results" not in data:
        raise InputError(f"{source}: not a report: expected an object with 'judge' and 'results'")
    try:
        report = Report.model_validate(data)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(p) for p in problem["loc"])
        message = problem["msg"].removeprefix("Value error, ")
        detail = f"{where}: {message}" if where else message
        raise InputError(f"{source}: not a report: {detail}") from None
    deep = _too_deep_field(report)
    if deep is not None:
        raise InputError(
            f"{source}: not a report: {deep}: nested more than {jsontext.MAX_DEPTH} deep"
        )
    return report


def _deep_extra(where: str, owner: BaseModel) -> str | None:
    """The first unknown field of `owner` nested too deep to be written again."""
    for name, value in (owner.__pydantic_extra__ or {}).items():
        if jsontext.nested_deeper(value, jsontext.MAX_DEPTH):
            return where + name
    return None


def _too_deep_field(report: Report) -> str | None:
    """An unknown field nested too deep to be written again; typed fields are shallow."""

    found = _deep_extra("", report)
    for i, item in enumerate(report.results):
        if found is not None:
            return found
        found = too_deep_item_field(item, f"results.{i}.")
    return found


def too_deep_item_field(item: ItemResult, where: str = "") -> str | None:
    """An unknown field of the item or its runs nested too deep to be written again."""

    found = _deep_extra(where, item) if item.__pydantic_extra__ else None
    for j, run in enumerate(item.run_results):
        if run.__pydantic_extra__:
            found = found or _deep_extra(f"{where}run_results.{j}.", run)
    return found


def load_report(path: str | Path) -> Report:
    text = read_text(path, what="report")
    return parse_report(text, source=str(path))


def report_json(report: Report) -> str:
    """The report as written, with every registered secret scrubbed from every string."""
    try:
        text = report.model_dump_json(indent=1, exclude_none=True)
    except PydanticSerializationError:  # a lone surrogate that no reader repaired: repair here
        data, _ = surrogates.repair_json(report.model_dump(mode="json", exclude_none=True))
        text = json.dumps(data, indent=1, ensure_ascii=False)
    if redaction.present(text):  # rare: re-encode only then, string by string (JSON stays valid)
        text = json.dumps(redaction.scrub_json(json.loads(text)), indent=1, ensure_ascii=False)
    return text + "\n"


def save_report(report: Report, path: str | Path) -> None:
    write_result(path, report_json(report), what="report")
