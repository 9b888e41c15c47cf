"""What is derived from the table of options for editors and the Action: golden-gate.toml's
JSON Schema and action.yml's inputs (scripts/generate.py writes both)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from golden_gate.options import OPTIONS, Option, direction, engine_field

_JSON_TYPES: dict[str, dict[str, Any]] = {
    "str": {"type": "string"},
    "path": {"type": "string"},
    "choice": {"type": "string"},
    "bool": {"type": "boolean"},
    "int": {"type": "integer"},
    "float": {"type": "number"},
    "tags": {
        "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
    },
    "lines": {
        "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
    },
    "headers": {"type": "object", "additionalProperties": {"type": "string"}},
    "floats": {"type": "object", "additionalProperties": {"type": "number"}},
}


def _schema_of(option: Option) -> dict[str, Any]:
    schema: dict[str, Any] = dict(_JSON_TYPES[option.kind])
    description = option.help
    if option.rule:
        description += (
            " A rule of the gate: on a pull request it is read at the base branch"
            + ("" if option.rule == "same" else f" and an input may only {direction(option)}")
            + "."
        )
    schema["description"] = description
    if option.choices:
        schema["enum"] = list(option.choices)
    if option.field is not None:
        for item in engine_field(option.field).metadata:
            for attr, key in (("ge", "minimum"), ("le", "maximum"), ("gt", "exclusiveMinimum"),
                              ("lt", "exclusiveMaximum")):  # fmt: skip
                if getattr(item, attr, None) is not None:
                    schema[key] = getattr(item, attr)
    default = option.default_for("file")
    if default not in (None, "") and not isinstance(default, Path):
        schema["default"] = default
    return schema


def file_options() -> list[Option]:
    return [o for o in OPTIONS if "file" in o.doors]


def json_schema() -> dict[str, Any]:
    """The JSON Schema of golden-gate.toml, for editors (taplo, Even Better TOML) and tests."""
    top: dict[str, Any] = {}
    tables: dict[str, dict[str, Any]] = {}
    for option in file_options():
        if option.group:
            tables.setdefault(option.group, {})[option.key] = _schema_of(option)
        else:
            top[option.name] = _schema_of(option)
    for group, properties in tables.items():
        top[group] = {"type": "object", "additionalProperties": False, "properties": properties}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "golden-gate.toml",
        "description": "The settings of golden-gate: one file both the CLI and the Action read.",
        "type": "object",
        "additionalProperties": False,
        "properties": top,
    }


def schema_text() -> str:
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


def action_inputs() -> dict[str, dict[str, str]]:
    """action.yml's `inputs:`, as the table makes them (scripts/generate.py writes them)."""
    return {
        o.name: {"description": o.describe("action"), "default": o.yml_default}
        for o in OPTIONS
        if "action" in o.doors
    }
