"""`golden-gate`: the same engine as the Action, one subcommand per stage."""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from golden_gate import __version__, redaction
from golden_gate.errors import EXIT_FAILED, EXIT_INCOMPLETE, EXIT_PASSED, GateError, InputError
from golden_gate.limits import DEFAULT_CONCURRENCY

if TYPE_CHECKING:  # the commands import what they need when they run
    from golden_gate.gate import GateResult, GateSettings
    from golden_gate.judge import JudgeSettings
    from golden_gate.settings import Settings
    from golden_gate.slim import SlimReport

M = TypeVar("M", bound=BaseModel)
Handler = Callable[[argparse.Namespace], int]
EXIT_BROKEN_PIPE = 141  # as a shell reports a command ended by SIGPIPE


class _HelpFormatter(argparse.HelpFormatter):
    """Every flag's help ends with its default, when it has one worth saying."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        unsaid = default is None or default is False or default == "" or default == []
        if "%(default)" in text or unsaid or default is argparse.SUPPRESS:
            return text
        if not action.option_strings and action.nargs not in ("?", "*"):
            return text
        return f"{text} (default: %(default)s)"


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)


def _fail(message: str) -> None:
    print(f"golden-gate: error: {redaction.scrub(message)}", file=sys.stderr)


def _cache_dir(args: argparse.Namespace) -> Path | None:
    """The verdict cache directory, unless a pull request could have written its entries."""
    import os

    from golden_gate.cache_location import untrusted_reason

    if args.no_cache:
        return None
    env = os.environ
    reason = untrusted_reason(
        args.cache_dir,
        workspace=Path(env.get("GITHUB_WORKSPACE") or Path.cwd()),
        require_git=env.get("GITHUB_ACTIONS") == "true",
    )
    if reason:
        print(f"golden-gate: warning: not using {args.cache_dir}: {reason}", file=sys.stderr)
        return None
    return args.cache_dir


# Settings whose flag is not `--` and the field's name.
FLAGS = {
    "target.headers": "--header",
    "target.timeout_s": "--timeout",
    "judge.model": "--judge-model",
    "judge.prompt_file": "--judge-prompt",
    "judge.base_url": "--judge-base-url",
    "judge.temperature": "--judge-temperature",
    "judge.timeout_s": "--judge-timeout",
    "judge.concurrency": "--judge-concurrency",
    "judge.max_retries": "--judge-retries",
    "judge.max_tokens": "--judge-max-tokens",
    "evaluation.judge_concurrency": "--judge-concurrency",
    "compose.file": "--compose-file",
    "compose.project": "--compose-project",
    "compose.service": "--compose-service",
    "compose.wait_timeout_s": "--wait-timeout",
    "evaluators.rule": "--evaluator-rule",
    "evaluators.panel": "--judge-panel",
}


def _validation_sentence(exc: ValidationError) -> str:
    from golden_gate.settings import first_problem

    path, message = first_problem(exc)
    flag = FLAGS.get(path, "--" + path.rpartition(".")[2].replace("_", "-"))
    return f"{flag}: {message}"


# --- argument groups shared by the commands that evaluate ---------------------------------


def _add_gate_args(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("gate")
    group.add_argument(
        "--floor",
        type=float,
        default=0.80,
        help="minimum Wilson lower bound; 0 switches the floor off",
    )
    group.add_argument(
        "--alpha",
        type=float,
        default=0.05,
        help="paired test significance level; 0 switches the test off",
    )
    group.add_argument(
        "--min-drop", type=float, default=0.02, help="minimum mean drop in per-item score to fail"
    )
    group.add_argument("--confidence", type=float, default=0.95, help="Wilson interval level")
    group.add_argument(
        "--require-comparable",
        action="store_true",
        help="fail when the baseline used another golden set, judge or prompt",
    )


def _validated(kind: type[M], /, **fields: Any) -> M:
    """A settings model from flags; a bad flag is one sentence naming it (exit 2)."""
    try:
        return kind(**fields)
    except ValidationError as exc:
        raise InputError(_validation_sentence(exc)) from None


def _gate_settings(args: argparse.Namespace) -> GateSettings:
    from golden_gate.gate import GateSettings

    return _validated(
        GateSettings,
        floor=args.floor,
        alpha=args.alpha,
        min_drop=args.min_drop,
        confidence=args.confidence,
        require_comparable=args.require_comparable,
    )


def _add_trend_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--trend",
        action="store_true",
        help="chart the baseline's pass rate over its git history (the file's last 8 commits)",
    )


def _add_junit_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--junit-xml",
        type=Path,
        default=None,
        help="also write the results as JUnit XML here (one test case per item)",
    )


def _add_eval_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("golden", type=Path, help="golden set (JSONL)")
    target = parser.add_argument_group("assistant")
    target.add_argument("--url", default="", help="base URL of the assistant")
    target.add_argument("--path", default="/ask", help="request path")
    target.add_argument(
        "--request-template",
        default='{"text": "{question}"}',
        help="JSON request body with {question} (and {id}) slots",
    )
    target.add_argument("--answer-path", default="answer", help="dotted path to the answer")
    target.add_argument("--sources-path", default=None, help="dotted path to returned sources")
    target.add_argument(
        "--context-path", default=None, help="dotted path to the retrieved passages"
    )
    target.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="request header; VALUE may be $ENV_VAR (repeatable)",
    )
    target.add_argument(
        "--concurrency", type=int, default=DEFAULT_CONCURRENCY, help="requests in flight"
    )
    target.add_argument("--timeout", type=float, default=60.0, help="per-request timeout (s)")
    target.add_argument("--retries", type=int, default=3, help="retries on transport faults")
    compose = parser.add_argument_group("compose (start the assistant first, always tear down)")
    compose.add_argument("--compose-file", type=Path, default=None, help="compose file")
    compose.add_argument("--compose-service", default="assistant", help="the assistant service")
    compose.add_argument("--compose-project", default="golden-gate-local", help="project name")
    compose.add_argument("--wait-timeout", type=float, default=300.0, help="seconds to be healthy")
    compose.add_argument("--health-path", default="/health", help="polled until it answers")
    compose.add_argument("--index-snapshot", default=None, help="passed as INDEX_SNAPSHOT")
    ev = parser.add_argument_group("evaluation")
    ev.add_argument("--tags", default="", help="comma-separated tags selecting the subset")
    ev.add_argument("--shard", default=None, metavar="I/N", help="evaluate shard I of N only")
    ev.add_argument("--runs", type=int, default=1, help="runs per item (every run counts)")
    ev.add_argument(
        "--rerun-failures",
        type=int,
        default=0,
        help="diagnostic re-runs of a failed item: shown, never counted",
    )
    ev.add_argument("--max-error-rate", type=float, default=0.10, help="above: incomplete")
    ev.add_argument("--max-judge-calls", type=int, default=None, help="judge budget cap")
    ev.add_argument(
        "--judge-prices",
        default=None,
        metavar="INPUT,OUTPUT",
        help="USD per million judge input and output tokens, for the cost line",
    )
    ev.add_argument("-o", "--report", type=Path, default=Path("report.json"), help="report path")
    ev.add_argument("--quiet", action="store_true", help="no progress on stderr")
    _add_judge_args(parser)
    judge = parser.add_argument_group("evaluators")
    judge.add_argument(
        "--evaluators",
        default="correctness",
        help="comma-separated presets (correctness, relevancy, groundedness, conciseness, "
        "hallucination) or prompt files, each with an optional :threshold",
    )
    judge.add_argument(
        "--evaluator-rule", default="all", help="a run passes when all|any|majority pass"
    )
    judge.add_argument(
        "--judge-panel", default="majority", help="several judge models combine by majority|all"
    )
    parser.add_argument(
        "--deterministic-only", action="store_true", help="checks only, no judge (fork PRs)"
    )
    parser.add_argument("--forbidden", action="append", default=[], help="forbidden regex")


def _add_judge_args(parser: argparse.ArgumentParser) -> None:
    judge = parser.add_argument_group("judge")
    judge.add_argument(
        "--judge-model",
        default="keypoints",
        help="provider:model with provider openai, azure_openai, anthropic or google_genai "
        "(e.g. openai:gpt-4.1-mini), or 'keypoints' (offline)",
    )
    judge.add_argument("--judge-prompt", type=Path, default=None, help="judge prompt file")
    judge.add_argument(
        "--judge-base-url",
        default=None,
        help="the provider's API base URL (an OpenAI-compatible server, the Azure endpoint)",
    )
    judge.add_argument(
        "--judge-temperature", type=float, default=0.0, help="sampling temperature of the judge"
    )
    judge.add_argument(
        "--judge-timeout", type=float, default=60.0, help="per call (s), time queued included"
    )
    judge.add_argument("--judge-retries", type=int, default=6, help="the SDK's retries")
    judge.add_argument(
        "--judge-max-tokens", type=int, default=1024, help="generation cap of one verdict"
    )
    judge.add_argument(
        "--judge-concurrency",
        type=int,
        default=None,
        help="judge calls in flight (default: --concurrency, else 8); at most the server's "
        "parallel slots",
    )
    judge.add_argument(
        "--cache-dir",
        type=Path,
        default=Path(".judge-cache"),
        help="where verdicts are kept, keyed by judge, prompt, question and answer",
    )
    judge.add_argument("--no-cache", action="store_true", help="do not read or write verdicts")


def _judge_settings(args: argparse.Namespace) -> JudgeSettings:
    from golden_gate.judge import JudgeSettings

    return _validated(
        JudgeSettings,
        model=args.judge_model,
        prompt_file=args.judge_prompt,
        base_url=args.judge_base_url,
        temperature=args.judge_temperature,
        timeout_s=args.judge_timeout,
        max_retries=args.judge_retries,
        max_tokens=args.judge_max_tokens,
        concurrency=judge_concurrency(args),
    )


def judge_concurrency(args: argparse.Namespace) -> int:
    """--judge-concurrency, else the run's --concurrency (commands without one: 8)."""
    if args.judge_concurrency is not None:
        return int(args.judge_concurrency)
    return int(getattr(args, "concurrency", DEFAULT_CONCURRENCY))


