"""The compose-started assistant: up, reach, wait for health, record digests, always down.

Inside the Action's container, compose services are siblings on the host's daemon: the action
joins the project's network and addresses the service by name, and bind-mount sources under the
workspace are rewritten to the workspace's path on the host
(docs/architecture.md#the-runner-contract). Outside a container
(local use) the same code talks to the service's published port on 127.0.0.1, as it does in a
container that shares another's network namespace and so cannot join one (act's job container).
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from pydantic import BaseModel, Field, field_validator

from golden_gate import http_bounds, process, runner
from golden_gate.errors import IncompleteError, InputError
from golden_gate.limits import MAX_TIMEOUT_S

WORKSPACE = "/github/workspace"
LOG_TAIL = 80
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


STATUS_ONLY = {http_bounds.STREAMED: True}  # a health check's body is never read


class ComposeSettings(BaseModel):
    file: Path
    project: str
    service: str = "assistant"
    wait_timeout_s: float = Field(default=300.0, gt=0, le=MAX_TIMEOUT_S, allow_inf_nan=False)
    health_path: str = "/health"
    index_snapshot: str | None = None
    env: list[str] = Field(default_factory=list)  # compose-env: names passed (a rule)
    # A pull request's compose file: its resolved model is checked against this checkout
    # (secret_env.check_compose_model) before anything is built or started.
    confine_to: Path | None = None

    @field_validator("project")
    @classmethod
    def _project_name(cls, value: str) -> str:
        # Compose project names: lower-case letters, digits, dashes and underscores.
        cleaned = re.sub(r"[^a-z0-9_-]", "-", value.lower()).strip("-_")
        if not cleaned:
            raise ValueError("compose-project is empty after removing invalid characters")
        return cleaned


class Service(BaseModel):
    url: str
    image_digests: dict[str, str]
    network: str | None = None  # joined by our own container, left again on teardown


def _docker(
    *args: str,
    env: Mapping[str, str] | None = None,
    passed: Iterable[str] = (),
    timeout: float = 600,
    check: bool = True,
) -> subprocess.CompletedProcess[str]:
    try:
        done = subprocess.run(
            ["docker", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**process.child_environment(passed), **(env or {})},
            check=False,
        )
    except FileNotFoundError:
        raise InputError(
            "compose-file needs docker with its compose plugin, and there is no `docker` "
            "on PATH: install Docker (with Compose v2), or set assistant-url instead"
        ) from None
    if check and done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise IncompleteError(f"`docker {' '.join(args[:4])}` failed: {' / '.join(tail)}")
    return done


def own_container_id() -> str | None:
    """Our container's id when the daemon we talk to runs us (the Action), else None."""
    if not Path("/.dockerenv").exists():
        return None
    candidates = []
    # cgroup v2 runners show no id in /proc/self/cgroup; mountinfo has it in the hosts file path.
    try:
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            match = re.search(r"/containers/([0-9a-f]{64})/", line)
            if match:
                candidates.append(match.group(1))
                break
    except OSError:
        pass
    candidates.append(socket.gethostname())
    for candidate in candidates:
        # Only a container this daemon knows can join its networks (we may be in another one).
        done = _docker(
            "inspect", "--type", "container", "--format", "{{.Id}}", candidate, check=False
        )
        if candidate and done.returncode == 0:
            return done.stdout.strip()
    return None


def shared_network_mode(container: str) -> str | None:
    """`host` or `container:<id>` when the container uses another's network namespace."""
    done = _docker(
        "inspect", "--type", "container", "--format", "{{.HostConfig.NetworkMode}}", container,
        check=False,
    )  # fmt: skip
    mode = done.stdout.strip()
    if done.returncode == 0 and (mode == "host" or mode.startswith("container:")):
        return mode
    return None


def host_workspace(container: str) -> str | None:
    """The host path mounted at /github/workspace in our container."""
    done = _docker("inspect", container, "--format", "{{json .Mounts}}", check=False)
    if done.returncode != 0:
        return None
    for mount in json.loads(done.stdout or "[]"):
        if mount.get("Destination") == WORKSPACE:
            return mount.get("Source")
    return None


def _map_binds(config: dict, workspace_host: str) -> dict:
    """Rewrite bind sources under /github/workspace to the host's path of the workspace."""
    for service in (config.get("services") or {}).values():
        for volume in service.get("volumes") or []:
            source = volume.get("source") if isinstance(volume, dict) else None
            if (
                volume.get("type") == "bind"
                and source
                and (source == WORKSPACE or source.startswith(WORKSPACE + "/"))
            ):
                volume["source"] = workspace_host + source[len(WORKSPACE) :]
    return config


