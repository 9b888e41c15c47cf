"""`golden-gate.toml`: the one file both front doors read.

A key is an option's name; inside the option's `[group]` table the group's prefix is dropped
(`[judge] model` is `judge-model`). An unknown table or key is an error with "did you mean",
never ignored: a typo must not silently turn a rule off. Paths are relative to the file.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from golden_gate.errors import InputError
from golden_gate.option_schema import file_options
from golden_gate.option_values import clean
from golden_gate.options import BY_NAME, GROUPS, Option

NAME = "golden-gate.toml"
_TABLE = re.compile(r"^\s*\[\s*([A-Za-z0-9_-]+)\s*\]")
_SUBTABLE = re.compile(r"^\s*\[\s*([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\s*\]")
_KEY = re.compile(r"""^\s*(["']?)([A-Za-z0-9_-]+)\1\s*=""")


@dataclass
class ConfigFile:
    """The options a config file sets, cleaned, each with the line it is on."""

    source: str  # how messages name the file: its path, or `golden-gate.toml at main`
    values: dict[str, Any] = field(default_factory=dict)
    origins: dict[str, str] = field(default_factory=dict)
    text: str = ""


def find(start: Path) -> Path | None:
    """golden-gate.toml in `start` or the nearest parent, not above the repository's root."""
    here = start.absolute()
    for directory in (here, *here.parents):
        candidate = directory / NAME
        if candidate.is_file():
            return candidate
        if (directory / ".git").exists():
            return None
    return None


def _lines(text: str) -> dict[tuple[str, str], int]:
    """(table, key) -> line number, for messages and `config --show-origin`."""
    found: dict[tuple[str, str], int] = {}
    table = ""
    for number, line in enumerate(text.splitlines(), start=1):
        header = _TABLE.match(line)
        if header:
            table = header.group(1)
            continue
        nested = _SUBTABLE.match(line)
        if nested:  # `[gate.floor-by-tag]`: a table-valued setting, on its header's line
            found.setdefault((nested.group(1), nested.group(2)), number)
            table = "\0"  # its own keys are the table's names, not settings
            continue
        key = _KEY.match(line)
        if key:
            found.setdefault((table, key.group(2)), number)
    return found


def _placement() -> dict[tuple[str, str], Option]:
    return {(o.group, o.key): o for o in file_options()}


def _suggest(table: str, key: str) -> str:
    """`did you mean …?` for a key nobody declared."""
    spelled = {(f"[{t}] {k}" if t else k): (t, k) for (t, k) in _placement()}
    wanted = f"[{table}] {key}" if table else key
    close = difflib.get_close_matches(wanted, list(spelled), n=1, cutoff=0.6)
    if not close:  # a known name in the wrong place: `floor` at the top, `[judge] floor`
        option = BY_NAME.get(key) or BY_NAME.get(f"{table}-{key}")
        if option is not None and "file" in option.doors:
            close = [option.toml_name]
        else:
            bare = [s for s, (_, k) in spelled.items() if k == key]
            close = bare[:1]
    return f" (did you mean {close[0]}?)" if close else ""


def parse(text: str, *, source: str, root: Path | None = None) -> ConfigFile:
    """The options `text` sets; InputError (exit 2) naming the file and line otherwise.

    `root`: the directory relative paths are relative to (the file's own); None keeps them
    as written (a file read at a git ref: the paths are the repository's)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{source}: not valid TOML: {exc}") from None
    lines = _lines(text)
    placement = _placement()
    config = ConfigFile(source=source, text=text)

    def take(table: str, key: str, raw: Any) -> None:
        line = lines.get((table, key))
        at = f"{source}:{line}" if line else source
        option = placement.get((table, key))
        if option is None:
            where = f"[{table}] {key}" if table else key
            raise InputError(f"{at}: unknown setting '{where}'{_suggest(table, key)}")
        value = clean(option, raw, f"{at}: {option.toml_name}")
        if option.kind == "path" and value and root is not None and not Path(value).is_absolute():
            value = str(root / value) if root != Path(".") else value
        config.values[option.name] = value
        config.origins[option.name] = at

    for key, raw in data.items():
        if isinstance(raw, dict) and (key in GROUPS or (key, "") not in placement):
            if key not in GROUPS:
                line = lines.get(("", key)) or _table_line(text, key)
                at = f"{source}:{line}" if line else source
                close = difflib.get_close_matches(key, GROUPS, n=1)
                hint = f" (did you mean [{close[0]}]?)" if close else ""
                raise InputError(f"{at}: unknown table [{key}]{hint}")
            for sub, value in raw.items():
                take(key, sub, value)
        else:
            take("", key, raw)
    return config


def _table_line(text: str, table: str) -> int | None:
    for number, line in enumerate(text.splitlines(), start=1):
        header = _TABLE.match(line)
        if header and header.group(1) == table:
            return number
    return None


def read(path: Path, *, relative_to: Path | None = None, source: str | None = None) -> ConfigFile:
    """The config file at `path`; paths in it relative to its directory (shown relative to
    `relative_to`, the working directory, when the file is there). `source`: how messages
    name it (the path by default)."""
    from golden_gate.files import read_text

    text = read_text(path, what="config file")
    directory = path.parent
    if relative_to is not None and directory.absolute() == relative_to.absolute():
        directory = Path(".")
    return parse(text, source=source or str(path), root=directory)