def _evaluator_settings(args: argparse.Namespace) -> Any:
    from golden_gate.evaluators import EvaluatorSettings, parse_evaluators

    return _validated(
        EvaluatorSettings,
        evaluators=parse_evaluators(args.evaluators, flag="--evaluators"),
        rule=args.evaluator_rule,
        panel=args.judge_panel,
    )


def _headers(pairs: Sequence[str]) -> dict[str, str]:
    import os

    headers = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise InputError(f"--header: expected NAME=VALUE, got '{name}'")
        if value.startswith("$"):
            env = value[1:]
            if env not in os.environ:
                raise InputError(f"--header {name}: environment variable {env} is not set")
            value = os.environ[env]
        headers[name.strip()] = value
    return headers


def _register_secrets(headers: dict[str, str], *urls: str | None) -> bool:
    """What the Action masks, the CLI scrubs too: judge keys, header values, URL passwords.

    False when a secret is too short to scrub (said once the settings are known to be valid).
    """
    import os

    from golden_gate.action import SECRET_ENV

    values = [os.environ.get(key, "") for key in SECRET_ENV] + list(headers.values())
    for url in urls:
        values += redaction.url_credentials(url)
    return all([redaction.register(value) for value in values])


def settings_from_args(args: argparse.Namespace, **extra: Any) -> Settings:
    from golden_gate.checks import CheckSettings
    from golden_gate.compose import ComposeSettings
    from golden_gate.evaluate import EvalSettings, parse_prices
    from golden_gate.golden import Shard
    from golden_gate.settings import Settings
    from golden_gate.target import TargetSettings

    if not args.url and args.compose_file is None:
        raise InputError(
            "no assistant: give --url (where it runs) or --compose-file (to start it first)"
        )
    headers = _headers(args.header)
    prices = None
    if args.judge_prices is not None:
        prices = parse_prices(args.judge_prices, name="--judge-prices")
    scrubbable = _register_secrets(headers, args.url, args.judge_base_url)
    try:
        settings = Settings(
            golden=args.golden,
            tags=[t.strip() for t in args.tags.split(",") if t.strip()],
            shard=Shard.parse(args.shard, name="--shard") if args.shard else None,
            target=TargetSettings(
                url=args.url,
                path=args.path,
                request_template=args.request_template,
                answer_path=args.answer_path,
                sources_path=args.sources_path,
                context_path=args.context_path,
                headers=headers,
                concurrency=args.concurrency,
                timeout_s=args.timeout,
                retries=args.retries,
            ),
            judge=_judge_settings(args),
            evaluators=_evaluator_settings(args),
            compose=None
            if args.compose_file is None
            else ComposeSettings(
                file=args.compose_file,
                project=args.compose_project,
                service=args.compose_service,
                wait_timeout_s=args.wait_timeout,
                health_path=args.health_path,
                index_snapshot=args.index_snapshot,
            ),
            index_snapshot=args.index_snapshot,
            checks=CheckSettings(forbidden_patterns=args.forbidden),
            evaluation=EvalSettings(
                runs=args.runs,
                rerun_failures=args.rerun_failures,
                max_error_rate=args.max_error_rate,
                max_judge_calls=args.max_judge_calls,
                judge_concurrency=judge_concurrency(args),
                judge_prices=prices,
            ),
            cache_dir=_cache_dir(args),
            report_path=args.report,
            deterministic_only=args.deterministic_only,
            progress=not args.quiet,
            **extra,
        )
    except ValidationError as exc:
        raise InputError(_validation_sentence(exc)) from None
    if not scrubbable:
        print(
            f"golden-gate: warning: a secret shorter than {redaction.MIN_LENGTH} characters "
            "cannot be scrubbed from the report and the comment",
            file=sys.stderr,
        )
    return settings


