"""One function per subcommand: each reads its parsed arguments, calls the engine, prints, and
returns the exit code."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from golden_gate.cli.options import cache_dir, fail, settings_from_args, warn
from golden_gate.errors import EXIT_FAILED, EXIT_INCOMPLETE, EXIT_PASSED, InputError
from golden_gate.options import BY_NAME, OPTIONS, gate_settings

if TYPE_CHECKING:
    from golden_gate.core.gate import GateResult
    from golden_gate.core.slim import SlimReport


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


def cmd_gate(args: argparse.Namespace) -> int:
    from golden_gate.core.gate import evaluate_gate
    from golden_gate.files import WriteFailures, write_result

    settings = gate_settings(args.resolved)
    rendering = args.comment_file is not None or args.summary_file is not None
    report, baseline = _load_pair(args.report, args.baseline)
    gate = evaluate_gate(report, baseline, settings)
    header = report.header
    reason = header.incomplete_reason if not header.complete else gate.inconclusive

    def comment() -> str:
        from golden_gate.rendering.render import render_comment

        return render_comment(report, gate, baseline=baseline, comment_id=args.comment_id)

    _print_gate(gate, report=report, fmt=args.format, comment=comment, incomplete=reason)
    failures = WriteFailures()
    if rendering:
        from golden_gate.rendering.render import render_comment, render_summary

        history = _history(args, settings.confidence)  # read once for both
        for path, render, what in (
            (args.comment_file, render_comment, "comment"),
            (args.summary_file, render_summary, "summary"),
        ):
            if path is not None:
                text = render(
                    report, gate, baseline=baseline, comment_id=args.comment_id, history=history
                )
                failures.attempt(lambda p=path, t=text, w=what: write_result(p, t, what=w))
    if args.junit_xml is not None:  # the report's full records: failures show their answers
        from golden_gate.rendering.junit import write_junit

        full = report.full()  # read once more only if the slim view left the runs out
        failures.attempt(lambda: write_junit(args.junit_xml, full, gate, baseline=baseline))
    if args.html_report is not None:
        _write_page(args.html_report, report.full(), gate, baseline, failures)
    failures.raise_if_any()  # after the verdict is printed: it is not lost with the files
    if reason:
        fail(f"no gate result: {reason}")
        return EXIT_INCOMPLETE
    return EXIT_PASSED if gate.passed else EXIT_FAILED


def _write_page(path: Path, report: Any, gate: Any, baseline: Any, failures: Any) -> None:
    """The report page (`html-report`), with the baseline's answers when there is one."""
    from golden_gate.core.slim import SlimReport
    from golden_gate.rendering.page import write_page

    full_base = baseline.full() if isinstance(baseline, SlimReport) else baseline
    failures.attempt(lambda: write_page(path, report, gate, baseline=full_base))


def _history(args: argparse.Namespace, confidence: float) -> list[Any] | None:
    """With --trend, the baseline file's committed versions for the trend chart (none
    outside git)."""
    if not args.trend or args.baseline is None:
        return None
    from golden_gate.history import git_trend

    return git_trend(args.baseline, confidence=confidence)


def cmd_report(args: argparse.Namespace) -> int:
    from golden_gate.core.gate import evaluate_gate

    settings = gate_settings(args.resolved)
    report, baseline = _load_pair(args.report, args.baseline)
    gate = evaluate_gate(report, baseline, settings)
    if args.format == "json":
        print(gate.model_dump_json(indent=2))
    else:
        from golden_gate.rendering.render import render_comment

        if args.comment_template is not None and not args.comment_template.is_file():
            raise InputError(f"{args.comment_template}: template not found")
        print(
            render_comment(
                report,
                gate,
                baseline=baseline,
                comment_id=args.comment_id,
                user_template=args.comment_template,
                history=_history(args, settings.confidence),
            ),
            end="",
        )
    return EXIT_PASSED


def cmd_pairwise(args: argparse.Namespace) -> int:
    import asyncio

    from golden_gate.core.golden import load_golden
    from golden_gate.core.pairwise import describe
    from golden_gate.core.report import load_report
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
    result = asyncio.run(compare(pairs, items, settings, VerdictCache(cache_dir(args.resolved))))
    write_result(args.output, result.model_dump_json(indent=1) + "\n", what="pairwise outcomes")
    print(f"golden-gate: {describe(result)}; outcomes: {args.output}")
    return EXIT_INCOMPLETE if result.errors else EXIT_PASSED


def cmd_review(args: argparse.Namespace) -> int:
    import json

    from golden_gate.core.report import load_report
    from golden_gate.core.review import counts, review_lines
    from golden_gate.files import write_result

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


