"""The commands that show a reviewer the results: `diff` (two reports, item by item) and
`view` (one report, and its baseline, as a page for a browser)."""

from __future__ import annotations

import argparse

from golden_gate.errors import EXIT_PASSED


def cmd_diff(args: argparse.Namespace) -> int:
    from golden_gate.core.diff import diff_reports
    from golden_gate.core.report_file import load_report
    from golden_gate.rendering.diff import diff_json, diff_markdown, diff_text

    baseline, candidate = load_report(args.a), load_report(args.b)
    diff = diff_reports(baseline, candidate, baseline_name=str(args.a), candidate_name=str(args.b))
    render = {"text": diff_text, "md": diff_markdown, "json": diff_json}[args.format]
    print(render(diff), end="")
    return EXIT_PASSED


def cmd_view(args: argparse.Namespace) -> int:
    from golden_gate.cli.commands import output_settings
    from golden_gate.core import slim
    from golden_gate.core.report_file import load_report
    from golden_gate.publish import decide
    from golden_gate.rendering.page import write_page

    report = load_report(args.report)
    baseline = load_report(args.baseline) if args.baseline is not None else None
    # The gate's decision on the columns, from the settings `gate` reads: the same verdict.
    settings = output_settings(args)
    base = slim.of(baseline) if baseline else None
    gate = decide(slim.of(report), base, settings.gate, settings.calibration)
    history = None
    if args.trend and args.baseline is not None:
        from golden_gate.history import git_trend

        history = git_trend(args.baseline, confidence=gate.settings.confidence)
    write_page(args.output, report, gate, baseline=baseline, history=history)
    print(f"golden-gate: wrote {args.output} ({len(report.results)} items); open it in a browser")
    return EXIT_PASSED
