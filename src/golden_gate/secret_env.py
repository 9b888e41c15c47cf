"""The one place that decides which environment values may be sent, and where to.

The job's environment holds secrets: the GitHub token (input `github-token`), the Actions
runtime's (`ACTIONS_RUNTIME_TOKEN`, `ACTIONS_ID_TOKEN_REQUEST_TOKEN`), the judge providers'
keys, and whatever else the workflow puts there. Three things could carry one out:

- **The assistant's headers.** A value `$VAR` is read from the environment. On a pull request
  such a header is a grant the trusted layers make (the base branch's golden-gate.toml, the
  workflow's inputs: `Trust`), sent only to the assistant those layers name. The pull
  request's own golden-gate.toml may set literal headers; a `$VAR` there, or an assistant URL
  of its own for a granted header, is refused (exit 2).
- **The judge's client.** Its provider's key goes to the judge endpoint, which on a pull request
  must be what the trusted layers say (`check_endpoint`); no redirect is followed (providers).
- **What we start** (`docker compose`, which interpolates `${VAR}` from its environment and the
  services it builds and starts): an allow-list of variables that name where Docker is and
  how to talk to it (`child_environment`), plus the names the base branch's rules pass
  (`compose-env`). On a pull request the resolved compose model is also checked
  (`check_compose_model`): no secret value in it, however the file pulled one in (a `.env`
  linked to /proc/1/environ, an `env_file`), and nothing that reaches the host (privileged,
  the Docker socket, host namespaces, files outside the workspace).

Nothing else decides where an environment value goes: each judge provider reads its own key
variables (`key_env`) to authenticate to that endpoint, and redaction.py reads the environment
only to scrub what it finds.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from golden_gate.errors import InputError

# A variable named like a credential is a secret whatever it holds.
_SECRET_WORDS = re.compile(
    r"KEY|TOKEN|SECRET|PASS(?:W|PHRASE|$|_)|(?:^|_)PAT(?:$|_)|(?:^|_)DSN(?:$|_)|CREDENTIAL"
    r"|AUTH(?!OR)|COOKIE|PRIVATE|SIGNATURE"
)
# What docker compose needs to find and talk to the engine, ordinary process settings, and the
# CI's facts about the run (a compose file may tag an image with ${GITHUB_SHA}).
_CHILD_NAMES = frozenset(
    {
        "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TERM",
        "NO_COLOR", "CI", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "SSL_CERT_FILE", "SSL_CERT_DIR",
        "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
        "GITHUB_ACTIONS", "GITHUB_SHA", "GITHUB_REF", "GITHUB_REF_NAME", "GITHUB_HEAD_REF",
        "GITHUB_BASE_REF", "GITHUB_REPOSITORY", "GITHUB_REPOSITORY_OWNER", "GITHUB_RUN_ID",
        "GITHUB_RUN_NUMBER", "GITHUB_RUN_ATTEMPT", "GITHUB_WORKFLOW", "GITHUB_JOB",
        "GITHUB_ACTOR", "GITHUB_EVENT_NAME", "GITHUB_SERVER_URL", "GITHUB_API_URL",
        "GITHUB_WORKSPACE", "RUNNER_OS", "RUNNER_ARCH", "RUNNER_TEMP", "RUNNER_NAME",
    }
)  # fmt: skip
_CHILD_PREFIXES = ("DOCKER_", "COMPOSE_", "BUILDKIT_", "BUILDX_", "LC_")
# The events whose checkout is a pull request's (the Action's scope and the command's trust).
PULL_REQUEST_EVENTS = frozenset({"pull_request", "pull_request_target"})
MIN_SECRET = 8  # a shorter value of a secret-named variable is not looked for in text


def is_secret(name: str) -> bool:
    """Whether an environment variable's name says it holds a credential (or it is one of the
    runner's: `INPUT_GITHUB-TOKEN`, `ACTIONS_RUNTIME_TOKEN`, ...)."""
    upper = name.upper()
    if upper.startswith("INPUT_"):  # the Action's inputs: only the token's is a secret
        return bool(_SECRET_WORDS.search(upper[len("INPUT_") :]))
    return upper.startswith("ACTIONS_") or bool(_SECRET_WORDS.search(upper))


def secret_values(env: Mapping[str, str], *, except_names: Iterable[str] = ()) -> set[str]:
    """The values of `env`'s secret-named variables (long enough to look for), but those of
    `except_names` (what the rules pass on)."""
    passed = set(except_names)
    return {
        value
        for name, value in env.items()
        if name not in passed
        and is_secret(name)
        and len(value.strip()) >= MIN_SECRET
        and not _ordinary(name, value)
    }


