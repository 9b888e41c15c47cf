"""`golden-gate import`: another tool's dataset as a golden set, or production traces as
candidate items; what was mapped, dropped and left out is printed."""

from __future__ import annotations

import argparse
from pathlib import Path

from golden_gate.errors import EXIT_PASSED, InputError

SHOWN = 20  # lines of a list printed before "… and N more"


def _column_map(text: str | None) -> dict[str, str]:
    if not text:
        return {}
    pairs = {}
    for part in text.split(","):
        field, sep, column = part.partition("=")
        if not sep or not field.strip() or not column.strip():
            raise InputError(f"--map: '{part}' is not FIELD=COLUMN (e.g. question=Prompt)")
        pairs[field.strip()] = column.strip()
    return pairs


def _shown(title: str, lines: list[str]) -> list[str]:
    """A titled list, each line made safe for a terminal (names come from the file)."""
    from golden_gate.rendering.escape import terminal

    if not lines:
        return []
    more = [f"    … and {len(lines) - SHOWN} more"] if len(lines) > SHOWN else []
    return [f"  {title}:", *(f"    {terminal(line, limit=300)}" for line in lines[:SHOWN]), *more]


def _counted(counts: dict[str, int]) -> list[str]:
    return [f"{what} ({n})" for what, n in sorted(counts.items(), key=lambda kv: -kv[1])]


def _uncommon(outcome) -> list[str]:  # outcome: importers.base.Outcome
    """Per item, what it dropped that not every item dropped (the common part is counted)."""
    n = len(outcome.lines)
    lines = []
    for where, item_id, drops in outcome.per_item:
        rare = [d for d in drops if outcome.dropped.get(d, 0) < n]
        if rare:
            lines.append(f"{where}: {item_id}: {'; '.join(rare)}")
    return lines


def cmd_import(args: argparse.Namespace) -> int:
    from golden_gate.core.golden import load_golden
    from golden_gate.files import write_result
    from golden_gate.importers import import_file
    from golden_gate.importers.base import Options

    output: Path = args.output
    if output.exists() and not args.force:
        raise InputError(f"{output} exists: import into a new file, or say --force to replace it")
    options = Options(
        columns=_column_map(args.map),
        key_points=args.key_points,
        without_reference=args.without_reference,
        question_var=args.question_var,
    )
    if args.from_traces:
        from golden_gate.importers.traces import candidates

        golden = load_golden(args.golden) if args.golden else []
        fmt, outcome = candidates(args.source, args.format, golden)
    else:
        fmt, outcome = import_file(args.source, args.format, options)
    if not outcome.lines:
        listed = "; ".join(outcome.listed[:3])
        raise InputError(
            f"{args.source}: nothing to write from this {fmt} file"
            + (f" ({listed}{' …' if len(outcome.listed) > 3 else ''})" if listed else "")
        )
    # Each line was validated by the golden set's model as it was made, its id unique.
    write_result(output, "".join(line + "\n" for line in outcome.lines), what="golden set")
    what = "candidate items" if args.from_traces else "items"
    out = [
        f"golden-gate: read {args.source.name} as {fmt}: wrote {len(outcome.lines)} {what} to "
        f"{output}; {len(outcome.listed)} record(s) not written"
    ]
    out += _shown("mapped", _counted(outcome.mapped))
    out += _shown("dropped", _counted(outcome.dropped))
    out += _shown("dropped, item by item", _uncommon(outcome))
    out += _shown("not written", outcome.listed)
    if args.from_traces:
        out.append(
            "  they are tagged from-traces and needs-reference: run and eval leave them out "
            f"until a person reviews them (golden-gate review --candidates {output})"
        )
    elif outcome.needs_review:
        out.append(
            "  key points drawn by sentence are tagged needs-review: run and eval leave them "
            f"out until reviewed (golden-gate review --candidates {output})"
        )
    print("\n".join(out))
    return EXIT_PASSED
