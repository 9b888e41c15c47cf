"""golden_gate.action.github through the real PyGithub against the fake GitHub (tests/fakes), whose
every request and answer is checked against GitHub's OpenAPI description."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from golden_gate.action.github import GitHub
from golden_gate.action.github.client import GitHubError, RefNotFound
from golden_gate.rendering.render import marker
from tests.fakes.github_server import (
    ACTIONS_BOT,
    LARGE_FILE,
    GitHubServer,
    PullFile,
    SpecRequest,
    SpecResponse,
    iter_routes,
    validate_request,
    validate_response,
)

REPO = "octo/docs"
TOKEN = "ghp_FAKEsecretTOKEN0123456789abcdefABCDEF"
ACTIONS_TOKEN = "ghs_FAKEactionsTOKEN0123456789abcdefABCD"
APP_TOKEN = "ghs_FAKEappINSTALLATIONtoken0123456789ab"
APP_SLUG = "golden-gate-ci"
LOGIN = "gate-bot"
MARKER = marker("default")
OPENAPI_DIR = Path(__file__).parent.parent / "openapi"


def client(server: GitHubServer, token: str = TOKEN, *, retries: int = 2) -> GitHub:
    return GitHub(
        token=token, repository=REPO, api_url=server.api_url, retries=retries, backoff_s=0.01
    )


@pytest.fixture
def pr(github_server: GitHubServer) -> int:
    """A repository with one pull request; the token's user is gate-bot."""
    github_server.add_user(LOGIN, token=TOKEN)
    github_server.add_repo(REPO, files={"evals/baseline.json": '{"results": []}\n'})
    return github_server.add_pull(REPO, files=["prompts/system.md"]).number


def report(text: str) -> str:
    return f"{MARKER}\n## golden-gate\n\n{text}\n"


# -- the sticky comment -----------------------------------------------------------------------


def test_sticky_comment_on_page_three_is_found_and_edited_in_place(
    github_server: GitHubServer, pr: int
) -> None:
    ours = forged = None
    for i in range(250):
        if i == 40:
            # the marker, by someone else: never ours, whatever it says
            forged = github_server.add_comment(REPO, pr, report("forged"), user="mallory")
        elif i == 60:
            github_server.add_comment(REPO, pr, f"quoting\n{MARKER}", user=LOGIN)
        elif i == 230:
            ours = github_server.add_comment(REPO, pr, report("old"), user=LOGIN)
        elif i == 245:
            github_server.add_comment(REPO, pr, report("newer forgery"), user="mallory")
        else:
            github_server.add_comment(REPO, pr, f"comment {i}", user=("alice", "bob")[i % 2])
    assert ours is not None and forged is not None
    gh = client(github_server)

    first = gh.upsert_comment(pr, report("new"), MARKER)

    assert (first.action, first.id) == ("updated", ours.id)
    assert first.url.endswith(f"/pull/{pr}#issuecomment-{ours.id}")
    pages = github_server.calls("GET", f"/repos/{REPO}/issues/{pr}/comments")
    assert [(c.query.get("page"), c.query["per_page"]) for c in pages] == [
        (None, ["100"]),
        (["2"], ["100"]),
        (["3"], ["100"]),
    ]
    second = gh.upsert_comment(pr, report("newest"), MARKER)
    assert (second.action, second.id) == ("updated", ours.id)

    comments = {c.id: c for c in github_server.comments(REPO, pr)}
    assert len(comments) == 250
    assert comments[ours.id].body == report("newest")
    assert comments[forged.id].body == report("forged")
    assert github_server.calls("POST") == []
    assert {c.path for c in github_server.calls("PATCH")} == {
        f"/repos/{REPO}/issues/comments/{ours.id}"
    }


def test_creates_the_comment_when_there_is_none_then_updates_it(
    github_server: GitHubServer, pr: int
) -> None:
    github_server.add_comment(REPO, pr, "LGTM", user="alice")
    github_server.add_comment(REPO, pr, report("by someone else"), user="mallory")
    gh = client(github_server)

    created = gh.upsert_comment(pr, report("one"), MARKER)
    updated = gh.upsert_comment(pr, report("two"), MARKER)

    assert created.action == "created"
    assert (updated.action, updated.id) == ("updated", created.id)
    mine = [c for c in github_server.comments(REPO, pr) if c.user == LOGIN]
    assert [(c.id, c.body) for c in mine] == [(created.id, report("two"))]
    assert len(github_server.comments(REPO, pr)) == 3


