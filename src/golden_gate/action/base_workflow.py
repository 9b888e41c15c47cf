"""The rules the base branch's workflow gives this step, for a repository without
golden-gate.toml at the base.

On a pull request every `with:` input is the pull request's own (the runner runs the merge
commit's workflow). Where the base keeps its rules in the workflow alone, the base's rules are
the inputs the *base's* version of the same workflow gives the same step: the runner names the
workflow file (GITHUB_WORKFLOW_REF), the job (GITHUB_JOB) and the step (GITHUB_ACTION: its `id`,
when it has one). That file is read at the base ref like every other rule file.

Anything that cannot be read for certain (no GITHUB_WORKFLOW_REF, an API failure, YAML that
does not parse, a value that is an expression `${{ … }}`) leaves that rule at its default:
never the pull request's. A workflow the base does not have, or one that runs no step of this
action there (the pull request adds the gate), gives no inputs: the defaults. The job and step
ids are the pull request's own: a step that cannot be pinned to one of the base's steps of this
action (which give different rules) is bad input, so renaming them cannot reach the defaults.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from golden_gate.errors import GateError, InputError
from golden_gate.option_values import clean
from golden_gate.options import BY_NAME

if TYPE_CHECKING:
    from golden_gate.action.context import Context


@dataclass
class BaseInputs:
    """The base's workflow's rule inputs for this step (cleaned), and what could not be read."""

    values: dict[str, Any] = field(default_factory=dict)
    where: str = ""  # ".github/workflows/gate.yml at main", or why nothing was read
    read: bool = False  # the step was found in the base's workflow
    unknown: list[str] = field(default_factory=list)  # rule inputs held to their default
    config: str = ""  # the config file the base's step names (`config`), if any
    step: bool = False  # the base's workflow has this step: `config` is what it names


def workflow_path(env: Mapping[str, str], repository: str) -> str | None:
    """The running workflow's file from GITHUB_WORKFLOW_REF (`owner/repo/PATH@REF`)."""
    ref = env.get("GITHUB_WORKFLOW_REF", "").strip()
    path, at, _ = ref.rpartition("@")
    prefix = repository + "/"
    if not at or not repository or not path.startswith(prefix):
        return None  # a workflow of another repository (a reusable one) is not the base's
    path = posixpath.normpath(path[len(prefix) :])
    if path.startswith(("../", "/")) or not path.startswith(".github/workflows/"):
        return None
    return path


def _this_action(uses: str, env: Mapping[str, str]) -> bool:
    """Whether a step's `uses` is the action running now: GITHUB_ACTION_REPOSITORY for an
    action from a repository (any ref), a local action (`./…`) when the runner names none."""
    name = uses.split("@", 1)[0].strip().lower()
    repository = env.get("GITHUB_ACTION_REPOSITORY", "").strip().lower()
    if repository:
        return name == repository or name.startswith(repository + "/")
    return name.startswith("./")


def step_inputs(text: str, env: Mapping[str, str], *, where: str) -> dict[str, Any] | str:
    """The `with:` of this step in a workflow's text, or why there is none to read.

    The job and step ids come from the pull request's own workflow: renaming them must not
    step around the base's rules. So when the base's file runs this action but the step cannot
    be pinned to one of its steps (nor do they all give the same rules), it is bad input."""
    import yaml

    try:
        workflow = yaml.safe_load(text)
    except yaml.YAMLError:
        return "it is not valid YAML"
    jobs = workflow.get("jobs") if isinstance(workflow, dict) else None
    if not isinstance(jobs, dict):
        return "it has no jobs"
    job_id = env.get("GITHUB_JOB", "")
    step_id = env.get("GITHUB_ACTION", "")
    job = jobs.get(job_id)
    found = _action_steps(job, env) if isinstance(job, dict) else []
    if not found:  # another job's name, or a new one: every step of this action in the file
        found = [s for j in jobs.values() if isinstance(j, dict) for s in _action_steps(j, env)]
    if not found:
        return "it runs no step of this action"  # the pull request adds the gate: defaults
    # A step of another mode (a nightly drift run beside the gate) is not this step's base.
    mode = env.get("INPUT_MODE", "").strip() or "gate"
    found = [s for s in found if str(_with(s).get("mode") or "gate").strip() == mode] or found
    by_id = [s for s in found if step_id and str(s.get("id", "")) == step_id]
    if len(by_id) == 1:
        return _with(by_id[0])
    if len(found) == 1 or all(_rules(_with(s)) == _rules(_with(found[0])) for s in found):
        return _with(found[0])
    raise InputError(
        f"{where} has {len(found)} steps of this action with different rules, and this step "
        f"(job '{job_id}', id '{step_id}') is none of them: give each step an `id:` and keep "
        "it, or change the workflow in a pull request of its own"
    )


def _action_steps(job: dict[str, Any], env: Mapping[str, str]) -> list[dict[str, Any]]:
    steps = job.get("steps")
    return [
        s
        for s in (steps if isinstance(steps, list) else [])
        if isinstance(s, dict) and isinstance(s.get("uses"), str) and _this_action(s["uses"], env)
    ]


def _with(step: dict[str, Any]) -> dict[str, Any]:
    given = step.get("with")
    return given if isinstance(given, dict) else {}


def _rules(given: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in given.items() if (o := BY_NAME.get(str(k))) is not None and o.rule}


def _raw(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | str):
        return str(value)
    return None


def inputs_at_base(ref: str, ctx: Context, *, github: Any) -> BaseInputs:
    """The rule inputs the base's workflow gives this step, each cleaned."""
    from golden_gate.action.baseline import read_at_ref
    from golden_gate.action.github.client import RefNotFound

    path = workflow_path(ctx.env, ctx.repository)
    if path is None:
        return BaseInputs(where="GITHUB_WORKFLOW_REF does not name this repository's workflow")
    try:
        text, where = read_at_ref(
            path, ref, github=github, workspace=ctx.workspace, what="workflow"
        )
    except RefNotFound:
        raise
    except GateError as exc:  # unreadable: the defaults, never the pull request's values
        return BaseInputs(where=f"{path} at {ref} could not be read ({exc})")
    if text is None:
        return BaseInputs(where=f"{path} does not exist at {ref}", read=True)
    given = step_inputs(text, ctx.env, where=f"{path} at {ref}")
    if isinstance(given, str):
        return BaseInputs(where=f"{path} at {ref}: {given}")
    found = BaseInputs(where=where, read=True, step=True)
    config = _raw(given.get("config"))
    if config and "${{" not in config:
        found.config = config.strip()
    for raw_name, raw_value in given.items():
        option = BY_NAME.get(str(raw_name))
        if option is None or option.rule is None or "action" not in option.doors:
            continue
        raw = _raw(raw_value)
        if raw is None or "${{" in raw:
            found.unknown.append(option.name)  # decided at run time: not known here
            continue
        if not raw.strip():
            continue
        try:
            found.values[option.name] = clean(option, raw, f"{where}: input '{option.name}'")
        except InputError:
            found.unknown.append(option.name)  # the base's own typo: its default holds
    return found
