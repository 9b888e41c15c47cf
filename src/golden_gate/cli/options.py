"""The command line's options, derived from `options.OPTIONS`: each command names the options it
takes, their flags are made from the table, and once parsed every value is laid over the
config file's and the defaults, each with its origin (`golden-gate config --show-origin`).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from golden_gate import redaction
from golden_gate.errors import InputError
from golden_gate.option_values import Resolved, Value, clean, defaults
from golden_gate.options import BY_NAME, OPTIONS, Option, show

if TYPE_CHECKING:
    from golden_gate.secret_env import Trust
    from golden_gate.settings import Settings


# The table option each flag was made from, for its help (add_options fills it).
OPTION_OF: dict[argparse.Action, Option] = {}


class _HelpFormatter(argparse.HelpFormatter):
    """Every flag's help ends with its default, when it has one worth saying."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        option = OPTION_OF.get(action)
        if option is not None:  # a table option: its default found only when help is shown
            default = option.default_for("cli")
            unsaid = default is None or default is False or default in ("", [], {})
            repeat = " (repeatable)" if option.kind in ("lines", "headers", "floats") else ""
            shown = "" if unsaid else f" (default: {show(default, sep=',')})".replace("%", "%%")
            return text + shown + repeat
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


def warn(message: str) -> None:
    print(f"golden-gate: warning: {redaction.scrub(message)}", file=sys.stderr)


# --- which options each command takes --------------------------------------------------------

GATE = (
    "floor", "alpha", "min-drop", "confidence", "require-comparable", "floor-basis",
    "floor-by-tag", "critical-tags", "min-slice-items",
    "retrieval-k", "retrieval-floor",
)  # fmt: skip
JUDGE = (
    "judge-model", "judge-prompt", "judge-base-url", "judge-temperature", "judge-timeout",
    "judge-retries", "judge-max-tokens", "judge-concurrency", "on-missing-judge-key",
    "cache", "cache-dir",
)  # fmt: skip
EVAL = (
    "golden-strict", "subset-tags", "shard", "index-snapshot",
    "assistant-url", "assistant-path", "request-template", "answer-path", "sources-path",
    "model-path", "context-path", "tools-path", "usage-path", "assistant-headers",
    "assistant-model",
    "concurrency", "assistant-prices", "max-cost-usd",
    "timeout", "retries",
    "compose-file", "compose-project", "compose-service", "wait-timeout", "health-path",
    *JUDGE, "judge-panel", "judge-prices", "max-judge-calls", "judge-canaries",
    "evaluators", "evaluator-rule", "runs", "rerun-failures", "simulate-users",
    "max-error-rate", "forbidden",
    "must-include", "must-not-include", "refusal-phrases", "json-schema", "citations-in-sources",
    "custom-checks",
    "check-timeout",
    "deterministic-only", "report-path", "junit-xml", "html-report",
)  # fmt: skip
COMMENT = ("comment-file", "summary-file", "comment-id")
COMMANDS: dict[str, tuple[str, ...]] = {
    "gate": (*GATE, *COMMENT, "junit-xml", "html-report", "calibration"),
    "report": (*GATE, "comment-id", "comment-template", "baseline", "calibration"),
    "subset": ("subset-tags",),
    "eval": (*EVAL, "baseline-runs"),
    "run": (*EVAL, *GATE, *COMMENT, "baseline", "comment-template", "calibration"),
    "calibrate": (*JUDGE, "labels", "min-kappa", "calibration-path"),
    "merge": (*GATE, *COMMENT, "baseline", "junit-xml", "html-report", "calibration"),
    "plan": (*GATE, "subset-tags", "runs", "baseline", "judge-prices", "assistant-prices"),
    "review": ("baseline",),
    "pairwise": (*JUDGE, "baseline"),
    "view": (*GATE, "baseline", "calibration"),
    "import-junit": ("max-error-rate", "report-path"),
}
# `config` shows every option the command line or the file has, and takes every flag.
COMMANDS["config"] = tuple(o.name for o in OPTIONS if "cli" in o.doors and o.name != "config")
SHORT = {"report-path": "-o", "calibration-path": "-o"}
GROUP_TITLES = {
    "assistant": "assistant",
    "compose": "compose (start the assistant first, always tear down)",
    "judge": "judge",
    "evaluation": "evaluation",
    "checks": "checks (written by hand)",
    "gate": "gate",
    "comment": "comment",
    "output": "output",
    "cache": "verdict cache",
    "calibration": "calibration",
}


class _Given(argparse.Action):
    """Stores the value as given (cleaned later, naming the flag) and says when the spelling
    used is an old one."""

    def __call__(self, parser, namespace, values, option_string=None):
        option: Option = self.const
        if option_string in option.old_flags:
            warn(
                f"{option_string} is deprecated and goes in the next minor release: "
                f"use {option.flag}"
            )
        if option.kind in ("lines", "headers", "floats"):
            previous = getattr(namespace, self.dest, None) or []
            values = [*previous, values]
        setattr(namespace, self.dest, values)
        setattr(namespace, f"_flag_{self.dest}", option_string)


