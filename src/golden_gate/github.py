"""Everything golden-gate says to the GitHub REST API, through PyGithub.

- `changed_files`: the pull request's changed files (with the old names of renames), and
  whether GitHub's cap of 3000 files was reached (then the scope must be "run", DESIGN §5);
- `read_file`: a file at a ref (the baseline report, on the base branch), None when missing;
- `upsert_comment`: the one sticky comment, found by its marker line and its author, edited in
  place, created when there is none.

Every PyGithub or transport failure becomes a `GitHubError` with the HTTP status and one line
that never contains the token. PyGithub (and requests) is imported only when a `GitHub` is
built, so a run that scope skips before talking to GitHub does not pay for it.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from golden_gate.errors import EXIT_INCOMPLETE, GateError

if TYPE_CHECKING:
    from github.Issue import Issue
    from github.IssueComment import IssueComment
    from github.Repository import Repository

FILES_CAP = 3000  # GitHub lists at most 3000 files of a pull request
PER_PAGE = 100  # the most GitHub serves a page
ACTIONS_BOT = "github-actions[bot]"  # who the Actions GITHUB_TOKEN writes as
TIMEOUT_S = 30

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

    def own_login(self) -> str:
        """Who this token writes as. The Actions GITHUB_TOKEN may not read GET /user (403
        "Resource not accessible by integration"): it writes as github-actions[bot]."""
        if self._login is None:
            from github import GithubException, RateLimitExceededException

            try:
                self._login = self._gh.get_user().login
            except GithubException as exc:
                limited = isinstance(exc, RateLimitExceededException)
                if limited or exc.status not in (401, 403, 404):
                    raise self._error("reading the token's user", exc) from None
                self._login = ACTIONS_BOT
            except Exception as exc:
                raise self._error("reading the token's user", exc) from None
        return self._login

    # -- the sticky comment --------------------------------------------------------------------

    def find_comment(self, pr_number: int, marker: str) -> IssueComment | None:
        """The newest comment whose first line is `marker` and whose author is this token's
        user; comments by anyone else are never ours, whatever they say."""
        login = self.own_login()

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


def _decode_base64(text: str, path: str) -> bytes:
    try:
        return base64.b64decode(text)
    except (binascii.Error, ValueError):
        raise GitHubError(None, f"{path}: GitHub sent content that is not base64") from None
