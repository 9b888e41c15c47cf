"""`init`'s workflows: the pull request gate, the poster of fork comments and the baseline
proposer, with every action pinned to a full commit SHA when the ref can be resolved (offline,
the ref as given and a comment on how to pin it), and the compose file the gate starts."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import NamedTuple

from golden_gate.errors import InputError
from golden_gate.evaluation.providers import resolve
from golden_gate.rendering.environment import init_environment
from golden_gate.starter_service import Service, start_steps

SHA = re.compile(r"[0-9a-f]{40}")


class Pin(NamedTuple):
    """What the workflows' `uses:` says, the tag for the comment beside a pin, and when the ref
    could not be pinned, why (the workflows then carry the ref as given and how to pin it)."""

    uses: str
    tag: str
    unpinned: str = ""


# How the docs write the Action's repository before a release names it: never a workflow's.
PLACEHOLDER = "org/golden-gate-action"


def resolve_action(action: str) -> Pin:
    """`owner/repo@sha` as given, or with a tag resolved to its commit by `git ls-remote`. A ref
    that cannot be resolved (offline, no such tag) is kept as given, with the reason. No name
    (a golden-gate that is not a release: golden_gate.ACTION_REPOSITORY is empty) and the docs'
    stand-in are refused: the first workflow run could not start."""
    repo, sep, ref = action.partition("@")
    if not action:
        raise InputError(
            "--action: this golden-gate is not a release, so it does not know the repository "
            "the Action is published from: pass --action OWNER/REPO@TAG, the repository you "
            "have golden-gate from and one of its release tags (a release writes that "
            "repository into golden_gate/__init__.py, ACTION_REPOSITORY); nothing was written"
        )
    if repo.lower() == PLACEHOLDER:
        raise InputError(
            f"--action: '{repo}' is the docs' stand-in for the repository the Action is "
            "published from: pass that repository, OWNER/REPO@TAG; nothing was written"
        )
    if not sep or not re.fullmatch(r"[\w.-]+/[\w.-]+", repo) or not ref:
        raise InputError(f"--action: expected OWNER/REPO@SHA or OWNER/REPO@TAG, got '{action}'")
    if SHA.fullmatch(ref):
        return Pin(f"{repo}@{ref}", "")
    # A tag as git allows one, and nothing that could be a pattern or end the YAML comment it is
    # written into.
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._/+-]*", ref) or ".." in ref:
        raise InputError(f"--action: '{ref}' is not a tag name; give a tag or the commit SHA")
    try:
        done = subprocess.run(
            ["git", "ls-remote", f"https://github.com/{repo}", f"refs/tags/{ref}^{{}}",
             f"refs/tags/{ref}"],
            capture_output=True, text=True, timeout=30, check=False,
            # No prompt for a user name: a repository that does not exist is an answer.
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        done = None
    shas = [line.split()[0] for line in (done.stdout if done else "").splitlines() if line]
    if not shas or not SHA.fullmatch(shas[0]):
        why = (done.stderr.strip().splitlines() or [""])[-1] if done else ""
        return Pin(
            f"{repo}@{ref}",
            "",
            f"could not resolve {repo}@{ref} to a commit (git ls-remote "
            + (f"failed: {why[:200]}" if why else "found no such tag")
            + ")",
        )
    return Pin(f"{repo}@{shas[0]}", ref)


def pin_comment(pin: Pin) -> str:
    """The YAML comment above an unpinned `uses:`, saying how to pin it."""
    if not pin.unpinned:
        return ""
    repo, _, ref = pin.uses.partition("@")
    lines = (
        f"Not pinned: golden-gate init could not resolve {ref} to a commit (offline, or no such",
        "tag).",
        "Pin it to the commit the tag names (a tag can be moved; a commit SHA cannot):",
        f"`git ls-remote https://github.com/{repo} refs/tags/{ref}` prints it; then write",
        f"`uses: {repo}@<that SHA> # {ref}`.",
    )
    return "".join(f"        # {line}\n" for line in lines)


def _yaml_scalar(value: str) -> str:
    return json.dumps(value)  # a JSON string is a YAML double-quoted scalar


# The compose files `init` looks for at the repository's root, in this order: one made for the
# evaluation first.
COMPOSE_FILES = (
    "docker-compose.eval.yml", "docker-compose.eval.yaml", "compose.eval.yml", "compose.eval.yaml",
    "compose.yaml", "compose.yml", "docker-compose.yaml", "docker-compose.yml",
)  # fmt: skip

NO_COMPOSE = """\
        # The assistant: the deployed service at the repository variable ASSISTANT_URL. This
        # gates what is deployed, not this pull request: its code is not what answers. To gate
        # the pull request's own code, start it before this step, either with a compose file
        # ([compose] file in golden-gate.toml: golden-gate starts it, waits for it and always
        # tears it down) or with a `run:` step that starts it on the runner listening on
        # 0.0.0.0, then set assistant-url to http://runner-host:<port> (the runner, as this
        # Action's container reaches it); see docs/action.md, "Where the assistant runs".
