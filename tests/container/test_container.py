"""The container tier: OUR built image run exactly as the GitHub runner runs a Docker container
action, on a real Docker engine (docs/architecture.md#the-runner-contract and
docs/architecture.md#tools-that-work-offline).

What runs, as on a runner for a job with `services:`:

- a user-defined network per test (`github_network_<hex>`, the runner's name for it);
- the fakes from `golden-gate-fakes:test` on it, under the aliases `github` (the REST API,
  every request and answer checked against GitHub's OpenAPI description) and `judge` (an
  OpenAI-compatible chat completions server that derives verdicts from the prompt); each is
  also published on 127.0.0.1 so this process can read them back through loopback;
- `golden-gate-action:test` started with the runner's `docker run` options: `--workdir`,
  `--rm`, `--network`, the five mounts (the Docker socket, home, workflow, file commands and the
  workspace), the `INPUT_*` variables with hyphens kept and the `GITHUB_*` variables; then the
  post step, a new container from the same image with `--entrypoint /action/post-entrypoint`
  and the `STATE_*` variables from the state file.

The gate starts the assistant from the workspace's compose file through the mounted socket: a
sibling on the host's engine that the action reaches over the compose project's network. After
every test, passing or failing, nothing of the compose project may be left.

`make test-container` builds the images and runs this; `make test` deselects it (marker
`container`).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from golden_gate.action.yardstick import env_name
from golden_gate.demo import baseline_path
from golden_gate.example_assistant import golden_path
from tests.action_world import ACTION, PAYLOADS, READ_TOKEN, REPO, WRITE_TOKEN, parse_outputs
from tests.engine import docker

pytestmark = pytest.mark.container

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "assistant"
ACTION_IMAGE = os.environ.get("GG_ACTION_IMAGE", "golden-gate-action:test")
FAKES_IMAGE = os.environ.get("GG_FAKES_IMAGE", "golden-gate-fakes:test")
ASSISTANT_IMAGE = os.environ.get("GG_ASSISTANT_IMAGE", "golden-gate-example-assistant:test")
# Labels every object this module creates, so a crashed run's leftovers can be found.
TEST_LABEL = "golden-gate.test=container"
JUDGE_MODEL = "openai:gpt-4.1-mini"
GITHUB_PORT = 8000
JUDGE_PORT = 8001
RUN_TIMEOUT_S = 240


# ---------------------------------------------------------------------------------------------
# docker


def lines(done: subprocess.CompletedProcess) -> list[str]:
    return [line for line in done.stdout.splitlines() if line.strip()]


@pytest.fixture(scope="session", autouse=True)
def engine() -> None:
    """A running engine with compose v2 and the three images (`make test-container`)."""
    if shutil.which("docker") is None or docker("info", check=False).returncode != 0:
        pytest.fail("no Docker engine: run `make test-container` (scripts/setup-docker.sh)")
    missing = [
        image
        for image in (ACTION_IMAGE, FAKES_IMAGE, ASSISTANT_IMAGE)
        if docker("image", "inspect", image, check=False).returncode != 0
    ]
    if missing:
        pytest.fail(f"images not built: {', '.join(missing)}: run `make test-container`")


# ---------------------------------------------------------------------------------------------
# the compose project: what is left of it, and a force-clean


def project_networks(project: str) -> list[str]:
    """The networks of compose project `project`: by compose's label, and by name (a network
    left half-removed may have lost neither; `name=` matches a part of a name)."""
    labelled = docker(
        "network", "ls", "--filter", f"label=com.docker.compose.project={project}",
        "--format", "{{.Name}}",
    )  # fmt: skip
    named = docker("network", "ls", "--filter", f"name={project}", "--format", "{{.Name}}")
    own = {n for n in lines(named) if n == project or n.startswith(f"{project}_")}
    return sorted(own | set(lines(labelled)))


def project_leftovers(project: str) -> list[str]:
    """Containers, networks and volumes of compose project `project` that still exist."""
    label = f"label=com.docker.compose.project={project}"
    containers = lines(docker("ps", "-a", "--filter", label, "--format", "{{.Names}}"))
    volumes = lines(docker("volume", "ls", "--filter", label, "--format", "{{.Name}}"))
    return (
        [f"container {name}" for name in containers]
        + [f"network {name}" for name in project_networks(project)]
        + [f"volume {name}" for name in volumes]
    )


def force_clean(project: str) -> None:
    """Remove whatever is left of compose project `project`, whatever state it is in."""
    label = f"label=com.docker.compose.project={project}"
    ids = lines(docker("ps", "-aq", "--filter", label))
    if ids:
        docker("rm", "-f", "-v", *ids, check=False)
    for network in project_networks(project):
        attached = docker(
            "network", "inspect", network,
            "--format", "{{range $id, $c := .Containers}}{{$id}} {{end}}",
            check=False,
        ).stdout.split()  # fmt: skip
        for container in attached:
            docker("network", "disconnect", "-f", network, container, check=False)
        docker("network", "rm", network, check=False)
    volumes = lines(docker("volume", "ls", "-q", "--filter", label))
    if volumes:
        docker("volume", "rm", "-f", *volumes, check=False)


# ---------------------------------------------------------------------------------------------
# the job: network, fakes, workspace, runner files


def http_json(url: str, token: str | None = None, timeout: float = 60) -> Any:
    # The fake GitHub's first API call loads GitHub's OpenAPI description: seconds when loaded.
    request = urllib.request.Request(url, headers={"Accept": "application/vnd.github+json"})
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(request, timeout=timeout) as answer:
        return json.loads(answer.read())


@dataclass
class Job:
    """One workflow job on the runner: its network, services, workspace and runner files."""

    tmp: Path
    network: str
    run_id: str
    containers: list[str] = field(default_factory=list)
    head_sha: str = ""  # of the pull request, once the event is written
    github_url: str = ""  # through loopback, for this process
    judge_url: str = ""
    runs: int = 0

    @property
    def project(self) -> str:
        """The compose project the gate uses by default (compose-project)."""
        return f"golden-gate-{self.run_id}"

    @property
    def workspace(self) -> Path:
        return self.tmp / "workspace"

    def host_path(self, path: str) -> Path:
        """A path the step wrote (relative to the workspace, or under /github/workspace)."""
        inside = Path(path)
        if inside.is_absolute():
            inside = inside.relative_to("/github/workspace")
        return self.workspace / inside

    # -- services ------------------------------------------------------------------------------

    def service(
        self,
        alias: str,
        image: str,
        *args: str,
        port: int | None = None,
        mounts: tuple[tuple[Path, str], ...] = (),
        env: dict[str, str] | None = None,
    ) -> str:
        """A container on the job's network under `alias`, as the runner starts `services:`;
        with `port`, also published on 127.0.0.1 (returns the loopback base URL)."""
        name = f"gg-{alias}-{secrets.token_hex(4)}"
        command = ["run", "-d", "--name", name, "--label", TEST_LABEL]
        command += ["--network", self.network, "--network-alias", alias]
        for key, value in (env or {}).items():
            command += ["-e", f"{key}={value}"]
        if port is not None:
            command += ["-p", f"127.0.0.1::{port}"]
        for source, target in mounts:
            command += ["-v", f"{source}:{target}:ro"]
        docker(*command, image, *args)
        self.containers.append(name)
        if port is None:
            return ""
        published = docker("port", name, f"{port}/tcp").stdout.split()[0]
        return f"http://{published}"

    def wait_ready(self, url: str, container: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                http_json(url, timeout=2)
                return
            except (OSError, urllib.error.URLError):
                time.sleep(0.1)
        logs = docker("logs", container, check=False)
        raise AssertionError(f"{container} did not answer {url}:\n{logs.stdout}{logs.stderr}")

    def start_fakes(self, scenario: dict[str, Any]) -> None:
        (self.tmp / "scenario.json").write_text(json.dumps(scenario))
        self.github_url = self.service(
            "github",
            FAKES_IMAGE,
            *("github", "--host", "0.0.0.0", "--port", str(GITHUB_PORT)),
            *("--public-url", f"http://github:{GITHUB_PORT}", "--scenario", "/scenario.json"),
            port=GITHUB_PORT,
            mounts=((self.tmp / "scenario.json", "/scenario.json"),),
        )
        self.judge_url = self.service(
            "judge",
            FAKES_IMAGE,
            *("judge", "--host", "0.0.0.0", "--port", str(JUDGE_PORT)),
            port=JUDGE_PORT,
        )
        self.wait_ready(f"{self.github_url}/_fake/violations", self.containers[-2])
        self.wait_ready(f"{self.judge_url}/_fake/stats", self.containers[-1])

    def github(self, path: str) -> Any:
        return http_json(f"{self.github_url}{path}", token=WRITE_TOKEN)

    def violations(self) -> list[str]:
        return http_json(f"{self.github_url}/_fake/violations")["violations"]

    def judge_stats(self) -> dict[str, Any]:
        return http_json(f"{self.judge_url}/_fake/stats")

    # -- the event -----------------------------------------------------------------------------

    def pull_request_event(self, number: int) -> None:
        """The real `pull_request.opened` payload, patched to the fake's pull request."""
        pull = self.github(f"/repos/{REPO}/pulls/{number}")
        payload = json.loads((PAYLOADS / "pull_request.opened.json").read_text())
        payload["repository"]["full_name"] = REPO
        payload["repository"]["name"] = REPO.split("/")[1]
        pr = payload["pull_request"]
        payload["number"] = pr["number"] = number
        pr["base"]["ref"], pr["base"]["sha"] = pull["base"]["ref"], pull["base"]["sha"]
        pr["head"]["ref"], pr["head"]["sha"] = pull["head"]["ref"], pull["head"]["sha"]
        pr["base"]["repo"]["full_name"] = pr["head"]["repo"]["full_name"] = REPO
        pr["head"]["repo"]["fork"] = False
        (self.tmp / "workflow" / "event.json").write_text(json.dumps(payload))
        self.head_sha = pull["head"]["sha"]

    # -- the step, as the runner runs it -------------------------------------------------------

    def runner_env(self, inputs: dict[str, str]) -> dict[str, str]:
        """The step's environment: every input of action.yml (the workflow's value, else the
        default), the runner's variables, and the judge key from the step's `env:`."""
        defaults = {
            env_name(name): str(spec.get("default", ""))
            for name, spec in ACTION["inputs"].items()
            if "${{" not in str(spec.get("default", ""))
        }
        return {
            **defaults,
            "HOME": "/github/home",
            "GITHUB_ACTIONS": "true",
            "CI": "true",
            "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_EVENT_PATH": "/github/workflow/event.json",
            "GITHUB_REPOSITORY": REPO,
            "GITHUB_API_URL": f"http://github:{GITHUB_PORT}",
            "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_SHA": self.head_sha,
            "GITHUB_REF": "refs/pull/1/merge",
            "GITHUB_BASE_REF": "main",
            "GITHUB_HEAD_REF": "change-1",
            "GITHUB_RUN_ID": self.run_id,
            "GITHUB_RUN_ATTEMPT": "1",
            "GITHUB_WORKSPACE": "/github/workspace",
            "GITHUB_OUTPUT": "/github/file_commands/output",
            "GITHUB_STEP_SUMMARY": "/github/file_commands/summary",
            "GITHUB_STATE": "/github/file_commands/state",
            "RUNNER_TEMP": "/github/runner_temp",
            "OPENAI_API_KEY": "sk-test",
            **{env_name(name): value for name, value in inputs.items()},
        }

    def docker_run_command(self, env: dict[str, str], entrypoint: str | None = None):
        """(container name, argv) of `docker run` with the runner's options (actions/runner's
        DockerCommandManager.DockerRun: --name, --label, --workdir, --rm, `-e NAME` for every
        variable, --entrypoint, --network, the mounts, the image)."""
        self.runs += 1
        name = f"gg-step-{self.run_id}-{self.runs}"
        command = ["docker", "run", "--name", name, "--label", TEST_LABEL]
        command += ["--workdir", "/github/workspace", "--rm"]
        for key in env:
            command += ["-e", key]  # values come from the environment, as the runner passes them
        if entrypoint:
            command += ["--entrypoint", entrypoint]
        command += ["--network", self.network]
        for source, target in (
            ("/var/run/docker.sock", "/var/run/docker.sock"),
            (self.tmp / "home", "/github/home"),
            (self.tmp / "workflow", "/github/workflow"),
            (self.tmp / "file_commands", "/github/file_commands"),
            (self.workspace, "/github/workspace"),
        ):
            command += ["-v", f"{source}:{target}"]
        command.append(ACTION_IMAGE)
        return name, command

    def docker_run(
        self, env: dict[str, str], entrypoint: str | None = None
    ) -> subprocess.CompletedProcess:
        name, command = self.docker_run_command(env, entrypoint)
        started = time.perf_counter()
        try:
            done = subprocess.run(
                command,
                env={"PATH": os.environ["PATH"], **env},
                capture_output=True,
                text=True,
                timeout=RUN_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired:
            docker("rm", "-f", name, check=False)
            raise
        done.elapsed = time.perf_counter() - started
        return done

    def reset_file_commands(self) -> None:
        for name in ("output", "summary", "state"):
            (self.tmp / "file_commands" / name).write_text("")

    def read_file_commands(self, done: subprocess.CompletedProcess) -> None:
        files = self.tmp / "file_commands"
        done.outputs = parse_outputs((files / "output").read_text())
        done.summary = (files / "summary").read_text()
        done.state = parse_outputs((files / "state").read_text())

    def run_step(self, **inputs: str) -> subprocess.CompletedProcess:
        """The main step; then `.outputs`, `.summary` and `.state` from the file commands."""
        self.reset_file_commands()
        done = self.docker_run(self.runner_env(inputs))
        self.read_file_commands(done)
        print(f"step: exit {done.returncode} in {done.elapsed:.1f} s")
        return done

    def kill_step_once_compose_runs(self, **inputs: str) -> subprocess.CompletedProcess:
        """The main step, killed (SIGKILL: no clean-up of its own) as soon as a container of
        the compose project exists: a cancelled job, or a runner that lost the step."""
        self.reset_file_commands()
        env = self.runner_env(inputs)
        name, command = self.docker_run_command(env)
        step = subprocess.Popen(
            command,
            env={"PATH": os.environ["PATH"], **env},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        label = f"label=com.docker.compose.project={self.project}"
        deadline = time.monotonic() + 60
        try:
            while not lines(docker("ps", "-aq", "--filter", label)):
                assert step.poll() is None, "the step ended before it started the assistant"
                assert time.monotonic() < deadline, "the step started no compose container"
                time.sleep(0.1)
            docker("kill", name, check=False)
            stdout, stderr = step.communicate(timeout=60)
        finally:
            if step.poll() is None:
                docker("rm", "-f", name, check=False)
                step.kill()
                step.communicate()
        done = subprocess.CompletedProcess(command, step.returncode, stdout, stderr)
        self.read_file_commands(done)
        print(f"step: killed, exit {done.returncode}")
        return done

    def run_post(self, step: subprocess.CompletedProcess, **inputs: str):
        """The post step: a new container from the same image, with the step's saved state."""
        env = self.runner_env(inputs)
        env.update({f"STATE_{name}": value for name, value in step.state.items()})
        done = self.docker_run(env, entrypoint="/action/post-entrypoint")
        print(f"post: exit {done.returncode} in {done.elapsed:.1f} s")
        return done


# The gate's rules, as the repository keeps them: golden-gate.toml at main and in the checkout.
RULES_TOML = f"""golden = "evals/golden.jsonl"
subset-tags = ["smoke"]
baseline = "evals/baseline.json"

[judge]
model = "{JUDGE_MODEL}"
base-url = "http://judge:{JUDGE_PORT}/v1"

[gate]
floor = 0.7
"""


def standard_scenario() -> dict[str, Any]:
    """The repository on the fake: the baseline at main, a pull request touching a prompt."""
    return {
        "actions_tokens": [{"token": WRITE_TOKEN}, {"token": READ_TOKEN, "read_only": True}],
        "users": [{"login": "contributor"}],
        "repos": [
            {
                "name": REPO,
                "files": {
                    "evals/golden.jsonl": golden_path().read_text(),
                    "evals/baseline.json": baseline_path().read_text(),
                    "prompts/answer.txt": "Answer from the documentation and cite it.\n",
                    "golden-gate.toml": RULES_TOML,
                },
            }
        ],
        "commits": [
            {
                "repo": REPO,
                "branch": "change-1",
                "start": "main",
                "files": {"prompts/answer.txt": "Answer more concisely.\n"},
                "message": "Shorter answers",
            }
        ],
        "pulls": [
            {
                "repo": REPO,
                "files": ["prompts/answer.txt"],
                "head": "change-1",
                "title": "Shorter answers",
            }
        ],
    }


@pytest.fixture
def job(tmp_path: Path) -> Iterator[Job]:
    """A job with `services:`: its own network, the fakes on it, a checked-out workspace.

    Teardown, passing or failing: what is left of the compose project is recorded, force-cleaned
    and then reported as a failure, so one test's leftovers never leak into the next; the fakes
    and the network go; and any OpenAPI violation the fake GitHub saw fails the test."""
    run_id = str(7_000_000_000 + secrets.randbelow(999_999_999))
    network = f"github_network_{secrets.token_hex(16)}"
    docker("network", "create", "--label", TEST_LABEL, network)
    job = Job(tmp=tmp_path, network=network, run_id=run_id)
    for folder in ("home", "workflow", "file_commands", "workspace/evals"):
        (tmp_path / folder).mkdir(parents=True)
    shutil.copy(golden_path(), job.workspace / "evals" / "golden.jsonl")
    (job.workspace / "golden-gate.toml").write_text(RULES_TOML)
    # The build context is the checkout's root, where the example's ../.. lands in its own
    # repository: on a pull request a context outside the checkout is refused (secret_env.py).
    (job.workspace / "docker-compose.eval.yml").write_text(
        (EXAMPLE / "docker-compose.eval.yml").read_text().replace("context: ../..", "context: .")
    )
    shutil.copytree(EXAMPLE / "pages", job.workspace / "pages")
    violations: list[str] = []
    try:
        job.start_fakes(standard_scenario())
        job.pull_request_event(1)
        yield job
        violations = job.violations()
    finally:
        leftovers = project_leftovers(job.project)
        force_clean(job.project)
        remaining = project_leftovers(job.project)
        if job.containers:
            docker("rm", "-f", *job.containers, check=False)
        docker("network", "rm", network, check=False)
    assert not leftovers, f"the compose project {job.project} was not torn down: {leftovers}"
    assert not remaining, f"force-clean left {remaining}"
    assert not violations, (
        "the fake GitHub saw requests or answers that GitHub's OpenAPI description does not "
        "allow:\n" + "\n".join(violations)
    )


def gate_inputs(**extra: str) -> dict[str, str]:
    """The step's `with:` (input names as in action.yml); the rules are in golden-gate.toml."""
    return {
        "github-token": WRITE_TOKEN,
        "compose-file": "docker-compose.eval.yml",
        "compose-service": "assistant",
        **extra,
    }


def log_groups(stdout: str) -> list[tuple[str, str]]:
    """The `::group::` sections of a step's log as (title, text). GitHub's log viewer does not
    nest groups (a `::group::` inside another ends it), so a nested one fails the test."""
    groups: list[tuple[str, str]] = []
    title: str | None = None
    body: list[str] = []
    for line in stdout.splitlines():
        if line.startswith("::group::"):
            assert title is None, f"group {line!r} opened inside group {title!r}:\n{stdout}"
            title, body = line.removeprefix("::group::"), []
        elif line.startswith("::endgroup::"):
            assert title is not None, f"::endgroup:: outside a group:\n{stdout}"
            groups.append((title, "\n".join(body)))
            title = None
        elif title is not None:
            body.append(line)
    assert title is None, f"group {title!r} never ended:\n{stdout}"
    return groups


# ---------------------------------------------------------------------------------------------
# the tests


def test_compose_started_candidate_fails_the_gate_and_everything_is_torn_down(job: Job):
    step = job.run_step(**gate_inputs(**{"junit-xml": "golden-gate/junit.xml"}))
    log = step.stdout + step.stderr
    assert step.returncode == 1, log

    out = step.outputs
    assert out["ran"] == "true" and out["verdict"] == "failed", log
    # The candidate variant's six regressions (backups, upgrades: first sentence only;
    # troubleshooting: no citation), as the fake LLM judge sees them through the real SDK.
    assert out["regressions"] == "6" and out["improvements"] == "0" and out["items"] == "14"
    assert "::error title=golden-gate failed::failed: " in step.stdout
    assert "### Regressed items (6)" in step.summary
    log_groups(step.stdout)

    # The judge was the fake, reached by name on the job's network, once per judged answer.
    stats = job.judge_stats()
    assert stats["calls"] == int(out["judge-calls"]) > 0
    assert stats["models"] == [JUDGE_MODEL.split(":", 1)[1]]

    # The sticky comment, read back from the fake GitHub.
    (comment,) = job.github(f"/repos/{REPO}/issues/1/comments")
    assert comment["user"]["login"] == "github-actions[bot]"
    assert "### Regressed items (6)" in comment["body"]
    assert out["comment-url"].endswith(f"/pull/1#issuecomment-{comment['id']}")

    # The report names the compose-started assistant and its image.
    report = json.loads(job.host_path(out["report-path"]).read_text())
    assert report["judge"] == JUDGE_MODEL and len(report["results"]) == 14
    assert report["assistant"]["url"] == "http://assistant:8080"  # the first container port
    digests = report["assistant"]["image_digests"]
    assert "sha256:" in digests["assistant"], digests
    image_id = docker("image", "inspect", ASSISTANT_IMAGE, "--format", "{{.Id}}").stdout.strip()
    assert digests["assistant"] in image_id or image_id in digests["assistant"], digests

    # Later steps run as the `runner` user (uid 1001) and must read what the root step wrote.
    results = ["report.json", "comment.md", "junit.xml"]
    read = docker(
        "run", "--rm", "--user", "1001:1001", "--entrypoint", "sh",
        "-v", f"{job.workspace}:/github/workspace", ACTION_IMAGE, "-c",
        "cd /github/workspace/golden-gate && cat " + " ".join(results) + " >/dev/null "
        "&& stat -c '%a %n' . " + " ".join(results),
        check=False,
    )  # fmt: skip
    assert read.returncode == 0, read.stdout + read.stderr
    assert set(read.stdout.split()[::2]) <= {"644", "755"}, read.stdout

    # The step tore the project down itself; the post step (runner: always) finds nothing to do.
    assert project_leftovers(job.project) == []
    post = job.run_post(step, **gate_inputs())
    assert post.returncode == 0, post.stdout + post.stderr
    assert project_leftovers(job.project) == []


def test_a_service_that_never_becomes_healthy_is_incomplete_with_its_logs(job: Job):
    compose = {
        "services": {
            "assistant": {
                "image": ASSISTANT_IMAGE,
                "command": [
                    "sh",
                    "-c",
                    "echo 'assistant: loading index snapshot nightly-7 failed: no such file'"
                    " && exec python3 -m golden_gate.example_assistant --host 0.0.0.0",
                ],
                "ports": ["127.0.0.1::8080"],
                "healthcheck": {
                    "test": ["CMD", "false"],
                    "interval": "1s",
                    "timeout": "2s",
                    "retries": 2,
                    "start_period": "0s",
                },
            }
        }
    }
    (job.workspace / "docker-compose.unhealthy.yml").write_text(json.dumps(compose, indent=2))
    inputs = gate_inputs(**{"compose-file": "docker-compose.unhealthy.yml", "wait-timeout": "20"})
    step = job.run_step(**inputs)
    log = step.stdout + step.stderr
    assert step.returncode == 3, log

    # The service's own logs, folded in a group, and one clear sentence naming the service.
    logs = [text for _, text in log_groups(step.stdout) if "nightly-7" in text]
    assert logs and "loading index snapshot nightly-7 failed" in logs[0], log
    errors = [line for line in step.stdout.splitlines() if line.startswith("::error")]
    assert any("assistant" in line and "health" in line for line in errors), log
    assert "Traceback" not in log
    assert step.outputs.get("verdict", "incomplete") == "incomplete"
    assert job.judge_stats()["calls"] == 0

    assert project_leftovers(job.project) == []
    post = job.run_post(step, **inputs)
    assert post.returncode == 0, post.stdout + post.stderr
    assert project_leftovers(job.project) == []


def test_assistant_as_a_job_service_reached_by_url(job: Job):
    """Without compose: the assistant as a `services:` container of the job, `assistant-url`."""
    url = job.service("assistant", ASSISTANT_IMAGE, port=8080)
    job.wait_ready(f"{url}/health", job.containers[-1])
    inputs = gate_inputs(**{"compose-file": "", "assistant-url": "http://assistant:8080"})
    step = job.run_step(**inputs)
    log = step.stdout + step.stderr
    # The service runs the image's default variant, baseline: no regression against itself.
    assert step.returncode == 0, log
    out = step.outputs
    assert out["verdict"] == "passed" and out["regressions"] == "0" and out["items"] == "14"
    assert job.judge_stats()["calls"] == int(out["judge-calls"]) > 0
    (comment,) = job.github(f"/repos/{REPO}/issues/1/comments")
    assert "golden-gate" in comment["body"]
    assert job.host_path(out["report-path"]).is_file()


def test_a_killed_step_leaves_the_project_to_the_post_step(job: Job):
    """The runner runs the post step even when the main step was cancelled or killed: with
    the state the step saved before `compose up`, it takes the project down."""
    compose = {
        "services": {
            "assistant": {
                "image": ASSISTANT_IMAGE,
                "healthcheck": {"test": ["CMD", "false"], "interval": "1s", "retries": 1000},
            }
        }
    }
    (job.workspace / "docker-compose.slow.yml").write_text(json.dumps(compose, indent=2))
    inputs = gate_inputs(**{"compose-file": "docker-compose.slow.yml", "wait-timeout": "120"})
    step = job.kill_step_once_compose_runs(**inputs)
    assert step.returncode == 137, step.stdout + step.stderr  # SIGKILL
    assert step.state.get("compose-project") == job.project, step.state
    assert project_leftovers(job.project), "the kill came too late to leave anything behind"

    post = job.run_post(step, **inputs)
    assert post.returncode == 0, post.stdout + post.stderr
    assert project_leftovers(job.project) == []


def test_the_image_builds_a_judge_with_every_supported_provider():
    """Each supported provider's LangChain integration and SDK are installed in the Action
    image and build a judge there (no call is made: the models are built, not used)."""
    code = "\n".join(
        [
            "from golden_gate.evaluation.judge import JudgeSettings, LLMJudge",
            "from golden_gate.evaluation.providers import PROVIDERS, import_integrations",
            "import_integrations()",
            "for name in PROVIDERS:",
            "    model = f'{name}:judge-model'",  # built, never asked: any name will do
            "    LLMJudge(JudgeSettings(model=model, base_url='http://127.0.0.1:9'))",
            "    print(name)",
        ]
    )
    keys = ("OPENAI_API_KEY", "AZURE_OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY")
    env = [arg for key in keys for arg in ("-e", f"{key}=k-test-dummy-key")]
    entrypoint = ("--entrypoint", "/opt/venv/bin/python")
    done = docker("run", "--rm", "--label", TEST_LABEL, *env, *entrypoint, ACTION_IMAGE, "-c", code)
    assert lines(done) == ["openai", "azure_openai", "anthropic", "google_genai", "ollama"]


# ---------------------------------------------------------------------------------------------
# runner-host: a server an earlier `run:` step started on the runner, reached from the Action


def runner_host_step(tmp_path: Path, network: str | None, port: int) -> subprocess.CompletedProcess:
    """The Action as the runner starts it for a job without `services:` (`network` None: no
    `--network`, the default bridge) or with them (the job's network), gating the assistant at
    `http://runner-host:<port>` with the offline judge; `.outputs` and `.report` after."""
    for folder in ("home", "workflow", "file_commands", "workspace"):
        (tmp_path / folder).mkdir(exist_ok=True)
    for name in ("output", "summary", "state"):
        (tmp_path / "file_commands" / name).write_text("")
    (tmp_path / "workspace" / "golden.jsonl").write_text(
        "".join(
            json.dumps({"id": f"q{i}", "question": f"Port {i}?", "reference_key_points": [f"{i}"]})
            + "\n"
            for i in range(3)
        )
    )
    payload = json.loads((PAYLOADS / "workflow_dispatch.json").read_text())
    (tmp_path / "workflow" / "event.json").write_text(json.dumps(payload))
    defaults = {
        env_name(name): str(spec.get("default", ""))
        for name, spec in ACTION["inputs"].items()
        if "${{" not in str(spec.get("default", ""))
    }
    inputs = {
        "github-token": WRITE_TOKEN,
        "golden": "golden.jsonl",
        "subset-tags": "*",
        "judge-model": "keypoints",
        "floor": "0",
        "cache": "off",
        "assistant-url": f"http://runner-host:{port}",
    }
    env = {
        **defaults,
        **{env_name(name): value for name, value in inputs.items()},
        "HOME": "/github/home",
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "workflow_dispatch",
        "GITHUB_EVENT_PATH": "/github/workflow/event.json",
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_API_URL": "http://127.0.0.1:9",  # nothing here asks GitHub
        "GITHUB_SHA": "0" * 40,
        "GITHUB_REF": "refs/heads/main",
        "GITHUB_RUN_ID": str(secrets.randbelow(10**9)),
        "GITHUB_WORKSPACE": "/github/workspace",
        "GITHUB_OUTPUT": "/github/file_commands/output",
        "GITHUB_STEP_SUMMARY": "/github/file_commands/summary",
        "GITHUB_STATE": "/github/file_commands/state",
        "RUNNER_TEMP": "/github/runner_temp",
    }
    name = f"gg-runner-host-{secrets.token_hex(4)}"
    command = ["docker", "run", "--name", name, "--label", TEST_LABEL]
    command += ["--workdir", "/github/workspace", "--rm"]
    for key in env:
        command += ["-e", key]
    if network is not None:
        command += ["--network", network]
    for source, target in (
        ("/var/run/docker.sock", "/var/run/docker.sock"),
        (tmp_path / "home", "/github/home"),
        (tmp_path / "workflow", "/github/workflow"),
        (tmp_path / "file_commands", "/github/file_commands"),
        (tmp_path / "workspace", "/github/workspace"),
    ):
        command += ["-v", f"{source}:{target}"]
    command.append(ACTION_IMAGE)
    try:
        done = subprocess.run(
            command,
            env={"PATH": os.environ["PATH"], **env},
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            check=False,
        )
    finally:
        docker("rm", "-f", name, check=False)
    done.outputs = parse_outputs((tmp_path / "file_commands" / "output").read_text())
    report = tmp_path / "workspace" / "golden-gate" / "report.json"
    done.report = json.loads(report.read_text()) if report.is_file() else None
    return done


@pytest.fixture(params=["default-bridge", "job-network"])
def runner_network(request) -> Iterator[tuple[str | None, str]]:
    """(the `--network` the runner gives the Action, that network's gateway): none for a job
    without `services:` (the default bridge), a `github_network_…` of the job's otherwise."""
    if request.param == "default-bridge":
        yield None, network_gateway("bridge")
        return
    network = f"github_network_{secrets.token_hex(16)}"
    docker("network", "create", "--label", TEST_LABEL, network)
    try:
        yield network, network_gateway(network)
    finally:
        docker("network", "rm", network, check=False)


def network_gateway(network: str) -> str:
    """The gateway of a Docker network: its IPAM's, or (the default bridge's IPAM may name
    none) the address of the host's bridge interface."""
    inspect = docker("network", "inspect", network, "--format", "{{json .}}")
    found = json.loads(inspect.stdout)
    for config in found["IPAM"]["Config"] or []:
        if config.get("Gateway"):
            return config["Gateway"]
    interface = found["Options"]["com.docker.network.bridge.name"]
    shown = subprocess.run(
        ["ip", "-4", "-o", "addr", "show", interface], capture_output=True, text=True, check=True
    ).stdout.split()
    return shown[shown.index("inet") + 1].split("/")[0]


@pytest.mark.parametrize("bound", ["0.0.0.0", "127.0.0.1"])
def test_runner_host_reaches_a_server_on_the_runner(tmp_path: Path, runner_network, bound):
    """A server an earlier `run:` step started on the runner (here: this machine, the engine's
    host) is reached at the gateway of the Action's network when it listens on all interfaces,
    and one bound to 127.0.0.1 only is named, with what to change, and no item is asked."""
    from tests.fakes.assistant_server import AssistantServer

    network, gateway = runner_network
    answers = {f"Port {i}?": f"It is {i}." for i in range(3)}
    with AssistantServer(answers, host=bound) as server:
        port = server.port
        done = runner_host_step(tmp_path, network, port)
        asked = server.request_count
    log = done.stdout + done.stderr
    print(log)
    if bound == "0.0.0.0":
        assert done.returncode == 0, log
        assert done.outputs["verdict"] == "passed", log
        assert f"runner-host is {gateway} (the gateway of this container's network" in log
        assert done.report["assistant"]["url"] == f"http://{gateway}:{port}"
        assert asked == 3
    else:
        assert done.returncode == 3, log
        assert done.outputs["verdict"] == "incomplete", log
        assert f"{gateway} (the gateway of this container's network" in log
        assert "bind 0.0.0.0, not 127.0.0.1" in log
        assert done.report is not None and done.report["complete"] is False
        assert asked == 0
