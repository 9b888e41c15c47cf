"""The gate's result for a person at a terminal: the verdict, the figures, the regressed items
with their reasons, then where the files are (rich, imported only here).

Shown only when stdout is a terminal and not a CI log (`wanted`); colours off with NO_COLOR.
Every id, question and reason is untrusted: `escape.terminal` takes out escape and control
characters, and rich's markup is never parsed from them (they are passed as Text).
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

from golden_gate.core import slim
from golden_gate.rendering.escape import terminal

if TYPE_CHECKING:
    from golden_gate.core.gate import GateResult
    from golden_gate.core.report import Report
    from golden_gate.core.slim import SlimReport

MAX_ROWS = 20


def wanted(stream: object = None, env: Mapping[str, str] | None = None) -> bool:
    """A person reads `stream` (stdout): a terminal, outside CI."""
    env = os.environ if env is None else env
    stream = sys.stdout if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    if isatty is None or not isatty():
        return False
    return not (env.get("CI") or env.get("GITHUB_ACTIONS") == "true" or env.get("TERM") == "dumb")


def colour(env: Mapping[str, str] | None = None) -> bool:
    env = os.environ if env is None else env
    return not env.get("NO_COLOR")  # https://no-color.org: any non-empty value


def summary(
    gate: GateResult,
    report: Report | SlimReport | None = None,
    *,
    files: Mapping[str, str] | None = None,
    colours: bool = True,
    width: int | None = None,
) -> str:
    """The summary as text, with ANSI colours when `colours`."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    out = io.StringIO()
    console = Console(
        file=out,
        force_terminal=colours,
        no_color=not colours,
        color_system="standard" if colours else None,
        width=width or _width(),
        highlight=False,
        emoji=False,
    )
    verdict = gate.verdict
    style = "bold green" if gate.passed else "bold red"
    mark = "PASSED" if gate.passed else "FAILED"
    head = Text()
    head.append(f" {mark} ", style=f"reverse {style}")
    head.append(" golden-gate: ")
    head.append(terminal(gate.headline.removeprefix(f"{verdict}: "), limit=600))
    console.print(head)
    figures = Table.grid(padding=(0, 2))
    figures.add_column(style="dim")
    figures.add_column()
    if gate.n:
        figures.add_row("pass rate", f"{gate.pass_rate_text} ({(gate.pass_rate or 0):.1%})")
        figures.add_row(
            "lower bound",
            f"{gate.lower_bound:.4f} (Wilson {gate.settings.confidence:.0%}; floor "
            f"{gate.settings.floor:.2f})",
        )
    comparison = gate.comparison
    if comparison is not None:
        figures.add_row(
            "vs baseline",
            f"{comparison.b} regressed, {comparison.c} improved of {comparison.shared} shared; "
            f"p = {comparison.p_value:.4g} ({comparison.method}); net drop "
            f"{comparison.net_drop:.1%}",
        )
    console.print(figures)
    for warning in gate.warnings:
        console.print(Text("warning: " + terminal(warning, limit=600), style="yellow"))
    view = slim.of(report) if report is not None else None
    if comparison is not None:
        title, listed = "Regressed items", comparison.regressions
    else:  # no baseline: the floor alone decided, and the failing items are what to read
        title = "Failed items"
        listed = _failed(view) if view is not None else []
    if listed:
        table = Table(
            title=f"{title} ({len(listed)})",
            title_justify="left",
            show_edge=False,
            header_style="bold",
        )
        table.add_column("item", style="red", no_wrap=True, max_width=40)
        table.add_column("why")
        for item_id in listed[:MAX_ROWS]:
            record = view.record(item_id) if view is not None else None
            why = record.why if record is not None else ""
            table.add_row(Text(terminal(item_id, limit=120)), Text(terminal(why, limit=300)))
        console.print(table)
        if len(listed) > MAX_ROWS:
            console.print(Text(f"…and {len(listed) - MAX_ROWS} more", style="dim"))
    for name, path in (files or {}).items():
        console.print(Text(f"{name}: ", style="dim") + Text(terminal(path, limit=300)))
    return out.getvalue()


def _failed(view: slim.SlimReport) -> list[str]:
    """Counted items that did not pass (a strict majority of their runs), from the columns."""
    items = view.items
    return [
        item_id
        for item_id, passes, runs in zip(items.ids, items.passes, items.runs, strict=True)
        if runs and passes * 2 <= runs
    ]


def _width() -> int:
    try:
        return min(os.get_terminal_size(sys.stdout.fileno()).columns, 160)
    except (OSError, ValueError):
        return 100
