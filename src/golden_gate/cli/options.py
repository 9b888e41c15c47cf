"""The command line's options: the parser's help, the flags each command shares, and the
typed settings they become (`Settings`, `GateSettings`, `JudgeSettings`), each bad value one
sentence naming its flag.

At about 400 lines, one module: each flag is defined beside the settings it becomes, so a
flag and its check cannot drift apart.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from golden_gate import redaction
from golden_gate.errors import InputError
from golden_gate.limits import DEFAULT_CONCURRENCY

if TYPE_CHECKING:
    from golden_gate.core.gate import GateSettings
    from golden_gate.evaluation.judge import JudgeSettings
    from golden_gate.settings import Settings


M = TypeVar("M", bound=BaseModel)


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


class Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)


def fail(message: str) -> None:
    print(f"golden-gate: error: {redaction.scrub(message)}", file=sys.stderr)


def cache_dir(args: argparse.Namespace) -> Path | None:
    """The verdict cache directory, unless a pull request could have written its entries."""
    import os

    from golden_gate.evaluation.cache_location import untrusted_reason

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


def add_gate_args(parser: argparse.ArgumentParser) -> None:
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


def validated(kind: type[M], /, **fields: Any) -> M:
    """A settings model from flags; a bad flag is one sentence naming it (exit 2)."""
    try:
        return kind(**fields)
    except ValidationError as exc:
        raise InputError(_validation_sentence(exc)) from None


def gate_settings(args: argparse.Namespace) -> GateSettings:
    from golden_gate.core.gate import GateSettings

    return validated(
        GateSettings,
        floor=args.floor,
        alpha=args.alpha,
        min_drop=args.min_drop,
        confidence=args.confidence,
        require_comparable=args.require_comparable,
    )


def add_trend_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--trend",
        action="store_true",
        help="chart the baseline's pass rate over its git history (the file's last 8 commits "
        "at HEAD; display only)",
    )


def add_comment_args(parser: argparse.ArgumentParser, *, template: bool = False) -> None:
    """The sticky comment's id, and with `template` the user's own comment template."""
    parser.add_argument("--comment-id", default="default", help="id in the sticky marker")
    if template:
        parser.add_argument("--template", type=Path, default=None, help="your own Jinja template")


def add_junit_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--junit-xml",
        type=Path,
        default=None,
        help="also write the results as JUnit XML here (one test case per item)",
    )


def add_eval_args(parser: argparse.ArgumentParser) -> None:
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
    add_judge_args(parser)
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


def add_judge_args(parser: argparse.ArgumentParser) -> None:
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


def judge_settings(args: argparse.Namespace) -> JudgeSettings:
    from golden_gate.evaluation.judge import JudgeSettings

    return validated(
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
    from golden_gate.evaluation.evaluators import EvaluatorSettings, parse_evaluators

    return validated(
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

    from golden_gate.evaluation.providers import KEY_ENV

    values = [os.environ.get(key, "") for key in KEY_ENV] + list(headers.values())
    for url in urls:
        values += redaction.url_credentials(url)
    return all([redaction.register(value) for value in values])


def settings_from_args(args: argparse.Namespace, **extra: Any) -> Settings:
    from golden_gate.core.golden import Shard
    from golden_gate.evaluation.checks import CheckSettings
    from golden_gate.evaluation.compose import ComposeSettings
    from golden_gate.evaluation.evaluate import EvalSettings, parse_prices
    from golden_gate.evaluation.target import TargetSettings
    from golden_gate.settings import Settings

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
            judge=judge_settings(args),
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
            cache_dir=cache_dir(args),
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