def _container_port(config: dict, service: str) -> int:
    spec = (config.get("services") or {}).get(service)
    if spec is None:
        names = ", ".join(sorted(config.get("services") or {}))
        raise InputError(f"input 'compose-service': no service '{service}' (services: {names})")
    for port in spec.get("ports") or []:
        target = port.get("target") if isinstance(port, dict) else None
        if target:
            return int(target)
    for exposed in spec.get("expose") or []:
        return int(str(exposed).split("/")[0].split("-")[0])
    raise InputError(
        f"input 'compose-service': service '{service}' publishes or exposes no port to reach"
    )


class Compose:
    """One compose project's lifecycle; use `with compose.running() as service:`."""

    def __init__(self, settings: ComposeSettings) -> None:
        self.settings = settings
        self.container = own_container_id()
        self.env = {"INDEX_SNAPSHOT": settings.index_snapshot} if settings.index_snapshot else {}
        self._file: Path | None = None
        self._network: str | None = None

    def _compose(self, *args: str, timeout: float = 600, check: bool = True):
        assert self._file is not None
        return _docker(
            "compose",
            "-f",
            str(self._file),
            "-p",
            self.settings.project,
            *args,
            env=self.env,
            passed=self.settings.env,
            timeout=timeout,
            check=check,
        )

    def _config(self) -> dict:
        if not self.settings.file.is_file():
            raise InputError(f"input 'compose-file': {self.settings.file} does not exist")
        done = _docker(
            "compose",
            "-f",
            str(self.settings.file),
            "-p",
            self.settings.project,
            "config",
            "--format",
            "json",
            env=self.env,
            passed=self.settings.env,
            check=False,
        )
        if done.returncode != 0:
            # Without the plugin docker reads `compose -f` as its own flags ("unknown
            # shorthand flag: 'f'"): asked apart, so a missing plugin is not a bad file.
            if _docker("compose", "version", timeout=30, check=False).returncode != 0:
                raise InputError(
                    "compose-file needs Docker's compose plugin (`docker compose`, Compose v2), "
                    "which is not installed here: install the docker-compose-plugin package "
                    "(or Docker Desktop), or set assistant-url instead"
                )
            message = (done.stderr or done.stdout).strip().splitlines()[-1:]
            raise InputError(
                f"{self.settings.file}: not a valid compose file ({' '.join(message)})"
            )
        return json.loads(done.stdout)

    def _prepare(self) -> dict:
        """The resolved config, written where `docker compose` reads it, binds mapped."""
        config = self._config()
        if self.settings.confine_to is not None:
            from golden_gate import secret_env

            secret_env.check_compose_model(
                config,
                passed=self.settings.env,
                workspace=str(self.settings.confine_to),
                project_dir=str(self.settings.file.parent),
                where=f"input 'compose-file' ({self.settings.file.name})",
            )
        if self.container is not None:
            workspace = host_workspace(self.container)
            if workspace:
                config = _map_binds(config, workspace)
        with tempfile.NamedTemporaryFile(
            "w",
            prefix="golden-gate-compose-",
            suffix=".json",
            delete=False,
            dir=self.settings.file.parent,
        ) as handle:
            json.dump(config, handle)
        self._file = Path(handle.name)
        return config

    def _digests(self) -> dict[str, str]:
        digests: dict[str, str] = {}
        ids = self._compose("ps", "-q", check=False).stdout.split()
        for container in ids:
            done = _docker(
                "inspect",
                container,
                "--format",
                '{{index .Config.Labels "com.docker.compose.service"}} {{.Image}}',
                check=False,
            )
            if done.returncode != 0 or not done.stdout.strip():
                continue
            service, image_id = done.stdout.split()
            repo = _docker(
                "image", "inspect", image_id, "--format", "{{json .RepoDigests}}", check=False
            )
            repo_digests = json.loads(repo.stdout or "null") or []
            digests[service] = repo_digests[0] if repo_digests else image_id
        return digests

    def _logs(self) -> None:
        done = self._compose("logs", "--no-color", "--tail", str(LOG_TAIL), check=False)
        text = ANSI.sub("", done.stdout + done.stderr)  # compose 2.26 erases lines even here
        with runner.group(f"compose logs ({self.settings.project}, last {LOG_TAIL} lines)"):
            runner.print_untrusted(text.rstrip() or "(no logs)")

    def _url(self, config: dict) -> str:
        port = _container_port(config, self.settings.service)
        if self.container is not None:
            network = f"{self.settings.project}_default"
            networks = config.get("networks") or {}
            if "default" in networks and networks["default"].get("name"):
                network = networks["default"]["name"]
            joined = _docker("network", "connect", network, self.container, check=False)
            if joined.returncode == 0:
                self._network = network
                return f"http://{self.settings.service}:{port}"
            mode = shared_network_mode(self.container)
            if mode is None:
                tail = (joined.stderr or joined.stdout).strip().splitlines()[-1:]
                raise IncompleteError(
                    f"could not join the compose network {network}: {' '.join(tail)}"
                )
            # act runs a Docker action in its job container's network namespace (the host's
            # by default), which no other network can be joined to: the published port is
            # on this namespace's loopback then.
            print(
                f"golden-gate: this container shares the network of {mode} and cannot join "
                f"{network}; reaching '{self.settings.service}' through its published port"
            )
        return self._published_url(port)

    def _published_url(self, port: int) -> str:
        done = self._compose("port", self.settings.service, str(port), check=False)
        host_port = done.stdout.strip().rsplit(":", 1)[-1]
        if done.returncode != 0 or not host_port.isdigit() or host_port == "0":
            raise IncompleteError(
                f"the compose service '{self.settings.service}' publishes no host port for "
                f"{port}, so it cannot be reached from here: publish it on loopback "
                f'(ports: ["127.0.0.1::{port}"])'
            )
        return f"http://127.0.0.1:{host_port}"

    def _wait_healthy(self, url: str, deadline: float) -> None:
        import httpx  # only with compose-file: not on every eval's start-up

        health = url + self.settings.health_path
        last = "no answer"
        # The pull request's own service answers: each try ends within 5 s however slowly it
        # sends, and only the status is read, never the body (http_bounds.py).
        with http_bounds.httpx_client(timeout_s=5, deadline_s=5, max_reply_bytes=0) as client:
            while time.monotonic() < deadline:
                try:
                    with client.stream("GET", health, extensions=STATUS_ONLY) as response:
                        status = response.status_code
                    if status < 400:
                        return
                    last = f"HTTP {status}"
                except httpx.HTTPError as exc:
                    last = type(exc).__name__
                time.sleep(0.5)
        raise IncompleteError(
            f"the assistant at {health} was not healthy within "
            f"{self.settings.wait_timeout_s:g} s (last: {last})"
        )

    def up(self) -> Service:
        deadline = time.monotonic() + self.settings.wait_timeout_s
        config = self._prepare()
        runner.save_state("compose-project", self.settings.project)
        runner.save_state("compose-file", str(self._file))
        started = self._compose(
            "up",
            "-d",
            "--wait",
            "--wait-timeout",
            str(int(self.settings.wait_timeout_s)),
            timeout=self.settings.wait_timeout_s + 120,
            check=False,
        )
        if started.returncode != 0:
            self._logs()
            reason = (started.stderr or started.stdout).strip().splitlines()[-1:]
            raise IncompleteError(
                f"the assistant did not start: `docker compose up --wait` failed "
                f"({' '.join(reason) or 'no message'}); its logs are above"
            )
        try:
            url = self._url(config)
            self._wait_healthy(url, deadline)
        except IncompleteError:
            self._logs()
            raise
        return Service(url=url, image_digests=self._digests(), network=self._network)

    def down(self) -> None:
        """Always safe to call: leave the network, remove containers, networks and volumes."""
        if self.container is not None and self._network is not None:
            _docker("network", "disconnect", "--force", self._network, self.container, check=False)
            self._network = None
        if self._file is None:
            return
        self._compose("down", "-v", "--remove-orphans", "--timeout", "10", check=False)
        self._file.unlink(missing_ok=True)
        self._file = None

    @contextmanager
    def running(self) -> Iterator[Service]:
        try:
            yield self.up()
        finally:
            with runner.group(f"compose down ({self.settings.project})"):
                self.down()


