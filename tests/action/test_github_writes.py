"""The GitHub client's writes for `mode: baseline` (a file change proposed as one pull request)
and `mode: drift` (one labelled issue), through the real PyGithub against the fake GitHub, whose
every request and answer is checked against GitHub's OpenAPI description."""

from __future__ import annotations

import base64
import itertools
import json
from typing import Any

import httpx
import pytest

from golden_gate.action.github import GitHub
from golden_gate.action.github.client import GitHubError
from golden_gate.action.github.issues import LABEL_COLOR, LABEL_DESCRIPTION
from golden_gate.errors import InputError
from tests.fakes.github_server import ACTIONS_BOT, GitHubServer, git_blob_sha

REPO = "octo/docs"
TOKEN = "ghp_FAKEsecretTOKEN0123456789abcdefABCDEF"
ACTIONS_TOKEN = "ghs_FAKEactionsTOKEN0123456789abcdefABCD"
READ_ONLY_TOKEN = "ghs_FAKEreadonlyTOKEN0123456789abcdefABC"
APP_TOKEN = "ghs_FAKEappINSTALLATIONtoken0123456789ab"
APP_SLUG = "golden-gate-ci"
LOGIN = "gate-bot"
BASELINE = "evals/baseline.json"
BRANCH = "golden-gate/baseline"
LABEL = "golden-gate: drift"


def client(server: GitHubServer, token: str = TOKEN, *, retries: int = 2) -> GitHub:
    return GitHub(
        token=token, repository=REPO, api_url=server.api_url, retries=retries, backoff_s=0.01
    )


def report(n: int) -> str:
    return json.dumps({"format": 1, "items": n}, indent=2) + "\n"


@pytest.fixture
def repo(github_server: GitHubServer) -> GitHubServer:
    """A repository whose main branch holds a baseline; the token's user is gate-bot."""
    github_server.add_user(LOGIN, token=TOKEN)
    github_server.add_repo(REPO, files={BASELINE: report(0), "README.md": "# docs\n"})
    return github_server


def propose(gh: GitHub, n: int, **overrides: str) -> Any:
    args = {
        "path": BASELINE,
        "content": report(n),
        "branch": BRANCH,
        "base": "main",
        "title": f"Promote the baseline ({n})",
        "body": f"The new baseline, run {n}.\n",
        "commit_message": f"Promote the baseline ({n})",
    }
    return gh.propose_file_change(**{**args, **overrides})


def writes(server: GitHubServer) -> list[str]:
    return [f"{r.method} {r.path}" for r in server.requests if r.method != "GET"]


# -- baseline promotion -----------------------------------------------------------------------


def test_promotion_opens_one_pull_request_with_the_new_file(repo: GitHubServer) -> None:
    gh = client(repo)
    main_before = repo.repo(REPO).refs["heads/main"]

    result = propose(gh, 1, body="**Pass rate** 0.93 → 0.95\n")

    state = repo.repo(REPO)
    [pull] = state.pulls.values()
    assert (result.action, result.number) == ("created", pull.number)
    assert result.url == f"https://github.com/{REPO}/pull/{pull.number}"
    assert (pull.title, pull.body, pull.state) == (
        "Promote the baseline (1)",
        "**Pass rate** 0.93 → 0.95\n",
        "open",
    )
    assert (pull.head_ref, pull.base_ref, pull.user) == (BRANCH, "main", LOGIN)
    assert result.commit_sha == state.refs[f"heads/{BRANCH}"] == pull.head_sha
    commit = state.commits[result.commit_sha]
    assert (commit.message, commit.author, commit.parents) == (
        "Promote the baseline (1)",
        LOGIN,
        [main_before],
    )
    assert repo.branch_files(REPO, BRANCH)[BASELINE] == report(1).encode()
    assert repo.branch_files(REPO, "main")[BASELINE] == report(0).encode()  # main untouched
    assert gh.read_file(BASELINE, BRANCH) == report(1)
    assert gh.changed_files(pull.number).files == [BASELINE]
    assert writes(repo) == [
        f"POST /repos/{REPO}/git/refs",
        f"PUT /repos/{REPO}/contents/{BASELINE}",
        f"POST /repos/{REPO}/pulls",
    ]
    [put] = repo.calls("PUT")
    assert put.body["sha"] == git_blob_sha(report(0).encode())  # the file it replaces
    assert put.body["branch"] == BRANCH
    [listing] = repo.calls("GET", f"/repos/{REPO}/pulls")
    assert listing.query["head"] == [f"octo:{BRANCH}"] and listing.query["state"] == ["open"]