def add_options(parser: argparse.ArgumentParser, names: Iterable[str]) -> None:
    """The flags of `names`, grouped as in the config file; unset flags stay unset."""
    groups: dict[str, Any] = {}
    for name in names:
        option = BY_NAME[name]
        title = GROUP_TITLES.get(option.group)
        target = parser
        if title:
            target = groups.get(title) or groups.setdefault(title, parser.add_argument_group(title))
        short = SHORT.get(name)
        taken = short is None or short in parser._option_string_actions
        flags = [*([] if short is None or taken else [short]), option.flag, *option.old_flags]
        help_text = option.help.replace("%", "%%")
        if option.kind == "bool":
            action = target.add_argument(
                option.flag,
                dest=option.dest,
                action=argparse.BooleanOptionalAction,
                default=argparse.SUPPRESS,
                help=help_text,
            )
        else:
            action = target.add_argument(
                *flags,
                dest=option.dest,
                action=_Given,
                const=option,
                default=argparse.SUPPRESS,
                metavar=option.metavar or _metavar(option),
                help=help_text,
            )
        OPTION_OF[action] = option
    if "assistant-headers" in names:  # NAME=VALUE, the old flag's own syntax
        parser.add_argument("--header", dest="old_header", action="append", help=argparse.SUPPRESS)
    if "cache" in names:
        parser.add_argument(
            "--no-cache", dest="old_no_cache", action="store_true", help=argparse.SUPPRESS
        )


def _metavar(option: Option) -> str:
    if option.choices:
        return "{" + ",".join(option.choices) + "}"
    return {"int": "N", "float": "X", "path": "PATH", "tags": "TAGS", "lines": "LINE"}.get(
        option.kind, "TEXT"
    )


def add_config_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        type=Path,
        default=None,
        help=BY_NAME["config"].help,
    )


def add_trend_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--trend",
        action="store_true",
        help="chart the baseline's pass rate over its git history (the file's last 8 commits "
        "at HEAD; display only)",
    )


# --- resolving: defaults < golden-gate.toml < flags --------------------------------------------


def resolve(
    args: argparse.Namespace, names: Sequence[str], *, positional: dict[str, Any] | None = None
) -> Resolved:
    """Defaults, then the config file (`--config` or found from here upward), then the flags
    given (and positional arguments), each cleaned and kept with its origin."""
    from golden_gate import config_file

    everything = getattr(args, "command", None) == "config"
    wanted = None if everything else {*names, "golden", "baseline"}
    resolved = defaults("cli", also=("file",) if everything else (), only=wanted)
    explicit = getattr(args, "config", None)
    path = explicit if explicit is not None else config_file.find(Path.cwd())
    if explicit is not None and not Path(explicit).is_file():
        raise InputError(f"--config: {explicit} not found")
    if path is not None:
        shown = os.path.relpath(path) if Path(path).absolute().is_relative_to(Path.cwd()) else path
        config = config_file.read(Path(path), relative_to=Path.cwd(), source=str(shown))
        resolved.config_path = Path(path)
        for name, value in config.values.items():
            if everything or "cli" in BY_NAME[name].doors:
                resolved.values[name] = Value(value, config.origins[name])
    for name in names:
        option = BY_NAME[name]
        if option.dest not in vars(args):
            continue
        raw = getattr(args, option.dest)
        spelled = getattr(args, f"_flag_{option.dest}", None) or option.flag
        if option.kind == "bool":
            value = bool(raw)
        elif option.kind in ("lines", "headers", "floats"):
            value = clean(option, list(raw), spelled)  # one flag, one line: kept whole
        else:
            value = clean(option, raw, spelled)
        resolved.values[name] = Value(value, f"flag {spelled}")
    _old_flags(args, resolved)
    for name, value in (positional or {}).items():
        if value is not None:
            resolved.values[name] = Value(clean(BY_NAME[name], str(value), name), "argument")
    resolved.trust = _trust(resolved)
    return resolved


def _no_baseline_yet(resolved: Resolved) -> None:
    """A baseline the config file (or the default) names but nobody made yet is the normal
    state before the first one: the gate runs on the floor alone and says how to make it. One
    named on the command line must exist (a typo there is one sentence, not a silent floor)."""
    given = resolved.values.get("baseline")
    if given is None or not given.value or given.origin.startswith(("flag", "argument")):
        return
    from golden_gate import secret_env

    if os.environ.get("GITHUB_ACTIONS") == "true" and (
        os.environ.get("GITHUB_EVENT_NAME") in secret_env.PULL_REQUEST_EVENTS
    ):  # the checkout is the pull request's: deleting the baseline must not drop the test
        return
    path = Path(given.value)
    if path.exists():
        return
    print(
        f"golden-gate: note: no baseline yet ({path} does not exist; {given.origin}): the gate "
        "has the floor alone. Make the first baseline from the default branch: golden-gate eval "
        f"-o {path} (the Action's baseline workflow commits it).",
        file=sys.stderr,
    )
    resolved.values["baseline"] = Value("", f"{given.origin}, not made yet")