def project_to_tear_down(env: Mapping[str, str]) -> tuple[str | None, str]:
    """The compose project the post step takes down, and where its name came from.

    The step saves the project before `compose up`; a runner that passes no saved state to a
    Docker action's post step (act does not) still gets the project the inputs name, the
    same one the step used."""
    saved = env.get("STATE_compose-project") or env.get("STATE_COMPOSE-PROJECT")
    if saved:
        return saved, "the step's saved state"
    if not env.get("INPUT_COMPOSE-FILE", "").strip():
        return None, "no compose-file input"
    named = env.get("INPUT_COMPOSE-PROJECT", "").strip()
    fallback = f"golden-gate-{env.get('GITHUB_RUN_ID', 'local')}"
    try:
        project = ComposeSettings(file="-", project=named or fallback).project
    except ValueError:
        return None, "an invalid compose-project input"
    return project, "the inputs (the runner passed no saved state)"


def down_from_state(env: Mapping[str, str]) -> None:
    """The post-entrypoint: tear the project down again in case the step was cancelled."""
    project, source = project_to_tear_down(env)
    if not project:
        return
    file = env.get("STATE_compose-file") or env.get("STATE_COMPOSE-FILE")
    print(f"golden-gate: post: taking down compose project {project} (from {source})")
    args = ["compose", "-p", project]
    if file and Path(file).is_file():
        args[1:1] = ["-f", file]
    _docker(*args, "down", "-v", "--remove-orphans", "--timeout", "10", check=False)
    if file:
        Path(file).unlink(missing_ok=True)
