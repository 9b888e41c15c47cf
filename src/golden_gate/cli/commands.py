"""One function per subcommand that evaluates or gates: each reads its parsed arguments, calls
the engine, prints, and returns the exit code. The set-up commands are cli/setup.py, the
reviewer's cli/diff_view.py, importing JUnit cli/junit.py."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from golden_gate import process
from golden_gate.cli.options import cache_dir, fail, settings_from_args
from golden_gate.errors import EXIT_INCOMPLETE, EXIT_PASSED, InputError
from golden_gate.option_values import gate_settings
from golden_gate.options import BY_NAME

if TYPE_CHECKING:
    from golden_gate.core.slim import SlimReport
    from golden_gate.core.verdict import GateResult


def _print_gate(
    gate: GateResult,
    report_path: str | None = None,
    report: Any = None,
    *,
    fmt: str = "text",
    comment: Any = None,
    incomplete: str | None = None,
) -> None:
    """The verdict as `--format` asks: text (a summary in a terminal, plain lines elsewhere),
    md (the comment, made by `comment()`) or json (the gate's result). An `incomplete` run
    (why, said on stderr) has no verdict to print: no pass count, no regression, only what the
    warnings say."""
    from golden_gate.rendering import terminal

    if fmt == "json":
        print(gate.model_dump_json(indent=2))
        return
    if fmt == "md" and comment is not None:
        print(comment(), end="")
        return
    if incomplete:
        print("golden-gate: incomplete: no gate result (the reason follows)")
        for warning in gate.warnings:
            print(f"  warning: {warning}")
        if report_path:
            print(f"  report: {report_path}")
        return
    if terminal.wanted():  # a person at a terminal: the summary (the plain lines for logs)
        files = {"report": report_path} if report_path else {}
        print(terminal.summary(gate, report, files=files, colours=terminal.colour()), end="")
        return
    print(f"golden-gate: {gate.headline}")
    if gate.n:
        print(
            f"  pass rate {gate.pass_rate_text}{gate.pass_rate_detail}, "
            f"Wilson lower bound {gate.lower_bound:.4f} (floor {gate.settings.floor:.2f})"
        )
    comparison = gate.comparison
    if comparison is not None:
        print(
            f"  vs baseline: {comparison.b} regressed, {comparison.c} improved on "
            f"{comparison.shared} shared items, p = {comparison.p_value:.4g} "
            f"({comparison.method}), {comparison.net_text}"
        )
        for item_id in comparison.regressions:
            print(f"  regressed: {item_id}")
        if comparison.only_in_candidate or comparison.only_in_baseline:
            print(
                f"  {len(comparison.only_in_candidate)} items only in this report, "
                f"{len(comparison.only_in_baseline)} only in the baseline"
            )
    for warning in gate.warnings:
        print(f"  warning: {warning}")
    for note in gate.notes:
        print(f"  note: {note}")
    if report_path:
        print(f"  report: {report_path}")


def _load_pair(report: Path, baseline: Path | None) -> tuple[SlimReport, SlimReport | None]:
    """The report and the baseline as slim views: a large one is read without its runs."""
    from golden_gate.core import slim

    return slim.load(report), (slim.load(baseline) if baseline is not None else None)


def output_settings(args: argparse.Namespace, **paths: Any) -> Any:
    """The settings of a command that gates reports it did not evaluate: the gate's thresholds
    and the outputs its flags ask for (publish.FORMATS)."""
    from golden_gate.publish import Destinations

    calibration = args.resolved["calibration"]
    return Destinations(
        gate=gate_settings(args.resolved),
        calibration=Path(calibration) if calibration else None,
        comment_id=getattr(args, "comment_id", None) or BY_NAME["comment-id"].default,
        comment_template=getattr(args, "comment_template", None),
        comment_path=getattr(args, "comment_file", None),
        summary_path=getattr(args, "summary_file", None),
        junit_path=getattr(args, "junit_xml", None),
        html_path=getattr(args, "html_report", None),
        **paths,
    )


def cmd_gate(args: argparse.Namespace) -> int:
    from golden_gate.files import WriteFailures
    from golden_gate.publish import publish

    settings = output_settings(args)
    failures = WriteFailures()
    rendering = args.comment_file is not None or args.summary_file is not None
    report, baseline = _load_pair(args.report, args.baseline)
    wants_trend = rendering or args.html_report is not None
    history = _history(args, settings.gate.confidence) if wants_trend else None
    outcome = publish(
        report, baseline, settings, failures=failures, history=history, judge_notes=False
    )
    return _finish(outcome, args, failures, report_path=None, incomplete=_no_gate_result)


def _finish(
    outcome: Any,
    args: argparse.Namespace,
    failures: Any,
    *,
    report_path: str | None,
    incomplete: Callable[[Any], str],
) -> int:
    """Print the verdict as --format asks, then say what could not be written, then the exit
    code (the verdict is printed first: it is not lost with the files). `incomplete`: the
    command's sentence for a run without a gate result."""
    reason = outcome.incomplete_reason if outcome.verdict == "incomplete" else None
    _print_gate(
        outcome.gate,
        report_path,
        outcome.report,
        fmt=args.format,
        comment=lambda: outcome.comment,
        incomplete=reason,
    )
    failures.raise_if_any()
    if reason:
        fail(incomplete(outcome))
    return int(outcome.exit_code)


def _no_gate_result(outcome: Any) -> str:
    return f"no gate result: {outcome.incomplete_reason}"


def _not_completed(outcome: Any) -> str:
    return f"the evaluation could not be completed: {outcome.incomplete_reason}"


def _history(args: argparse.Namespace, confidence: float) -> list[Any] | None:
    """With --trend, the baseline file's committed versions for the trend chart (none
    outside git)."""
    if not args.trend or args.baseline is None:
        return None
    from golden_gate.history import git_trend

    return git_trend(args.baseline, confidence=confidence)


def cmd_report(args: argparse.Namespace) -> int:
    from golden_gate.publish import publish

    if args.format == "json":
        args.comment_template = None  # the gate's result only: no comment is rendered
    elif args.comment_template is not None and not args.comment_template.is_file():
        raise InputError(f"{args.comment_template}: template not found")
    settings = output_settings(args)
    report, baseline = _load_pair(args.report, args.baseline)
    history = _history(args, settings.gate.confidence) if args.format != "json" else None
    outcome = publish(report, baseline, settings, history=history, judge_notes=False)
    if args.format == "json":
        print(outcome.gate.model_dump_json(indent=2))
    else:
        print(outcome.comment, end="")
    return EXIT_PASSED


def cmd_pairwise(args: argparse.Namespace) -> int:
    from golden_gate.core.golden import load_golden
    from golden_gate.core.pairwise import describe
    from golden_gate.core.report_file import load_report
    from golden_gate.evaluation.cache import VerdictCache
    from golden_gate.evaluation.pairwise import changed, compare
    from golden_gate.files import write_result
    from golden_gate.settings import judge_settings

    if not args.baseline:
        raise InputError("pairwise: give --baseline (the report whose answers to compare with)")
    report, baseline = load_report(args.report), load_report(args.baseline)
    items = load_golden(args.golden)
    settings = judge_settings(args.resolved, root=Path("."))
    pairs = changed(report, baseline)
    result = process.run(compare(pairs, items, settings, VerdictCache(cache_dir(args.resolved))))
    write_result(args.output, result.model_dump_json(indent=1) + "\n", what="pairwise outcomes")
    print(f"golden-gate: {describe(result)}; outcomes: {args.output}")
    return EXIT_INCOMPLETE if result.errors else EXIT_PASSED


def cmd_subset(args: argparse.Namespace) -> int:
    from golden_gate.core import golden

    tags = args.subset_tags
    if not tags:
        raise InputError("subset: give --subset-tags (or set subset-tags in golden-gate.toml)")
    every = golden.load_golden(args.golden)
    golden.check_tags_used(every, tags, where=args.golden)
    items = golden.select(every, tags)
    if not items:
        raise InputError(f"{args.golden}: no items carry any of the tags {', '.join(tags)}")
    golden.write_golden(items, args.output)
    print(f"golden-gate: wrote {len(items)} items to {args.output} ({golden.fingerprint(items)})")
    return EXIT_PASSED


def cmd_eval(args: argparse.Namespace) -> int:
    from golden_gate.files import WriteFailures
    from golden_gate.pipeline import evaluate_report
    from golden_gate.publish import publish

    _baseline_runs(args.resolved)
    settings = settings_from_args(args.resolved, quiet=args.quiet)
    report = evaluate_report(settings, gating=False)  # a report, no verdict: warned only
    failures = WriteFailures()
    # The report and what the flags ask for (JUnit, the page), as every command writes them;
    # eval's gate has no baseline and decides nothing (its exit code is the evaluation's).
    outcome = publish(report, None, settings, failures=failures, save=True, judge_notes=False)
    _print_eval(outcome, settings, args)
    failures.raise_if_any()  # after the verdict is printed: it is not lost with the file
    if not report.complete:
        fail(f"the evaluation could not be completed: {report.incomplete_reason}")
        return EXIT_INCOMPLETE
    return EXIT_PASSED


def _baseline_runs(resolved: Any) -> None:
    """`eval` writing the configured baseline makes it as the baseline workflow does: with
    baseline-runs runs an item (at least `runs`), so a laptop's baseline and CI's agree."""
    from golden_gate.limits import MAX_RUNS
    from golden_gate.option_values import Value

    baseline, out = resolved["baseline"], resolved["report-path"]
    if not baseline or Path(baseline).absolute() != Path(out).absolute():
        return
    runs, wanted = resolved["runs"], resolved["baseline-runs"]
    if not 1 <= wanted <= MAX_RUNS:
        where = resolved.where("baseline-runs")
        raise InputError(f"{where} must be a whole number from 1 to {MAX_RUNS}")
    if wanted > runs:
        origin = resolved.origin("baseline-runs")
        resolved.values["runs"] = Value(wanted, origin)
        said = "baseline-runs" if origin == "default" else resolved.where("baseline-runs")
        print(
            f"golden-gate: writing the baseline {baseline}: {wanted} runs an item ({said}), "
            "as the baseline workflow makes it"
        )


def _print_eval(outcome: Any, settings: Any, args: argparse.Namespace) -> None:
    """`eval`'s result as `--format` asks: text (a summary in a terminal, the plain line
    elsewhere), md (the comment, no baseline) or json (the gate's result, no baseline)."""
    from golden_gate.rendering import terminal

    report = outcome.report
    counted = report.counted
    passed = sum(r.passed for r in counted)
    if args.format == "json":
        print(outcome.gate.model_dump_json(indent=2))
        return
    if args.format == "md":
        print(outcome.comment, end="")
        return
    if terminal.wanted():
        files = {"report": str(settings.report_path)}
        for name, path in (("junit", args.junit_xml), ("page", args.html_report)):
            if path is not None:
                files[name] = str(path)
        colours = terminal.colour()
        summary = terminal.eval_summary(outcome.gate, report, files=files, colours=colours)
        print(summary, end="")
        return
    if report.results and not counted:
        print(
            f"golden-gate: no item could be counted: every run of all {len(report.results)} "
            f"items ended in an error (first: {report.results[0].why}); report: "
            f"{settings.report_path}"
        )
    elif not report.complete:
        # No pass count for an incomplete run: it would read as a result (the reason follows).
        total = len(report.results) + len(report.not_asked or [])
        print(
            f"golden-gate: incomplete: {len(counted)} of {total} items got a verdict; report: "
            f"{settings.report_path}"
        )
    else:
        print(f"golden-gate: {passed}/{len(counted)} items passed; report: {settings.report_path}")


def cmd_run(args: argparse.Namespace) -> int:
    from golden_gate.files import WriteFailures
    from golden_gate.pipeline import run

    settings = settings_from_args(
        args.resolved,
        quiet=args.quiet,
        baseline=args.baseline,
        baseline_label=str(args.baseline) if args.baseline else None,
        summary_path=args.summary_file,
    )
    if settings.comment_path is None:  # `run` always writes its comment
        settings = settings.model_copy(update={"comment_path": Path("comment.md")})
    failures = WriteFailures()
    history = _history(args, settings.gate.confidence)
    outcome = run(settings, failures, history=history)
    code = _finish(
        outcome, args, failures, report_path=str(settings.report_path), incomplete=_not_completed
    )
    if args.format == "text" and outcome.verdict != "incomplete":
        _floor_could_hold(outcome.gate)
    return code


def _floor_could_hold(gate: Any) -> None:
    """Once the set has outgrown the floor it was given (init writes the one the starter's
    items can reach, 0 for three), say the floor these items could hold: the highest of init's
    floors whose Wilson lower bound they clear with one of them failing."""
    from golden_gate.core.stats import wilson_lower_bound
    from golden_gate.starter import fitting_floor

    confidence = gate.settings.confidence
    could, floor = fitting_floor(gate.n, confidence=confidence), gate.settings.floor
    if could <= floor:
        return
    n = gate.n
    failing = int(wilson_lower_bound(n - 1, n, confidence=confidence) >= could)
    bound = wilson_lower_bound(n - failing, n, confidence=confidence)
    print(
        f"golden-gate: the set has grown: {n} items could hold floor = {could} "
        f"({n - failing} of {n} passing give a Wilson lower bound of {bound:.3f}); the floor "
        f"is {floor:g}: raise "
        "[gate] floor in golden-gate.toml (golden-gate plan shows what each floor needs)"
    )


def cmd_merge(args: argparse.Namespace) -> int:
    from golden_gate.core import slim
    from golden_gate.core.merge import merge_reports
    from golden_gate.core.report_file import load_report
    from golden_gate.files import WriteFailures
    from golden_gate.publish import publish

    settings = output_settings(args, report_path=args.output)
    merged = merge_reports([(str(path), load_report(path)) for path in args.reports])
    baseline = slim.load(args.baseline) if args.baseline else None
    failures = WriteFailures()
    outcome = publish(merged, baseline, settings, failures=failures, save=True, judge_notes=False)
    print(f"golden-gate: merged {len(args.reports)} shards, {len(merged.results)} items")

    def incomplete(outcome: Any) -> str:  # as `gate` says of the same report, when complete
        return (_no_gate_result if merged.complete else _not_completed)(outcome)

    return _finish(outcome, args, failures, report_path=str(args.output), incomplete=incomplete)


def cmd_calibrate(args: argparse.Namespace) -> int:
    from golden_gate.core.calibration import calibration_exit_code
    from golden_gate.evaluation.calibrate import run_calibration
    from golden_gate.settings import judge_settings

    if args.labels is None:
        raise InputError(
            "calibrate: give --labels (human labels, JSONL) or set [calibration] labels"
        )
    report = run_calibration(
        args.labels,
        args.golden,
        judge_settings(args.resolved, root=Path(".")),
        cache_dir=cache_dir(args.resolved),
        min_kappa=args.min_kappa,
        output=args.calibration_path,
    )
    _print_calibration(report, args)
    return calibration_exit_code(report)


def _print_calibration(report: Any, args: argparse.Namespace) -> None:
    """The calibration as `--format` asks: text (a summary in a terminal, plain lines
    elsewhere), md (as the Action's calibrate mode writes it) or json (the calibration report)."""
    from golden_gate.rendering import terminal
    from golden_gate.rendering.calibration import calibration_line

    if args.format == "json":
        print(report.model_dump_json(indent=2))
    elif args.format == "md":
        from golden_gate.rendering.calibration import render_calibration

        print(render_calibration(report), end="")
    elif terminal.wanted():
        files = {"calibration": str(args.calibration_path)}
        print(terminal.calibration_summary(report, files=files, colours=terminal.colour()), end="")
    else:
        print(f"golden-gate: {calibration_line(report)}")
        for item in report.disagreements:
            print(f"  disagree: {item.id}: human {item.human}, judge {item.judge}")
        print(f"  report: {args.calibration_path}")