def _ordinary(name: str, value: str) -> bool:
    # The runner's URLs (ACTIONS_RESULTS_URL) are addresses: their tokens travel apart.
    return name.upper().endswith("_URL") and not _has_password(value)


def child_environment(env: Mapping[str, str], passed: Iterable[str] = ()) -> dict[str, str]:
    """The environment for a process we start: the allow-list (where Docker is, locale, CI
    facts), never a secret-named variable nor a proxy with a password, plus `passed`."""
    chosen: dict[str, str] = {}
    for name, value in env.items():
        allowed = name in _CHILD_NAMES or name.startswith(_CHILD_PREFIXES)
        if not allowed or is_secret(name):
            continue
        if "PROXY" in name.upper() and _has_password(value):
            continue
        chosen[name] = value
    for name in passed:
        if name in env:
            chosen[name] = env[name]
    return chosen


def _has_password(url: str) -> bool:
    try:
        parts = urlsplit(url if "://" in url else "http://" + url)
        return bool(parts.username or parts.password)
    except ValueError:
        return True


COMMAND_FLAGS = "the command's flags"  # what the command in a pull request's workflow trusts


@dataclass(frozen=True)
class Trust:
    """On a pull request: what the layers the pull request does not control (the base
    branch's golden-gate.toml, the workflow's inputs, the defaults) say of the options that
    send a secret somewhere. None of it comes from the pull request's own file."""

    where: str  # how a message names those layers
    headers: Mapping[str, str] = field(default_factory=dict)  # header name -> "$VAR" or text
    assistant_url: str = ""
    judge_base_url: str = ""

    def change(self, option: str) -> str:
        """Where the fix goes, for a message."""
        if self.where.startswith("golden-gate.toml"):
            return f"change {option} in {self.where}, in a pull request of its own"
        if self.where == COMMAND_FLAGS:
            return f"pass --{option} in the workflow's command instead"
        return (
            f"set {option} in the workflow, or land golden-gate.toml with it in a pull "
            "request of its own first"
        )


def variable(value: str) -> str | None:
    """The environment variable a header value names (`$VAR`), or None for a literal."""
    return value[1:] if value.startswith("$") and len(value) > 1 else None


def send_headers(
    headers: Mapping[str, str],
    env: Mapping[str, str],
    *,
    where: str,
    trust: Trust | None,
    assistant_url: str,
) -> dict[str, str]:
    """The assistant's headers as sent: `$VAR` read from `env`. With `trust` (a pull request)
    a `$VAR` header must be one the trusted layers grant, to the assistant they name."""
    sent: dict[str, str] = {}
    for name, value in headers.items():
        var = variable(value)
        if var is None:
            sent[name] = value
            continue
        if trust is not None:
            _check_grant(name, value, where, trust, assistant_url)
        if var not in env:
            raise InputError(f"{where}: header {name}: environment variable {var} is not set")
        sent[name] = env[var]
    return sent


def _check_grant(name: str, value: str, where: str, trust: Trust, url: str) -> None:
    granted = {k.lower(): v for k, v in trust.headers.items()}
    if granted.get(name.lower()) != value:
        raise InputError(
            f"{where}: header {name} = {value}: a pull request cannot send an environment "
            f"variable of the job to an assistant; {trust.change('assistant-headers')}"
        )
    if _same_url(url, trust.assistant_url):
        return
    named = trust.assistant_url or "the compose service"
    raise InputError(
        f"{where}: header {name} carries {value} to the assistant named by {trust.where} "
        f"({named}); this pull request moves the assistant to {url or 'the compose service'}, "
        f"which is not given it: {trust.change('assistant-url')}"
    )


def check_endpoint(url: str, *, where: str, trust: Trust | None) -> None:
    """A judge endpoint the pull request chose would receive the judge's key: refused."""
    if trust is None or _same_url(url, trust.judge_base_url):
        return
    named = trust.judge_base_url or "the provider's own endpoint"
    raise InputError(
        f"{where}: {url or 'the provider default'} would receive the judge's key, and on a pull "
        f"request the judge's endpoint is {named} ({trust.where}): "
        f"{trust.change('judge-base-url')}"
    )


def _same_url(a: str, b: str) -> bool:
    return (a or "").strip().rstrip("/") == (b or "").strip().rstrip("/")