def test_another_gates_marker_is_not_ours(github_server: GitHubServer, pr: int) -> None:
    other = github_server.add_comment(REPO, pr, report("nightly"), user=LOGIN)
    other.body = other.body.replace(MARKER, marker("nightly"))

    result = client(github_server).upsert_comment(pr, report("pr"), MARKER)

    assert result.action == "created" and result.id != other.id


def test_several_matches_update_the_newest(github_server: GitHubServer, pr: int) -> None:
    older = github_server.add_comment(REPO, pr, report("older"), user=LOGIN)
    newer = github_server.add_comment(REPO, pr, report("newer"), user=LOGIN)

    result = client(github_server).upsert_comment(pr, report("now"), MARKER)

    assert (result.action, result.id) == ("updated", newer.id)
    bodies = {c.id: c.body for c in github_server.comments(REPO, pr)}
    assert bodies == {older.id: report("older"), newer.id: report("now")}


def test_comment_deleted_between_listing_and_editing_is_created_anew(
    github_server: GitHubServer, pr: int
) -> None:
    ours = github_server.add_comment(REPO, pr, report("old"), user=LOGIN)

    def delete_after_listing(body: Any) -> Any:
        del github_server.repo(REPO).comments[ours.id]  # someone deletes it meanwhile
        return body

    github_server.mutate("GET", f"/repos/{REPO}/issues/{pr}/comments", delete_after_listing)

    result = client(github_server).upsert_comment(pr, report("new"), MARKER)

    assert result.action == "created" and result.id != ours.id
    assert [c.status for c in github_server.calls("PATCH")] == [404]
    assert [(c.id, c.body) for c in github_server.comments(REPO, pr)] == [
        (result.id, report("new"))
    ]


def test_a_body_without_the_marker_gets_it_first(github_server: GitHubServer, pr: int) -> None:
    gh = client(github_server)

    created = gh.upsert_comment(pr, "custom template\n", MARKER)
    updated = gh.upsert_comment(pr, "custom template, again\n", MARKER)

    assert (updated.action, updated.id) == ("updated", created.id)
    [comment] = github_server.comments(REPO, pr)
    assert comment.body == f"{MARKER}\ncustom template, again\n"


# -- who we are -------------------------------------------------------------------------------


def test_own_login_is_the_tokens_user(github_server: GitHubServer, pr: int) -> None:
    assert client(github_server).own_login() == LOGIN


def test_actions_token_is_github_actions_bot_through_graphql(
    github_server: GitHubServer, pr: int
) -> None:
    github_server.add_actions_token(ACTIONS_TOKEN)
    github_server.add_comment(REPO, pr, report("by a person"), user=LOGIN)
    gh = client(github_server, ACTIONS_TOKEN)

    assert gh.own_login() == ACTIONS_BOT
    created = gh.upsert_comment(pr, report("one"), MARKER)
    updated = gh.upsert_comment(pr, report("two"), MARKER)

    assert [c.status for c in github_server.calls("GET", "/user")] == [403]  # asked once
    assert [c.status for c in github_server.calls("POST", "/graphql")] == [200]
    assert (created.action, updated.action, updated.id) == ("created", "updated", created.id)
    authors = {c.id: c.user for c in github_server.comments(REPO, pr)}
    assert authors[created.id] == ACTIONS_BOT


# A personal token, the Actions GITHUB_TOKEN, and a GitHub App's installation token.
TOKEN_KINDS = {
    "personal": (TOKEN, LOGIN),
    "actions": (ACTIONS_TOKEN, ACTIONS_BOT),
    "app": (APP_TOKEN, f"{APP_SLUG}[bot]"),
}


def add_token(server: GitHubServer, kind: str) -> str:
    if kind == "actions":
        server.add_actions_token(ACTIONS_TOKEN)
    elif kind == "app":
        server.add_app_token(APP_TOKEN, APP_SLUG)
    return TOKEN_KINDS[kind][0]