def test_a_second_promotion_updates_the_same_pull_request(repo: GitHubServer) -> None:
    gh = client(repo)
    first = propose(gh, 1)

    second = propose(gh, 2, title="Promote the baseline again")

    state = repo.repo(REPO)
    [pull] = state.pulls.values()  # one pull request, still open
    assert (second.action, second.number) == ("updated", first.number)
    assert (pull.state, pull.title, pull.body) == (
        "open",
        "Promote the baseline again",
        "The new baseline, run 2.\n",
    )
    assert second.commit_sha != first.commit_sha
    assert state.commits[second.commit_sha].parents == [first.commit_sha]  # a new commit on top
    assert pull.head_sha == second.commit_sha
    assert repo.branch_files(REPO, BRANCH)[BASELINE] == report(2).encode()
    assert gh.read_file(BASELINE, BRANCH) == report(2)
    assert gh.changed_files(pull.number).files == [BASELINE]
    assert len(repo.calls("POST", f"/repos/{REPO}/pulls")) == 1
    assert [c.body for c in repo.calls("PATCH", f"/repos/{REPO}/pulls/*")] == [
        {"title": "Promote the baseline again", "body": "The new baseline, run 2.\n"}
    ]
    assert repo.calls("PATCH", f"/repos/{REPO}/git/refs/*") == []  # never reset under a PR


def test_the_same_content_again_updates_only_the_pull_request(repo: GitHubServer) -> None:
    gh = client(repo)
    first = propose(gh, 1)

    again = propose(gh, 1, body="Same numbers, new words.\n")

    assert (again.action, again.number, again.commit_sha) == (
        "updated",
        first.number,
        first.commit_sha,
    )
    assert len(repo.calls("PUT")) == 1
    assert repo.repo(REPO).pulls[first.number].body == "Same numbers, new words.\n"


def test_after_a_merge_the_branch_starts_again_from_base(repo: GitHubServer) -> None:
    gh = client(repo)
    first = propose(gh, 1)
    # the pull request is merged (squashed) and closed; the branch stays
    merged = repo.commit(REPO, "main", {BASELINE: report(1)}, message="Promote (#1)")
    repo.repo(REPO).pulls[first.number].state = "closed"

    second = propose(gh, 2)

    state = repo.repo(REPO)
    assert second.action == "created" and second.number != first.number
    assert [p.state for p in state.pulls.values()] == ["closed", "open"]
    assert state.commits[second.commit_sha].parents == [merged]  # reset to main first
    assert [c.body for c in repo.calls("PATCH", f"/repos/{REPO}/git/refs/*")] == [
        {"sha": merged, "force": True}
    ]
    assert gh.changed_files(second.number).files == [BASELINE]


def test_a_new_file_is_created_on_the_branch(repo: GitHubServer) -> None:
    gh = client(repo)

    result = propose(gh, 1, path="evals/nightly/baseline.json")

    assert result is not None and result.action == "created"
    assert "sha" not in repo.calls("PUT")[0].body
    assert repo.branch_files(REPO, BRANCH)["evals/nightly/baseline.json"] == report(1).encode()


def test_an_unchanged_file_proposes_nothing(repo: GitHubServer) -> None:
    assert propose(client(repo), 0) is None
    assert writes(repo) == []
    assert repo.repo(REPO).pulls == {}


def test_a_pull_request_opened_meanwhile_is_updated_not_duplicated(repo: GitHubServer) -> None:
    def someone_opens_one(body: Any) -> Any:
        repo.add_pull(REPO, head=BRANCH, user="alice", title="Theirs")
        return body

    repo.mutate("PUT", f"/repos/{REPO}/contents/*", someone_opens_one)

    result = propose(client(repo), 1)

    [pull] = repo.repo(REPO).pulls.values()
    assert (result.action, result.number) == ("updated", pull.number)
    assert [c.status for c in repo.calls("POST", f"/repos/{REPO}/pulls")] == [422]
    assert pull.body == "The new baseline, run 1.\n"


def test_the_branch_must_not_be_the_base_or_the_default_branch(repo: GitHubServer) -> None:
    gh = client(repo)
    repo.commit(REPO, "release", {}, start="main")

    with pytest.raises(InputError, match="must not be 'main'"):
        propose(gh, 1, branch="main")
    with pytest.raises(InputError, match="must not be 'main'"):
        propose(gh, 1, branch="main", base="release")
    with pytest.raises(InputError, match="must not be 'release'"):
        propose(gh, 1, branch="release", base="release")
    assert writes(repo) == []


