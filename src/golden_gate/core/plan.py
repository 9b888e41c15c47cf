"""`golden-gate plan`: what a gate of this size can and cannot show, before anything runs."""

from __future__ import annotations

from pathlib import Path

from golden_gate.core import golden, slim
from golden_gate.core.power import fewest_passes_for_floor, planned_power
from golden_gate.core.verdict import GateSettings, fewest_items_for_floor, floor_out_of_reach
from golden_gate.errors import InputError


def plan_text(
    *,
    golden: Path | None = None,
    tags: list[str],
    items: int | None,
    runs: int,
    baseline: Path | None,
    settings: GateSettings,
) -> tuple[str, str | None]:
    """The plan as text, and why the floor is out of reach (None when it is within reach)."""
    if runs < 1:
        raise InputError(f"--runs: must be at least 1, got {runs}")
    if items is not None and items < 1:
        raise InputError(f"--items: must be at least 1, got {items}")
    clusters = [None] * items if items is not None else _clusters(golden, tags)
    n = len(clusters)
    # Only its counts are read: a large baseline is read without its runs (slim.py).
    base = slim.load(baseline) if baseline is not None else None
    out_of_reach = floor_out_of_reach(clusters, settings)
    lines = [f"golden-gate plan: {n} items × {runs} run(s)"]
    if golden is not None and items is None:
        lines += _conversations(golden, tags)
    if not settings.floor_on:
        lines.append("  floor 0: the floor is off")
    elif out_of_reach is not None:
        lines.append(f"  floor: {out_of_reach}")
    else:
        fewest = fewest_passes_for_floor(n, settings) or n
        per = "items" if runs == 1 else "items' worth of passing runs (mean per-item score)"
        lines.append(
            f"  floor {settings.floor:.2f}: at least {fewest} of {n} {per} must pass "
            f"({fewest / n:.1%}) for the Wilson {settings.confidence:.0%} lower bound to clear it"
        )
    if settings.floor_on:
        lines.append(
            f"  choosing n and floor together: floor {settings.floor:.2f} needs at least "
            f"{fewest_items_for_floor(settings)} items even when every one passes, and more "
            "items leave more room for failures"
        )
    power = planned_power(n=n, runs=runs, baseline=base, settings=settings)
    lines.append("  " + power.sentence(n))
    if detail := power.detail():
        lines.append(f"    ({detail})")
    lines.append(
        f"  (alpha {settings.alpha:g}, min-drop {settings.min_drop:.1%}; "
        "a drop is a fall in the mean per-item pass fraction)"
    )
    return "\n".join(lines) + "\n", out_of_reach


def _clusters(path: Path | None, tags: list[str]) -> list[str | None]:
    """One cluster label (or None) per selected item: the floor's bound counts clusters."""
    assert path is not None
    every = golden.load_golden(path)
    golden.check_tags_used(every, tags, where=path)
    selected = golden.select(every, tags)
    if not selected:
        raise InputError(f"{path}: no items carry any of the tags {', '.join(tags)}")
    return [item.cluster for item in selected]


def _conversations(path: Path, tags: list[str]) -> list[str]:
    """A line on the conversations among the items: each one item, each turn one request."""
    selected = golden.select(golden.load_golden(path), tags)
    chats = [item for item in selected if item.turns]
    if not chats:
        return []
    turns = sum(len(item.turns or ()) for item in chats)
    return [
        f"  {len(chats)} of them are conversations ({turns} turns, one request each a run): "
        "each counts as one item"
    ]