@pytest.mark.parametrize("kind", TOKEN_KINDS)
def test_five_pushes_keep_one_sticky_comment_for_every_token_kind(
    github_server: GitHubServer, pr: int, kind: str
) -> None:
    token, login = TOKEN_KINDS[kind]
    add_token(github_server, kind)
    # The pull request's author pasted the marker; another app's bot did too. Neither is ours.
    pasted = github_server.add_comment(REPO, pr, report("by the author"), user="author")
    github_server.add_user("other-app[bot]", type="Bot")
    other = github_server.add_comment(REPO, pr, report("another app"), user="other-app[bot]")

    ids = {
        client(github_server, token).upsert_comment(pr, report(f"push {i}"), MARKER).id
        for i in range(5)
    }  # a new process (client) for each push, as in CI

    ours = [c for c in github_server.comments(REPO, pr) if c.user == login]
    assert len(ids) == 1 and [c.id for c in ours] == list(ids)
    assert ours[0].body == report("push 4")
    comments = {c.id: c for c in github_server.comments(REPO, pr)}
    assert comments[pasted.id].body == report("by the author")
    assert comments[other.id].body == report("another app")
    assert len(github_server.calls("PATCH", "*/issues/comments/*")) == 4


def test_a_token_github_will_not_name_never_edits(github_server: GitHubServer, pr: int) -> None:
    # GET /user and GraphQL both refuse: nothing can be proved ours, so a new comment is posted
    # and the marker someone else pasted is left alone.
    github_server.add_app_token(APP_TOKEN, APP_SLUG)
    pasted = github_server.add_comment(REPO, pr, report("by the author"), user="author")
    github_server.fail("POST", "/graphql", status=403, message="Forbidden")
    gh = client(github_server, APP_TOKEN)

    assert gh.own_login() is None
    created = gh.upsert_comment(pr, report("one"), MARKER)

    assert created.action == "created" and created.id != pasted.id
    assert github_server.calls("PATCH") == []
    assert gh.own_login() == f"{APP_SLUG}[bot]"  # learnt from the comment it created


def test_read_only_token_is_a_403_error(github_server: GitHubServer, pr: int) -> None:
    github_server.add_actions_token(ACTIONS_TOKEN, read_only=True)  # a fork's pull request

    with pytest.raises(GitHubError) as caught:
        client(github_server, ACTIONS_TOKEN).upsert_comment(pr, report("x"), MARKER)

    assert caught.value.status == 403
    assert str(caught.value) == "403 Resource not accessible by integration"
    assert "commenting on pull request" in caught.value.action
    assert len(github_server.calls("POST", "/repos/*")) == 1  # a permission error is not retried


# -- changed files ----------------------------------------------------------------------------


def test_changed_files_are_read_page_by_page(github_server: GitHubServer) -> None:
    github_server.add_user(LOGIN, token=TOKEN)
    github_server.add_repo(REPO)
    names = [f"src/module_{i:03d}.py" for i in range(250)]
    number = github_server.add_pull(REPO, files=names).number

    listed = client(github_server).changed_files(number)

    assert (listed.files, listed.capped) == (names, False)
    pages = github_server.calls("GET", f"/repos/{REPO}/pulls/{number}/files")
    assert [c.query.get("page", ["1"])[0] for c in pages] == ["1", "2", "3"]


def test_changed_files_at_githubs_cap_of_3000(github_server: GitHubServer) -> None:
    github_server.add_user(LOGIN, token=TOKEN)
    github_server.add_repo(REPO)
    number = github_server.add_pull(REPO, files=[f"docs/page_{i}.md" for i in range(3500)]).number

    listed = client(github_server).changed_files(number)

    assert len(listed.files) == 3000 and listed.capped
    assert len(github_server.calls("GET", f"/repos/{REPO}/pulls/{number}/files")) == 30


def test_renamed_file_lists_its_previous_name(github_server: GitHubServer) -> None:
    github_server.add_user(LOGIN, token=TOKEN)
    github_server.add_repo(REPO)
    files = [
        PullFile("prompts/answer.md", status="renamed", previous_filename="prompts/old.md"),
        PullFile("README.md"),
    ]
    number = github_server.add_pull(REPO, files=files).number

    listed = client(github_server).changed_files(number)

    assert listed.files == ["prompts/answer.md", "prompts/old.md", "README.md"]
    assert not listed.capped


