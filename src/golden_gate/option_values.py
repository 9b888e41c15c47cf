"""The options' values: cleaning a raw value (an input, a flag, a TOML value) into the option's
type, resolving the layers (defaults, the config file, flags or inputs) each with its origin,
what a pull request may do to a rule, the settings models validated with their first problem
named, and the verdict cache's identity (the table itself is options.py)."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from dataclasses import field as dc_field
from pathlib import Path
from typing import Any, TypeVar

from golden_gate import options
from golden_gate.errors import InputError
from golden_gate.options import BY_FIELD, BY_NAME, GATE_OPTIONS, SECTIONS, Option
from golden_gate.secret_env import Trust

M = TypeVar("M")


def first_problem(exc: Any) -> tuple[str, str]:
    """(`section.field` of a ValidationError's first problem, e.g. `judge.concurrency`, its
    message), whether the part was validated alone (its own title) or inside Settings."""
    titles = {model: section for section, (_, model) in SECTIONS.items() if section}
    problem = exc.errors()[0]
    loc = [str(p) for p in problem["loc"] if not isinstance(p, int)]
    section = titles.get(exc.title)
    path = ".".join([section, *loc] if section else loc) or "value"
    return path, problem["msg"].removeprefix("Value error, ")


def explain(exc: Any, resolved: Resolved) -> str:
    """A settings model's first problem as one sentence naming the option where it was set."""
    path, message = first_problem(exc)
    if path in ("evaluation.judge_concurrency", "judge.concurrency"):
        name = "judge-concurrency" if resolved.given("judge-concurrency") else "concurrency"
        return f"{resolved.where(name)}: {message}"
    option = BY_FIELD.get(path)
    if option is not None:
        return f"{resolved.where(option.name)}: {message}"
    return f"'{path.rpartition('.')[2].replace('_', '-')}': {message}"


def validated(resolved: Resolved, make: Callable[[], M]) -> M:
    """`make()`'s settings model; its first problem one sentence naming the option (exit 2)."""
    from pydantic import ValidationError

    try:
        return make()
    except ValidationError as exc:
        raise InputError(explain(exc, resolved)) from None


def gate_settings(r: Resolved, overrides: Mapping[str, Any] | None = None) -> Any:
    """The gate's thresholds (`core.gate.GateSettings`): all a command that only gates needs,
    without the evaluation's settings behind `Settings`. `overrides`: values by option name
    laid over them (a pull request's proposed thresholds)."""
    from golden_gate.core.verdict import GateSettings

    values = {field: r[name] for name, field in GATE_OPTIONS.items()}
    values.update({GATE_OPTIONS[k]: v for k, v in (overrides or {}).items() if k in GATE_OPTIONS})
    return validated(r, lambda: GateSettings(**values))


def clean(option: Option, raw: Any, where: str) -> Any:
    """`raw` (a string from an input or flag, or a TOML value) as the option's type; InputError
    naming `where` (`input 'floor'`, `--floor`, `golden-gate.toml:12: [gate] floor`)."""
    kind = option.kind
    text = isinstance(raw, str)

    def bad(expected: str) -> InputError:
        shown = raw if text else json.dumps(raw)
        return InputError(f"{where} must be {expected}, got '{shown}'")

    if text and "\x00" in raw:  # no file name or header holds one; the OS would refuse it
        raise InputError(f"{where} must not hold a NUL character")
    if kind in ("str", "path", "choice"):
        if not text:
            raise bad("a string")
        value = raw.strip()
        if kind == "choice" and value not in option.choices:
            raise bad("one of " + ", ".join(option.choices))
        return value
    if kind == "bool":
        if isinstance(raw, bool):
            return raw
        if text and raw.strip().lower() in ("true", "false"):
            return raw.strip().lower() == "true"
        raise bad("true or false")
    if kind in ("int", "float"):
        if isinstance(raw, bool):
            raise bad("a number" if kind == "float" else "a whole number")
        try:
            value = (int if kind == "int" else float)(raw.strip() if text else raw)
        except (TypeError, ValueError):
            raise bad("a number" if kind == "float" else "a whole number") from None
        if kind == "int" and not text and not isinstance(raw, int):
            raise bad("a whole number")
        if kind == "float" and not math.isfinite(value):
            raise bad("a finite number")
        return value
    if kind == "tags":
        parts = raw.split(",") if text else raw
        if not isinstance(parts, list) or not all(isinstance(p, str) for p in parts):
            raise bad("a list of tags")
        tags = [p.strip() for p in parts if p.strip()]
        return [] if tags == ["*"] else tags  # `*`: every item (an empty input is unset)
    if kind == "lines":
        parts = raw.splitlines() if text else raw
        if not isinstance(parts, list) or not all(isinstance(p, str) for p in parts):
            raise bad("a list of strings")
        return [p.strip() for p in parts if p.strip()]
    if kind == "headers":
        return _headers(raw, where)
    if kind == "floats":
        return _floats(raw, where)
    raise AssertionError(kind)


