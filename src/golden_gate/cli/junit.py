"""`golden-gate import-junit`: a test suite's JUnit XML results as a report to gate."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from golden_gate.errors import EXIT_INCOMPLETE, EXIT_PASSED

if TYPE_CHECKING:
    from golden_gate.evaluation.junit import Mapped

EXPLAIN_NAMES = 5  # names shown per item; the rest counted


def cmd_import_junit(args: argparse.Namespace) -> int:
    from golden_gate.cli.options import warn
    from golden_gate.core.report_file import save_report
    from golden_gate.evaluation.junit import read_junit

    imported = read_junit(args.results, max_error_rate=args.max_error_rate)
    report = imported.report
    save_report(report, args.report_path)
    if args.explain:
        print(explain(imported.mapping), end="")
    runs = sum(r.runs + r.errors for r in report.results)
    print(
        f"golden-gate: imported {len(report.results)} items ({runs} runs) from "
        f"{args.results.name} into {args.report_path}; gate it with "
        f"`golden-gate gate {args.report_path} BASELINE`"
    )
    for warning in report.warnings or []:
        warn(warning)
    if not report.complete:
        warn(f"incomplete: {report.incomplete_reason}")
        return EXIT_INCOMPLETE
    return EXIT_PASSED


def explain(mapping: list[Mapped]) -> str:
    """One block per item: its id, the class and the test names it was read from, and why."""
    from golden_gate.rendering.escape import terminal

    lines = []
    for m in mapping:
        runs = f"{m.runs} run(s)" + (f", {m.skipped} skipped" if m.skipped else "")
        left = "" if m.runs else "  (only skipped: left out)"
        lines.append(f"{terminal(m.id)}  ←  {runs}{left}")
        lines.append(f"    class: {terminal(m.group) or '(none)'}")
        names = [terminal(n) for n in m.names[:EXPLAIN_NAMES]]
        more = f" … and {len(m.names) - EXPLAIN_NAMES} more" if len(m.names) > EXPLAIN_NAMES else ""
        lines.append(f"    tests: {' | '.join(names)}{more}")
        how = m.how
        if how == "same class and name":
            how = "one test case" if m.runs + m.skipped <= 1 else "the same test, run again"
        why = how + (
            "; the name is a test of other classes too, so the id has the class"
            if m.qualified
            else ""
        )
        lines.append(f"    why:   {why}")
    return "".join(line + "\n" for line in lines)