def cmd_subset(args: argparse.Namespace) -> int:
    from golden_gate.core import golden

    tags = args.subset_tags
    if not tags:
        raise InputError("subset: give --subset-tags (or set subset-tags in golden-gate.toml)")
    items = golden.select(golden.load_golden(args.golden), tags)
    if not items:
        raise InputError(f"{args.golden}: no items carry any of the tags {', '.join(tags)}")
    golden.write_golden(items, args.output)
    print(f"golden-gate: wrote {len(items)} items to {args.output} ({golden.fingerprint(items)})")
    return EXIT_PASSED


def cmd_eval(args: argparse.Namespace) -> int:
    from golden_gate.core.report import save_report
    from golden_gate.files import WriteFailures
    from golden_gate.pipeline import evaluate_report

    settings = settings_from_args(args.resolved, quiet=args.quiet)
    report = evaluate_report(settings, gating=False)  # a report, no verdict: warned only
    failures = WriteFailures()
    failures.attempt(lambda: save_report(report, settings.report_path))
    if args.junit_xml is not None:
        from golden_gate.core.gate import evaluate_gate
        from golden_gate.rendering.junit import write_junit

        gate = evaluate_gate(report, None, settings.gate)
        failures.attempt(lambda: write_junit(args.junit_xml, report, gate, golden=args.golden))
    if args.html_report is not None:
        from golden_gate.core.gate import evaluate_gate

        _write_page(
            args.html_report, report, evaluate_gate(report, None, settings.gate), None, failures
        )
    counted = report.counted
    passed = sum(r.passed for r in counted)
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
    failures.raise_if_any()  # after the verdict is printed: it is not lost with the file
    if not report.complete:
        fail(f"the evaluation could not be completed: {report.incomplete_reason}")
        return EXIT_INCOMPLETE
    return EXIT_PASSED


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
    incomplete = outcome.incomplete_reason if outcome.verdict == "incomplete" else None
    _print_gate(
        outcome.gate,
        str(settings.report_path),
        outcome.report,
        fmt=args.format,
        comment=lambda: outcome.comment,
        incomplete=incomplete,
    )
    failures.raise_if_any()  # after the verdict is printed: it is not lost with the files
    if outcome.verdict == "incomplete":
        fail(f"the evaluation could not be completed: {outcome.incomplete_reason}")
    return outcome.exit_code


def cmd_merge(args: argparse.Namespace) -> int:
    from golden_gate.core import slim
    from golden_gate.core.gate import evaluate_gate
    from golden_gate.core.merge import merge_reports
    from golden_gate.core.report import load_report, save_report
    from golden_gate.files import WriteFailures, write_result
    from golden_gate.rendering.render import render_comment

    settings = gate_settings(args.resolved)
    merged = merge_reports([(str(path), load_report(path)) for path in args.reports])
    failures = WriteFailures()
    failures.attempt(lambda: save_report(merged, args.output))
    baseline = slim.load(args.baseline) if args.baseline else None
    gate = evaluate_gate(merged, baseline, settings)
    if args.comment_file is not None:
        comment = render_comment(merged, gate, baseline=baseline, comment_id=args.comment_id)
        failures.attempt(lambda: write_result(args.comment_file, comment, what="comment"))
    if args.junit_xml is not None:
        from golden_gate.rendering.junit import write_junit

        failures.attempt(lambda: write_junit(args.junit_xml, merged, gate, baseline=baseline))
    if args.html_report is not None:
        _write_page(args.html_report, merged, gate, baseline, failures)
    print(f"golden-gate: merged {len(args.reports)} shards, {len(merged.results)} items")
    incomplete = merged.incomplete_reason if not merged.complete else gate.inconclusive
    _print_gate(
        gate,
        str(args.output),
        merged,
        fmt=args.format,
        comment=lambda: render_comment(merged, gate, baseline=baseline, comment_id=args.comment_id),
        incomplete=incomplete,
    )
    failures.raise_if_any()
    if not merged.complete:
        fail(f"the evaluation could not be completed: {merged.incomplete_reason}")
        return EXIT_INCOMPLETE
    if gate.inconclusive:  # as `gate` says of the same report
        fail(f"no gate result: {gate.inconclusive}")
        return EXIT_INCOMPLETE
    return EXIT_PASSED if gate.passed else EXIT_FAILED


def cmd_calibrate(args: argparse.Namespace) -> int:
    from golden_gate.core.calibration import calibration_exit_code
    from golden_gate.evaluation.calibrate import run_calibration
    from golden_gate.rendering.calibration import calibration_line
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
    print(f"golden-gate: {calibration_line(report)}")
    for item in report.disagreements:
        print(f"  disagree: {item.id}: human {item.human}, judge {item.judge}")
    print(f"  report: {args.calibration_path}")
    return calibration_exit_code(report)


