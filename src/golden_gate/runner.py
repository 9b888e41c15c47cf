"""The GitHub runner's interface for a container step: file commands and workflow commands.

Outputs go to `$GITHUB_OUTPUT`, the summary to `$GITHUB_STEP_SUMMARY`, state for the post step
to `$GITHUB_STATE`; annotations, masks and log groups are workflow commands on stdout.
Everything but a mask is scrubbed of registered secrets on its way out (see redaction.py).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import secrets
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TextIO

from golden_gate.errors import InputError, OutputError
from golden_gate.redaction import scrub

SUMMARY_LIMIT = 1024 * 1024  # the runner rejects a step summary over 1 MiB


def escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


# What the runner reads as a workflow command on a line of the log (stdout or stderr): `::`
# at its start (after spaces), and the older `##[name]` anywhere in it.
_COMMAND_START = re.compile(r"^(\s*):(?=:)")
_ZWSP = "\u200b"
_LINE_END = re.compile(r"(\r\n|\r|\n)")


def plain_line(text: str) -> str:
    """`text` as the runner shows it and never runs it: the `::` or `##[` of a workflow
    command broken by a zero-width space, on every line of it."""
    parts = _LINE_END.split(text)
    parts[::2] = [
        _COMMAND_START.sub("\\1:" + _ZWSP, p).replace("##[", "#" + _ZWSP + "#[") for p in parts[::2]
    ]
    return "".join(parts)


class PlainLines(io.TextIOBase):
    """A stream whose every line is `plain_line`'d: in a workflow, stdout and stderr become
    these (`guard_output`), so no text printed by any code path (an item id, a file name, an
    answer) can be a command. The runner's own commands are written past it (`_emit`)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._at_start = True  # the next character written starts a line

    def write(self, text: str) -> int:
        if not text:
            return 0
        parts = _LINE_END.split(text)
        out = []
        for number, part in enumerate(parts):
            if number % 2:  # a line end
                out.append(part)
                self._at_start = True
            elif part:
                # A line's start is what the runner checks: a piece after a flush goes on a
                # line whose start was checked already (only `##[` is looked for in it).
                line = plain_line(part) if self._at_start else part.replace("##[", "#\u200b#[")
                out.append(line)
                self._at_start = False
        self.stream.write("".join(out))
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self.stream.fileno()

    def isatty(self) -> bool:
        return self.stream.isatty()

    @property
    def encoding(self) -> str:  # type: ignore[override]  # typeshed: settable; CPython: read-only
        return self.stream.encoding

    @property
    def errors(self) -> str | None:  # type: ignore[override]  # typeshed: settable; CPython: read-only
        return self.stream.errors


def guard_output() -> None:
    """Make stdout and stderr `PlainLines` (once): what the runner reads is ours alone."""
    if not isinstance(sys.stdout, PlainLines):
        sys.stdout = PlainLines(sys.stdout)
    if not isinstance(sys.stderr, PlainLines):
        sys.stderr = PlainLines(sys.stderr)


def _emit(line: str) -> None:
    """One line of the runner's own commands, past the guard."""
    out = sys.stdout
    stream = out.stream if isinstance(out, PlainLines) else out
    stream.write(line + "\n")
    stream.flush()


def command(name: str, message: str = "", **properties: str | int | None) -> None:
    props = ",".join(
        f"{key}={escape_property(scrub(str(value)))}"
        for key, value in properties.items()
        if value is not None
    )
    head = f"::{name} {props}" if props else f"::{name}"
    _emit(f"{head}::{escape_data(scrub(message))}")


def error(
    message: str, *, title: str | None = None, file: str | None = None, line: int | None = None
) -> None:
    command("error", message, title=title, file=file, line=line)


def warning(message: str, *, title: str | None = None) -> None:
    command("warning", message, title=title)


def notice(message: str, *, title: str | None = None) -> None:
    command("notice", message, title=title)


def mask(value: str) -> None:
    """Ask the runner to mask a secret in all later log lines (each line of it, if several)."""
    for part in value.splitlines() or [value]:
        if part.strip():
            _emit(f"::add-mask::{escape_data(part)}")