def test_a_missing_base_branch_is_a_404(repo: GitHubServer) -> None:
    with pytest.raises(GitHubError) as caught:
        propose(client(repo), 1, base="no-such-branch")

    assert caught.value.status == 404 and "no-such-branch" in str(caught.value)
    assert writes(repo) == []


def test_actions_not_permitted_to_open_pull_requests(repo: GitHubServer) -> None:
    repo.add_actions_token(ACTIONS_TOKEN)
    repo.repo(REPO).actions_can_create_pulls = False  # the repository setting, off

    with pytest.raises(GitHubError) as caught:
        propose(client(repo, ACTIONS_TOKEN), 1)

    assert caught.value.status == 403
    assert "not permitted to create or approve pull requests" in str(caught.value)
    assert "opening a pull request" in caught.value.action
    assert repo.branch_files(REPO, BRANCH)[BASELINE] == report(1).encode()  # the commit stays
    assert repo.repo(REPO).commits[repo.repo(REPO).refs[f"heads/{BRANCH}"]].author == ACTIONS_BOT


# -- file history -----------------------------------------------------------------------------


def test_file_history_counts_the_rewrites(repo: GitHubServer) -> None:
    gh = client(repo)
    for n in range(1, 4):
        repo.commit(REPO, "main", {"README.md": f"# docs {n}\n"}, message=f"docs {n}")
        repo.commit(REPO, "main", {BASELINE: report(n)}, message=f"baseline {n}")
    repo.commit(REPO, "main", {"README.md": "# docs\n"}, message="docs again")
    repo.commit(REPO, "elsewhere", {BASELINE: report(99)}, start="main")  # another branch

    history = gh.file_history(BASELINE, ref="main")

    assert [v.message for v in history] == ["baseline 3", "baseline 2", "baseline 1", "commit"]
    assert all(a.date > b.date for a, b in itertools.pairwise(history))
    assert history[0].date.tzinfo is not None
    assert gh.read_file(BASELINE, ref=history[1].sha) == report(2)
    assert [v.message for v in gh.file_history(BASELINE, ref="main", limit=2)] == [
        "baseline 3",
        "baseline 2",
    ]
    assert len(gh.file_history(BASELINE, ref="elsewhere")) == 5
    assert gh.file_history("evals/none.json", ref="main") == []
    listing = repo.calls("GET", f"/repos/{REPO}/commits")[0]
    assert (listing.query["path"], listing.query["sha"]) == ([BASELINE], ["main"])


def test_file_history_of_promotions_and_across_pages(repo: GitHubServer) -> None:
    gh = client(repo)
    for n in range(1, 131):
        repo.commit(REPO, "main", {BASELINE: report(n)}, message=f"baseline {n}")

    assert len(gh.file_history(BASELINE, ref="main")) == 20
    assert len(repo.calls("GET", f"/repos/{REPO}/commits")) == 1
    longer = gh.file_history(BASELINE, ref="main", limit=500)
    assert len(longer) == 131 and longer[0].message == "baseline 130"
    assert len(repo.calls("GET", f"/repos/{REPO}/commits")) == 3  # 1 + two pages of 100


def test_file_history_of_a_missing_ref_is_a_404(repo: GitHubServer) -> None:
    with pytest.raises(GitHubError) as caught:
        client(repo).file_history(BASELINE, ref="no-such-branch")

    assert caught.value.status == 404


def test_default_branch(github_server: GitHubServer) -> None:
    github_server.add_user(LOGIN, token=TOKEN)
    github_server.add_repo(REPO, default_branch="trunk")
    gh = client(github_server)

    assert gh.default_branch() == gh.default_branch() == "trunk"
    assert len(github_server.calls("GET", f"/repos/{REPO}")) == 1


# -- drift alerts: one labelled issue ---------------------------------------------------------


