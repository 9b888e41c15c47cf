"""Every exchange with the GitHub API and the cache services is bounded: a deadline on the
whole exchange (a byte every quarter second trips no read timeout) and a cap on the decoded
reply (a gzip bomb, a 200 MB page). Against the real fakes on 127.0.0.1, through the real
clients (PyGithub's requests, httpx) and, for GitHub, through the Action's entrypoint: the run
ends incomplete (exit 3) with report.json written and the cause said."""

from __future__ import annotations

import json
import time

import pytest

from golden_gate.action.cache import entries
from golden_gate.action.cache.service_v1 import CacheServiceV1
from golden_gate.action.cache.service_v2 import CacheServiceV2
from golden_gate.action.github import GitHub
from golden_gate.action.github.client import GitHubError
from golden_gate.limits import MAX_SERVICE_REPLY_BYTES
from tests.fakes.github_server import GitHubServer
from tests.fakes.judge_server import Behaviour, _gzip_bomb

REPO = "octo/docs"
TOKEN = "ghp_FAKEsecretTOKEN0123456789abcdefABCDEF"
TOO_LARGE = f"the reply is larger than {MAX_SERVICE_REPLY_BYTES} bytes"
BOMB = 512 * 1024 * 1024  # 16 times the cap, in half a MiB
HUGE = {
    "gzip bomb": Behaviour.gzip_bomb(BOMB),
    "200 MB": Behaviour.huge(200 * 1024 * 1024),
}


@pytest.fixture(autouse=True, scope="module")
def _bomb_made() -> None:
    _gzip_bomb(BOMB)


@pytest.fixture
def pr(github_server: GitHubServer) -> int:
    github_server.add_user("gate-bot", token=TOKEN)
    github_server.add_repo(REPO, files={"evals/baseline.json": '{"results": []}\n'})
    return github_server.add_pull(REPO, files=["prompts/system.md"]).number


def _client(server: GitHubServer, **kwargs: float) -> GitHub:
    return GitHub(
        token=TOKEN, repository=REPO, api_url=server.api_url, retries=1, backoff_s=0.01, **kwargs
    )


def test_a_trickling_github_is_stopped_at_the_deadline(github_server, pr):
    github_server.hostile("GET", f"/repos/{REPO}/pulls/*/files", Behaviour.trickle(0.1), times=5)
    started = time.monotonic()
    with pytest.raises(GitHubError) as caught:
        _client(github_server, deadline_s=1.0).changed_files(pr)
    assert "no complete answer within 1 s" in str(caught.value)
    assert caught.value.exit_code == 3
    # Each try stopped at its deadline (the trickle is 10 kB at 10 bytes a second).
    assert time.monotonic() - started < 60


def test_the_deadline_is_each_tries_not_the_wait_between_them(github_server, pr):
    _client(github_server).changed_files(pr)  # the fake's first answer loads its OpenAPI
    # A secondary rate limit asks for a 3 s wait: longer than the deadline, and no fault.
    github_server.secondary_rate_limit("GET", f"/repos/{REPO}/pulls/*/files", retry_after=3)
    client = GitHub(
        token=TOKEN, repository=REPO, api_url=github_server.api_url, retries=1, backoff_s=1,
        deadline_s=2,
    )  # fmt: skip
    assert client.changed_files(pr).files == ["prompts/system.md"]
    statuses = [c.status for c in github_server.calls("GET", f"/repos/{REPO}/pulls/*/files")]
    assert statuses == [200, 403, 200]


def test_a_baseline_larger_than_the_reply_cap_is_still_read_as_a_blob(github_server, pr):
    # GitHub serves files up to 100 MB as git blobs (base64 in JSON): a blob's reply has a cap
    # of its own (MAX_BLOB_REPLY_BYTES), above what a 100 MB file takes.
    row = '{"id": "q%07d", "passes": 1, "runs": 1}\n'
    big = "".join(row % i for i in range(MAX_SERVICE_REPLY_BYTES // len(row % 0) + 1000))
    assert len(big) > MAX_SERVICE_REPLY_BYTES
    github_server.commit(REPO, "main", {"evals/baseline.jsonl": big})
    assert _client(github_server).read_file("evals/baseline.jsonl", "main") == big


@pytest.mark.parametrize("kind", list(HUGE))
def test_a_huge_github_reply_is_cut_off_at_the_cap(github_server, pr, kind):
    github_server.hostile("GET", f"/repos/{REPO}/pulls/*/files", HUGE[kind], times=5)
    with pytest.raises(GitHubError) as caught:
        _client(github_server).changed_files(pr)
    assert TOO_LARGE in str(caught.value)
    assert len(github_server.calls("GET", f"/repos/{REPO}/pulls/*/files")) == 1  # not retried


@pytest.mark.parametrize("kind", list(HUGE))
def test_a_huge_baseline_reply_through_the_action_is_an_incomplete_run(world, kind):
    pull = world.pull(["prompts/answer.txt"])
    world.github.hostile("GET", "/repos/*/contents/evals/baseline.json", HUGE[kind], times=10)
    done = world.run(
        "pull_request",
        world.event("pull_request.opened", pull),
        assistant_url="http://127.0.0.1:9",  # never asked: the baseline is looked up first
    )
    assert done.returncode == 3, done.stdout + done.stderr
    assert done.outputs["verdict"] == "incomplete"
    report = json.loads((world.workspace / done.outputs["report-path"]).read_text())
    assert report["complete"] is False and report["results"] == []
    assert TOO_LARGE in report["incomplete_reason"], report["incomplete_reason"]
    assert "Traceback" not in done.stderr


# -- the cache services ------------------------------------------------------------------------


CACHE_CASES = {
    "trickle": (Behaviour.trickle(0.1), "timed out"),
    "gzip bomb": (Behaviour.gzip_bomb(BOMB), TOO_LARGE),
    "200 MB": (Behaviour.huge(200 * 1024 * 1024), TOO_LARGE),
}


@pytest.mark.parametrize("kind", list(CACHE_CASES))
@pytest.mark.parametrize("version", ["v2", "v1"])
def test_a_hostile_cache_lookup_is_a_cold_start_with_its_cause(tmp_path, kind, version):
    from tests.fakes.cache_common import Fault
    from tests.fakes.cache_server import CacheServer
    from tests.fakes.legacy_cache_server import LegacyCacheServer

    behaviour, cause = CACHE_CASES[kind]
    server_class, target = (
        (CacheServer, "GetCacheEntryDownloadURL")
        if version == "v2"
        else (LegacyCacheServer, "getCacheEntry")
    )
    with server_class() as server:
        server.inject(Fault.hostile(target, behaviour))
        common = {"token": server.token, "retries": 0, "backoff_s": 0.01, "deadline_s": 1.0}
        if version == "v2":
            service = CacheServiceV2(results_url=server.results_url, **common)
        else:
            service = CacheServiceV1(cache_url=server.cache_url, **common)
        started = time.monotonic()
        with service:
            result = entries.restore(service, directory=tmp_path / "verdicts", prefix="gg-")
    # The cache is an optimisation: a hostile service is a cold start, said once, never a stop.
    assert result.status == "failed", result
    assert cause in (result.warning or ""), result.warning
    assert server.token not in (result.warning or "")
    assert time.monotonic() - started < 60  # stopped, not read to its end