def in_workflow() -> bool:
    """Whether a runner reads this log: stdout is guarded in a workflow step (`guard_output`),
    and only there are log groups and command pauses written as workflow commands."""
    return isinstance(sys.stdout, PlainLines)


def print_untrusted(text: str) -> None:
    """Print text others control (service logs, file names) so no line of it is a command.

    Between `::stop-commands::TOKEN` and `::TOKEN::` the runner runs no workflow command; the
    token is random, so the text cannot end the pause itself.
    """
    if not in_workflow():  # a terminal runs no command: the text as it is, scrubbed
        print(scrub(text), flush=True)
        return
    token = secrets.token_hex(16)
    _emit(f"::stop-commands::{token}")
    _emit(scrub(text))
    _emit(f"::{token}::")


@contextlib.contextmanager
def group(title: str) -> Iterator[None]:
    if not in_workflow():  # a terminal: a heading, not `::group::` lines
        print(f"-- {scrub(title)} --", flush=True)
        yield
        return
    _emit(f"::group::{escape_data(scrub(title))}")
    try:
        yield
    finally:
        _emit("::endgroup::")


# The runner's file commands, with what each holds (for the sentence when one fails).
FILE_COMMANDS = {
    "GITHUB_OUTPUT": "step outputs",
    "GITHUB_STEP_SUMMARY": "job summary",
    "GITHUB_STATE": "state for the post step",
}


def _append(variable: str, text: str, env: Mapping[str, str] | None = None) -> bool:
    path = (env or os.environ).get(variable)
    if not path:
        return False
    try:
        # errors="replace": text that slipped past every repair still leaves a whole file.
        with Path(path).open("a", encoding="utf-8", errors="replace") as handle:
            handle.write(text)
    except OSError as exc:
        what = FILE_COMMANDS.get(variable, variable)
        raise OutputError(
            f"cannot write the {what} to {variable} ({path}): {exc.strerror or exc}"
        ) from None
    return True


def check_file_commands(env: Mapping[str, str]) -> None:
    """Before anything runs: each file command the runner named can be appended to."""
    for variable, what in FILE_COMMANDS.items():
        path = env.get(variable)
        if not path:
            continue
        try:
            with Path(path).open("a", encoding="utf-8"):
                pass
        except OSError as exc:
            raise InputError(
                f"{variable} ({path}) cannot be written ({exc.strerror or exc}): the runner's "
                f"environment is wrong, and the {what} would be lost"
            ) from None


def best_effort(write: Callable[[], object]) -> None:
    """For reporting an error: a file command that fails too is one more line, never a crash."""
    try:
        write()
    except OutputError as exc:
        print(f"golden-gate: also: {exc}", file=sys.stderr, flush=True)


def _key_value(name: str, value: str) -> str:
    value = scrub(value)
    if "\n" not in value and "\r" not in value:
        return f"{name}={value}\n"
    delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
    while delimiter in value:  # a collision would end the value early
        delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
    return f"{name}<<{delimiter}\n{value}\n{delimiter}\n"


def set_outputs(outputs: Mapping[str, str], env: Mapping[str, str] | None = None) -> None:
    text = "".join(_key_value(name, value) for name, value in outputs.items())
    if not _append("GITHUB_OUTPUT", text, env):
        # Outside a runner (local use) the outputs are still visible.
        for name, value in outputs.items():
            print(f"output {name}={value}", file=sys.stderr)


def save_state(name: str, value: str, env: Mapping[str, str] | None = None) -> None:
    _append("GITHUB_STATE", _key_value(name, value), env)


def write_summary(markdown: str, env: Mapping[str, str] | None = None) -> None:
    markdown = scrub(markdown)
    data = markdown.encode("utf-8", "replace")
    if len(data) > SUMMARY_LIMIT:
        # Rendered summaries fit already (render.py counts bytes); this is the last resort,
        # and cuts after a whole line, so no table row is cut in half.
        kept = data[: SUMMARY_LIMIT - 200].decode("utf-8", "ignore").rpartition("\n")[0]
        markdown = kept + "\n\n_(summary cut at the runner's 1 MiB limit; see report.json)_\n"
    _append("GITHUB_STEP_SUMMARY", markdown, env)