"""


RUNNER_HOST = """\
        # The assistant: the pull request's own, started on the runner by the steps above;
        # runner-host is the runner as this Action's container reaches it (the gateway of its
        # network), and the log says which address answered.
"""


def compose_comment(compose_file: str, found: bool) -> str:
    how = "found by golden-gate init" if found else "given to golden-gate init"
    return (
        f"        # The assistant: {compose_file} ({how}; golden-gate.toml's [compose] file).\n"
        "        # golden-gate starts it from this pull request's checkout with `docker compose\n"
        "        # up -d --wait`, so the pull request's own code is what is evaluated, and\n"
        "        # always tears it down. The service must listen on 0.0.0.0: the gate reaches it\n"
        "        # by its name.\n"
    )


def find_compose(root: Path) -> str | None:
    """The repository's compose file, if it has one at its root."""
    return next((name for name in COMPOSE_FILES if (root / name).is_file()), None)


def workflows(
    *,
    action: Pin,
    golden: str,
    baseline: str,
    judge_model: str,
    compose_file: str | None,
    compose_found: bool = False,
    service: Service | None = None,
) -> dict[str, str]:
    """The three workflow files by their path in the repository. `service`: how the pull
    request's own assistant starts on the runner when there is no compose file."""
    try:
        provider, _ = resolve(judge_model)
    except ValueError as exc:
        raise InputError(f"--judge-model: {exc}") from None
    given = {"--golden": golden, "--baseline": baseline, "--judge-model": judge_model}
    for flag, value in {**given, "--compose-file": compose_file}.items():
        if value and "${{" in value:  # Actions would evaluate it as an expression
            raise InputError(f"{flag}: '{value}' holds '${{{{', which a workflow evaluates")
    # With a compose file, golden-gate.toml's [compose] file starts the assistant.
    if compose_file:
        assistant, comment = "", compose_comment(compose_file, compose_found)
    elif service is not None:
        assistant = f"          assistant-url: http://runner-host:{service.port}"
        comment = RUNNER_HOST
    else:
        assistant, comment = "          assistant-url: ${{ vars.ASSISTANT_URL }}", NO_COMPOSE
    values = {
        "action": action.uses,
        "action_comment": action.tag,
        "pin_comment": pin_comment(action),
        "assistant_comment": comment,
        "start_steps": start_steps(service) if service is not None and not compose_file else "",
        "golden": _yaml_scalar(golden),
        "baseline": _yaml_scalar(baseline),
        "judge_model": _yaml_scalar(judge_model),
        "assistant": assistant,
    }
    env = init_environment()
    texts = {}
    for name, target in (
        ("pr-gate.yml.j2", ".github/workflows/golden-gate.yml"),
        ("post-comment.yml.j2", ".github/workflows/golden-gate-comment.yml"),
        ("baseline.yml.j2", ".github/workflows/golden-gate-baseline.yml"),
    ):
        text = env.get_template(name).render(**values)
        texts[target] = text.replace("OPENAI_API_KEY:", f"{provider.key_env[0]}:")
    return texts
