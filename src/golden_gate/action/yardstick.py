"""Where each setting of an Action run comes from, by event.

On a pull request the runner runs the workflow of the PR's merge commit, so every input is the
pull request's own, and so is the checkout's golden-gate.toml. The rules of the gate (options
with `rule`) therefore come from golden-gate.toml *at the base branch*; the pull request's own
file supplies everything else (where its assistant runs, how to start it). An input may set a
rule only to something at least as strict as the base's (a higher floor, a lower min-drop, tags
that keep every tag the base selects); one that loosens it is refused in one sentence (exit 2).
The pull request's own rule values are not used: they are listed, as proposed changes, in the
comment. The base's rules are its golden-gate.toml with the inputs the base's own workflow
gives this step laid over it (base_workflow.py), then the defaults: with or without a file at
the base, every option whose kind is a rule is held the same way. Where the base's workflow
cannot be read, each rule is held to the base's file or its default, never to the pull
request's value.

On push, workflow_dispatch and schedule the rules are the commit's own: the workspace's file,
then the inputs.

Whenever the checkout is a pull request's, `Resolved.trust` holds what the layers it does not
control say of the options that send a secret (secret_env.py decides with it): its own file
may name no environment variable, nor move one the base grants.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from golden_gate import config_file, runner
from golden_gate.action.scope import PULL_REQUEST_EVENTS
from golden_gate.errors import InputError
from golden_gate.option_values import Resolved, Value, apply, clean, defaults, tightens
from golden_gate.options import BY_NAME, OPTIONS, direction
from golden_gate.secret_env import Trust

if TYPE_CHECKING:
    from golden_gate.action.base_workflow import BaseInputs
    from golden_gate.action.context import Context
    from golden_gate.config_file import ConfigFile

# Modes whose rules do not matter (they post a comment another run decided).
NO_RULES = ("post-comment",)

# Gitignore-style rules, compared by what they select (core/path_lists.py), not as sets.
PATTERN_LISTS = {
    "paths": "select every file the rule selects",
    "ignore-paths": "ignore only files the rule ignores",
}


def env_name(name: str) -> str:
    return "INPUT_" + name.replace(" ", "_").upper()


def read_inputs(env: Mapping[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    """Every input that is set, cleaned (one sentence naming a bad one), with its origin."""
    values: dict[str, Any] = {}
    origins: dict[str, str] = {}
    for option in OPTIONS:
        if "action" not in option.doors:
            continue
        raw = env.get(env_name(option.name), "").strip()
        if raw:
            where = f"input '{option.name}'"
            values[option.name] = clean(option, raw, where)
            origins[option.name] = where
    return values, origins


def resolve_for_event(env: Mapping[str, str], *, workspace: Path, ctx: Context | None) -> Resolved:
    resolved = defaults("action")
    inputs, input_origins = read_inputs(env)
    name = inputs.get("config") or config_file.NAME
    path = workspace / name
    if not path.is_file():
        if "config" in inputs:
            raise InputError(f"input 'config': {name} not found in the workspace")
        own = None
    else:
        own = config_file.read(path, relative_to=workspace, source=name)
        resolved.config_path = Path(name)
    mode = inputs.get("mode", "gate")
    # The checkout is a pull request's: whatever its own file says sends no secret.
    checkout_is_pull_request = (
        ctx is not None and ctx.event_name in PULL_REQUEST_EVENTS and ctx.pr_number is not None
    )
    if not checkout_is_pull_request or mode in NO_RULES:
        _lay(resolved, own)
        apply(resolved, inputs, input_origins)
        if checkout_is_pull_request:
            resolved.trust = _trust(None, inputs, "the workflow")
        return resolved
    assert ctx is not None
    base_ref = ctx.base_ref or ""
    if not base_ref:
        raise InputError("the pull request's event payload names no base branch")
    workflow = _workflow_at_base(base_ref, inputs, ctx)
    # The base's config file is the one its workflow's step names; without that step, the
    # one the pull request names (it cannot replace golden-gate.toml: _config_at_base).
    base_name = (workflow.config or config_file.NAME) if workflow.step else name
    base, base_path = _config_at_base(name, base_name, base_ref, inputs, ctx)
    _said(workflow, has_file=base is not None)
    resolved.trust = _trust(
        base, inputs, f"{base_name} at {base_ref}" if base is not None else "the workflow"
    )
    _lay(resolved, own, rules=False)
    if base is not None:
        _lay(resolved, base, rules=True, others=False)
    for option_name, value in workflow.values.items():
        if option_name in resolved.values:
            resolved.values[option_name] = Value(value, f"{workflow.where}: input '{option_name}'")
    # The pull request's own file's rules are proposals, with or without a file at the base.
    _propose(resolved, own)
    for option_name, value in inputs.items():
        option = BY_NAME[option_name]
        if option_name not in resolved.values:
            continue
        current = resolved.values[option_name]
        if option.rule is not None and not tightens(option, current.value, value):
            if current.origin.startswith("default"):
                where = "its default"
            elif current.origin.startswith(workflow.where) and workflow.where:
                where = f"the inputs of {workflow.where}"
            else:
                where = f"{base_path} at {base_ref}"
            why = (
                f"would loosen a rule of the gate on a pull request: the rule is "
                f"{_text(current.value)} ({where}) and an input may only {direction(option)}"
            )
            if option_name in PATTERN_LISTS:
                why = (
                    f"cannot be proved to {PATTERN_LISTS[option_name]} on a pull request (the "
                    f"rule is {_text(current.value)}, {where}): an input may only "
                    f"{direction(option)}"
                )
            resolved.refusals.append(
                (
                    Value(value, input_origins[option_name]),
                    f"input '{option_name}' ({_text(value)}) {why}; change the rule in "
                    f"{base_path if base is not None else 'the workflow'}, in a pull request of "
                    "its own",
                )
            )
            continue
        resolved.values[option_name] = Value(value, input_origins[option_name])
    return resolved


def _trust(base: ConfigFile | None, inputs: Mapping[str, Any], where: str) -> Trust:
    """What the layers a pull request does not control (the base's file, the workflow's
    inputs, the defaults) say of the options that send a secret (secret_env.py)."""

    def value(option_name: str) -> Any:
        # A rule is the base file's (an input may only repeat it); the rest the input's first.
        layers = [inputs, base.values if base is not None else {}]
        if BY_NAME[option_name].rule is not None and base is not None:
            layers = layers[1:]
        for layer in layers:
            if option_name in layer:
                return layer[option_name]
        return BY_NAME[option_name].default_for("action")

    return Trust(
        where=where,
        headers=value("assistant-headers") or {},
        assistant_url=value("assistant-url") or "",
        judge_base_url=value("judge-base-url") or "",
    )


def _workflow_at_base(ref: str, inputs: Mapping[str, Any], ctx: Context) -> BaseInputs:
    """The rule inputs the base's workflow gives this step (laid over its golden-gate.toml)."""
    from golden_gate.action.base_workflow import inputs_at_base
    from golden_gate.action.github.client import RefNotFound

    try:
        return inputs_at_base(ref, ctx, github=_github(inputs, ctx))
    except RefNotFound as exc:
        raise InputError(f"the pull request's base branch: {exc.sentence}") from None