def test_pull_request_head_and_base(github_server: GitHubServer, pr: int) -> None:
    info = client(github_server).pull_request(pr)
    pull = github_server.repo(REPO).pulls[pr]

    assert (info.number, info.head_sha, info.base_ref, info.head_ref) == (
        pr,
        pull.head_sha,
        "main",
        "feature",
    )


# -- files at a ref ---------------------------------------------------------------------------


def test_read_file_found_missing_and_on_another_ref(github_server: GitHubServer, pr: int) -> None:
    github_server.commit(REPO, "feature", {"evals/baseline.json": '{"results": [1]}\n'})
    gh = client(github_server)

    assert gh.read_file("evals/baseline.json", "main") == '{"results": []}\n'
    assert gh.read_file("evals/baseline.json", "feature") == '{"results": [1]}\n'
    assert gh.read_file("evals/missing.json", "main") is None
    # A ref that does not exist is not "no such file": GitHub says so, and so do we.
    with pytest.raises(RefNotFound) as caught:
        gh.read_file("evals/baseline.json", "no-such-branch")
    assert caught.value.exit_code == 2
    assert "the ref 'no-such-branch' does not exist in" in str(caught.value)
    refs = [c.query["ref"] for c in github_server.calls("GET", f"/repos/{REPO}/contents/*")]
    assert refs == [["main"], ["feature"], ["main"], ["no-such-branch"]]


def test_read_file_over_one_megabyte_goes_through_the_blob_api(
    github_server: GitHubServer, pr: int
) -> None:
    big = "".join(f'{{"id": "q{i:06d}", "passes": 1, "runs": 1}}\n' for i in range(40_000))
    assert len(big) > LARGE_FILE
    github_server.commit(REPO, "main", {"evals/big.jsonl": big})

    assert client(github_server).read_file("evals/big.jsonl", "main") == big
    assert len(github_server.calls("GET", f"/repos/{REPO}/git/blobs/*")) == 1


def test_read_file_of_a_directory_or_binary_is_an_error(
    github_server: GitHubServer, pr: int
) -> None:
    github_server.commit(REPO, "main", {"evals/logo.png": b"\x89PNG\r\n\x1a\n\xff\xfe"})
    gh = client(github_server)

    with pytest.raises(GitHubError, match="evals at main is a directory"):
        gh.read_file("evals", "main")
    with pytest.raises(GitHubError, match="not UTF-8"):
        gh.read_file("evals/logo.png", "main")


# -- faults -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("status", "headers"), [(502, {}), (500, {}), (429, {"Retry-After": "0"})])
def test_a_fault_once_is_retried(
    github_server: GitHubServer, pr: int, status: int, headers: dict[str, str]
) -> None:
    comments = f"/repos/{REPO}/issues/{pr}/comments"
    github_server.fail("GET", comments, status=status, headers=headers)

    result = client(github_server).upsert_comment(pr, report("x"), MARKER)

    assert result.action == "created"
    assert [c.status for c in github_server.calls("GET", comments)] == [status, 200]


@pytest.mark.parametrize("retry_after", [1, None], ids=["retry-after", "message-only"])
def test_a_secondary_rate_limit_is_retried(
    github_server: GitHubServer, pr: int, retry_after: int | None
) -> None:
    github_server.secondary_rate_limit(
        "POST", f"/repos/{REPO}/issues/*/comments", retry_after=retry_after
    )

    result = client(github_server).upsert_comment(pr, report("x"), MARKER)

    assert result.action == "created"
    assert [c.status for c in github_server.calls("POST")] == [403, 201]
    assert len(github_server.comments(REPO, pr)) == 1


def test_a_lasting_outage_is_an_error_with_its_status(github_server: GitHubServer, pr: int) -> None:
    github_server.fail("GET", f"/repos/{REPO}/pulls/*/files", status=503, times=10)

    with pytest.raises(GitHubError) as caught:
        client(github_server, retries=2).changed_files(pr)

    assert caught.value.status == 503
    assert len(github_server.calls("GET", f"/repos/{REPO}/pulls/*/files")) == 3