def test_a_failure_opens_one_issue_and_makes_the_label_once(repo: GitHubServer) -> None:
    gh = client(repo)

    first = gh.open_or_update_issue(label=LABEL, title="Drift: 3 regressions", body="one")
    second = gh.open_or_update_issue(label=LABEL, title="Drift: 4 regressions", body="two")

    [issue] = repo.issues(REPO)
    assert (first.action, second.action) == ("created", "updated")
    assert first.number == second.number == issue.number
    assert first.url == f"https://github.com/{REPO}/issues/{issue.number}"
    assert (issue.title, issue.body, issue.labels, issue.user, issue.state) == (
        "Drift: 4 regressions",
        "two",
        [LABEL],
        LOGIN,
        "open",
    )
    label = repo.repo(REPO).labels[LABEL]
    assert (label.color, label.description) == (LABEL_COLOR, LABEL_DESCRIPTION)
    assert len(repo.calls("POST", f"/repos/{REPO}/labels")) == 1
    assert len(repo.calls("POST", f"/repos/{REPO}/issues")) == 1
    found = gh.find_issue(LABEL)
    assert found is not None and (found.number, found.title, found.body) == (
        issue.number,
        "Drift: 4 regressions",
        "two",
    )


def test_an_existing_label_is_used_as_it_is(repo: GitHubServer) -> None:
    repo.add_label(REPO, LABEL.upper(), color="0e8a16", description="ours")

    client(repo).open_or_update_issue(label=LABEL, title="Drift", body="x")

    assert repo.calls("POST", f"/repos/{REPO}/labels") == []
    assert repo.issues(REPO)[0].labels == [LABEL.upper()]  # names are case-insensitive
    assert repo.repo(REPO).labels[LABEL.lower()].color == "0e8a16"


def test_the_issue_on_page_two_is_found_and_updated(repo: GitHubServer) -> None:
    ours = repo.add_issue(REPO, title="Drift", user=LOGIN, labels=[LABEL])
    for i in range(130):  # newer issues with the label, by others, list first
        repo.add_issue(REPO, title=f"report {i}", user=("alice", "bob")[i % 2], labels=[LABEL])
    repo.add_issue(REPO, title="unrelated", user=LOGIN, labels=["bug"])

    result = client(repo).open_or_update_issue(label=LABEL, title="Drift again", body="new")

    assert (result.action, result.number) == ("updated", ours.number)
    assert ours.body == "new" and len(repo.issues(REPO)) == 132
    pages = repo.calls("GET", f"/repos/{REPO}/issues")
    assert [c.query.get("page", ["1"])[0] for c in pages] == ["1", "2"]
    assert all(c.query["labels"] == [LABEL] and c.query["state"] == ["open"] for c in pages)
    assert repo.calls("POST", f"/repos/{REPO}/issues") == []


def test_a_pull_request_or_someone_elses_issue_with_the_label_is_not_it(
    repo: GitHubServer,
) -> None:
    pull = repo.add_pull(REPO, user=LOGIN, labels=[LABEL], title="Ours, but a pull request")
    theirs = repo.add_issue(REPO, title="Drift?", user="mallory", labels=[LABEL])
    gh = client(repo)

    assert gh.find_issue(LABEL) is None
    assert gh.close_issue(LABEL, "fixed") is None
    created = gh.open_or_update_issue(label=LABEL, title="Drift", body="x")

    assert created.action == "created" and created.number not in (pull.number, theirs.number)
    assert (pull.title, pull.state, theirs.body, theirs.state) == (
        "Ours, but a pull request",
        "open",
        None,
        "open",
    )
    assert repo.calls("PATCH") == [] and repo.comments(REPO, pull.number) == []
    # GitHub does list the pull request among the issues
    listed = httpx.get(f"{repo.api_url}/repos/{REPO}/issues", params={"labels": LABEL}).json()
    assert {i["number"]: "pull_request" in i for i in listed} == {
        pull.number: True,
        theirs.number: False,
        created.number: False,
    }


def test_a_pass_closes_the_issue_with_a_comment(repo: GitHubServer) -> None:
    gh = client(repo)
    opened = gh.open_or_update_issue(label=LABEL, title="Drift", body="x")

    closed = gh.close_issue(LABEL, "The nightly run passes again.")

    [issue] = repo.issues(REPO)
    assert closed is not None and (closed.action, closed.number) == ("closed", opened.number)
    assert (issue.state, issue.state_reason, issue.closed_by) == ("closed", "completed", LOGIN)
    assert [(c.body, c.user) for c in repo.comments(REPO, issue.number)] == [
        ("The nightly run passes again.", LOGIN)
    ]
    assert [c.body for c in repo.calls("PATCH", f"/repos/{REPO}/issues/*")] == [
        {"state": "closed", "state_reason": "completed"}
    ]
    assert gh.close_issue(LABEL, "again") is None  # nothing open: nothing to do
    assert gh.find_issue(LABEL) is None
    reopened = gh.open_or_update_issue(label=LABEL, title="Drift", body="y")
    assert reopened.action == "created" and reopened.number != opened.number
    assert len(repo.calls("POST", f"/repos/{REPO}/labels")) == 1


