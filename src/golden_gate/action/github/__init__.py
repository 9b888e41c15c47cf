"""Everything golden-gate says to the GitHub REST API, through PyGithub.

- `changed_files`: the pull request's changed files (with the old names of renames), and
  whether GitHub's cap of 3000 files was reached (then the scope must be "run", DESIGN §5);
- `read_file`: a file at a ref (the baseline report, on the base branch), None when missing;
- `upsert_comment`: the one sticky comment, found by its marker line and its author (this
  token's own login, from GET /user or, for installation tokens, GraphQL's `viewer`), edited
  in place, created when there is none;
- `propose_file_change`: a new version of one file (the baseline report) on a branch, proposed
  as one pull request that later proposals update (`mode: baseline`); `file_history` lists the
  commits that changed a file;
- `open_or_update_issue` / `close_issue`: one labelled issue, opened or updated while something
  is wrong and closed with a comment when it is fixed (`mode: drift`).

Every PyGithub or transport failure becomes a `GitHubError` with the HTTP status and one line
that never contains the token. PyGithub (and requests) is imported only when a `GitHub` is
built, so a run that scope skips before talking to GitHub does not pay for it.

About 670 lines, one module: one client for one API. Each method is one endpoint; they share
the session, the retries, the login lookup and the error sentence, which a split by endpoint
would have to repeat.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from golden_gate.errors import EXIT_INCOMPLETE, GateError, InputError

if TYPE_CHECKING:
    from github.GitRef import GitRef
    from github.Issue import Issue
    from github.IssueComment import IssueComment
    from github.PullRequest import PullRequest
    from github.Repository import Repository

FILES_CAP = 3000  # GitHub lists at most 3000 files of a pull request
PER_PAGE = 100  # the most GitHub serves a page
ACTIONS_BOT = "github-actions[bot]"  # who the Actions GITHUB_TOKEN writes as
VIEWER_QUERY = "query { viewer { login } }"  # answers installation tokens too
TIMEOUT_S = 30
LABEL_COLOR = "d93f0b"  # a drift label's colour when golden-gate makes it
LABEL_DESCRIPTION = "Opened by golden-gate while the scheduled evaluation finds quality drift"

T = TypeVar("T")


class GitHubError(GateError):
    """A GitHub API call failed; `status` is the HTTP status (None when nothing answered)."""

    exit_code = EXIT_INCOMPLETE

    def __init__(self, status: int | None, message: str, *, action: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.action = action  # what golden-gate was doing, for callers that want to say so


@dataclass(frozen=True)
class ChangedFiles:
    """The files a pull request changes; `capped` when GitHub stopped listing at 3000."""

    files: list[str]
    capped: bool


@dataclass(frozen=True)
class PullRequestInfo:
    """What the comment poster checks before posting: where the pull request's head is."""

    number: int
    state: str
    head_ref: str
    head_sha: str
    base_ref: str
    base_sha: str
    html_url: str


@dataclass(frozen=True)
class CommentResult:
    url: str
    id: int
    action: Literal["created", "updated"]


@dataclass(frozen=True)
class PullResult:
    """The pull request that proposes a file change, and the commit on its branch."""

    number: int
    url: str
    action: Literal["created", "updated"]
    commit_sha: str  # the head of the branch, which holds the new content


@dataclass(frozen=True)
class FileVersion:
    """One commit that changed a file."""

    sha: str
    date: datetime  # the committer's date, timezone-aware
    message: str


@dataclass(frozen=True)
class IssueInfo:
    number: int
    url: str
    title: str
    body: str
    created_at: datetime


@dataclass(frozen=True)
class IssueResult:
    number: int
    url: str
    action: Literal["created", "updated", "closed"]


def first_line(body: str | None) -> str:
    # Bodies edited in GitHub's web editor come back with CRLF line ends.
    return (body or "").split("\n", 1)[0].rstrip("\r")


