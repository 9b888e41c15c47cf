"""`golden-gate plan`: what a gate of this size can and cannot show, before anything runs."""

from __future__ import annotations

from pathlib import Path

from golden_gate.core import golden, slim
from golden_gate.core.gate import GateSettings
from golden_gate.core.power import fewest_passes_for_floor, planned_power, unreachable_floor_message
from golden_gate.errors import InputError


def plan_text(
    *,
    golden: Path | None = None,
    tags: list[str],
    items: int | None,
    runs: int,
    baseline: Path | None,
    settings: GateSettings,
) -> tuple[str, bool]:
    """The plan as text, and whether the floor is within reach at all."""
    if runs < 1:
        raise InputError(f"--runs: must be at least 1, got {runs}")
    n = items if items is not None else _count(golden, tags)
    if n < 1:
        raise InputError(f"--items: must be at least 1, got {n}")
    # Only its counts are read: a large baseline is read without its runs (slim.py).
    base = slim.load(baseline, rows=False) if baseline is not None else None
    fewest = fewest_passes_for_floor(n, settings)
    lines = [f"golden-gate plan: {n} items × {runs} run(s)"]
    if not settings.floor_on:
        lines.append("  floor 0: the floor is off")
    elif fewest is None:
        lines.append(f"  floor: {unreachable_floor_message(n, settings)}")
    else:
        per = "items" if runs == 1 else "items' worth of passing runs (mean per-item score)"
        lines.append(
            f"  floor {settings.floor:.2f}: at least {fewest} of {n} {per} must pass "
            f"({fewest / n:.1%}) for the Wilson {settings.confidence:.0%} lower bound to clear it"
        )
    power = planned_power(n=n, runs=runs, baseline=base, settings=settings)
    lines.append("  " + power.sentence(n))
    lines.append(
        f"  (alpha {settings.alpha:g}, min-drop {settings.min_drop:.1%}; "
        "a drop is a fall in the mean per-item pass fraction)"
    )
    return "\n".join(lines) + "\n", fewest is not None


def _count(path: Path | None, tags: list[str]) -> int:
    assert path is not None
    selected = golden.select(golden.load_golden(path), tags)
    if not selected:
        raise InputError(f"{path}: no items carry any of the tags {', '.join(tags)}")
    return len(selected)
