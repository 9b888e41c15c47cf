"""`golden-gate review`: answers to label for calibration, and candidate items (imported
from traces) taken into the golden set."""

from __future__ import annotations

import argparse

from golden_gate.errors import EXIT_PASSED, InputError


def cmd_review(args: argparse.Namespace) -> int:
    import json

    from golden_gate.core.report_file import load_report
    from golden_gate.core.review import counts, review_lines
    from golden_gate.files import write_result

    if args.candidates is not None:
        return review_candidates(args)
    if args.report is None:
        raise InputError("review: give a report (answers to label) or --candidates FILE")
    report = load_report(args.report)
    baseline = load_report(args.baseline) if args.baseline else None
    lines = review_lines(report, baseline)
    text = "".join(
        json.dumps(line.model_dump(exclude_none=True), ensure_ascii=False) + "\n" for line in lines
    )
    write_result(args.output, text, what="labels file")
    found = ", ".join(f"{n} {why}" for why, n in counts(lines).items()) or "nothing to review"
    print(f"golden-gate: wrote {len(lines)} answers to label to {args.output} ({found})")
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
