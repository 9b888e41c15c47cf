"""`golden-gate import-junit`: a test suite's JUnit XML results as a report to gate."""

from __future__ import annotations

import argparse

from golden_gate.errors import EXIT_INCOMPLETE, EXIT_PASSED


def cmd_import_junit(args: argparse.Namespace) -> int:
    from golden_gate.cli.options import warn
    from golden_gate.core.report_file import save_report
    from golden_gate.evaluation.junit import report_from_junit

    report = report_from_junit(args.results, max_error_rate=args.max_error_rate)
    save_report(report, args.report_path)
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