def test_retries_zero_makes_one_attempt(github_server: GitHubServer, pr: int) -> None:
    github_server.fail("GET", f"/repos/{REPO}/contents/*", status=502)

    with pytest.raises(GitHubError) as caught:
        client(github_server, retries=0).read_file("evals/baseline.json", "main")

    assert caught.value.status == 502
    assert len(github_server.calls("GET", f"/repos/{REPO}/contents/*")) == 1


def test_errors_never_contain_the_token(github_server: GitHubServer, pr: int) -> None:
    wrong = TOKEN[:-4] + "0000"
    with pytest.raises(GitHubError) as bad_credentials:
        client(github_server, wrong).changed_files(pr)
    # a server (or proxy) that echoes the credentials back
    github_server.fail("GET", f"/repos/{REPO}/contents/*", status=500, message=f"token {TOKEN}")
    with pytest.raises(GitHubError) as echoed:
        client(github_server, retries=0).read_file("evals/baseline.json", "main")

    assert bad_credentials.value.status == 401
    assert str(bad_credentials.value) == "401 Bad credentials"
    assert str(echoed.value) == "500 token ***"
    for error in (bad_credentials.value, echoed.value):
        text = f"{error} {error!r} {error.action} {error.args}"
        assert TOKEN not in text and wrong not in text
    assert TOKEN not in repr(client(github_server))


def test_unreachable_api_is_an_error_without_status() -> None:
    gh = GitHub(token=TOKEN, repository=REPO, api_url="http://127.0.0.1:9", retries=0)

    with pytest.raises(GitHubError) as caught:
        gh.read_file("evals/baseline.json", "main")

    assert caught.value.status is None
    assert "\n" not in str(caught.value) and TOKEN not in str(caught.value)


def test_importing_the_module_does_not_import_pygithub() -> None:
    code = "import sys, golden_gate.action.github; sys.exit('github' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


# -- the fake itself: validation against GitHub's description ---------------------------------


def test_an_invalid_response_is_a_violation(github_server: GitHubServer, pr: int) -> None:
    github_server.add_comment(REPO, pr, "hello", user="alice")

    def drop_user(comments: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{k: v for k, v in c.items() if k != "user"} for c in comments]

    github_server.mutate("GET", f"/repos/{REPO}/issues/{pr}/comments", drop_user, times=5)

    with pytest.raises(GitHubError) as caught:
        client(github_server, retries=0).upsert_comment(pr, report("x"), MARKER)

    assert caught.value.status == 500 and "OpenAPI violation" in str(caught.value)
    violations = github_server.take_violations()
    assert len(violations) == 1
    assert "'user' is a required property" in violations[0]


def test_an_invalid_request_is_a_violation(github_server: GitHubServer, pr: int) -> None:
    answer = httpx.post(
        f"{github_server.api_url}/repos/{REPO}/issues/{pr}/comments",
        json={"text": "wrong field"},
        headers={"Authorization": f"token {TOKEN}"},
    )

    assert answer.status_code == 500
    violations = github_server.take_violations()
    assert len(violations) == 1 and "'body' is a required property" in violations[0]
    assert github_server.comments(REPO, pr) == []


def test_an_operation_the_fake_does_not_serve_is_a_violation(
    github_server: GitHubServer, pr: int
) -> None:
    answer = httpx.get(f"{github_server.api_url}/repos/{REPO}/branches")

    assert answer.status_code == 500
    assert "serves no such operation" in github_server.take_violations()[0]


def test_the_fake_answers_errors_as_github_does(github_server: GitHubServer, pr: int) -> None:
    api = github_server.api_url
    auth = {"Authorization": f"Bearer {TOKEN}"}

    empty = httpx.post(f"{api}/repos/{REPO}/issues/{pr}/comments", json={"body": ""}, headers=auth)
    too_long = httpx.post(
        f"{api}/repos/{REPO}/issues/{pr}/comments", json={"body": "x" * 65537}, headers=auth
    )
    bad_token = httpx.get(f"{api}/user", headers={"Authorization": "token nope"})
    anonymous = httpx.get(f"{api}/user")
    no_pull = httpx.get(f"{api}/repos/{REPO}/pulls/999", headers=auth)
    no_comment = httpx.delete(f"{api}/repos/{REPO}/issues/comments/1", headers=auth)

    assert empty.status_code == 422
    assert empty.json()["errors"][0] == {
        "resource": "IssueComment",
        "code": "missing_field",
        "field": "body",
    }
    assert too_long.status_code == 422 and "too long" in too_long.text
    assert (bad_token.status_code, bad_token.json()["message"]) == (401, "Bad credentials")
    assert (anonymous.status_code, anonymous.json()["message"]) == (401, "Requires authentication")
    assert no_pull.status_code == 404 and no_comment.status_code == 404


