"""promptfoo: a `promptfooconfig.yaml` (its `tests`, and `defaultTest`'s asserts) or a tests
file (YAML/JSON list). The question is one var (`--question-var`, else the only one, else
`question`/`query`/`input`/`prompt`); asserts that have an equivalent map, the rest are dropped."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from golden_gate.errors import InputError
from golden_gate.importers.base import Options, Row
from golden_gate.importers.fields import QUESTION_KEYS
from golden_gate.importers.sources import csv_records, json_records, yaml_document, yaml_lines

name = "promptfoo"
summary = "promptfoo config or tests file: vars and assert (contains, regex, llm-rubric, …)"


def sniff(path: Path, head: str) -> bool:
    if path.suffix.lower() in (".csv", ".tsv"):
        return "__expected" in (head.splitlines() or [""])[0]
    return "promptfoo" in path.name.lower() or (
        path.suffix.lower() in (".yaml", ".yml")
        and re.search(r"(?m)^\s*-?\s*(vars|assert):", head) is not None
    )


def _literal(value: str) -> str:
    return "/" + re.escape(value).replace("/", "\\/") + "/"


def _assertion(row: Row, spec: Any) -> None:
    if not isinstance(spec, dict) or "type" not in spec:
        row.dropped.append("an assert without a type")
        return
    kind, value = str(spec["type"]), spec.get("value")
    values = value if isinstance(value, list) else [value]
    texts = [str(v) for v in values if isinstance(v, (str, int, float)) and str(v) != ""]
    negate = kind.startswith("not-")
    base = kind[4:] if negate else kind
    target = row.must_not_include if negate else row.must_include
    if base in ("contains", "icontains", "regex", "equals", "starts-with") and texts:
        for text in texts[:1] if base != "contains" else texts:
            if base == "contains":
                target.append(_literal(text))  # case-sensitive, as promptfoo's
            elif base == "icontains":
                target.append(text)  # ours are case-insensitive
            elif base == "regex":
                target.append(f"/{text}/")
            elif base == "equals":
                target.append("/\\A" + re.escape(text).replace("/", "\\/") + "\\Z/")
            else:
                target.append("/\\A" + re.escape(text).replace("/", "\\/") + "/")
        row.mapped.append(f"assert {kind} → {'must_not_include' if negate else 'must_include'}")
    elif base in ("contains-any", "icontains-any") and texts:
        flags = "(?i)" if base.startswith("i") else ""
        alternatives = "|".join(re.escape(t).replace("/", "\\/") for t in texts)
        target.append(f"/{flags}(?:{alternatives})/")
        row.mapped.append(f"assert {kind} → {'must_not_include' if negate else 'must_include'}")
    elif base in ("contains-all", "icontains-all") and texts:
        if negate:
            row.dropped.append(f"assert {kind} (no equivalent)")
            return
        target.extend(t if base.startswith("i") else _literal(t) for t in texts)
        row.mapped.append(f"assert {kind} → must_include")
    elif kind == "is-json" and not negate:
        row.json_schema = value if isinstance(value, dict) else {}
        row.mapped.append("assert is-json → json_schema")
    elif kind in ("llm-rubric", "model-graded-closedqa", "factuality", "similar") and texts:
        # A person's criterion or expected answer: what the judge reads as the reference.
        if kind in ("factuality", "similar"):
            row.reference = "\n".join(texts)
            row.mapped.append(f"assert {kind} → reference")
        else:
            row.key_points.extend(texts)
            row.mapped.append(f"assert {kind} → key point")
    else:
        row.dropped.append(f"assert {kind} (no equivalent)")


def _rows(where: str, test: Any, defaults: list[Any], options: Options) -> Iterator[Row]:
    """The test's row, or one a value when its question var is a list (promptfoo runs the test
    once for each)."""
    first = _row(where, test, defaults, options)
    key = first.mapped[0].removeprefix("vars.").removesuffix(" → question") if first.mapped else ""
    values = (test.get("vars") or {}).get(key) if isinstance(test, dict) and key else None
    if not isinstance(values, list) or not values:
        yield first
        return
    for value in values:
        row = _row(where, test | {"vars": {**test["vars"], key: value}}, defaults, options)
        yield row


def _row(where: str, test: Any, defaults: list[Any], options: Options) -> Row:
    row = Row(where=where)
    if not isinstance(test, dict):
        raise InputError(f"{where}: a test is a mapping (vars, assert), not {type(test).__name__}")
    variables = test.get("vars") or {}
    if isinstance(variables, str):
        row.skip = f"vars from another file ({variables}): import that file"
        return row
    if not isinstance(variables, dict):
        raise InputError(f"{where}: vars is a mapping of names to values")
    key = options.question_var
    if key is None:
        key = next(iter(variables)) if len(variables) == 1 else None
        key = key or next((k for k in QUESTION_KEYS if k in variables), None)
    if key is None or key not in variables:
        names = ", ".join(map(str, variables)) or "none"
        row.skip = f"which var is the question? (vars: {names}; say --question-var)"
        return row
    question = variables[key]
    if isinstance(question, str) and question.startswith("file://"):
        row.skip = f"the question is in another file ({question[:80]})"
        return row
    row.question = question if isinstance(question, str) else None
    row.mapped.append(f"vars.{key} → question")
    for other in variables:
        if other != key:
            row.dropped.append(f"vars.{other}")
    for spec in [*defaults, *(test.get("assert") or [])]:
        _assertion(row, spec)
    for dropped in ("description", "options", "provider", "threshold"):
        if dropped in test:
            row.dropped.append(dropped)
    metadata = test.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("id"), (str, int)):
        row.id = str(metadata["id"])
    return row


def rows(path: Path, options: Options) -> Iterator[Row]:
    if path.suffix.lower() in (".json", ".jsonl"):
        for where, test in json_records(path, "tests"):
            yield from _rows(where, test, [], options)
        return
    if path.suffix.lower() in (".csv", ".tsv"):
        yield from _csv_rows(path, options)
        return
    value, node = yaml_document(path)
    if isinstance(value, list):
        tests: Any = value
        lines, defaults = [n.start_mark.line + 1 for n in node.value], []
    elif isinstance(value, dict):
        tests = value.get("tests")
        if isinstance(tests, str) or (
            isinstance(tests, list) and tests and all(isinstance(t, str) for t in tests)
        ):
            raise InputError(f"{path}: the tests are in other files ({tests}): import those files")
        if not isinstance(tests, list):
            raise InputError(f"{path}: no `tests:` list (a promptfoo config or tests file)")
        lines = yaml_lines(node, "tests")
        default = value.get("defaultTest") or {}
        defaults = list(default.get("assert") or []) if isinstance(default, dict) else []
    else:
        raise InputError(f"{path}: not a promptfoo config or tests file")
    for i, test in enumerate(tests):
        line = lines[i] if i < len(lines) else 1
        yield from _rows(f"{path}:{line}", test, defaults, options)


# A tests CSV: the columns are vars, `__expected` (and `__expected1`, …) an assert each, written
# `type: value` (a bare value is `equals`), `__description` and other `__` columns promptfoo's.
_EXPECTED = re.compile(r"^(?P<type>[a-z][a-z0-9-]*)(?::\s?(?P<value>.*))?$", re.DOTALL)


_ALIASES = {"grade": "llm-rubric", "fn": "javascript", "eval": "javascript"}
_TYPES = {
    "contains", "icontains", "regex", "equals", "starts-with", "contains-any", "icontains-any",
    "contains-all", "icontains-all", "is-json", "llm-rubric", "model-graded-closedqa",
    "factuality", "similar", "javascript", "python", "latency", "cost", "levenshtein",
    "rouge-n", "bleu", "perplexity", "webhook", "answer-relevance", "context-faithfulness",
    "context-recall", "context-relevance", "is-valid-openai-tools-call", "moderation",
}  # fmt: skip


def _csv_assert(text: str) -> dict[str, Any]:
    """`type: value` as promptfoo reads it (a known type, or an alias); else `equals`."""
    found = _EXPECTED.match(text.strip())
    if found:
        kind = _ALIASES.get(found["type"], found["type"])
        known = kind.removeprefix("not-") in _TYPES
        if known and (found["value"] is not None or kind.endswith("is-json")):
            return {"type": kind, "value": found["value"]}
    return {"type": "equals", "value": text}


def _csv_rows(path: Path, options: Options) -> Iterator[Row]:
    for where, record in csv_records(path):
        variables = {k: v for k, v in record.items() if not k.startswith("__")}
        asserts = [
            _csv_assert(v) for k, v in record.items() if k.startswith("__expected") and v.strip()
        ]
        test: dict[str, Any] = {"vars": variables, "assert": asserts}
        if record.get("__description"):
            test["description"] = record["__description"]
        yield _row(where, test, [], options)