# -- the compose model of a pull request ----------------------------------------------------

_HOST_MODES = ("pid", "ipc", "network_mode", "userns_mode", "uts", "cgroup")
_HOST_KEYS = ("privileged", "cap_add", "devices", "device_cgroup_rules", "security_opt")


def check_compose_model(
    model: Mapping[str, Any],
    *,
    passed: Iterable[str],
    workspace: str,
    project_dir: str,
    where: str,
    env: Mapping[str, str] | None = None,
) -> None:
    """A pull request's resolved compose model (`docker compose config --format json`) may
    hold no secret value of the job (whatever pulled it in) and may not reach the host: a
    service that could read the runner's processes or ask the engine reads every secret."""
    import json

    env = os.environ if env is None else env
    passed = list(passed)
    text = json.dumps(model)
    for value in secret_values(env, except_names=passed):
        if value in text or json.dumps(value)[1:-1] in text:
            raise InputError(
                f"{where}: the resolved compose file holds the value of a secret of the job "
                "(an env_file, a .env or ${VAR} reading one); a pull request's services get "
                "only the variables compose-env names at the base branch"
            )
    problems = []
    dotenv = os.path.join(project_dir, ".env")  # compose reads it again at `up`
    if os.path.lexists(dotenv) and not _inside(dotenv, workspace):
        problems.append(f".env links to {os.path.realpath(dotenv)}, outside the workspace")
    for name, service in (model.get("services") or {}).items():
        problems += [f"service {name}: {p}" for p in _service_problems(service, workspace)]
    for kind in ("secrets", "configs"):
        for name, spec in (model.get(kind) or {}).items():
            source = (spec or {}).get("file")
            if source and not _inside(source, workspace):
                problems.append(f"{kind} {name}: file {source} is outside the workspace")
    for name, spec in (model.get("volumes") or {}).items():
        if (spec or {}).get("driver_opts"):
            problems.append(f"volume {name}: driver_opts (a host directory)")
    if problems:
        raise InputError(
            f"{where}: on a pull request the assistant's services may not reach the host or "
            f"the runner's secrets: {'; '.join(problems[:3])}"
            + (f" (and {len(problems) - 3} more)" if len(problems) > 3 else "")
        )


def _service_problems(service: Mapping[str, Any], workspace: str) -> list[str]:
    found = []
    for key in _HOST_KEYS:
        if service.get(key):
            found.append(key)
    for key in _HOST_MODES:
        mode = str(service.get(key) or "")
        if mode == "host" or mode.startswith("container:"):
            found.append(f"{key}: {mode}")
    for item in service.get("volumes_from") or []:
        if str(item).startswith("container:"):
            found.append(f"volumes_from: {item}")
    for volume in service.get("volumes") or []:
        if isinstance(volume, dict) and volume.get("type") == "bind":
            source = str(volume.get("source") or "")
            if not _inside(source, workspace):
                found.append(f"bind mount of {source}")
    for key in ("env_file", "label_file"):  # read by the compose client, in our container
        entries = service.get(key) or []
        for entry in [entries] if isinstance(entries, str | dict) else entries:
            path = str(entry.get("path") if isinstance(entry, dict) else entry)
            if not _inside(path, workspace):
                found.append(f"{key} {path}")
    if service.get("provider"):  # a plugin binary the compose client runs, in our container
        found.append("provider")
    build = service.get("build") or {}
    if isinstance(build, dict):
        context = str(build.get("context") or "")
        if context and "://" not in context and not _inside(context, workspace):
            found.append(f"build context {context}")
        dockerfile = str(build.get("dockerfile") or "")
        if dockerfile and "://" not in context:
            path = os.path.join(context or ".", dockerfile)  # an absolute one stays absolute
            if not _inside(path, workspace):
                found.append(f"dockerfile {dockerfile}")
        for extra in (build.get("additional_contexts") or {}).values():
            if (
                "://" not in str(extra)
                and ":" not in str(extra)[:20]
                and not _inside(str(extra), workspace)
            ):
                found.append(f"build context {extra}")
        if build.get("ssh"):
            found.append("build ssh")
        if build.get("privileged") or build.get("entitlements"):
            found.append("build entitlements")
    return found


def _inside(path: str, workspace: str) -> bool:
    """Whether `path`, every link followed, is inside `workspace` (a link out is outside)."""
    real = os.path.realpath(path)
    root = os.path.realpath(workspace)
    return real == root or real.startswith(root.rstrip("/") + "/")
