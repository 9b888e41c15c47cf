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
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from golden_gate.core.calibration import CalibrationReport
    from golden_gate.core.report import Report, RunStats
    from golden_gate.core.slim import SlimReport
    from golden_gate.core.verdict import GateResult

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
    out, console = _console(colours, width)
    verdict = gate.verdict
    _head(
        console,
        "PASSED" if gate.passed else "FAILED",
        "bold green" if gate.passed else "bold red",
        gate.headline.removeprefix(f"{verdict}: "),
    )
    _gate_body(console, gate, report, files)
    return out.getvalue()


def eval_summary(
    gate: GateResult,
    report: Report,
    *,
    files: Mapping[str, str] | None = None,
    colours: bool = True,
    width: int | None = None,
) -> str:
    """`eval`'s summary: a report without a verdict (no baseline, nothing gated), so the head
    says what passed; then the figures, the failing items with their reasons, the files."""
    out, console = _console(colours, width)
    counted = report.counted
    passed = sum(r.passed for r in counted)
    if report.results and not counted:
        head = (
            f"no item could be counted: every run of all {len(report.results)} items ended "
            "in an error"
        )
        mark, style = "ERRORS", "bold red"
    elif not report.complete:
        total = len(report.results) + len(report.not_asked or [])
        head = f"incomplete: {len(counted)} of {total} items got a verdict"
        mark, style = "INCOMPLETE", "bold yellow"
    else:
        head = f"{passed}/{len(counted)} items passed"
        mark, style = "EVALUATED", "bold green" if passed == len(counted) else "bold yellow"
    _head(console, mark, style, head)
    if not report.complete and report.incomplete_reason:
        console.print(_text("why: " + terminal(report.incomplete_reason, limit=600), "yellow"))
    _gate_body(console, gate, report, files)
    return out.getvalue()


def calibration_summary(
    report: CalibrationReport,
    *,
    files: Mapping[str, str] | None = None,
    colours: bool = True,
    width: int | None = None,
) -> str:
    """`calibrate`'s summary: the verdict on the judge, its agreement with the human labels
    (agreement, kappa with its interval, the confusion matrix), the disagreements, the files."""
    from rich.table import Table

    from golden_gate.rendering.calibration import calibration_line, kappa_text

    out, console = _console(colours, width)
    verdict = report.verdict
    style = {"passed": "bold green", "failed": "bold red"}.get(verdict, "bold yellow")
    _head(console, verdict.upper(), style, calibration_line(report))
    figures = Table.grid(padding=(0, 2))
    figures.add_column(style="dim")
    figures.add_column()
    figures.add_row("evaluator", _text(terminal(report.judge, limit=200)))
    figures.add_row("labels", f"{report.n} judged of {report.labels} labelled")
    if report.agreement is not None:
        figures.add_row("agreement", f"{report.agreement:.1%}")
    kappa = report.kappa
    figures.add_row(
        "kappa κ",
        f"{kappa_text(kappa)} ({kappa.confidence:.0%} interval; min-kappa {report.min_kappa:.2f})",
    )
    c = report.confusion
    figures.add_row(
        "human pass",
        f"judge pass {c.human_pass_judge_pass}, judge fail {c.human_pass_judge_fail}",
    )
    figures.add_row(
        "human fail",
        f"judge pass {c.human_fail_judge_pass}, judge fail {c.human_fail_judge_fail}",
    )
    if report.errors:
        figures.add_row("errors", f"{len(report.errors)} answers got no verdict")
    console.print(figures)
    for note in [kappa.reason, kappa.note, report.incomplete_reason, *report.warnings]:
        if note:
            console.print(_text("warning: " + terminal(note, limit=600), "yellow"))
    if report.disagreements:
        table = Table(
            title=f"Disagreements ({len(report.disagreements)})",
            title_justify="left",
            show_edge=False,
            header_style="bold",
        )
        table.add_column("item", style="red", no_wrap=True, max_width=40)
        table.add_column("human")
        table.add_column("judge")
        table.add_column("judge's reason")
        for item in report.disagreements[:MAX_ROWS]:
            table.add_row(
                _text(terminal(item.id, limit=120)),
                item.human,
                item.judge,
                _text(terminal(item.comment, limit=300)),
            )
        console.print(table)
        if len(report.disagreements) > MAX_ROWS:
            more = len(report.disagreements) - MAX_ROWS
            console.print(_text(f"…and {more} more", "dim"))
    _files(console, files)
    return out.getvalue()


class _Out(io.StringIO):
    """The summary's buffer, saying stdout's encoding: rich then draws with what it can encode
    (ASCII boxes on an ASCII or Latin-1 terminal)."""

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(sys.stdout, "encoding", None) or "utf-8"