class GitHub:
    """One repository on one GitHub API, authenticated by one token."""

    def __init__(
        self,
        *,
        token: str,
        repository: str,
        api_url: str,
        retries: int = 3,
        backoff_s: float = 1.0,
    ) -> None:
        from github import Auth, Github, GithubRetry

        self._token = token
        self.repository = repository
        self.api_url = api_url.rstrip("/")
        retry = None
        if retries > 0:
            retry = GithubRetry(
                total=retries,
                backoff_factor=backoff_s,
                # 5xx, 429, and (added by GithubRetry) 403 when it is a rate limit
                status_forcelist=[429, *range(500, 600)],
                # PATCH of a comment body is idempotent; GithubRetry adds GET and POST
                allowed_methods={"GET", "POST", "PATCH", "PUT", "DELETE", "HEAD"},
                # GitHub asks for a minute's wait on a secondary limit without Retry-After;
                # backoff_s scales every wait so tests stay fast
                secondary_rate_wait=60 * backoff_s,
                max_rate_limit_wait=300 * backoff_s,
                retry_after_max=120 * backoff_s,  # caps a Retry-After wait
                # hand the last answer to PyGithub so the error keeps its status
                raise_on_status=False,
            )
        self._gh = Github(
            auth=Auth.Token(token),
            base_url=self.api_url,
            timeout=TIMEOUT_S,
            per_page=PER_PAGE,
            retry=retry,
            seconds_between_requests=0,
            seconds_between_writes=0,
            lazy=True,  # no request until data is needed: get_repo/get_pull/get_issue are free
        )
        self._login: str | None = None
        self._login_unknown = False  # GitHub would not say who this token is
        self._default_branch: str | None = None

    # -- reading -------------------------------------------------------------------------------

    def changed_files(self, pr_number: int) -> ChangedFiles:
        """Every file the pull request changes, with the previous name of a renamed file."""

        def listing() -> ChangedFiles:
            files: dict[str, None] = {}  # ordered set
            entries = 0
            for entry in self._repo().get_pull(pr_number).get_files():
                entries += 1
                files[entry.filename] = None
                if entry.previous_filename:
                    files[entry.previous_filename] = None
            return ChangedFiles(files=list(files), capped=entries >= FILES_CAP)

        return self._call(f"listing the files of pull request #{pr_number}", listing)

    def pull_request(self, pr_number: int) -> PullRequestInfo:
        def fetch() -> PullRequestInfo:
            pull = self._repo().get_pull(pr_number)
            return PullRequestInfo(
                number=pull.number,
                state=pull.state,
                head_ref=pull.head.ref,
                head_sha=pull.head.sha,
                base_ref=pull.base.ref,
                base_sha=pull.base.sha,
                html_url=pull.html_url,
            )

        return self._call(f"reading pull request #{pr_number}", fetch)

    def read_file(self, path: str, ref: str) -> str | None:
        """The text of `path` at `ref`, or None when the file or the ref does not exist."""
        from github import GithubException

        def fetch() -> str | None:
            repo = self._repo()
            try:
                content = repo.get_contents(path, ref=ref)
            except GithubException as exc:
                # PyGithub raises UnknownObjectException only for the message "Not Found";
                # a missing ref is 404 "No commit found for the ref ..."
                if exc.status == 404:
                    return None
                raise
            if isinstance(content, list):
                raise GitHubError(None, f"{path} at {ref} is a directory, not a file")
            if content.type != "file":
                raise GitHubError(None, f"{path} at {ref} is a {content.type}, not a file")
            if content.encoding == "base64":
                raw = _decode_base64(content.content or "", path)
            else:
                # Over 1 MB the contents API sends no content (encoding "none"); the blob
                # API serves files up to 100 MB.
                blob = repo.get_git_blob(content.sha)
                if blob.encoding != "base64":
                    raise GitHubError(None, f"{path} at {ref}: unexpected {blob.encoding!r} blob")
                raw = _decode_base64(blob.content or "", path)
            try:
                return raw.decode("utf-8")
            except UnicodeDecodeError:
                raise GitHubError(None, f"{path} at {ref} is not UTF-8 text") from None

        return self._call(f"reading {path} at {ref}", fetch)

    def own_login(self) -> str | None:
        """Who this token writes as, None when GitHub does not say.

        A personal token reads GET /user. An installation token (a GitHub App's, or the Actions
        GITHUB_TOKEN, which writes as github-actions[bot]) gets 403 there; GraphQL's `viewer`
        answers it with the app's `<slug>[bot]`. Guessing instead would either duplicate the
        sticky comment on every push or take another author's comment for ours."""
        if self._login is None and not self._login_unknown:
            from github import GithubException, RateLimitExceededException

            def denied(exc: GithubException) -> bool:
                limited = isinstance(exc, RateLimitExceededException)
                return not limited and exc.status in (401, 403, 404)

            try:
                self._login = self._gh.get_user().login
            except GithubException as exc:
                if not denied(exc):
                    raise self._error("reading the token's user", exc) from None
            except Exception as exc:
                raise self._error("reading the token's user", exc) from None
            if self._login is None:
                try:
                    _, data = self._gh.requester.graphql_query(VIEWER_QUERY, {})
                    login = ((data.get("data") or {}).get("viewer") or {}).get("login")
                except GithubException as exc:
                    if not denied(exc) and exc.status != 400:  # 400: GraphQL errors
                        raise self._error("reading the token's GraphQL viewer", exc) from None
                    login = None
                except Exception as exc:
                    raise self._error("reading the token's GraphQL viewer", exc) from None
                self._login = login if isinstance(login, str) and login else None
                self._login_unknown = self._login is None
        return self._login

    def default_branch(self) -> str:
        if self._default_branch is None:
            self._default_branch = self._call(
                "reading the repository", lambda: self._repo().default_branch
            )
        return self._default_branch

    def file_history(self, path: str, *, ref: str, limit: int = 20) -> list[FileVersion]:
        """The commits reachable from `ref` that changed `path`, newest first, at most `limit`
        (one request up to 100). Read a version with `read_file(path, ref=version.sha)`."""

        def listing() -> list[FileVersion]:
            versions: list[FileVersion] = []
            if limit <= 0:
                return versions
            for commit in self._repo().get_commits(sha=ref, path=path):
                git = commit.commit
                when = (git.committer or git.author).date
                versions.append(FileVersion(sha=commit.sha, date=when, message=git.message))
                if len(versions) >= limit:
                    break
            return versions

        return self._call(f"listing the commits that changed {path} at {ref}", listing)

    # -- proposing a file change as a pull request ---------------------------------------------

    def propose_file_change(
        self,
        *,
        path: str,
        content: str,
        branch: str,
        base: str,
        title: str,
        body: str,
        commit_message: str,
    ) -> PullResult | None:
        """Propose `content` as the new text of `path` on `base`: commit it on `branch` through
        the contents API and open a pull request from `branch` to `base`, or update the title
        and body of the open one (there is never a second).

        `branch` belongs to golden-gate. While its pull request is open, each proposal is one more
        commit on top of it (GitHub closes, for good, a pull request whose head is force-moved
        to its base, so the branch is never reset then). Otherwise it is created from the head
        of `base`, or reset there when it exists (left over from a merged or closed proposal,
        with anything pushed to it since discarded), so a new pull request starts from `base`.

        None, with nothing written, when `path` on `base` already holds exactly `content`."""
        from github import GithubException

        path = path.strip("/")
        if branch in (base, self.default_branch()):
            raise InputError(
                f"the branch for the pull request must not be {branch!r}, its base or the "
                "default branch: golden-gate resets it"
            )
        data = content.encode("utf-8")
        repo = self._repo()
        owner = self.repository.split("/", 1)[0]
        base_ref = self._branch(base)
        if base_ref is None:
            raise GitHubError(
                404, f"404 branch {base} not found", action=f"reading {base} in {self.repository}"
            )
        base_sha = base_ref.object.sha
        current = self._blob_sha(path, base_sha)
        if current == _git_blob_sha(data):
            return None
        pull = self._open_pull(owner, branch, base)

        head = self._branch(branch)
        if head is None:
            self._call(
                f"creating branch {branch}",
                lambda: repo.create_git_ref(f"refs/heads/{branch}", base_sha),
            )
            head_sha = base_sha
        elif pull is None and head.object.sha != base_sha:
            ref = head
            self._call(
                f"resetting branch {branch} to {base}", lambda: ref.edit(base_sha, force=True)
            )
            head_sha = base_sha
        else:
            head_sha = head.object.sha
            if head_sha != base_sha:
                current = self._blob_sha(path, head_sha)

        if current != _git_blob_sha(data):  # else the open pull request holds it already

            def commit() -> str:
                if current is None:
                    done = repo.create_file(path, commit_message, data, branch=branch)
                else:
                    done = repo.update_file(path, commit_message, data, current, branch=branch)
                sha: str = done["commit"].sha
                return sha

            head_sha = self._call(f"committing {path} on {branch}", commit)

        if pull is None:

            def create() -> PullRequest | None:
                try:
                    return repo.create_pull(base=base, head=branch, title=title, body=body)
                except GithubException as exc:
                    if exc.status == 422 and "already exists" in str(exc.data):
                        return None  # opened meanwhile (another run): update that one
                    raise

            created = self._call(f"opening a pull request from {branch} to {base}", create)
            if created is not None:
                return PullResult(created.number, created.html_url, "created", head_sha)
            pull = self._open_pull(owner, branch, base)
            if pull is None:
                raise GitHubError(
                    422,
                    f"422 a pull request from {branch} to {base} exists but is not open",
                    action=f"opening a pull request in {self.repository}",
                )

        found = pull
        self._call(
            f"updating pull request #{found.number}",
            lambda: found.edit(title=title, body=body),
        )
        return PullResult(found.number, found.html_url, "updated", head_sha)

    def _branch(self, name: str) -> GitRef | None:
        """The git ref of branch `name` (read, so that an edit goes to its own URL), or None."""
        from github import GithubException

        def fetch() -> GitRef | None:
            ref = self._repo().get_git_ref(f"heads/{name}")
            try:
                ref.complete()  # the request (the object is lazy)
            except GithubException as exc:
                if exc.status == 404:
                    return None
                raise
            return ref

        return self._call(f"reading branch {name}", fetch)

    def _blob_sha(self, path: str, ref: str) -> str | None:
        """The blob sha of file `path` at `ref`, None when there is no such file."""
        from github import GithubException

        def fetch() -> str | None:
            try:
                content = self._repo().get_contents(path, ref=ref)
            except GithubException as exc:
                if exc.status == 404:
                    return None
                raise
            if isinstance(content, list) or content.type != "file":
                raise GitHubError(None, f"{path} at {ref} is not a file")
            return content.sha

        return self._call(f"reading {path} at {ref}", fetch)

    def _open_pull(self, owner: str, branch: str, base: str) -> PullRequest | None:
        """The open pull request from `owner:branch` to `base` (GitHub allows one at most)."""
        label = f"{owner}:{branch}".lower()

        def find() -> PullRequest | None:
            for pull in self._repo().get_pulls(state="open", head=f"{owner}:{branch}", base=base):
                # GitHub ignores a malformed `head` filter and lists everything: check
                if pull.head.label.lower() == label and pull.base.ref == base:
                    return pull
            return None

        return self._call(f"listing the pull requests from {branch}", find)

    # -- the labelled issue --------------------------------------------------------------------

    def find_issue(self, label: str) -> IssueInfo | None:
        """The newest open issue with `label` that this token's user opened (issues by anyone
        else, and pull requests, which GitHub lists among issues, are never it)."""
        found = self._own_issues(label)
        if not found:
            return None
        issue = found[0]
        return IssueInfo(
            number=issue.number,
            url=issue.html_url,
            title=issue.title,
            body=issue.body or "",
            created_at=issue.created_at,
        )

    def open_or_update_issue(
        self,
        *,
        label: str,
        title: str,
        body: str,
        label_color: str = LABEL_COLOR,
        label_description: str = LABEL_DESCRIPTION,
    ) -> IssueResult:
        """Update the title and body of the open issue with `label` (`find_issue`), or open
        one with it, making the label first (with its colour and description) when missing."""
        found = self._own_issues(label)
        if found:
            issue = found[0]
            self._call(
                f"updating issue #{issue.number}", lambda: issue.edit(title=title, body=body)
            )
            return IssueResult(issue.number, issue.html_url, "updated")
        self._ensure_label(label, label_color, label_description)

        def create() -> Issue:
            return self._repo().create_issue(title=title, body=body, labels=[label])

        created = self._call("opening an issue", create)
        if label.lower() not in (named.name.lower() for named in created.labels):
            # GitHub drops the labels of a user without push access, and an issue without its
            # label is never found again: the next run would open another
            raise GitHubError(
                None,
                f"issue #{created.number} was opened without its label {label!r}: the token "
                "needs write access to issues",
                action=f"opening an issue in {self.repository}",
            )
        return IssueResult(created.number, created.html_url, "created")

    def close_issue(self, label: str, comment: str) -> IssueResult | None:
        """Comment on (unless `comment` is empty) and close, as completed, the open issue with
        `label` (and any older duplicate of it); None when there is none."""
        found = self._own_issues(label)
        for issue in found:

            def close(issue: Issue = issue) -> None:
                if comment:
                    issue.create_comment(comment)
                issue.edit(state="closed", state_reason="completed")

            self._call(f"closing issue #{issue.number}", close)
        if not found:
            return None
        return IssueResult(found[0].number, found[0].html_url, "closed")

    def _own_issues(self, label: str) -> list[Issue]:
        """The open issues with `label` opened by this token's user, newest first (all pages)."""
        if not label.strip() or "," in label:
            # GitHub's `labels` filter is a comma-separated list
            raise InputError(f"the issue label {label!r} must be a non-empty name without commas")
        login = self.own_login()
        if login is None:
            return []  # nothing can be proved ours: never edit or close another's issue

        def scan() -> list[Issue]:
            found = [
                issue
                for issue in self._repo().get_issues(state="open", labels=[label])
                if not _is_pull_request(issue) and issue.user.login == login
            ]
            return sorted(found, key=lambda issue: (issue.created_at, issue.number), reverse=True)

        return self._call(f"listing the open issues labelled {label!r}", scan)

    def _ensure_label(self, name: str, color: str, description: str) -> None:
        from github import GithubException

        def ensure() -> None:
            repo = self._repo()
            try:
                repo.get_label(name).complete()  # the request (the object is lazy)
                return
            except GithubException as exc:
                if exc.status != 404:
                    raise
            try:
                repo.create_label(name, color, description)
            except GithubException as exc:
                if exc.status == 422 and "already_exists" in str(exc.data):
                    return  # made meanwhile
                raise

        self._call(f"making the label {name!r}", ensure)

    # -- the sticky comment --------------------------------------------------------------------

    def find_comment(self, pr_number: int, marker: str) -> IssueComment | None:
        """The newest comment whose first line is `marker` and whose author is this token's
        user; comments by anyone else are never ours, whatever they say."""
        login = self.own_login()
        if login is None:
            return None  # nothing can be proved ours: never edit, post a new one

        def scan() -> IssueComment | None:
            newest: IssueComment | None = None
            for comment in self._issue(pr_number).get_comments():
                if first_line(comment.body) != marker or comment.user.login != login:
                    continue
                if newest is None or _age(comment) >= _age(newest):
                    newest = comment
            return newest

        return self._call(f"listing the comments of pull request #{pr_number}", scan)

    def upsert_comment(self, pr_number: int, body: str, marker: str) -> CommentResult:
        """Edit the sticky comment in place, or create it. A body that does not start with
        `marker` (a custom template may leave it out) gets it as its first line, or the comment
        could never be found again."""
        from github import GithubException

        if first_line(body) != marker:
            body = f"{marker}\n{body}"
        found = self.find_comment(pr_number, marker)
        if found is not None:
            comment = found

            def edit() -> CommentResult | None:
                try:
                    comment.edit(body)
                except GithubException as exc:
                    if exc.status == 404:
                        return None  # deleted since it was listed: create a new one
                    raise
                return CommentResult(url=comment.html_url, id=comment.id, action="updated")

            result = self._call(f"updating comment {comment.id}", edit)
            if result is not None:
                return result

        def create() -> CommentResult:
            created = self._issue(pr_number).create_comment(body)
            if self._login is None:
                self._login = created.user.login  # what GitHub would not say before
            return CommentResult(url=created.html_url, id=created.id, action="created")

        return self._call(f"commenting on pull request #{pr_number}", create)

    # -- plumbing ------------------------------------------------------------------------------

    def _repo(self) -> Repository:
        return self._gh.get_repo(self.repository)

    def _issue(self, number: int) -> Issue:
        return self._repo().get_issue(number)

    def _call(self, action: str, work: Callable[[], T]) -> T:
        try:
            return work()
        except GitHubError:
            raise
        except Exception as exc:
            raise self._error(action, exc) from None

    def _error(self, action: str, exc: Exception) -> GitHubError:
        """One line, with the status, and never the token."""
        from github import GithubException

        if isinstance(exc, GithubException):
            status: int | None = exc.status
            data: Any = exc.data
            message = data.get("message") if isinstance(data, dict) else data
            text = f"{status} {message or exc.message or 'error'}"
        else:
            status = None
            text = f"{type(exc).__name__}: {exc}"
        text = " ".join(text.replace(self._token, "***").split())
        if len(text) > 300:
            text = text[:299] + "…"
        return GitHubError(status, text, action=f"{action} in {self.repository}")

    def __repr__(self) -> str:
        return f"GitHub(repository={self.repository!r}, api_url={self.api_url!r})"


def _age(comment: IssueComment) -> tuple[datetime, int]:
    # Timestamps have one-second resolution: the id breaks ties (ids only grow).
    return (comment.created_at, comment.id)


def _is_pull_request(issue: Issue) -> bool:
    # GitHub lists pull requests among issues, marked by a `pull_request` key. The listed JSON
    # is read because `issue.pull_request` on a listed (lazy) issue without the key, that is
    # every real issue, would fetch the issue again.
    return "pull_request" in issue._rawData


def _git_blob_sha(data: bytes) -> str:
    """The id git (and GitHub, as a file's `sha`) gives a blob with these bytes."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def _decode_base64(text: str, path: str) -> bytes:
    try:
        return base64.b64decode(text)
    except (binascii.Error, ValueError):
        raise GitHubError(None, f"{path}: GitHub sent content that is not base64") from None
