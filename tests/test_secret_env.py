"""secret_env.py's decisions, one by one (the Action's cases: tests/action/test_secrets.py)."""

from __future__ import annotations

import pytest

from golden_gate.errors import InputError
from golden_gate.secret_env import (
    Trust,
    check_compose_model,
    check_endpoint,
    child_environment,
    is_secret,
    secret_values,
    send_headers,
)


@pytest.mark.parametrize(
    "name",
    [
        "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "INPUT_GITHUB-TOKEN",
        "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ACTIONS_RESULTS_URL",
        "GITHUB_TOKEN", "DB_PASSWORD", "AWS_SECRET_ACCESS_KEY", "SSH_AUTH_SOCK", "NPM_AUTH",
        "GITHUB_PAT", "DB_PASS", "SENTRY_DSN", "GPG_PASSPHRASE", "GITHUB_APP_PRIVATE_KEY",
    ],
)  # fmt: skip
def test_credentials_and_the_runners_variables_are_secrets(name):
    assert is_secret(name)


@pytest.mark.parametrize(
    "name",
    ["PATH", "HOME", "PWD", "INPUT_JUDGE-MODEL", "GITHUB_SHA", "GIT_AUTHOR_NAME", "PASSENGER"],
)
def test_ordinary_variables_are_not(name):
    assert not is_secret(name)


def test_a_child_gets_the_allow_list_and_what_is_passed_by_name():
    env = {
        "PATH": "/usr/bin",
        "HOME": "/root",
        "DOCKER_HOST": "unix:///run/docker.sock",
        "GITHUB_SHA": "abc",
        "GITHUB_TOKEN": "ghs_x",
        "GITHUB_DEPLOY_URL": "https://u:p@deploy",  # the workflow's own GITHUB_ name: not passed
        "OPENAI_API_KEY": "sk-x",
        "DATABASE_URL": "postgres://u:p@db/x",
        "HTTPS_PROXY": "http://user:pass@proxy:3128",
        "NO_PROXY": "localhost",
        "ASSISTANT_KEY": "sk-assistant",
    }
    child = child_environment(env, ["ASSISTANT_KEY", "NOT_SET"])
    assert child == {
        "PATH": "/usr/bin",
        "HOME": "/root",
        "DOCKER_HOST": "unix:///run/docker.sock",
        "GITHUB_SHA": "abc",
        "NO_PROXY": "localhost",
        "ASSISTANT_KEY": "sk-assistant",
    }


def test_secret_values_leave_out_what_is_passed_and_short_values():
    env = {"OPENAI_API_KEY": "sk-long-enough", "X_TOKEN": "short", "A_KEY": "passed-value"}
    assert secret_values(env, except_names=["A_KEY"]) == {"sk-long-enough"}


TRUST = Trust(
    where="golden-gate.toml at main",
    headers={"Authorization": "$TOKEN"},
    assistant_url="https://staging.example/",
    judge_base_url="",
)


def test_headers_without_trust_are_the_users_own():
    sent = send_headers(
        {"X": "$ANY", "Y": "literal"},
        {"ANY": "value"},
        where="--assistant-headers",
        trust=None,
        assistant_url="http://x",
    )
    assert sent == {"X": "value", "Y": "literal"}


def test_a_granted_header_goes_to_the_granted_assistant_only():
    env = {"TOKEN": "t0ken-value", "OTHER": "o"}
    sent = send_headers(
        {"authorization": "$TOKEN", "X-Trace": "1"},
        env,
        where="w",
        trust=TRUST,
        assistant_url="https://staging.example",
    )
    assert sent == {"authorization": "t0ken-value", "X-Trace": "1"}
    with pytest.raises(InputError, match=r"moves the assistant to https://evil\.example"):
        send_headers(
            {"Authorization": "$TOKEN"}, env, where="w", trust=TRUST,
            assistant_url="https://evil.example",
        )  # fmt: skip
    for headers in ({"Authorization": "$OTHER"}, {"X-Other": "$TOKEN"}):
        with pytest.raises(InputError, match="cannot send an environment variable of the job"):
            send_headers(
                headers, env, where="w", trust=TRUST, assistant_url="https://staging.example"
            )