# --- commands ------------------------------------------------------------------------------


def _print_gate(gate: GateResult, report_path: str | None = None) -> None:
    print(f"golden-gate: {gate.headline}")
    if gate.n:
        print(
            f"  pass rate {gate.pass_rate_text} ({gate.pass_rate:.1%}), "
            f"Wilson lower bound {gate.lower_bound:.4f} (floor {gate.settings.floor:.2f})"
        )
    comparison = gate.comparison
    if comparison is not None:
        print(
            f"  vs baseline: {comparison.b} regressed, {comparison.c} improved on "
            f"{comparison.shared} shared items, p = {comparison.p_value:.4g} "
            f"({comparison.method}), net drop {comparison.net_drop:.1%}"
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


def _load_pair(
    report: Path, baseline: Path | None, *, builtin_templates: bool = False
) -> tuple[SlimReport, SlimReport | None]:
    """The report and the baseline as slim views: a large one is read without its runs."""
    import gc

    from golden_gate import slim

    def prepare() -> None:  # while the other core reads the report (slim.load_pair)
        from golden_gate import stats

        stats.prepare()
        if builtin_templates:
            from golden_gate import render

            render.prepare()

    # What was read lives until the command ends: the cyclic collector need not walk it, not
    # even once when it is switched on again (frozen first).
    enabled = gc.isenabled()
    gc.disable()
    try:
        views = slim.load_pair(report, baseline, meanwhile=prepare)
        gc.freeze()
    finally:
        if enabled:
            gc.enable()
    return views


@contextlib.contextmanager
def _kept_till_the_end() -> Iterator[None]:
    """The cyclic collector off while a command makes what it keeps; all of it frozen before
    the collector runs again, so it is never walked (a collection of it finds nothing)."""
    import gc

    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def cmd_gate(args: argparse.Namespace) -> int:
    from golden_gate.files import WriteFailures, write_result
    from golden_gate.gate import evaluate_gate

    settings = _gate_settings(args)
    # What the gate reads and renders is kept till the command ends: the cyclic collector
    # would only walk it again and again (the JUnit report's full parse, below, is as ever).
    with _kept_till_the_end():
        rendering = args.comment_out is not None or args.summary_out is not None
        report, baseline = _load_pair(args.report, args.baseline, builtin_templates=rendering)
        gate = evaluate_gate(report, baseline, settings)
        _print_gate(gate)
        failures = WriteFailures()
        if args.comment_out is not None or args.summary_out is not None:
            from golden_gate.render import render_comment, render_summary

            for path, render, what in (
                (args.comment_out, render_comment, "comment"),
                (args.summary_out, render_summary, "summary"),
            ):
                if path is not None:
                    text = render(
                        report,
                        gate,
                        baseline=baseline,
                        comment_id=args.comment_id,
                        history=_history(args, settings.confidence),
                    )
                    failures.attempt(lambda p=path, t=text, w=what: write_result(p, t, what=w))
    if args.junit_xml is not None:  # the report's full records: failures show their answers
        from golden_gate.junit import write_junit
        from golden_gate.report import load_report

        full = load_report(args.report)  # the baseline's slim view says all JUnit needs of it
        failures.attempt(lambda: write_junit(args.junit_xml, full, gate, baseline=baseline))
    failures.raise_if_any()  # after the verdict is printed: it is not lost with the files
    header = report.header
    reason = header.incomplete_reason if not header.complete else gate.inconclusive
    if reason:
        _fail(f"no gate result: {reason}")
        return EXIT_INCOMPLETE
    return EXIT_PASSED if gate.passed else EXIT_FAILED


def _history(args: argparse.Namespace, confidence: float) -> list[Any] | None:
    """With --trend, the baseline file's committed versions for the trend chart (none
    outside git)."""
    if not args.trend or args.baseline is None:
        return None
    from golden_gate.history import git_trend

    return git_trend(args.baseline, confidence=confidence)


def cmd_report(args: argparse.Namespace) -> int:
    from golden_gate.gate import evaluate_gate

    settings = _gate_settings(args)
    builtin = args.format != "json" and args.template is None
    report, baseline = _load_pair(args.report, args.baseline, builtin_templates=builtin)
    gate = evaluate_gate(report, baseline, settings)
    if args.format == "json":
        print(gate.model_dump_json(indent=2))
    else:
        from golden_gate.render import render_comment

        if args.template is not None and not args.template.is_file():
            raise InputError(f"{args.template}: template not found")
        print(
            render_comment(
                report,
                gate,
                baseline=baseline,
                comment_id=args.comment_id,
                user_template=args.template,
                history=_history(args, settings.confidence),
            ),
            end="",
        )
    return EXIT_PASSED


def cmd_subset(args: argparse.Namespace) -> int:
    from golden_gate import golden

    tags = [t.strip() for t in args.tags.split(",") if t.strip()]
    items = golden.select(golden.load_golden(args.golden), tags)
    if not items:
        raise InputError(f"{args.golden}: no items carry any of the tags {', '.join(tags)}")
    golden.write_golden(items, args.output)
    print(f"golden-gate: wrote {len(items)} items to {args.output} ({golden.fingerprint(items)})")
    return EXIT_PASSED


def cmd_eval(args: argparse.Namespace) -> int:
    from golden_gate.files import WriteFailures
    from golden_gate.pipeline import evaluate_report
    from golden_gate.report import save_report

    settings = settings_from_args(args)
    report = evaluate_report(settings)
    failures = WriteFailures()
    failures.attempt(lambda: save_report(report, args.report))
    if args.junit_xml is not None:
        from golden_gate.gate import evaluate_gate
        from golden_gate.junit import write_junit

        gate = evaluate_gate(report, None, settings.gate)
        failures.attempt(lambda: write_junit(args.junit_xml, report, gate, golden=args.golden))
    counted = report.counted
    passed = sum(r.passed for r in counted)
    if counted or not report.results:
        print(f"golden-gate: {passed}/{len(counted)} items passed; report: {args.report}")
    else:
        print(
            f"golden-gate: no item could be counted: every run of all {len(report.results)} "
            f"items ended in an error (first: {report.results[0].why}); report: {args.report}"
        )
    failures.raise_if_any()  # after the verdict is printed: it is not lost with the file
    if not report.complete:
        _fail(f"the evaluation could not be completed: {report.incomplete_reason}")
        return EXIT_INCOMPLETE
    return EXIT_PASSED


def cmd_run(args: argparse.Namespace) -> int:
    from golden_gate.files import WriteFailures
    from golden_gate.pipeline import run

    settings = settings_from_args(
        args,
        gate=_gate_settings(args),
        baseline=args.baseline,
        baseline_label=str(args.baseline) if args.baseline else None,
        comment_path=args.comment_out,
        summary_path=args.summary_out,
        junit_path=args.junit_xml,
        comment_id=args.comment_id,
        comment_template=args.template,
        calibration=args.calibration,
    )
    failures = WriteFailures()
    history = _history(args, settings.gate.confidence)
    outcome = run(settings, failures, history=history)
    _print_gate(outcome.gate, str(settings.report_path))
    failures.raise_if_any()  # after the verdict is printed: it is not lost with the files
    if outcome.verdict == "incomplete":
        _fail(f"the evaluation could not be completed: {outcome.incomplete_reason}")
    return outcome.exit_code


def cmd_merge(args: argparse.Namespace) -> int:
    from golden_gate import slim
    from golden_gate.files import WriteFailures, write_result
    from golden_gate.gate import evaluate_gate
    from golden_gate.merge import merge_reports
    from golden_gate.render import render_comment
    from golden_gate.report import load_report, save_report

    settings = _gate_settings(args)
    merged = merge_reports([(str(path), load_report(path)) for path in args.reports])
    failures = WriteFailures()
    failures.attempt(lambda: save_report(merged, args.output))
    baseline = slim.load(args.baseline, rows=False) if args.baseline else None
    gate = evaluate_gate(merged, baseline, settings)
    if args.comment_out is not None:
        comment = render_comment(merged, gate, baseline=baseline, comment_id=args.comment_id)
        failures.attempt(lambda: write_result(args.comment_out, comment, what="comment"))
    if args.junit_xml is not None:
        from golden_gate.junit import write_junit

        failures.attempt(lambda: write_junit(args.junit_xml, merged, gate, baseline=baseline))
    print(f"golden-gate: merged {len(args.reports)} shards, {len(merged.results)} items")
    _print_gate(gate, str(args.output))
    failures.raise_if_any()
    if not merged.complete:
        _fail(f"the evaluation could not be completed: {merged.incomplete_reason}")
        return EXIT_INCOMPLETE
    return EXIT_PASSED if gate.passed else EXIT_FAILED


def cmd_calibrate(args: argparse.Namespace) -> int:
    from golden_gate.calibrate import calibration_exit_code, calibration_line, run_calibration

    report = run_calibration(
        args.labels,
        args.golden,
        _judge_settings(args),
        cache_dir=_cache_dir(args),
        min_kappa=args.min_kappa,
        output=args.output,
    )
    print(f"golden-gate: {calibration_line(report)}")
    for item in report.disagreements:
        print(f"  disagree: {item.id}: human {item.human}, judge {item.judge}")
    print(f"  report: {args.output}")
    return calibration_exit_code(report)


def cmd_plan(args: argparse.Namespace) -> int:
    from golden_gate.plan import plan_text

    settings = _gate_settings(args)
    if (args.golden is None) == (args.items is None):
        raise InputError("plan: give a golden set or --items N, not both")
    tags = [t.strip() for t in args.tags.split(",") if t.strip()]
    text, reachable = plan_text(
        golden=args.golden,
        tags=tags,
        items=args.items,
        runs=args.runs,
        baseline=args.baseline,
        settings=settings,
    )
    print(text, end="")
    return EXIT_PASSED if reachable else EXIT_FAILED


def cmd_init(args: argparse.Namespace) -> int:
    from golden_gate.starter import init, next_steps

    written = init(
        args.dir,
        source=args.convert,
        action=args.action,
        golden=args.golden,
        baseline=args.baseline,
        judge_model=args.judge_model,
        compose_file=args.compose_file,
        force=args.force,
    )
    for path in written:
        print(f"golden-gate: wrote {path}")
    print("Next:")
    steps = next_steps(golden=args.golden, baseline=args.baseline, compose_file=args.compose_file)
    for number, step in enumerate(steps, start=1):
        print(f"  {number}. {step}")
    return EXIT_PASSED


def cmd_demo(args: argparse.Namespace) -> int:
    from golden_gate.demo import run_demo

    return run_demo(out=args.out, variant=args.variant, junit_path=args.junit_xml)


# --- parser --------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="golden-gate",
        description="A statistical quality gate for LLM-backed services.",
        epilog="Exit codes: 0 passed, 1 gate failed, 2 bad input, 3 evaluation incomplete.",
    )
    parser.add_argument("--version", action="version", version=f"golden-gate {__version__}")
    sub = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=_Parser
    )

    p = sub.add_parser(
        "gate",
        help="gate a report against a baseline",
        description=(
            "Apply the floor on the Wilson lower bound and, with a baseline, the paired sign test; "
            "print the numbers and every regressed item."
        ),
    )
    p.add_argument("report", type=Path, help="candidate report.json")
    p.add_argument("baseline", type=Path, nargs="?", help="baseline report (optional)")
    _add_trend_arg(p)
    p.add_argument("--comment-out", type=Path, default=None, help="write the PR comment here")
    p.add_argument("--summary-out", type=Path, default=None, help="write the job summary here")
    p.add_argument("--comment-id", default="default", help="id in the sticky marker")
    _add_junit_arg(p)
    _add_gate_args(p)
    p.set_defaults(handler=cmd_gate)

    p = sub.add_parser(
        "report",
        help="render a report as the PR comment or as JSON",
        description="Render the gate's comment (Markdown) or its result (JSON).",
    )
    p.add_argument("report", type=Path, help="report.json")
    p.add_argument("--baseline", type=Path, default=None, help="baseline report")
    p.add_argument(
        "--format", choices=["md", "json"], default="md", help="the comment, or the gate's result"
    )
    _add_trend_arg(p)
    p.add_argument("--comment-id", default="default", help="id in the sticky marker")
    p.add_argument("--template", type=Path, default=None, help="your own Jinja template")
    _add_gate_args(p)
    p.set_defaults(handler=cmd_report)

    p = sub.add_parser(
        "subset",
        help="write the items carrying any of the given tags",
        description="Select items by tag (file order kept) into a new JSONL file.",
    )
    p.add_argument("golden", type=Path, help="golden set (JSONL)")
    p.add_argument("--tags", required=True, help="comma-separated tags")
    p.add_argument("-o", "--output", type=Path, required=True, help="output JSONL")
    p.set_defaults(handler=cmd_subset)

    p = sub.add_parser(
        "eval",
        help="evaluate a golden set against a running assistant",
        description="Ask, check, judge (with the verdict cache) and write a report.",
    )
    _add_eval_args(p)
    _add_junit_arg(p)
    p.set_defaults(handler=cmd_eval)

    p = sub.add_parser(
        "run",
        help="eval, then gate against a baseline and render the comment",
        description="The whole gate, as the Action runs it, on your machine.",
    )
    _add_eval_args(p)
    _add_gate_args(p)
    p.add_argument("--baseline", type=Path, default=None, help="baseline report")
    p.add_argument("--comment-out", type=Path, default=Path("comment.md"), help="comment file")
    p.add_argument("--summary-out", type=Path, default=None, help="summary file")
    p.add_argument("--comment-id", default="default", help="id in the sticky marker")
    p.add_argument("--template", type=Path, default=None, help="your own Jinja template")
    p.add_argument("--calibration", type=Path, default=None, help="calibration.json to show")
    _add_trend_arg(p)
    _add_junit_arg(p)
    p.set_defaults(handler=cmd_run)

    p = sub.add_parser(
        "calibrate",
        help="measure how well the judge agrees with human labels",
        description=(
            "Run the configured judge on human-labelled answers (id, answer, label pass/fail) "
            "and report agreement, Cohen's kappa (κ) with a 95% confidence interval, the "
            "confusion matrix and the disagreeing items; exit 1 below --min-kappa."
        ),
    )
    p.add_argument("golden", type=Path, help="golden set (JSONL): questions and key points")
    p.add_argument("--labels", type=Path, required=True, help="human labels (JSONL)")
    p.add_argument("--min-kappa", type=float, default=0.6, help="fail below this kappa")
    p.add_argument(
        "-o", "--output", type=Path, default=Path("calibration.json"), help="calibration report"
    )
    _add_judge_args(p)
    p.set_defaults(handler=cmd_calibrate)

    p = sub.add_parser(
        "merge",
        help="merge shard reports, then gate and render as one run would",
        description=(
            "Merge the reports of a sharded evaluation (refusing shards that disagree, are "
            "missing or duplicated, or share an item), then gate against a baseline."
        ),
    )
    p.add_argument("reports", type=Path, nargs="+", help="shard reports")
    p.add_argument("-o", "--output", type=Path, default=Path("report.json"), help="merged report")
    p.add_argument("--baseline", type=Path, default=None, help="baseline report")
    p.add_argument("--comment-out", type=Path, default=None, help="write the comment here")
    p.add_argument("--comment-id", default="default", help="id in the sticky marker")
    _add_junit_arg(p)
    _add_gate_args(p)
    p.set_defaults(handler=cmd_merge)

    p = sub.add_parser(
        "plan",
        help="before running: what the floor demands and what drop the gate could catch",
        description=(
            "For n items (a golden set and tags, or --items) and --runs, with the baseline's "
            "observed per-item variability: the fewest passes that clear the floor, the drop "
            "the paired test catches 80% of the time, and the items needed to catch a "
            "5-point drop. Exit 1 when the floor is out of reach at this n."
        ),
    )
    p.add_argument("golden", type=Path, nargs="?", default=None, help="golden set (JSONL)")
    p.add_argument("--tags", default="", help="comma-separated tags selecting the subset")
    p.add_argument("--items", type=int, default=None, help="plan for this many items instead")
    p.add_argument("--runs", type=int, default=1, help="runs per item")
    p.add_argument("--baseline", type=Path, default=None, help="baseline report (variability)")
    _add_gate_args(p)
    p.set_defaults(handler=cmd_plan)

    p = sub.add_parser(
        "init",
        help="start gating a repository: a starter golden set and the three workflows",
        description=(
            "In a git repository, write a starter golden set (commented examples, or converted "
            "from --convert FILE) and the pull-request gate, fork-comment and baseline "
            "workflows, with the Action pinned to a full commit SHA; then say what to do next. "
            "Existing files are left alone unless --force."
        ),
    )
    p.add_argument("--dir", type=Path, default=Path("."), help="the repository's root")
    p.add_argument(
        "--convert",
        type=Path,
        default=None,
        metavar="FILE",
        help="make the golden set from this CSV/TSV (header row) or JSONL of questions and "
        "expected answers (columns such as question/input, expected/answer, id, tags)",
    )
    p.add_argument(
        "--action",
        default=f"org/golden-gate-action@v{__version__}",
        metavar="OWNER/REPO@REF",
        help="the Action to pin: a full commit SHA, or a tag resolved to one with git ls-remote",
    )
    p.add_argument("--golden", default="evals/golden.jsonl", help="where the golden set goes")
    p.add_argument(
        "--baseline", default="evals/baseline.json", help="where the baseline report will live"
    )
    p.add_argument(
        "--judge-model", default="openai:gpt-4.1-mini", help="the judge the workflows use"
    )
    p.add_argument(
        "--compose-file",
        default=None,
        help="start the assistant with this compose file in the workflows (else ASSISTANT_URL)",
    )
    p.add_argument("--force", action="store_true", help="overwrite files that exist")
    p.set_defaults(handler=cmd_init)

    p = sub.add_parser(
        "demo",
        help="run the whole gate offline on the bundled example",
        description=(
            "Start the bundled example assistant on 127.0.0.1 in its candidate configuration, "
            "evaluate the bundled golden set with the offline judge, gate against the bundled "
            "baseline and print the comment."
        ),
    )
    p.add_argument("--out", type=Path, default=Path("demo-output"), help="folder for the files")
    p.add_argument(
        "--variant",
        choices=["candidate", "baseline"],
        default="candidate",
        help="the example assistant's configuration: a regressed prompt, or main's",
    )
    _add_junit_arg(p)
    p.set_defaults(handler=cmd_demo)
    return parser


def interrupt_on_sigterm() -> None:
    """Turn SIGTERM into KeyboardInterrupt, so `finally` blocks (compose down) still run."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)


def main(argv: Sequence[str] | None = None) -> int:
    interrupt_on_sigterm()
    args = build_parser().parse_args(argv)
    handler: Handler = args.handler
    try:
        code = handler(args)
        sys.stdout.flush()  # here, so a reader that left early is handled below, not at exit
        return code
    except BrokenPipeError:
        # `golden-gate report … | head`: the reader has what it wanted. Point stdout at
        # /dev/null so the interpreter's own flush at exit cannot fail again.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except GateError as exc:
        _fail(str(exc))
        return exc.exit_code
    except KeyboardInterrupt:
        _fail("interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
