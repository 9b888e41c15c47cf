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
    from golden_gate.core import slim
    from golden_gate.core.gate import evaluate_gate
    from golden_gate.core.report_file import load_report
    from golden_gate.option_values import gate_settings
    from golden_gate.rendering.page import write_page

    report = load_report(args.report)
    baseline = load_report(args.baseline) if args.baseline is not None else None
    # The gate on the columns, as `gate` reads them: the same verdict, without the records.
    view = slim.of(report)
    gate = evaluate_gate(
        view, slim.of(baseline) if baseline else None, gate_settings(args.resolved)
    )
    history = None
    if args.trend and args.baseline is not None:
        from golden_gate.history import git_trend

        history = git_trend(args.baseline, confidence=gate.settings.confidence)
    write_page(args.output, report, gate, baseline=baseline, history=history)
    print(f"golden-gate: wrote {args.output} ({len(report.results)} items); open it in a browser")
    return EXIT_PASSED


def review_candidates(args: argparse.Namespace) -> int:
    """`review --candidates FILE [--into GOLDEN]`: the candidates marked accept join the golden
    set, rid of the marks that kept them out of the gate; those marked reject go; the blank
    stay candidates."""
    import json
    from pathlib import Path

    from golden_gate import jsonl
    from golden_gate.core.golden import load_golden, parse_golden
    from golden_gate.core.review import review_candidates as split
    from golden_gate.errors import InputError
    from golden_gate.files import write_result

    source: Path = args.candidates
    into: Path = args.into or source
    items = load_golden(source)
    done = split(items)

    def text(items) -> str:
        return "".join(
            json.dumps(i.model_dump(mode="json", exclude_unset=True), ensure_ascii=False) + "\n"
            for i in items
        )

    if into.resolve() == source.resolve():
        accepted = {i.id: i for i in done.accepted}
        rejected = {i.id for i in done.rejected}
        final = text(accepted.get(i.id, i) for i in items if i.id not in rejected)
        parse_golden(jsonl.lines(final), source=str(into))  # what `eval` reads
        write_result(into, final, what="golden set")
    else:
        existing = load_golden(into) if into.exists() else []
        ids = {i.id for i in existing}
        questions = {" ".join(i.question.casefold().split()) for i in existing}
        for item in done.accepted:
            if item.id in ids:
                raise InputError(f"{item.where}: item '{item.id}': {into} has this id already")
            if " ".join(item.question.casefold().split()) in questions:
                raise InputError(f"{item.where}: item '{item.id}': {into} has this question")
        final = text([*existing, *done.accepted])
        parse_golden(jsonl.lines(final), source=str(into))
        write_result(into, final, what="golden set")
        write_result(source, text(done.kept), what="candidates")
    waiting = sum(1 for i in done.kept if "needs-reference" in i.tags or "needs-review" in i.tags)
    print(
        f"golden-gate: {len(done.accepted)} accepted into {into}, {len(done.rejected)} "
        f"rejected, {waiting} still to review in {source}"
    )
    return EXIT_PASSED