def test_duplicates_are_all_closed(repo: GitHubServer) -> None:
    older = repo.add_issue(REPO, title="Drift", user=LOGIN, labels=[LABEL])
    newer = repo.add_issue(REPO, title="Drift", user=LOGIN, labels=[LABEL])
    gh = client(repo)

    found = gh.find_issue(LABEL)
    closed = gh.close_issue(LABEL, "")

    assert found is not None and found.number == newer.number
    assert closed is not None and closed.number == newer.number
    assert (older.state, newer.state) == ("closed", "closed")
    assert repo.calls("POST", f"/repos/{REPO}/issues/*/comments") == []  # empty: no comment


def test_a_label_with_a_comma_cannot_be_searched_for(repo: GitHubServer) -> None:
    with pytest.raises(InputError, match="without commas"):
        client(repo).open_or_update_issue(label="drift,nightly", title="Drift", body="x")
    assert repo.requests == []


def test_the_actions_token_finds_its_own_issue(repo: GitHubServer) -> None:
    repo.add_actions_token(ACTIONS_TOKEN)
    repo.add_issue(REPO, title="Drift", user=LOGIN, labels=[LABEL])  # a person's, not ours
    gh = client(repo, ACTIONS_TOKEN)

    first = gh.open_or_update_issue(label=LABEL, title="Drift", body="one")
    second = gh.open_or_update_issue(label=LABEL, title="Drift", body="two")

    assert (first.action, second.action, second.number) == ("created", "updated", first.number)
    assert [i.user for i in repo.issues(REPO)] == [LOGIN, ACTIONS_BOT]


@pytest.mark.parametrize("kind", ["personal", "actions", "app"])
def test_five_failing_runs_keep_one_drift_issue_for_every_token_kind(
    repo: GitHubServer, kind: str
) -> None:
    token, login = {
        "personal": (TOKEN, LOGIN),
        "actions": (ACTIONS_TOKEN, ACTIONS_BOT),
        "app": (APP_TOKEN, f"{APP_SLUG}[bot]"),
    }[kind]
    if kind == "actions":
        repo.add_actions_token(ACTIONS_TOKEN)
    elif kind == "app":
        repo.add_app_token(APP_TOKEN, APP_SLUG)
    repo.add_issue(REPO, title="Drift", user="someone", labels=[LABEL])  # not ours

    for run in range(5):  # a new process (client) for each scheduled run, as in CI
        client(repo, token).open_or_update_issue(label=LABEL, title="Drift", body=f"run {run}")

    ours = [i for i in repo.issues(REPO, label=LABEL) if i.user == login]
    assert [i.body for i in ours] == ["run 4"]
    assert [i.body for i in repo.issues(REPO) if i.user == "someone"] == [None]
    closed = client(repo, token).close_issue(LABEL, "passes again")
    assert closed is not None and closed.number == ours[0].number


# -- permissions and errors -------------------------------------------------------------------


def test_a_read_only_token_is_a_403_without_the_token(repo: GitHubServer) -> None:
    repo.add_actions_token(READ_ONLY_TOKEN, read_only=True)
    number = repo.add_issue(REPO, title="Drift", user=ACTIONS_BOT, labels=[LABEL]).number
    gh = client(repo, READ_ONLY_TOKEN)

    errors: list[GitHubError] = []
    for write in (
        lambda: propose(gh, 1),
        lambda: gh.open_or_update_issue(label=LABEL, title="Drift", body="x"),
        lambda: gh.open_or_update_issue(label="other", title="Drift", body="x"),
        lambda: gh.close_issue(LABEL, "fixed"),
    ):
        with pytest.raises(GitHubError) as caught:
            write()
        errors.append(caught.value)

    for error in errors:
        assert error.status == 403
        assert str(error) == "403 Resource not accessible by integration"
        text = f"{error} {error!r} {error.action} {error.args}"
        assert READ_ONLY_TOKEN not in text and TOKEN not in text
    assert [e.action.split(" in ")[0] for e in errors] == [
        f"creating branch {BRANCH}",
        f"updating issue #{number}",
        "making the label 'other'",
        f"closing issue #{number}",
    ]
    assert f"heads/{BRANCH}" not in repo.repo(REPO).refs
    assert [i.state for i in repo.issues(REPO)] == ["open"]
    # GraphQL's `viewer` (who the token is) is a read sent as a POST
    posted = [r for r in repo.requests if r.method != "GET" and r.path != "/graphql"]
    assert all(r.status == 403 for r in posted)