def _said(found: BaseInputs, *, has_file: bool) -> None:
    if found.values:
        print(f"golden-gate: rules from the inputs of {found.where}")
    if not has_file and not found.read:
        runner.warning(
            f"the base branch's workflow cannot be read ({found.where}): every rule of the gate "
            "stays at its default on this pull request, and an input may only make it stricter",
            title="golden-gate rules",
        )
    if found.unknown:
        print(
            "golden-gate: not known before the run at the base, so held to "
            f"{'golden-gate.toml or ' if has_file else ''}the default: "
            + ", ".join(f"input '{n}'" for n in found.unknown)
        )


def _github(inputs: Mapping[str, Any], ctx: Context) -> Any:
    token = inputs.get("github-token", "")
    if not (token and ctx.repository):
        return None
    from golden_gate.action.github import GitHub

    return GitHub(token=token, repository=ctx.repository, api_url=ctx.api_url)


def _config_at_base(
    name: str, base_name: str, ref: str, inputs: Mapping[str, Any], ctx: Context
) -> tuple[ConfigFile | None, str]:
    """The base branch's config file (`base_name`: what its workflow names, else
    golden-gate.toml) as the base has it, and its path; None when it has none. `name` is the
    file the pull request's workflow names: it cannot replace the base's."""
    from golden_gate.action.baseline import read_at_ref
    from golden_gate.action.github.client import RefNotFound

    github = _github(inputs, ctx)
    path = os.path.normpath(base_name)
    try:
        text, where = read_at_ref(
            path, ref, github=github, workspace=ctx.workspace, what="config file"
        )
    except RefNotFound as exc:
        raise InputError(f"the pull request's base branch: {exc.sentence}") from None
    if text is None and path != config_file.NAME:
        found, _ = read_at_ref(
            config_file.NAME, ref, github=github, workspace=ctx.workspace, what="config file"
        )
        if found is not None:
            text, path, where = found, config_file.NAME, f"{config_file.NAME} at {ref}"
    if text is not None and os.path.normpath(name) != path:
        # A pull request cannot step around the base's rules by naming another file.
        named = f"input 'config' names {name}" if "config" in inputs else f"this run reads {name}"
        raise InputError(
            f"{named}, which is not the base's config file; the rules of the gate are in "
            f"{path} at {ref} and a pull request cannot replace them"
        )
    if text is None:
        print(
            f"golden-gate: no {path} at {ref}: the rules of the gate are what the base's "
            "workflow and the defaults say, and an input may only make them stricter"
        )
        return None, path
    print(f"golden-gate: rules from {where}")
    return config_file.parse(text, source=f"{path} at {ref}"), path


def _lay(
    resolved: Resolved,
    config: ConfigFile | None,
    *,
    rules: bool = True,
    others: bool = True,
) -> None:
    if config is None:
        return
    for option_name, value in config.values.items():
        option = BY_NAME[option_name]
        is_rule = option.rule is not None
        if (is_rule and not rules) or (not is_rule and not others):
            continue
        if option_name in resolved.values:
            resolved.values[option_name] = Value(value, config.origins[option_name])


def _propose(resolved: Resolved, own: ConfigFile | None) -> None:
    """The pull request's own rule values that differ from the rules in force, for the
    comment: proposed, not used."""
    if own is None:
        return
    for option in OPTIONS:
        if option.rule is None or option.name not in own.values:
            continue
        effective = resolved.values.get(option.name)
        if effective is None or _same(own.values[option.name], effective.value):
            continue
        resolved.proposed[option.name] = own.values[option.name]
        resolved.notes.append(
            f"{option.toml_name} = {_text(own.values[option.name])} in this pull request's "
            f"golden-gate.toml (in force: {_text(effective.value)}, "
            f"{_origin_text(effective.origin)})"
        )


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, str | Path) and isinstance(b, str | Path):
        return os.path.normpath(str(a)) == os.path.normpath(str(b))
    return a == b


def _origin_text(origin: str) -> str:
    return "the default" if origin.startswith("default") else origin


def _text(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(map(str, value)) + "]" if value else "[] (every item)"
    if value in ("", None):
        return "unset"
    return str(value)
