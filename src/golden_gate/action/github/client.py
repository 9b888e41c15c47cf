"""The GitHub client's ground: one session on one repository with one token, the retries, who
the token writes as, and `GitHubError`, the one sentence every failure becomes (with the HTTP
status, never the token). PyGithub (and requests) is imported only when a client is built.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from golden_gate import http_bounds, redaction
from golden_gate.errors import EXIT_INCOMPLETE, GateError, InputError
from golden_gate.limits import (
    MAX_BLOB_REPLY_BYTES,
    MAX_SERVICE_REPLY_BYTES,
    SERVICE_DEADLINE_S,
    transfer_deadline_s,
)

if TYPE_CHECKING:
    from github.Issue import Issue
    from github.Repository import Repository


FILES_CAP = 3000  # GitHub lists at most 3000 files of a pull request
PER_PAGE = 100  # the most GitHub serves a page
VIEWER_QUERY = "query { viewer { login } }"  # answers installation tokens too
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


class RefNotFound(InputError):
    """GitHub answers 404 "No commit found for the ref": the ref itself does not exist (a file
    missing at an existing ref is a plain "Not Found"). Bad input, never "no such file"."""

    def __init__(self, ref: str, where: str, evidence: str | None = None) -> None:
        evidence = evidence or f'GitHub answers 404 "No commit found for the ref {ref}"'
        super().__init__(f"the ref '{ref}' does not exist in {where} ({evidence})")
        self.ref = ref
        self.sentence = str(self)


def first_line(body: str | None) -> str:
    # Bodies edited in GitHub's web editor come back with CRLF line ends.
    return (body or "").split("\n", 1)[0].rstrip("\r")


class Client:
    """One repository on one GitHub API, authenticated by one token."""

    def __init__(
        self,
        *,
        token: str,
        repository: str,
        api_url: str,
        retries: int = 3,
        backoff_s: float = 1.0,
        deadline_s: float = SERVICE_DEADLINE_S,
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
        # Each exchange ends by a deadline and reads at most so much (http_bounds.py).
        http_bounds.bound_github(
            self._gh.requester,
            deadline_s=deadline_s,
            max_reply_bytes=MAX_SERVICE_REPLY_BYTES,
            max_blob_bytes=MAX_BLOB_REPLY_BYTES,
            blob_deadline_s=transfer_deadline_s(MAX_BLOB_REPLY_BYTES),
        )
        self._login: str | None = None
        self._login_unknown = False  # GitHub would not say who this token is
        self._default_branch: str | None = None

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

    # -- plumbing ------------------------------------------------------------------------------

    def _repo(self) -> Repository:
        return self._gh.get_repo(self.repository)

    def _issue(self, number: int) -> Issue:
        return self._repo().get_issue(number)

    def _call(self, action: str, work: Callable[[], T]) -> T:
        try:
            return work()
        except GateError:  # ours already: one sentence with its own exit code
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
        elif isinstance(exc, http_bounds.ReplyTooLarge | http_bounds.DeadlinePassed):
            status, text = None, str(exc)
        else:
            status = None
            text = f"{type(exc).__name__}: {exc}"
        text = " ".join(redaction.scrub(text, also=[self._token]).split())
        if len(text) > 300:
            text = text[:299] + "…"
        return GitHubError(status, text, action=f"{action} in {self.repository}")

    def __repr__(self) -> str:
        return f"GitHub(repository={self.repository!r}, api_url={self.api_url!r})"