def cmd_plan(args: argparse.Namespace) -> int:
    from golden_gate.core.plan import plan_text

    settings = gate_settings(args.resolved)
    golden = args.golden if args.resolved.given("golden") else None
    if golden is not None and args.items is not None:
        raise InputError("plan: give a golden set or --items N, not both")
    if golden is None and args.items is None:
        # No argument: the golden set the config names (or the default path), if it is there.
        golden = Path(args.golden)
        if not golden.is_file():
            raise InputError(
                f"plan: no golden set at {golden} (the default); give a golden set's path, or "
                "--items N to plan for N items"
            )
    text, out_of_reach = plan_text(
        golden=golden,
        tags=args.subset_tags,
        items=args.items,
        runs=args.runs,
        baseline=args.baseline,
        settings=settings,
    )
    print(text, end="")
    if out_of_reach is not None:  # the same configuration error `eval` and `run` stop on
        raise InputError(f"floor: {out_of_reach}")
    return EXIT_PASSED


def cmd_init(args: argparse.Namespace) -> int:
    from golden_gate import starter

    if args.example:
        if args.convert is not None:
            raise InputError("init: --example writes its own golden set; leave out --convert")
        done = starter.example(args.dir, force=args.force)
        steps = starter.example_steps()
    else:
        done = starter.init(
            args.dir,
            source=args.convert,
            action=args.action,
            golden=args.golden,
            baseline=args.baseline,
            judge_model=args.judge_model,
            compose_file=args.compose_file,
            force=args.force,
        )
        steps = starter.next_steps(
            golden=args.golden, baseline=args.baseline, compose_file=done.compose_file
        )
    for path in done.written:
        print(f"golden-gate: wrote {path}")
    for name in done.kept:
        print(f"golden-gate: kept {args.dir / name} as it is (a golden set is never replaced)")
    if done.compose_file and args.compose_file is None and not args.example:
        print(
            f"golden-gate: the gate starts the assistant with {done.compose_file} (found in the "
            "repository); pass --compose-file to choose another"
        )
    for warning in done.warnings:
        warn(warning)
    print("Next:")
    for number, step in enumerate(steps, start=1):
        print(f"  {number}. {step}")
    return EXIT_PASSED


def cmd_example_assistant(args: argparse.Namespace) -> int:
    from golden_gate.example_assistant import control

    try:
        if args.action == "serve":
            return control.serve(args.dir)
        if args.action == "start":
            url = control.start(args.dir)
            print(f"golden-gate: the example assistant answers at {url}")
            print("  stop it with: golden-gate example-assistant stop")
        elif control.stop(args.dir):
            print("golden-gate: stopped the example assistant")
        else:
            print("golden-gate: no example assistant was running from here")
    except control.ControlError as exc:
        raise InputError(str(exc)) from None
    return EXIT_PASSED


def cmd_demo(args: argparse.Namespace) -> int:
    from golden_gate.demo import run_demo

    return run_demo(out=args.out, variant=args.variant, junit_path=args.junit_xml)


def cmd_config(args: argparse.Namespace) -> int:
    """The effective settings as TOML-ish lines, grouped as in the file; `--schema` the file's
    JSON Schema."""
    from golden_gate.options import schema_text

    if args.schema:
        print(schema_text(), end="")
        return EXIT_PASSED
    resolved = args.resolved
    source = resolved.config_path or "none found (defaults and flags only)"
    print(f"# config file: {source}")
    shown = [o for o in OPTIONS if o.name in resolved.values and o.name != "config"]
    group = ""
    # Top-level keys first: in TOML a key after a table header belongs to that table.
    for option in sorted(shown, key=lambda o: bool(o.group)):
        if option.group != group:
            group = option.group
            print(f"\n[{group}]")
        value = resolved[option.name]
        line = (
            f"# {option.key} is unset"
            if value is None
            else f"{option.key} = {_toml(value, BY_NAME[option.name].kind)}"
        )
        if args.show_origin:
            line = f"{line:<56} # {resolved.origin(option.name)}"
        print(line)
    return EXIT_PASSED


def _toml(value: Any, kind: str) -> str:
    import json

    from golden_gate import redaction

    if kind == "headers":  # by name only: a value may be a secret
        return (
            "{"
            + ", ".join(
                f"{json.dumps(k)} = {json.dumps(redaction.scrub(v))}" for k, v in value.items()
            )
            + "}"
        )
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(json.dumps(str(v)) for v in value) + "]"
    return json.dumps(str(value))