def _console(colours: bool, width: int | None) -> tuple[io.StringIO, Console]:
    from rich.console import Console

    out = _Out()
    console = Console(
        file=out,
        force_terminal=colours,
        no_color=not colours,
        color_system="standard" if colours else None,
        width=width if width is not None and width >= MIN_WIDTH else _width(),
        highlight=False,
        emoji=False,
    )
    return out, console


def _text(text: str, style: str = "") -> Text:
    from rich.text import Text

    return Text(text, style=style)  # never parsed as markup: an id stays as written


def _head(console: Console, mark: str, style: str, line: str) -> None:
    from rich.text import Text

    head = Text()
    head.append(f" {mark} ", style=f"reverse {style}")
    head.append(" golden-gate: ")
    head.append(terminal(line, limit=600))
    console.print(head)


def _files(console: Console, files: Mapping[str, str] | None) -> None:
    from rich.text import Text

    for name, path in (files or {}).items():
        console.print(Text(f"{name}: ", style="dim") + Text(terminal(path, limit=300)))


def _gate_body(
    console: Console,
    gate: GateResult,
    report: Report | SlimReport | None,
    files: Mapping[str, str] | None,
) -> None:
    """The gate's figures, its warnings, the items to read and the files."""
    from rich.table import Table
    from rich.text import Text

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
    view = slim.of(report) if report is not None else None
    _retrieval_rows(figures, gate)
    _spend_rows(figures, view.header.stats if view is not None else None)
    console.print(figures)
    for warning in gate.warnings:
        console.print(Text("warning: " + terminal(warning, limit=600), style="yellow"))
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
    _files(console, files)


def _retrieval_rows(figures: Table, gate: GateResult) -> None:
    """hit@k and MRR beside the baseline's, and the items whose hit@k fell with their best
    rank before and after; nothing when the retrieval layer measured nothing."""
    from golden_gate.core.retrieval import rank_text

    found = gate.retrieval
    if found is None or found.overall is None:
        return
    k, now, base = found.k, found.overall, found.baseline
    line = f"hit@{k} {now.hit_rate:.1%}, MRR {now.mrr:.3f} over {now.items} items"
    if base is not None:
        line += f" (baseline hit@{k} {base.hit_rate:.1%}, MRR {base.mrr:.3f})"
    figures.add_row("retrieval", line)
    compared = found.comparison
    if compared is not None and compared.fell:
        shown = [
            f"{terminal(c.id, limit=120)} (rank {rank_text(c.before)} → {rank_text(c.after)})"
            for c in compared.fell[:MAX_ROWS]
        ]
        more = len(compared.fell) - len(shown)
        figures.add_row(
            "retrieval fell",
            _text(", ".join(shown) + (f", …and {more} more" if more > 0 else ""), "red"),
        )


def _spend_rows(figures: Table, stats: RunStats | None) -> None:
    """What the run cost (with prices given), and the judge's requests when retries made
    them more than its calls."""
    from golden_gate.core.cost import money

    if stats is None:
        return
    spent = [
        f"judge {money(stats.cost_usd)}" if stats.cost_usd is not None else "",
        f"assistant {money(stats.assistant_cost_usd)}"
        if stats.assistant_cost_usd is not None
        else "",
    ]
    if any(spent):
        figures.add_row("cost", " + ".join(part for part in spent if part))
    if stats.judge_attempts and stats.judge_attempts != stats.judge_calls:
        retries = stats.judge_attempts - stats.judge_calls
        figures.add_row(
            "judge requests",
            f"{stats.judge_attempts} for {stats.judge_calls} calls"
            + (f" ({retries} retries)" if retries > 0 else ""),
        )


def _failed(view: slim.SlimReport) -> list[str]:
    """Counted items that did not pass (a strict majority of their runs), from the columns."""
    items = view.items
    return [
        item_id
        for item_id, passes, runs in zip(items.ids, items.passes, items.runs, strict=True)
        if runs and passes * 2 <= runs
    ]


MIN_WIDTH = 20  # narrower is no width a terminal really has: it says it does not know
DEFAULT_WIDTH = 100


def _width(env: Mapping[str, str] | None = None) -> int:
    """The terminal's columns (at most 160), else COLUMNS, else DEFAULT_WIDTH.

    A terminal may report 0 columns (a serial console, some CI pseudo-terminals) and COLUMNS
    may say 0: rich given width 0 prints nothing at all, not even the verdict, so a width below
    MIN_WIDTH counts as unknown."""
    env = os.environ if env is None else env
    try:
        columns = os.get_terminal_size(sys.stdout.fileno()).columns
    except (OSError, ValueError):
        columns = 0
    if columns < MIN_WIDTH:
        given = env.get("COLUMNS", "").strip()
        columns = int(given) if given.isdigit() else 0
    return min(columns, 160) if columns >= MIN_WIDTH else DEFAULT_WIDTH