def test_the_judge_endpoint_on_a_pull_request_is_the_trusted_one():
    check_endpoint("", where="w", trust=TRUST)
    check_endpoint("https://evil.example", where="w", trust=None)
    with pytest.raises(InputError, match="would receive the judge's key"):
        check_endpoint("https://evil.example/v1", where="w", trust=TRUST)


def model(**service) -> dict:
    return {"services": {"assistant": {"image": "a", **service}}}


def test_a_confined_model_passes(tmp_path):
    (tmp_path / "pages").mkdir()
    check_compose_model(
        model(
            volumes=[{"type": "bind", "source": str(tmp_path / "pages"), "target": "/srv"}],
            build={"context": str(tmp_path)},
            network_mode="service:db",
        ),
        passed=[],
        workspace=str(tmp_path),
        project_dir=str(tmp_path),
        where="w",
        env={"OPENAI_API_KEY": "sk-secret-value"},
    )


@pytest.mark.parametrize(
    "service",
    [
        {"privileged": True},
        {"cap_add": ["SYS_ADMIN"]},
        {"pid": "host"},
        {"ipc": "container:abc"},
        {"network_mode": "host"},
        {"userns_mode": "host"},
        {"devices": ["/dev/mem"]},
        {"security_opt": ["seccomp=unconfined"]},
        {"volumes_from": ["container:golden-gate"]},
        {"volumes": [{"type": "bind", "source": "/var/run/docker.sock", "target": "/s"}]},
        {"build": {"context": "/"}},
        {"build": {"context": ".", "ssh": ["default"]}},
        {"env_file": ["/proc/1/environ"]},
        {"env_file": [{"path": "/proc/1/environ", "required": False}]},
        {"label_file": "/proc/1/environ"},
        {"build": {"context": ".", "dockerfile": "/proc/1/environ"}},
        {"build": {"context": ".", "dockerfile": "../../../proc/1/environ"}},
        {"provider": {"type": "./steal", "options": {}}},
    ],
)
def test_a_model_that_reaches_the_host_is_refused(tmp_path, service):
    build = service.get("build")
    if build and build["context"] == ".":  # the checkout itself: only the rest is wrong
        service = {**service, "build": {**build, "context": str(tmp_path)}}
    with pytest.raises(InputError, match="may not reach the host"):
        check_compose_model(
            model(**service), passed=[], workspace=str(tmp_path), project_dir=str(tmp_path),
            where="w", env={},
        )  # fmt: skip


def test_a_link_out_of_the_workspace_is_outside(tmp_path):
    (tmp_path / "pages").symlink_to("/etc")
    bind = {"type": "bind", "source": str(tmp_path / "pages"), "target": "/srv"}
    with pytest.raises(InputError, match="bind mount"):
        check_compose_model(
            model(volumes=[bind]), passed=[], workspace=str(tmp_path),
            project_dir=str(tmp_path), where="w", env={},
        )  # fmt: skip


def test_a_secret_value_anywhere_in_the_model_is_refused_unless_passed(tmp_path):
    env = {"OPENAI_API_KEY": "sk-secret-value", "ASSISTANT_KEY": "sk-assistant-key"}
    for where in ({"environment": {"X": "sk-secret-value"}}, {"labels": {"l": "sk-secret-value"}}):
        with pytest.raises(InputError, match="holds the value of a secret"):
            check_compose_model(
                model(**where), passed=[], workspace=str(tmp_path), project_dir=str(tmp_path),
                where="w", env=env,
            )  # fmt: skip
    check_compose_model(
        model(environment={"X": "sk-assistant-key"}), passed=["ASSISTANT_KEY"],
        workspace=str(tmp_path), project_dir=str(tmp_path), where="w", env=env,
    )  # fmt: skip
