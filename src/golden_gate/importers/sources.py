"""Reading a foreign file record by record, each with its line: JSONL and CSV a line (a record)
at a time, a JSON document or YAML whole but only up to MAX_DOCUMENT_BYTES."""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from golden_gate import jsontext
from golden_gate.errors import InputError
from golden_gate.jsontext import MAX_DEPTH, nested_deeper

MAX_DOCUMENT_BYTES = 64 * 1024 * 1024  # a JSON or YAML file read whole
MAX_RECORD_CHARS = 16 * 1024 * 1024  # one JSONL line or CSV field


def _open(path: Path, what: str):
    try:
        return path.open(encoding="utf-8-sig", newline="")
    except FileNotFoundError:
        raise InputError(f"{path}: {what} not found") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read the {what} ({exc})") from None


def head(path: Path, size: int = 8192) -> str:
    try:
        with path.open("rb") as stream:
            return stream.read(size).decode("utf-8", errors="replace")
    except FileNotFoundError:
        raise InputError(f"{path}: file to import not found") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read the file to import ({exc})") from None


def jsonl_records(path: Path) -> Iterator[tuple[str, Any]]:
    """(file:line, value) for each non-blank line; InputError naming the line of a bad one."""
    with _open(path, "file to import") as stream:
        for number, line in enumerate(_lines(stream, path), start=1):
            if not line.strip():
                continue
            try:
                value = jsontext.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:{number}: not JSON ({exc.msg})") from None
            yield f"{path}:{number}", value


def _lines(stream, path: Path) -> Iterator[str]:
    while True:
        line = stream.readline(MAX_RECORD_CHARS + 1)
        if not line:
            return
        if len(line) > MAX_RECORD_CHARS:
            raise InputError(f"{path}: a line longer than {MAX_RECORD_CHARS:,} characters")
        yield line


def document(path: Path) -> str:
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise InputError(f"{path}: file to import not found") from None
    if size > MAX_DOCUMENT_BYTES:
        raise InputError(
            f"{path}: {size:,} bytes, more than the {MAX_DOCUMENT_BYTES:,} a JSON or YAML file "
            "may have (write it as JSONL, one record a line, which is read a line at a time)"
        )
    with _open(path, "file to import") as stream:
        try:
            return stream.read()
        except UnicodeDecodeError as exc:
            raise InputError(f"{path}: not UTF-8 text ({exc.reason})") from None


def json_records(path: Path, key: str | None = None) -> Iterator[tuple[str, Any]]:
    """(file:line, element) of a JSON array, or of the array under `key` of an object (a
    dataset export); a JSONL file read as such."""
    text = document(path)
    decoder = json.JSONDecoder()
    start = len(text) - len(text.lstrip())
    try:
        value, end = decoder.raw_decode(text, start)
        if nested_deeper(value, MAX_DEPTH + 2):  # the array and a dataset export's object
            raise json.JSONDecodeError(f"nested more than {MAX_DEPTH} deep", text, start)
    except RecursionError:
        raise InputError(f"{path}: not JSON (nested more than {MAX_DEPTH} deep)") from None
    except json.JSONDecodeError as exc:
        if exc.pos > start and text[start] == "{":  # JSONL: one object a line
            yield from jsonl_records(path)
            return
        raise InputError(f"{path}:{exc.lineno}: not JSON ({exc.msg})") from None
    except ValueError:  # the interpreter's limit on long digit strings
        raise InputError(f"{path}: not JSON (a number with more than 4300 digits)") from None
    if text[end:].strip():
        yield from jsonl_records(path)  # several documents: JSONL
        return
    if isinstance(value, dict) and key is not None:
        found = next((k for k in key.split("|") if isinstance(value.get(k), list)), None)
        if found is None:
            yield f"{path}:1", value
            return
        value = value[found]
        inner = text.find("[", text.find(f'"{found}"'))
        yield from _elements(path, text, inner, value)
        return
    if isinstance(value, list):
        yield from _elements(path, text, start, value)
        return
    yield f"{path}:1", value


def _elements(path: Path, text: str, bracket: int, values: list[Any]) -> Iterator[tuple[str, Any]]:
    """Each element with the line it starts on (found by decoding again from the bracket, the
    lines counted as it goes); where that cannot be followed, the element's number instead."""
    decoder = json.JSONDecoder()
    pos, line, counted = bracket + 1, 1 + text.count("\n", 0, max(bracket, 0)), max(bracket, 0)
    for number, value in enumerate(values, start=1):
        try:
            while text[pos] in " \t\r\n,":
                pos += 1
            found, end = decoder.raw_decode(text, pos)
            if found != value:
                raise ValueError
        except (ValueError, IndexError, RecursionError):
            pos = -1
        if pos < 0:
            yield f"{path}: element {number}", value
            continue
        line += text.count("\n", counted, pos)
        counted = pos
        yield f"{path}:{line}", value
        pos = end


def csv_records(path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    """(file:line, row) under the header row; the line is where the record starts."""
    csv.field_size_limit(min(MAX_RECORD_CHARS, sys.maxsize))
    dialect = "excel-tab" if path.suffix.lower() == ".tsv" else "excel"
    with _open(path, "file to import") as stream:
        reader = csv.DictReader(stream, dialect=dialect)
        try:
            if reader.fieldnames is None:
                return
            line = reader.line_num + 1
            for row in reader:
                if None in row:
                    raise InputError(f"{path}:{line}: more cells than the header has columns")
                yield f"{path}:{line}", {str(k).strip(): v for k, v in row.items()}
                line = reader.line_num + 1
        except csv.Error as exc:
            raise InputError(f"{path}:{reader.line_num}: not CSV ({exc})") from None


def yaml_document(path: Path) -> tuple[Any, Any]:
    """The YAML value and its node tree (for lines); InputError with the line of a bad one."""
    import yaml

    text = document(path)
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        value = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        line = mark.line + 1 if mark is not None else 1
        raise InputError(f"{path}:{line}: not YAML ({exc.problem})") from None
    except yaml.YAMLError as exc:
        raise InputError(f"{path}: not YAML ({exc})") from None
    except RecursionError:
        raise InputError(f"{path}: not YAML golden-gate reads (nested too deep)") from None
    return value, node


def yaml_lines(node: Any, key: str) -> list[int]:
    """The line each element of the sequence under `key` starts on (1-based)."""
    import yaml

    if not isinstance(node, yaml.MappingNode):
        return []
    for k, v in node.value:
        if getattr(k, "value", None) == key and isinstance(v, yaml.SequenceNode):
            return [item.start_mark.line + 1 for item in v.value]
    return []


def records(path: Path, key: str | None = None) -> Iterator[tuple[str, Any]]:
    """By the file's suffix: CSV/TSV rows, JSONL lines, JSON elements."""
    suffix = path.suffix.lower()
    if suffix in (".csv", ".tsv"):
        yield from csv_records(path)
    elif suffix in (".jsonl", ".ndjson"):
        yield from jsonl_records(path)
    else:
        yield from json_records(path, key)