def _pairs(raw: Any, where: str, sep: str, line_shape: str, table: str) -> list[tuple[Any, Any]]:
    """A table's (name, value) pairs: TOML's own table, or `name<sep>value` lines (an input,
    flags), blank lines skipped."""
    if isinstance(raw, dict):
        return list(raw.items())
    if not isinstance(raw, str | list):
        raise InputError(f"{where} must be a table of {table}")
    pairs = []
    for line in raw.splitlines() if isinstance(raw, str) else raw:
        if not isinstance(line, str):
            raise InputError(f"{where} expects one '{line_shape}' a line")
        if not line.strip():
            continue
        name, found, value = line.partition(sep)
        if not found or not name.strip():
            # The name part only: a header line's value may be a secret.
            raise InputError(f"{where} expects one '{line_shape}' a line, got '{name}'")
        pairs.append((name.strip(), value.strip()))
    return pairs


def _floats(raw: Any, where: str) -> dict[str, float]:
    """A table of names to numbers: TOML's own, or `name = number` lines."""
    table: dict[str, float] = {}
    for name, value in _pairs(raw, where, "=", "name = number", "names to numbers"):
        try:
            number = float(value) if not isinstance(value, bool) else math.nan
        except (TypeError, ValueError):
            number = math.nan
        if not math.isfinite(number):
            raise InputError(f"{where}: the value of '{name}' must be a number, got '{value}'")
        table[str(name)] = number
    return table


def _headers(raw: Any, where: str) -> dict[str, str]:
    headers: dict[str, str] = {}
    for name, value in _pairs(raw, where, ":", "Name: value", "header names to values"):
        if not isinstance(value, str):
            raise InputError(f"{where}: the value of header '{name}' must be a string")
        headers[str(name).strip()] = value.strip()
    return headers


@dataclass
class Value:
    value: Any
    origin: str  # "default", "golden-gate.toml:12", "flag --floor", "input 'floor'", ...


@dataclass
class Resolved:
    """The effective value of every option a door has, and where each came from."""

    door: str
    values: dict[str, Value] = dc_field(default_factory=dict)
    config_path: Path | None = None
    notes: list[str] = dc_field(default_factory=list)  # proposed rule changes, for the comment
    proposed: dict[str, Any] = dc_field(default_factory=dict)  # those values, by option name
    # Inputs that would loosen a rule: refused once every value is known to be well-formed.
    refusals: list[tuple[Value, str]] = dc_field(default_factory=list)  # (the input, why)
    # On a pull request: what the layers it does not control say of the options that send a
    # secret (secret_env.py); None where every layer is the run's own (CLI, push, dispatch).
    trust: Trust | None = None

    def value(self, name: str) -> Value:
        """The option's value; one no layer set is its default, found when first asked for (a
        command that only gates need not import the evaluation's settings for theirs)."""
        if name not in self.values:
            self.values[name] = default_value(BY_NAME[name], self.door)
        return self.values[name]

    def __getitem__(self, name: str) -> Any:
        return self.value(name).value

    def door_has(self, name: str) -> bool:
        return name in self.values or self.door in BY_NAME[name].doors

    def origin(self, name: str) -> str:
        return self.value(name).origin

    def given(self, name: str) -> bool:
        return not self.origin(name).startswith("default")

    def where(self, name: str) -> str:
        """How an error names the option, for the layer its value came from."""
        return BY_NAME[name].spelled(self.origin(name))