# -- the fake itself: GitHub's answers to bad writes ------------------------------------------


def test_the_fake_refuses_writes_as_github_does(repo: GitHubServer) -> None:
    api = f"{repo.api_url}/repos/{REPO}"
    auth = {"Authorization": f"token {TOKEN}"}
    content = base64.b64encode(b"{}\n").decode()
    old_sha = git_blob_sha(report(0).encode())

    no_sha = httpx.put(
        f"{api}/contents/{BASELINE}", json={"message": "m", "content": content}, headers=auth
    )
    wrong_sha = httpx.put(
        f"{api}/contents/{BASELINE}",
        json={"message": "m", "content": content, "sha": "0" * 40},
        headers=auth,
    )
    right_sha = httpx.put(
        f"{api}/contents/{BASELINE}",
        json={"message": "m", "content": content, "sha": old_sha},
        headers=auth,
    )
    stale_sha = httpx.put(
        f"{api}/contents/{BASELINE}",
        json={"message": "m", "content": content, "sha": old_sha},
        headers=auth,
    )
    no_branch = httpx.put(
        f"{api}/contents/new.json",
        json={"message": "m", "content": content, "branch": "nope"},
        headers=auth,
    )
    missing_ref = httpx.get(f"{api}/git/ref/heads/nope", headers=auth)
    main = repo.repo(REPO).refs["heads/main"]
    made = httpx.post(f"{api}/git/refs", json={"ref": "refs/heads/x/y", "sha": main}, headers=auth)
    made_again = httpx.post(
        f"{api}/git/refs", json={"ref": "refs/heads/x/y", "sha": main}, headers=auth
    )
    got = httpx.get(f"{api}/git/ref/heads/x/y", headers=auth)

    assert no_sha.status_code == 422 and '"sha" wasn\'t supplied' in no_sha.json()["message"]
    assert wrong_sha.status_code == 409
    assert wrong_sha.json()["message"] == f"{BASELINE} does not match {'0' * 40}"
    assert right_sha.status_code == 200 and right_sha.json()["content"]["sha"] != old_sha
    assert stale_sha.status_code == 409
    assert no_branch.status_code == 404 and missing_ref.status_code == 404
    assert made.status_code == 201 and made_again.status_code == 422
    assert got.json()["ref"] == "refs/heads/x/y" and got.json()["object"]["sha"] == main


def test_the_fake_refuses_a_second_pull_request_and_an_empty_one(repo: GitHubServer) -> None:
    api = f"{repo.api_url}/repos/{REPO}"
    auth = {"Authorization": f"token {TOKEN}"}
    repo.commit(REPO, "topic", {"a.txt": "a"}, start="main")
    main = repo.repo(REPO).refs["heads/main"]
    repo.set_ref(REPO, "heads/empty", main)

    first = httpx.post(
        f"{api}/pulls", json={"head": "topic", "base": "main", "title": "t"}, headers=auth
    )
    second = httpx.post(
        f"{api}/pulls", json={"head": "octo:topic", "base": "main", "title": "t"}, headers=auth
    )
    empty = httpx.post(
        f"{api}/pulls", json={"head": "empty", "base": "main", "title": "t"}, headers=auth
    )
    unfiltered = httpx.get(f"{api}/pulls", params={"head": "nothing-like-it"})
    filtered = httpx.get(f"{api}/pulls", params={"head": "octo:nothing-like-it"})

    assert first.status_code == 201 and first.json()["head"]["ref"] == "topic"
    assert second.status_code == 422
    assert second.json()["errors"][0]["message"] == "A pull request already exists for octo:topic."
    assert empty.status_code == 422
    assert empty.json()["errors"][0]["message"] == "No commits between main and empty"
    assert len(unfiltered.json()) == 1 and filtered.json() == []  # `head` needs `owner:`


def test_the_fake_closes_a_pull_request_whose_branch_is_reset_to_its_base(
    repo: GitHubServer,
) -> None:
    """Why propose_file_change never resets the branch of an open pull request."""
    result = propose(client(repo), 1)
    main = repo.repo(REPO).refs["heads/main"]

    answer = httpx.patch(
        f"{repo.api_url}/repos/{REPO}/git/refs/heads/{BRANCH}",
        json={"sha": main, "force": True},
        headers={"Authorization": f"token {TOKEN}"},
    )

    assert answer.status_code == 200
    assert repo.repo(REPO).pulls[result.number].state == "closed"
