"""Mermaid charts for the comment and the job summary: the pass-rate trend and the tags.

GitHub renders a ```mermaid block in comments and in job summaries; where a viewer does not
(another forge, a terminal), the block reads as code and the tables beside it carry the same
numbers. Tag names and labels come from the repository and are untrusted: a label keeps only
letters, digits, spaces and `-_./+(),:`, so nothing in it can end the quoted string, the
statement or the fence, open a directive (`%%{`), a comment, an entity (`#`) or a tag (`<`), or
add a link or click handler (xychart has neither).
"""

from __future__ import annotations

from pydantic import BaseModel

MAX_TAGS = 12  # more bars than this read as noise; the table lists every tag
MAX_POINTS = 12
_LABEL_CHARS = 24
_ALLOWED = set(" -_./+(),:")
# Bars and lines take the palette's colours in the order they are drawn.
_TREND_COLOURS = "#0969da, #8c959f, #cf222e"  # pass rate, lower bound, floor
_TAG_COLOURS = "#8c959f, #0969da"  # baseline behind, this run in front


class TrendPoint(BaseModel):
    """One evaluation on the trend: a version of the baseline, or this run."""

    label: str  # e.g. "11-02 1a2b3c" or "this run"
    pass_rate: float
    lower_bound: float


class TagBar(BaseModel):
    tag: str
    rate: float  # this run's pass rate among the tag's counted items
    base_rate: float | None  # the baseline's, when it has counted items with the tag
    regressed: int = 0
    improved: int = 0


def label(text: str, limit: int = _LABEL_CHARS) -> str:
    """`text` as a safe chart label: allowed characters only, at most `limit` of them."""
    kept = "".join(ch if ch.isalnum() or ch in _ALLOWED else "_" for ch in text)
    kept = " ".join(kept.split())  # no line breaks, no runs of spaces
    if len(kept) > limit:
        kept = kept[: limit - 1] + "…"
    return kept or "_"


def _percent(value: float) -> str:
    return f"{max(0.0, min(1.0, value)) * 100:.1f}".removesuffix(".0")


def _list(values: list[str]) -> str:
    return "[" + ", ".join(values) + "]"


def _header(palette: str) -> str:
    return '%%{init: {"themeVariables": {"xyChart": {"plotColorPalette": "' + palette + '"}}}}%%'


def trend_chart(points: list[TrendPoint], *, floor: float, title: str) -> str | None:
    """Pass rate and Wilson lower bound over `points` (oldest first), the floor as a line;
    None with fewer than two points (a trend needs two)."""
    points = points[-MAX_POINTS:]
    if len(points) < 2:
        return None
    return "\n".join(
        [
            _header(_TREND_COLOURS),
            "xychart-beta",
            f'    title "{label(title, 60)}"',
            "    x-axis " + _list([f'"{label(p.label)}"' for p in points]),
            '    y-axis "%" 0 --> 100',
            "    line " + _list([_percent(p.pass_rate) for p in points]),
            "    line " + _list([_percent(p.lower_bound) for p in points]),
            "    line " + _list([_percent(floor)] * len(points)),
        ]
    )


def tag_chart(bars: list[TagBar]) -> tuple[str, int] | None:
    """This run's pass rate a tag in front of the baseline's, regressed (▼) and improved (▲)
    counts on the labels; the tags with the most regressions first, at most MAX_TAGS.
    Returns the chart and how many tags it left out; None without tags."""
    if not bars:
        return None
    shown = sorted(bars, key=lambda b: (-b.regressed, b.rate, b.tag))[:MAX_TAGS]
    shown.sort(key=lambda b: b.tag)

    def name(bar: TagBar) -> str:
        marks = (f" ▼{bar.regressed}" if bar.regressed else "") + (
            f" ▲{bar.improved}" if bar.improved else ""
        )
        return f'"{label(bar.tag, _LABEL_CHARS - len(marks))}{marks}"'

    compared = any(b.base_rate is not None for b in shown)
    lines = [
        _header(_TAG_COLOURS if compared else _TAG_COLOURS.split(", ")[1]),
        "xychart-beta horizontal",  # names read across, however many tags
        "    x-axis " + _list([name(b) for b in shown]),
        '    y-axis "pass rate (%)" 0 --> 100',
    ]
    if compared:
        # A tag the baseline lacks gets a grey bar as tall as this run's: no change shown.
        lines.append(
            "    bar "
            + _list([_percent(b.base_rate if b.base_rate is not None else b.rate) for b in shown])
        )
    lines.append("    bar " + _list([_percent(b.rate) for b in shown]))
    return "\n".join(lines), len(bars) - len(shown)