def test_the_fake_paginates_with_githubs_link_header(github_server: GitHubServer, pr: int) -> None:
    for i in range(7):
        github_server.add_comment(REPO, pr, f"c{i}", user="alice")
    url = f"{github_server.api_url}/repos/{REPO}/issues/{pr}/comments"

    middle = httpx.get(url, params={"per_page": 3, "page": 2})
    last = httpx.get(url, params={"per_page": 3, "page": 3})

    links = dict(
        (rel, href) for href, rel in re.findall(r'<([^>]+)>; rel="(\w+)"', middle.headers["Link"])
    )
    assert [c["body"] for c in middle.json()] == ["c3", "c4", "c5"]
    assert links == {
        "next": f"{url}?per_page=3&page=3",
        "last": f"{url}?per_page=3&page=3",
        "prev": f"{url}?per_page=3&page=1",
        "first": f"{url}?per_page=3&page=1",
    }
    assert [c["body"] for c in last.json()] == ["c6"] and 'rel="next"' not in last.headers["Link"]


def test_the_fake_serves_exactly_the_trimmed_operations() -> None:
    trimmed = json.loads((OPENAPI_DIR / "github-trimmed.json").read_text(encoding="utf-8"))
    served = {f"{method} {path}" for method, path in iter_routes()}
    assert served == set(trimmed["info"]["x-trimmed-from"]["operations"])


def _spec_template(method: str, path: str) -> tuple[str, dict[str, str]]:
    trimmed = json.loads((OPENAPI_DIR / "github-trimmed.json").read_text(encoding="utf-8"))
    for template, item in trimmed["paths"].items():
        pattern = re.sub(
            r"\{(\w+)\}",
            lambda m: f"(?P<{m[1]}>.*)" if m[1] == "path" else f"(?P<{m[1]}>[^/]+)",
            template,
        )
        found = re.fullmatch(pattern, path)
        if found and method.lower() in item:
            return template, found.groupdict()
    raise AssertionError(f"{method} {path} is not in the trimmed description")


SAMPLE = json.loads((OPENAPI_DIR / "fixtures-sample.json").read_text(encoding="utf-8"))


def _replay(exchange: dict[str, Any]) -> tuple[SpecRequest, SpecResponse]:
    path, _, query = exchange["path"].partition("?")
    template, params = _spec_template(exchange["method"], path)
    body = exchange["request_body"]
    raw = json.dumps(body).encode() if body is not None else None
    request = SpecRequest(
        exchange["method"],
        path,
        template,
        params,
        query,
        list(exchange["request_headers"].items()),
        raw,
    )
    data = json.dumps(exchange["response_body"]).encode()
    response = SpecResponse(exchange["status"], list(exchange["response_headers"].items()), data)
    return request, response


@pytest.mark.parametrize("exchange", SAMPLE["exchanges"], ids=lambda e: e["scenario"])
def test_real_github_exchanges_pass_the_validator(exchange: dict[str, Any]) -> None:
    request, response = _replay(exchange)

    assert validate_request(request) is None
    assert validate_response(request, response) is None


def test_a_broken_real_exchange_fails_the_validator() -> None:
    exchange = next(e for e in SAMPLE["exchanges"] if e["scenario"] == "paginate-issues[0]")
    broken = json.loads(json.dumps(exchange))
    del broken["response_body"][0]["number"]
    broken["response_body"][1]["locked"] = "no"

    request, response = _replay(broken)
    problem = validate_response(request, response)

    assert problem is not None
    assert "at 0: 'number' is a required property" in problem
    assert "at 1/locked: 'no' is not of type 'boolean'" in problem