def _trust(resolved: Resolved) -> Trust | None:
    """In a workflow run for a pull request the working tree, its golden-gate.toml included, is
    the pull request's: what sends a secret comes from the flags (the workflow's) only."""
    from golden_gate import secret_env

    env = os.environ
    if env.get("GITHUB_ACTIONS") != "true" or (
        env.get("GITHUB_EVENT_NAME") not in secret_env.PULL_REQUEST_EVENTS
    ):
        return None

    def flag(name: str) -> Any:
        value = resolved.values.get(name)
        if value is not None and value.origin.startswith("flag"):
            return value.value
        return BY_NAME[name].default_for("cli")

    return secret_env.Trust(
        where=secret_env.COMMAND_FLAGS,
        headers=flag("assistant-headers") or {},
        assistant_url=flag("assistant-url") or "",
        judge_base_url=flag("judge-base-url") or "",
    )


def _old_flags(args: argparse.Namespace, resolved: Resolved) -> None:
    if getattr(args, "old_header", None):
        warn("--header NAME=VALUE is deprecated: use --assistant-headers 'NAME: VALUE'")
        headers = dict(resolved["assistant-headers"]) if resolved.given("assistant-headers") else {}
        for pair in args.old_header:
            name, sep, value = pair.partition("=")
            if not sep or not name.strip():
                raise InputError(f"--header: expected NAME=VALUE, got '{name}'")
            headers[name.strip()] = value
        resolved.values["assistant-headers"] = Value(headers, "flag --header")
    if getattr(args, "old_no_cache", False):
        warn("--no-cache is deprecated: use --cache off")
        resolved.values["cache"] = Value("off", "flag --no-cache")


def as_path(value: Any) -> Path | None:
    return Path(value) if value not in (None, "") else None


def cache_dir(resolved: Resolved) -> Path | None:
    """The verdict cache directory, unless a pull request could have written its entries."""
    from golden_gate.evaluation.cache_location import untrusted_reason

    if resolved["cache"] == "off":
        return None
    directory = Path(resolved["cache-dir"])
    env = os.environ
    reason = untrusted_reason(
        directory,
        workspace=Path(env.get("GITHUB_WORKSPACE") or Path.cwd()),
        require_git=env.get("GITHUB_ACTIONS") == "true",
    )
    if reason:
        warn(f"not using {directory}: {reason}")
        return None
    return directory


def _register_secrets(headers: dict[str, str], *urls: str | None) -> bool:
    """What the Action masks, the CLI scrubs too: judge keys, header values, URL passwords.

    False when a secret is too short to scrub (said once the settings are known to be valid).
    """
    from golden_gate.evaluation.providers import ENDPOINT_ENV, KEY_ENV

    values = [os.environ.get(key, "") for key in KEY_ENV] + list(headers.values())
    # A provider's SDK reads its endpoint from these too: a password there is one as well.
    for url in (*urls, *(os.environ.get(name) for name in ENDPOINT_ENV)):
        values += redaction.url_credentials(url)
    return all([redaction.register(value) for value in values])


def settings_from_args(resolved: Resolved, *, quiet: bool = False, **extra: Any) -> Settings:
    from golden_gate.evaluation.providers import key_available
    from golden_gate.settings import build

    if not resolved["assistant-url"] and not resolved["compose-file"]:
        raise InputError(
            "no assistant: give --assistant-url (where it runs) or --compose-file (to start it "
            "first), or set them in golden-gate.toml's [assistant] / [compose]"
        )
    settings = build(
        resolved,
        root=Path("."),
        env=os.environ,
        evaluating=True,
        cache_dir=cache_dir(resolved),
        deterministic_only=resolved["deterministic-only"],
        progress=not quiet,
        **extra,
    )
    if (
        not settings.deterministic_only
        and resolved["on-missing-judge-key"] == "checks-only"
        and not key_available(settings.judge.model, os.environ, settings.judge.base_url)
    ):
        warn(
            f"no key for the judge '{settings.judge.model}': only the deterministic checks run "
            f"({resolved.where('on-missing-judge-key')} is checks-only)"
        )
        settings = settings.model_copy(update={"deterministic_only": True})
    target = settings.target
    headers = target.headers if target is not None else {}
    scrubbable = _register_secrets(headers, target.url if target else None, settings.judge.base_url)
    if not scrubbable:
        warn(
            f"a secret shorter than {redaction.MIN_LENGTH} characters cannot be scrubbed from "
            "the report and the comment"
        )
    return settings


def finish(args: argparse.Namespace) -> None:
    """Resolve the command's options (defaults < golden-gate.toml < flags) onto `args`: each
    option's value under its name (`args.floor`, `args.comment_file`: a path or None), and the
    whole as `args.resolved`."""
    names = getattr(args, "command_options", None)
    if names is None:
        return
    positional = {"golden": getattr(args, "golden", None)}
    positional["baseline"] = getattr(args, "baseline_arg", None)
    resolved = resolve(args, names, positional=positional)
    if "baseline" in names or hasattr(args, "baseline_arg"):  # the commands that take one
        _no_baseline_yet(resolved)
    for name, value in resolved.values.items():
        option = BY_NAME[name]
        setattr(args, option.dest, as_path(value.value) if option.kind == "path" else value.value)
    args.resolved = resolved