def defaults(
    door: str, *, also: tuple[str, ...] = (), only: Iterable[str] | None = None
) -> Resolved:
    """Every option `door` (or a door in `also`) has, or `only` these, at its default."""
    resolved = Resolved(door=door)
    wanted = None if only is None else set(only)
    for option in options.OPTIONS:
        if wanted is not None and option.name not in wanted:
            continue
        if door in option.doors or any(d in option.doors for d in also):
            resolved.values[option.name] = default_value(option, door)
    return resolved


def default_value(option: Option, door: str) -> Value:
    origin = "default" if door not in option.door_defaults else f"default ({door})"
    return Value(option.default_for(door), origin)


def apply(resolved: Resolved, values: Mapping[str, Any], origins: Mapping[str, str]) -> None:
    """Lay cleaned `values` (by option name) over `resolved`, each with its origin."""
    for name, value in values.items():
        if name in resolved.values:
            resolved.values[name] = Value(value, origins[name])


def tightens(option: Option, base: Any, given: Any) -> bool:
    """Whether `given` is at least as strict as `base` for the rule `option`."""
    how = option.rule
    if option.kind == "path" and given and base:
        import os

        given, base = os.path.normpath(str(given)), os.path.normpath(str(base))
    if given == base:
        return True
    if option.name == "baseline" and not base:
        # No baseline at the base: comparing with one (read at the base ref) only adds ways to
        # fail; its ref stays the base's (`baseline-ref` may not move).
        return True
    if isinstance(base, dict):  # a floor a name: each of the base's kept, none lowered
        return isinstance(given, dict) and all(
            name in given and tightens(replace(option, kind="float"), value, given[name])
            for name, value in base.items()
        )
    if how == "higher":
        # 0 switches a test off: any level switched on is stricter than off.
        return (
            base is not None
            and given is not None
            and given >= base
            and not (option.name in ("floor", "alpha") and given == 0)
        )
    if how == "lower":
        return given <= base
    if option.name in ("paths", "ignore-paths"):
        # Gitignore-style lists: `!` takes back and matches overlap, so what each selects is
        # compared, never the lists as sets (core/path_lists.py proves it or refuses). An empty
        # `paths` is no allow-list at all (the ignore list decides): only itself is as strict.
        from golden_gate.core.path_lists import selects_at_least, selects_at_most

        if option.name == "paths":
            return bool(base) and bool(given) and selects_at_least(base, given)
        return selects_at_most(base, given)
    if how == "superset":
        if option.name == "subset-tags":  # empty: every item
            return not given or (bool(base) and set(given) >= set(base))
        return set(given) >= set(base)
    if how == "subset":
        return set(given) <= set(base)
    if how == "on":
        return bool(given)
    if how == "off":
        return not given
    return False


def verdict_identity(resolved: Resolved, *, root: Path | None = None) -> str:
    """Every verdict-changing setting, for the judge's identity: a file by its content's hash
    (its path differs between checkouts), so a new `verdict=True` option changes the cache key
    without anyone listing it by hand."""
    material: dict[str, Any] = {}
    for option in options.OPTIONS:
        if not option.verdict or resolved.door not in option.doors:
            continue
        value = resolved[option.name]
        if option.kind == "path" and value:
            path = Path(value) if root is None else root / value
            try:
                value = "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
            except (OSError, ValueError):  # unreadable: its path, and the run says why
                value = str(value)
        material[option.name] = value
    return json.dumps(material, sort_keys=True, default=str)
