"""A stateful fake of GitHub's REST API on 127.0.0.1, checked against GitHub's own description.

It is a real HTTP server, so clients are exercised through their real stack (PyGithub,
requests, urllib3 retries, pagination by `Link` header). It holds state the way GitHub does:
users and their tokens, repositories with git-like history (blobs, commits, refs, file commits
through the contents API), pull requests (with the changed files given, or the diff of their
branches when opened through the API), issues with labels, and comments. Every request and every
response is validated against the trimmed official OpenAPI description
(`tests/openapi/github-trimmed.json`, made by `tests/openapi/trim.py`); a violation is recorded
in `violations` and answered with a 500 that names it, so both the client and the
`github_server` fixture (tests/conftest.py) see it.

    with GitHubServer() as server:
        server.add_user("octocat", token="t-octo")
        server.add_repo("octo/docs", files={"evals/golden.jsonl": "..."})
        pr = server.add_pull("octo/docs", files=["prompts/system.md"])
        server.add_comment("octo/docs", pr.number, "hello", user="octocat")
        server.add_issue("octo/docs", title="Drift", labels=["golden-gate"], user="octocat")
        server.fail("GET", "/repos/*/issues/*/comments", status=502)  # once
        server.api_url  # http://127.0.0.1:PORT, the `base_url` for PyGithub

Faults are scripted with `fail(...)`, `secondary_rate_limit(...)` and `mutate(...)`: each
matches a method and an fnmatch pattern on the request path and is used up after `times`
matching requests. Every request is recorded in `requests` (see `calls(...)`).

To serve another operation: add it to `OPERATIONS` in tests/openapi/trim.py, regenerate the
trimmed description, then register a handler with `@_route(METHOD, "/template/as/in/the/spec")`.
GraphQL (`POST /graphql`) is outside the REST description: the fake serves only the one query
golden-gate sends, `viewer { login }`, and records anything else as a violation.
"""

from __future__ import annotations

import base64
import binascii
import fnmatch
import functools
import hashlib
import json
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Self
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

if TYPE_CHECKING:
    from openapi_core import OpenAPI

SPEC_PATH = Path(__file__).resolve().parents[1] / "openapi" / "github-trimmed.json"
SPEC_HOST = "https://api.github.com"  # the description's server; request paths are matched to it
DOCS = "https://docs.github.com/rest"
FILES_CAP = 3000  # GitHub lists at most 3000 files of a pull request
LARGE_FILE = 1024 * 1024  # above this the contents API returns no content (encoding "none")
COMMENT_MAX = 65536
EPOCH = datetime(2024, 1, 1, tzinfo=UTC)
ACTIONS_BOT = "github-actions[bot]"
ACTIONS_BOT_ID = 41898282  # the real id of github-actions[bot]

JsonBody = dict[str, Any] | list[Any] | None


# ---------------------------------------------------------------------------------------------
# OpenAPI validation


@functools.cache
def github_openapi() -> OpenAPI:
    """The trimmed description, loaded once per process (loading checks the spec itself)."""
    from openapi_core import OpenAPI

    return OpenAPI.from_dict(json.loads(SPEC_PATH.read_text(encoding="utf-8")))


@dataclass
class SpecRequest:
    """openapi-core's Request protocol (plus SupportsPathPattern: our router already matched)."""

    method: str
    path: str
    path_pattern: str
    path_params: dict[str, str]
    query: str
    header_items: list[tuple[str, str]]
    body: bytes | None
    host_url: str = SPEC_HOST

    def __post_init__(self) -> None:
        from openapi_core.datatypes import RequestParameters
        from werkzeug.datastructures import Headers, ImmutableMultiDict

        self.method = self.method.lower()
        self.parameters = RequestParameters(
            query=ImmutableMultiDict(parse_qsl(self.query, keep_blank_values=True)),
            header=Headers(self.header_items),
            path=dict(self.path_params),
        )

    @property
    def content_type(self) -> str:
        return str(self.parameters.header.get("Content-Type", "")).lower()


@dataclass
class SpecResponse:
    """openapi-core's Response protocol."""

    status_code: int
    header_items: list[tuple[str, str]]
    data: bytes | None

    @property
    def headers(self) -> Any:
        from werkzeug.datastructures import Headers

        return Headers(self.header_items)

    @property
    def content_type(self) -> str:
        return str(self.headers.get("Content-Type", "")).lower()


def _short(text: str, limit: int = 240) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe(exc: BaseException) -> str:
    """A compact account: openapi-core nests the JSON Schema errors in the exception's causes,
    and their messages quote the whole offending value, so each is cut short."""
    chain: list[BaseException] = []
    cause: BaseException | None = exc
    while cause is not None and cause not in chain:
        chain.append(cause)
        cause = cause.__cause__ or cause.__context__
    errors = [e for c in chain for e in getattr(c, "schema_errors", None) or []]
    if not errors:
        return " | ".join(f"{type(c).__name__}: {_short(str(c))}" for c in chain)
    parts = [type(exc).__name__]
    for error in errors:
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        # oneOf/anyOf failures hide the useful reasons one level down
        reasons = [_short(e.message, 160) for e in (error.context or [])][:4]
        detail = f" [{'; '.join(reasons)}]" if reasons else ""
        parts.append(f"at {where}: {_short(error.message)}{detail}")
    return " | ".join(parts)


def validate_request(request: SpecRequest) -> str | None:
    """None when the request is one GitHub documents, else what is wrong with it."""
    try:
        github_openapi().validate_request(request)
    except Exception as exc:  # openapi-core raises many unrelated types; all are violations
        return describe(exc)
    return None


def validate_response(request: SpecRequest, response: SpecResponse) -> str | None:
    """None when GitHub documents this response to this request, else what is wrong."""
    try:
        github_openapi().validate_response(request, response)
    except Exception as exc:
        return describe(exc)
    return None


# ---------------------------------------------------------------------------------------------
# State


def timestamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def git_blob_sha(data: bytes) -> str:
    """The id git gives a blob, as GitHub reports it in `sha`."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def _subtree(tree: Mapping[str, str], path: str) -> dict[str, str]:
    """The entries of `tree` at `path` or below it (a file, or a directory's files)."""
    below = path.strip("/") + "/"
    return {p: sha for p, sha in tree.items() if p == path.strip("/") or p.startswith(below)}


def node_id(prefix: str, number: int) -> str:
    return prefix + base64.b64encode(f"{prefix}{number:012d}".encode()).decode().rstrip("=")


@dataclass
class User:
    login: str
    id: int
    type: Literal["User", "Bot", "Organization"] = "User"
    name: str | None = None
    created_at: datetime = EPOCH


@dataclass
class Token:
    value: str
    login: str
    read_only: bool = False  # a fork pull request's GITHUB_TOKEN: every write is 403
    installation: bool = False  # an app installation token (GITHUB_TOKEN): GET /user is 403


@dataclass
class Commit:
    sha: str
    tree: dict[str, str]  # path -> blob sha
    parents: list[str]
    message: str
    created_at: datetime
    author: str | None = None  # the login that made it (None: the repository's owner)


@dataclass
class PullFile:
    filename: str
    status: Literal["added", "removed", "modified", "renamed", "copied", "changed", "unchanged"] = (
        "modified"
    )
    additions: int = 1
    deletions: int = 0
    previous_filename: str | None = None
    patch: str | None = "@@ -1 +1 @@\n-old\n+new"

    @property
    def sha(self) -> str:
        return hashlib.sha1(self.filename.encode(), usedforsecurity=False).hexdigest()


@dataclass
class PullRequest:
    number: int
    id: int
    title: str
    user: str
    head_ref: str
    base_ref: str
    head_sha: str
    base_sha: str
    files: list[PullFile]
    body: str | None = None
    state: Literal["open", "closed"] = "open"
    created_at: datetime = EPOCH
    updated_at: datetime = EPOCH
    closed_at: datetime | None = None
    labels: list[str] = field(default_factory=list)
    # opened through the API: the changed files are the diff of the branches, not `files`
    diff_of_branches: bool = False
    head_repo: str | None = None  # a fork's owner/name; None: the base repository


@dataclass
class Issue:
    """An issue that is not a pull request (numbers are shared with pull requests)."""

    number: int
    id: int
    title: str
    user: str
    body: str | None = None
    labels: list[str] = field(default_factory=list)
    state: Literal["open", "closed"] = "open"
    created_at: datetime = EPOCH
    updated_at: datetime = EPOCH
    closed_at: datetime | None = None
    closed_by: str | None = None
    state_reason: Literal["completed", "not_planned", "duplicate", "reopened"] | None = None


@dataclass
class Label:
    id: int
    name: str
    color: str = "ededed"  # what GitHub gives a label made by naming it on an issue
    description: str | None = None
    default: bool = False


@dataclass
class Comment:
    id: int
    issue_number: int
    body: str
    user: str
    created_at: datetime
    updated_at: datetime


@dataclass
class Repo:
    owner: str
    name: str
    id: int
    default_branch: str = "main"
    private: bool = False
    created_at: datetime = EPOCH
    refs: dict[str, str] = field(default_factory=dict)  # "heads/main", "tags/v1" -> commit sha
    commits: dict[str, Commit] = field(default_factory=dict)
    blobs: dict[str, bytes] = field(default_factory=dict)
    pulls: dict[int, PullRequest] = field(default_factory=dict)
    issues: dict[int, Issue] = field(default_factory=dict)
    comments: dict[int, Comment] = field(default_factory=dict)
    labels: dict[str, Label] = field(default_factory=dict)  # lower-cased name -> label
    next_number: int = 1
    # the setting "Allow GitHub Actions to create and approve pull requests"; when off, the
    # workflow token's POST /pulls is 403 (real repositories have it off unless enabled)
    actions_can_create_pulls: bool = True

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"

    def resolve(self, ref: str | None) -> Commit | None:
        """A branch, tag, `refs/...` name or commit sha (full or 7+ hex prefix), like GitHub."""
        ref = ref or self.default_branch
        for name in (ref.removeprefix("refs/"), f"heads/{ref}", f"tags/{ref}"):
            if name in self.refs:
                return self.commits[self.refs[name]]
        if ref in self.commits:
            return self.commits[ref]
        if re.fullmatch(r"[0-9a-f]{7,39}", ref):
            found = [c for sha, c in self.commits.items() if sha.startswith(ref)]
            if len(found) == 1:
                return found[0]
        return None


@dataclass
class Fault:
    """A scripted answer for the next `times` requests matching `method` and `path`."""

    method: str  # "GET", ... or "*"
    path: str  # fnmatch pattern on the request path (no query), e.g. "/repos/*/issues/*/comments"
    status: int = 502
    message: str = "Server Error"
    headers: dict[str, str] = field(default_factory=dict)
    times: int = 1
    # When set, the request is served normally and its JSON body rewritten by this function
    # (for deliberately invalid responses); status/message/headers are then unused.
    mutate: Callable[[Any], Any] | None = None
    # When set, a 200 whose body is hostile (tests/fakes/judge_server.py's Behaviour: a trickle,
    # a gzip bomb, a huge body), streamed until the client hangs up.
    hostile: Any = None

    def matches(self, method: str, path: str) -> bool:
        return self.method in ("*", method) and fnmatch.fnmatchcase(path, self.path)


@dataclass
class RecordedRequest:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any
    status: int = 0
    login: str | None = None


class ApiError(Exception):
    """An error answer, shaped as GitHub shapes it (basic-error or validation-error)."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        errors: list[dict[str, Any]] | None = None,
        headers: dict[str, str] | None = None,
        docs: str = DOCS,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.body: dict[str, Any] = {"message": message, "documentation_url": docs}
        if errors is not None:
            self.body["errors"] = errors
        if status >= 400:
            self.body["status"] = str(status)
        self.headers = headers or {}


@dataclass
class Call:
    """What a route handler gets."""

    method: str
    path: str
    params: dict[str, str]
    query: dict[str, list[str]]
    headers: dict[str, str]  # lower-cased names
    body: Any
    login: str | None
    token: Token | None

    def arg(self, name: str, default: str | None = None) -> str | None:
        values = self.query.get(name)
        return values[-1] if values else default


@dataclass
class Answer:
    status: int
    body: JsonBody
    headers: dict[str, str] = field(default_factory=dict)


Handler = Callable[["GitHubServer", Call], Answer]
_ROUTES: list[tuple[str, str, re.Pattern[str], Handler]] = []


def _route(method: str, template: str) -> Callable[[Handler], Handler]:
    """Register a handler under the description's own path template."""
    pattern = re.sub(
        r"\{(\w+)\}",
        # `path` and git `ref` span several segments ("heads/golden-gate/baseline")
        lambda m: f"(?P<{m[1]}>.+)" if m[1] in ("path", "ref") else f"(?P<{m[1]}>[^/]+)",
        template,
    )

    def register(handler: Handler) -> Handler:
        _ROUTES.append((method, template, re.compile(pattern + r"\Z"), handler))
        return handler

    return register


# ---------------------------------------------------------------------------------------------
# The server


class GitHubServer:
    """The fake GitHub; see the module docstring. All state changes hold `lock`."""

    def __init__(
        self,
        *,
        html_url: str = "https://github.com",
        validate: bool = True,
        host: str = "127.0.0.1",
        port: int = 0,
        public_url: str | None = None,
    ) -> None:
        """`host`/`port`: where to listen (port 0: any free one). `public_url`: the base URL
        clients reach it at, used in every URL it answers with (default: 127.0.0.1 and the
        port; in a container on a Docker network, e.g. http://github:8000)."""
        self.html_url = html_url
        self.validate = validate
        self.host = host
        self.port = port
        self.public_url = public_url.rstrip("/") if public_url else None
        # GET paths outside GitHub's API that the fake answers itself with the JSON the
        # function returns (e.g. "/_fake/violations" for a fake run in another process):
        # neither recorded in `requests` nor validated.
        self.control: dict[str, Callable[[], JsonBody]] = {}
        self.lock = threading.RLock()
        self.users: dict[str, User] = {}
        self.tokens: dict[str, Token] = {}
        self.repos: dict[str, Repo] = {}
        self.faults: list[Fault] = []
        self.requests: list[RecordedRequest] = []
        self.violations: list[str] = []
        self._ids = 1000
        self._clock = EPOCH
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.add_user(ACTIONS_BOT, type="Bot", id=ACTIONS_BOT_ID)

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> Self:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._httpd = ThreadingHTTPServer((self.host, self.port), handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._thread = threading.Thread(
            # a short poll keeps stop() (and so every test's teardown) quick
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.02},
            name="fake-github",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def api_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("the fake GitHub is not started")
        if self.public_url:
            return self.public_url
        port = self._httpd.server_address[1]
        return f"http://127.0.0.1:{port}"

    # -- state set-up --------------------------------------------------------------------------

    def next_id(self) -> int:
        with self.lock:
            self._ids += 1
            return self._ids

    def tick(self) -> datetime:
        """The fake clock: one second later at every change, so "newest" is never a tie."""
        with self.lock:
            self._clock += timedelta(seconds=1)
            return self._clock

    def add_user(
        self,
        login: str,
        *,
        token: str | None = None,
        read_only: bool = False,
        type: Literal["User", "Bot", "Organization"] = "User",
        id: int | None = None,
        name: str | None = None,
    ) -> User:
        with self.lock:
            user = self.users.get(login)
            if user is None:
                user = User(login=login, id=id or self.next_id(), type=type, name=name)
                self.users[login] = user
            if token is not None:
                self.add_token(token, login, read_only=read_only)
            return user

    def add_token(
        self, value: str, login: str, *, read_only: bool = False, installation: bool = False
    ) -> Token:
        with self.lock:
            if login not in self.users:
                self.add_user(login)
            token = Token(value, login, read_only=read_only, installation=installation)
            self.tokens[value] = token
            return token

    def add_actions_token(self, value: str, *, read_only: bool = False) -> Token:
        """A workflow's GITHUB_TOKEN: acts as github-actions[bot], GET /user is 403."""
        return self.add_token(value, ACTIONS_BOT, read_only=read_only, installation=True)

    def add_app_token(self, value: str, slug: str, *, read_only: bool = False) -> Token:
        """A GitHub App's installation token: acts as `<slug>[bot]` (a Bot), GET /user is 403,
        GraphQL's `viewer` answers the bot's login."""
        login = f"{slug}[bot]"
        self.add_user(login, type="Bot")
        return self.add_token(value, login, read_only=read_only, installation=True)

    def add_repo(
        self,
        full_name: str,
        *,
        files: Mapping[str, str | bytes] | None = None,
        default_branch: str = "main",
        private: bool = False,
    ) -> Repo:
        owner, name = full_name.split("/")
        with self.lock:
            if owner not in self.users:
                self.add_user(owner)
            repo = Repo(
                owner=owner,
                name=name,
                id=self.next_id(),
                default_branch=default_branch,
                private=private,
            )
            self.repos[full_name] = repo
            self.commit(full_name, default_branch, files or {"README.md": f"# {name}\n"})
            return repo

    def repo(self, full_name: str) -> Repo:
        return self.repos[full_name]

    def commit(
        self,
        full_name: str,
        branch: str,
        files: Mapping[str, str | bytes | None],
        *,
        message: str = "commit",
        start: str | None = None,
        author: str | None = None,
    ) -> str:
        """Commit `files` (None deletes a path) on `branch` (created from `start` or the default
        branch when new) and return the commit sha; open pull requests from `branch` follow."""
        with self.lock:
            repo = self.repos[full_name]
            parent = repo.resolve(f"heads/{branch}") if f"heads/{branch}" in repo.refs else None
            if parent is None and repo.refs:
                parent = repo.resolve(start or repo.default_branch)
            tree = dict(parent.tree) if parent else {}
            for path, content in files.items():
                if content is None:
                    tree.pop(path, None)
                    continue
                data = content.encode() if isinstance(content, str) else content
                sha = git_blob_sha(data)
                repo.blobs[sha] = data
                tree[path] = sha
            moment = self.tick()
            seed = json.dumps([sorted(tree.items()), parent.sha if parent else None, message])
            sha = hashlib.sha1(f"{seed}{moment}".encode(), usedforsecurity=False).hexdigest()
            parents = [parent.sha] if parent else []
            repo.commits[sha] = Commit(sha, tree, parents, message, moment, author)
            self.set_ref(full_name, f"heads/{branch}", sha)
            return sha

    def set_ref(self, full_name: str, name: str, sha: str) -> None:
        """Point `name` ("heads/main") at commit `sha`; open pull requests from it follow. Like
        GitHub, an open pull request whose head no longer has a commit its base lacks (its
        branch was reset to the base, say) is closed."""
        with self.lock:
            repo = self.repos[full_name]
            repo.refs[name] = sha
            if not name.startswith("heads/"):
                return
            for pull in repo.pulls.values():
                if pull.state == "open" and pull.head_ref == name.removeprefix("heads/"):
                    pull.head_sha = sha
                    base = repo.refs.get(f"heads/{pull.base_ref}", pull.base_sha)
                    if sha in self.ancestors(repo, base):
                        pull.state = "closed"
                        pull.closed_at = pull.updated_at = self.tick()

    def add_pull(
        self,
        full_name: str,
        *,
        files: Sequence[str | PullFile] | None = None,
        head: str = "feature",
        base: str | None = None,
        user: str | None = None,
        title: str = "Change things",
        body: str | None = None,
        labels: Sequence[str] = (),
        head_repo: str | None = None,
    ) -> PullRequest:
        """A pull request from `head` (made from base when new) whose diff lists `files`;
        `head_repo`: the fork (owner/name) it comes from, its owner a user made here."""
        with self.lock:
            repo = self.repos[full_name]
            base = base or repo.default_branch
            if user is not None and user not in self.users:
                self.add_user(user)
            if f"heads/{head}" not in repo.refs:
                self.commit(full_name, head, {}, message="start", start=base)
            base_commit = repo.resolve(base)
            head_commit = repo.resolve(f"heads/{head}")
            assert base_commit is not None and head_commit is not None
            moment = self.tick()
            pull = PullRequest(
                number=repo.next_number,
                id=self.next_id(),
                title=title,
                user=user or repo.owner,
                head_ref=head,
                base_ref=base,
                head_sha=head_commit.sha,
                base_sha=base_commit.sha,
                files=[f if isinstance(f, PullFile) else PullFile(f) for f in files or []],
                body=body,
                created_at=moment,
                updated_at=moment,
                labels=[self.label(full_name, name).name for name in labels],
                head_repo=head_repo,
            )
            if head_repo is not None and head_repo.split("/")[0] not in self.users:
                self.add_user(head_repo.split("/")[0])
            repo.next_number += 1
            repo.pulls[pull.number] = pull
            return pull

    def add_issue(
        self,
        full_name: str,
        *,
        title: str = "An issue",
        user: str | None = None,
        body: str | None = None,
        labels: Sequence[str] = (),
    ) -> Issue:
        """An open issue; labels that do not exist yet are made, as GitHub makes them."""
        with self.lock:
            repo = self.repos[full_name]
            if user is not None and user not in self.users:
                self.add_user(user)
            moment = self.tick()
            issue = Issue(
                number=repo.next_number,
                id=self.next_id(),
                title=title,
                user=user or repo.owner,
                body=body,
                labels=[self.label(full_name, name).name for name in labels],
                created_at=moment,
                updated_at=moment,
            )
            repo.next_number += 1
            repo.issues[issue.number] = issue
            return issue

    def add_label(
        self,
        full_name: str,
        name: str,
        *,
        color: str = "ededed",
        description: str | None = None,
    ) -> Label:
        with self.lock:
            label = Label(self.next_id(), name, color, description)
            self.repos[full_name].labels[name.lower()] = label
            return label

    def label(self, full_name: str, name: str) -> Label:
        """The label named `name` (names are case-insensitive), made when there is none."""
        with self.lock:
            found = self.repos[full_name].labels.get(name.lower())
            return found if found is not None else self.add_label(full_name, name)

    def issues(self, full_name: str, *, label: str | None = None) -> list[Issue]:
        """The issues (not pull requests), oldest first, optionally only those with `label`."""
        with self.lock:
            found = sorted(self.repos[full_name].issues.values(), key=lambda i: i.number)
            if label is None:
                return found
            return [i for i in found if label.lower() in (n.lower() for n in i.labels)]

    def branch_files(self, full_name: str, branch: str) -> dict[str, bytes]:
        """The files at the head of `branch`."""
        with self.lock:
            repo = self.repos[full_name]
            commit = repo.commits[repo.refs[f"heads/{branch}"]]
            return {path: repo.blobs[sha] for path, sha in commit.tree.items()}

    # -- history -------------------------------------------------------------------------------

    def ancestors(self, repo: Repo, sha: str) -> set[str]:
        """`sha` and every commit it descends from."""
        seen: set[str] = set()
        pending = [sha]
        while pending:
            current = pending.pop()
            if current not in seen:
                seen.add(current)
                pending.extend(repo.commits[current].parents)
        return seen

    def history(self, repo: Repo, sha: str, path: str | None = None) -> list[Commit]:
        """The commits reachable from `sha`, newest first, as `git log [-- path]` lists them:
        with a path, only those that changed it, following a parent that left it unchanged."""
        listed: list[Commit] = []
        seen: set[str] = set()
        pending = [sha]
        while pending:
            pending.sort(key=lambda s: (repo.commits[s].created_at, s))
            current = repo.commits[pending.pop()]
            if current.sha in seen:
                continue
            seen.add(current.sha)
            parents = [repo.commits[p] for p in current.parents]
            if path is None:
                listed.append(current)
                pending.extend(p.sha for p in parents)
                continue
            mine = _subtree(current.tree, path)
            same = [p for p in parents if _subtree(p.tree, path) == mine]
            if same:
                pending.append(same[0].sha)
            else:
                if parents or mine:
                    listed.append(current)
                pending.extend(p.sha for p in parents)
        return listed

    def pull_files(self, repo: Repo, pull: PullRequest) -> list[PullFile]:
        """The files a pull request changes: as given, or (opened through the API) the diff from
        the merge base of its branches to its head, as GitHub computes it."""
        if not pull.diff_of_branches:
            return pull.files
        base_head = repo.refs.get(f"heads/{pull.base_ref}", pull.base_sha)
        common = self.ancestors(repo, base_head)
        merge_base = next((c for c in self.history(repo, pull.head_sha) if c.sha in common), None)
        before = merge_base.tree if merge_base else {}
        after = repo.commits[pull.head_sha].tree
        files: list[PullFile] = []
        for path in sorted(before.keys() | after.keys()):
            old, new = before.get(path), after.get(path)
            if old == new:
                continue
            old_lines = repo.blobs[old].count(b"\n") if old else 0
            new_lines = repo.blobs[new].count(b"\n") if new else 0
            status: Literal["added", "removed", "modified"] = (
                "added" if old is None else "removed" if new is None else "modified"
            )
            files.append(PullFile(path, status, new_lines, old_lines, patch=None))
        return files

    def add_comment(
        self,
        full_name: str,
        number: int,
        body: str,
        *,
        user: str,
        created_at: datetime | None = None,
    ) -> Comment:
        with self.lock:
            repo = self.repos[full_name]
            if number not in repo.pulls and number not in repo.issues:
                raise KeyError(f"{full_name} has no issue or pull request #{number}")
            if user not in self.users:
                self.add_user(user)
            moment = created_at or self.tick()
            comment = Comment(self.next_id(), number, body, user, moment, moment)
            repo.comments[comment.id] = comment
            return comment

    def comments(self, full_name: str, number: int) -> list[Comment]:
        """The comments of an issue or pull request, oldest first (as GitHub lists them)."""
        with self.lock:
            found = [c for c in self.repos[full_name].comments.values() if c.issue_number == number]
            return sorted(found, key=lambda c: (c.created_at, c.id))

    # -- faults and records --------------------------------------------------------------------

    def inject(self, fault: Fault) -> Fault:
        with self.lock:
            self.faults.append(fault)
            return fault

    def fail(
        self,
        method: str,
        path: str,
        *,
        status: int = 502,
        message: str = "Server Error",
        headers: dict[str, str] | None = None,
        times: int = 1,
    ) -> Fault:
        """Answer the next `times` matching requests with `status` without serving them."""
        return self.inject(Fault(method, path, status, message, dict(headers or {}), times))

    def secondary_rate_limit(
        self, method: str, path: str, *, retry_after: int | None = 1, times: int = 1
    ) -> Fault:
        """GitHub's secondary rate limit: 403, with Retry-After unless it is None (then only
        the message says so, which GitHub also does)."""
        return self.fail(
            method,
            path,
            status=403,
            message="You have exceeded a secondary rate limit. Please wait a few minutes "
            "before you try again.",
            headers={} if retry_after is None else {"Retry-After": str(retry_after)},
            times=times,
        )

    def mutate(
        self, method: str, path: str, rewrite: Callable[[Any], Any], *, times: int = 1
    ) -> Fault:
        """Serve the next matching requests, then pass their JSON body through `rewrite`."""
        return self.inject(Fault(method, path, times=times, mutate=rewrite))

    def hostile(self, method: str, path: str, behaviour: Any, *, times: int = 1) -> Fault:
        """The next `times` requests matching `method` and `path` get `behaviour`'s hostile
        200 (a `judge_server.Behaviour.trickle()`, `.gzip_bomb()` or `.huge()`)."""
        return self.inject(Fault(method, path, times=times, hostile=behaviour))

    def _take_hostile(self, method: str, path: str) -> Fault | None:
        with self.lock:
            for fault in self.faults:
                if fault.times > 0 and fault.hostile is not None and fault.matches(method, path):
                    fault.times -= 1
                    return fault
        return None

    def _take_fault(self, method: str, path: str) -> Fault | None:
        with self.lock:
            for fault in self.faults:
                if fault.times > 0 and fault.matches(method, path) and fault.hostile is None:
                    fault.times -= 1
                    return fault
            return None

    def calls(self, method: str = "*", path: str = "*") -> list[RecordedRequest]:
        """The recorded requests matching `method` ("*" for any) and an fnmatch `path`."""
        with self.lock:
            return [
                r
                for r in self.requests
                if method in ("*", r.method) and fnmatch.fnmatchcase(r.path, path)
            ]

    def take_violations(self) -> list[str]:
        """Return and forget the recorded violations (for tests that provoke one)."""
        with self.lock:
            found, self.violations = self.violations, []
            return found

    # -- representations (the shapes of GitHub's schemas) --------------------------------------

    def user_json(self, login: str) -> dict[str, Any]:
        """simple-user."""
        user = self.users[login]
        api = f"{self.api_url}/users/{quote(login)}"
        html = (
            f"{self.html_url}/apps/{login.removesuffix('[bot]')}"
            if user.type == "Bot"
            else f"{self.html_url}/{login}"
        )
        return {
            "login": login,
            "id": user.id,
            "node_id": node_id("BOT_" if user.type == "Bot" else "U_", user.id),
            "avatar_url": f"https://avatars.githubusercontent.com/u/{user.id}?v=4",
            "gravatar_id": "",
            "url": api,
            "html_url": html,
            "followers_url": f"{api}/followers",
            "following_url": f"{api}/following{{/other_user}}",
            "gists_url": f"{api}/gists{{/gist_id}}",
            "starred_url": f"{api}/starred{{/owner}}{{/repo}}",
            "subscriptions_url": f"{api}/subscriptions",
            "organizations_url": f"{api}/orgs",
            "repos_url": f"{api}/repos",
            "events_url": f"{api}/events{{/privacy}}",
            "received_events_url": f"{api}/received_events",
            "type": user.type,
            "user_view_type": "public",
            "site_admin": False,
        }

    def private_user_json(self, login: str) -> dict[str, Any]:
        """private-user: what GET /user answers about the token's own user."""
        user = self.users[login]
        return {
            **self.user_json(login),
            "user_view_type": "private",
            "name": user.name,
            "company": None,
            "blog": "",
            "location": None,
            "email": None,
            "notification_email": None,
            "hireable": None,
            "bio": None,
            "twitter_username": None,
            "public_repos": sum(1 for r in self.repos.values() if r.owner == login),
            "public_gists": 0,
            "followers": 0,
            "following": 0,
            "created_at": timestamp(user.created_at),
            "updated_at": timestamp(user.created_at),
            "private_gists": 0,
            "total_private_repos": 0,
            "owned_private_repos": 0,
            "disk_usage": 0,
            "collaborators": 0,
            "two_factor_authentication": True,
            "plan": {
                "name": "free",
                "space": 976562499,
                "private_repos": 10000,
                "collaborators": 0,
            },
        }

    def repo_json(self, repo: Repo) -> dict[str, Any]:
        """full-repository (a superset of repository, which pull requests embed)."""
        api = f"{self.api_url}/repos/{repo.full_name}"
        urls = {
            "archive_url": "/{archive_format}{/ref}",
            "assignees_url": "/assignees{/user}",
            "blobs_url": "/git/blobs{/sha}",
            "branches_url": "/branches{/branch}",
            "collaborators_url": "/collaborators{/collaborator}",
            "comments_url": "/comments{/number}",
            "commits_url": "/commits{/sha}",
            "compare_url": "/compare/{base}...{head}",
            "contents_url": "/contents/{+path}",
            "contributors_url": "/contributors",
            "deployments_url": "/deployments",
            "downloads_url": "/downloads",
            "events_url": "/events",
            "forks_url": "/forks",
            "git_commits_url": "/git/commits{/sha}",
            "git_refs_url": "/git/refs{/sha}",
            "git_tags_url": "/git/tags{/sha}",
            "hooks_url": "/hooks",
            "issue_comment_url": "/issues/comments{/number}",
            "issue_events_url": "/issues/events{/number}",
            "issues_url": "/issues{/number}",
            "keys_url": "/keys{/key_id}",
            "labels_url": "/labels{/name}",
            "languages_url": "/languages",
            "merges_url": "/merges",
            "milestones_url": "/milestones{/number}",
            "notifications_url": "/notifications{?since,all,participating}",
            "pulls_url": "/pulls{/number}",
            "releases_url": "/releases{/id}",
            "stargazers_url": "/stargazers",
            "statuses_url": "/statuses/{sha}",
            "subscribers_url": "/subscribers",
            "subscription_url": "/subscription",
            "tags_url": "/tags",
            "teams_url": "/teams",
            "trees_url": "/git/trees{/sha}",
        }
        open_issues = sum(1 for p in repo.pulls.values() if p.state == "open") + sum(
            1 for i in repo.issues.values() if i.state == "open"
        )
        pushed = max((c.created_at for c in repo.commits.values()), default=repo.created_at)
        html = f"{self.html_url}/{repo.full_name}"
        return {
            "id": repo.id,
            "node_id": node_id("R_", repo.id),
            "name": repo.name,
            "full_name": repo.full_name,
            "private": repo.private,
            "visibility": "private" if repo.private else "public",
            "owner": self.user_json(repo.owner),
            "html_url": html,
            "description": None,
            "fork": False,
            "url": api,
            **{key: api + suffix for key, suffix in urls.items()},
            "git_url": f"git://{urlsplit(self.html_url).netloc}/{repo.full_name}.git",
            "ssh_url": f"git@{urlsplit(self.html_url).netloc}:{repo.full_name}.git",
            "clone_url": f"{html}.git",
            "svn_url": html,
            "mirror_url": None,
            "homepage": None,
            "language": "Python",
            "size": sum(len(b) for b in repo.blobs.values()) // 1024,
            "default_branch": repo.default_branch,
            "forks": 0,
            "forks_count": 0,
            "stargazers_count": 0,
            "watchers": 0,
            "watchers_count": 0,
            "open_issues": open_issues,
            "open_issues_count": open_issues,
            "network_count": 0,
            "subscribers_count": 0,
            "has_issues": True,
            "has_projects": True,
            "has_wiki": True,
            "has_pages": False,
            "has_downloads": True,
            "has_discussions": False,
            "archived": False,
            "disabled": False,
            "is_template": False,
            "allow_forking": True,
            "web_commit_signoff_required": False,
            "topics": [],
            "license": None,
            "pushed_at": timestamp(pushed),
            "created_at": timestamp(repo.created_at),
            "updated_at": timestamp(pushed),
        }

    def pull_json(self, repo: Repo, pull: PullRequest) -> dict[str, Any]:
        """pull-request."""
        api = f"{self.api_url}/repos/{repo.full_name}"
        html = f"{self.html_url}/{repo.full_name}/pull/{pull.number}"
        issue_api = f"{api}/issues/{pull.number}"
        pull_api = f"{api}/pulls/{pull.number}"
        comments = sum(1 for c in repo.comments.values() if c.issue_number == pull.number)
        files = self.pull_files(repo, pull)
        base_head = repo.refs.get(f"heads/{pull.base_ref}", pull.base_sha)
        commits = len(self.ancestors(repo, pull.head_sha) - self.ancestors(repo, base_head))

        def side(ref: str, sha: str, fork: str | None = None) -> dict[str, Any]:
            owner, repo_json = repo.owner, self.repo_json(repo)
            if fork is not None:  # the fork as GitHub shows it: another owner's copy
                owner, name = fork.split("/", 1)
                repo_json = {
                    **repo_json,
                    "full_name": fork,
                    "name": name,
                    "fork": True,
                    "owner": self.user_json(owner),
                }
            return {
                "label": f"{owner}:{ref}",
                "ref": ref,
                "sha": sha,
                "user": self.user_json(owner),
                "repo": repo_json,
            }

        def link(href: str) -> dict[str, str]:
            return {"href": href}

        return {
            "url": pull_api,
            "id": pull.id,
            "node_id": node_id("PR_", pull.id),
            "html_url": html,
            "diff_url": f"{html}.diff",
            "patch_url": f"{html}.patch",
            "issue_url": issue_api,
            "commits_url": f"{pull_api}/commits",
            "review_comments_url": f"{pull_api}/comments",
            "review_comment_url": f"{api}/pulls/comments{{/number}}",
            "comments_url": f"{issue_api}/comments",
            "statuses_url": f"{api}/statuses/{pull.head_sha}",
            "number": pull.number,
            "state": pull.state,
            "locked": False,
            "title": pull.title,
            "user": self.user_json(pull.user),
            "body": pull.body,
            "labels": [self.label_json(repo, repo.labels[n.lower()]) for n in pull.labels],
            "milestone": None,
            "active_lock_reason": None,
            "created_at": timestamp(pull.created_at),
            "updated_at": timestamp(pull.updated_at),
            "closed_at": timestamp(pull.closed_at) if pull.closed_at else None,
            "merged_at": None,
            "merge_commit_sha": None,
            "assignee": None,
            "assignees": [],
            "requested_reviewers": [],
            "requested_teams": [],
            "head": side(pull.head_ref, pull.head_sha, pull.head_repo),
            "base": side(pull.base_ref, pull.base_sha),
            "_links": {
                "self": link(pull_api),
                "html": link(html),
                "issue": link(issue_api),
                "comments": link(f"{issue_api}/comments"),
                "review_comments": link(f"{pull_api}/comments"),
                "review_comment": link(f"{api}/pulls/comments{{/number}}"),
                "commits": link(f"{pull_api}/commits"),
                "statuses": link(f"{api}/statuses/{pull.head_sha}"),
            },
            "author_association": self.association(repo, pull.user),
            "auto_merge": None,
            "draft": False,
            "merged": False,
            "mergeable": True,
            "rebaseable": True,
            "mergeable_state": "clean",
            "merged_by": None,
            "comments": comments,
            "review_comments": 0,
            "maintainer_can_modify": False,
            "commits": commits,
            "additions": sum(f.additions for f in files),
            "deletions": sum(f.deletions for f in files),
            "changed_files": len(files),
        }

    def pull_simple_json(self, repo: Repo, pull: PullRequest) -> dict[str, Any]:
        """pull-request-simple: what the list of pull requests holds."""
        full_only = {
            "merged", "mergeable", "rebaseable", "mergeable_state", "merged_by", "comments",
            "review_comments", "maintainer_can_modify", "commits", "additions", "deletions",
            "changed_files",
        }  # fmt: skip
        return {k: v for k, v in self.pull_json(repo, pull).items() if k not in full_only}

    def issue_json(self, repo: Repo, number: int) -> dict[str, Any]:
        """issue: an issue, or a pull request as the issues API shows it (with `pull_request`)."""
        api = f"{self.api_url}/repos/{repo.full_name}"
        issue_api = f"{api}/issues/{number}"
        pull = repo.pulls.get(number)
        item: Issue | PullRequest = pull if pull is not None else repo.issues[number]
        html = f"{self.html_url}/{repo.full_name}/{'pull' if pull else 'issues'}/{number}"
        closed_by = item.closed_by if isinstance(item, Issue) else None
        data: dict[str, Any] = {
            "url": issue_api,
            "repository_url": api,
            "labels_url": f"{issue_api}/labels{{/name}}",
            "comments_url": f"{issue_api}/comments",
            "events_url": f"{issue_api}/events",
            "html_url": html,
            "id": item.id,
            "node_id": node_id("PR_" if pull else "I_", item.id),
            "number": number,
            "title": item.title,
            "user": self.user_json(item.user),
            "labels": [self.label_json(repo, repo.labels[n.lower()]) for n in item.labels],
            "state": item.state,
            "locked": False,
            "assignee": None,
            "assignees": [],
            "milestone": None,
            "comments": sum(1 for c in repo.comments.values() if c.issue_number == number),
            "created_at": timestamp(item.created_at),
            "updated_at": timestamp(item.updated_at),
            "closed_at": timestamp(item.closed_at) if item.closed_at else None,
            "author_association": self.association(repo, item.user),
            "active_lock_reason": None,
            "body": item.body,
            "closed_by": self.user_json(closed_by) if closed_by else None,
            "reactions": {
                "url": f"{issue_api}/reactions",
                "total_count": 0,
                "+1": 0,
                "-1": 0,
                "laugh": 0,
                "hooray": 0,
                "confused": 0,
                "heart": 0,
                "rocket": 0,
                "eyes": 0,
            },
            "timeline_url": f"{issue_api}/timeline",
            "performed_via_github_app": None,
            "state_reason": item.state_reason if isinstance(item, Issue) else None,
        }
        if pull is not None:
            data["draft"] = False
            data["pull_request"] = {
                "url": f"{api}/pulls/{number}",
                "html_url": html,
                "diff_url": f"{html}.diff",
                "patch_url": f"{html}.patch",
                "merged_at": None,
            }
        return data

    def label_json(self, repo: Repo, label: Label) -> dict[str, Any]:
        """label."""
        return {
            "id": label.id,
            "node_id": node_id("LA_", label.id),
            "url": f"{self.api_url}/repos/{repo.full_name}/labels/{quote(label.name, safe='')}",
            "name": label.name,
            "description": label.description,
            "color": label.color,
            "default": label.default,
        }

    def ref_json(self, repo: Repo, name: str) -> dict[str, Any]:
        """git-ref; `name` as in `Repo.refs` ("heads/main")."""
        api = f"{self.api_url}/repos/{repo.full_name}"
        sha = repo.refs[name]
        digest = hashlib.sha1(name.encode(), usedforsecurity=False).hexdigest()
        return {
            "ref": f"refs/{name}",
            "node_id": node_id("REF_", int(digest[:8], 16)),
            "url": f"{api}/git/refs/{quote(name)}",
            "object": {"type": "commit", "sha": sha, "url": f"{api}/git/commits/{sha}"},
        }

    def git_user_json(self, login: str, moment: datetime) -> dict[str, Any]:
        """An author or committer as git records it (nullable-git-user)."""
        user = self.users[login]
        return {
            "name": user.name or login,
            "email": f"{user.id}+{login}@users.noreply.github.com",
            "date": timestamp(moment),
        }

    def commit_json(self, repo: Repo, commit: Commit) -> dict[str, Any]:
        """commit: what the list of commits holds."""
        api = f"{self.api_url}/repos/{repo.full_name}"
        html = f"{self.html_url}/{repo.full_name}"
        # GitHub sends `author: null` for an email that is no account's, which the description
        # (nullable oneOf) does not allow: every fake commit has an account
        login = commit.author or repo.owner
        who = self.git_user_json(login, commit.created_at)
        account = self.user_json(login)
        return {
            "url": f"{api}/commits/{commit.sha}",
            "sha": commit.sha,
            "node_id": node_id("C_", int(commit.sha[:8], 16)),
            "html_url": f"{html}/commit/{commit.sha}",
            "comments_url": f"{api}/commits/{commit.sha}/comments",
            "commit": {
                "url": f"{api}/git/commits/{commit.sha}",
                "author": who,
                "committer": who,
                "message": commit.message,
                "comment_count": 0,
                "tree": {"sha": _tree_sha(commit), "url": f"{api}/git/trees/{_tree_sha(commit)}"},
                "verification": {
                    "verified": False,
                    "reason": "unsigned",
                    "signature": None,
                    "payload": None,
                    "verified_at": None,
                },
            },
            "author": account,
            "committer": account,
            "parents": [
                {"sha": p, "url": f"{api}/commits/{p}", "html_url": f"{html}/commit/{p}"}
                for p in commit.parents
            ],
        }

    def file_commit_json(self, repo: Repo, commit: Commit, path: str) -> dict[str, Any]:
        """file-commit: what PUT contents answers."""
        listed = self.commit_json(repo, commit)
        entry = self.content_json(repo, commit, path)
        return {
            "content": {k: v for k, v in entry.items() if k not in ("content", "encoding")},
            "commit": {
                "sha": commit.sha,
                "node_id": listed["node_id"],
                "url": listed["commit"]["url"],
                "html_url": listed["html_url"],
                "author": listed["commit"]["author"],
                "committer": listed["commit"]["committer"],
                "message": commit.message,
                "tree": listed["commit"]["tree"],
                "parents": listed["parents"],
                "verification": listed["commit"]["verification"],
            },
        }

    def file_json(self, repo: Repo, pull: PullRequest, entry: PullFile) -> dict[str, Any]:
        """diff-entry."""
        path = quote(entry.filename)
        item: dict[str, Any] = {
            "sha": entry.sha,
            "filename": entry.filename,
            "status": entry.status,
            "additions": entry.additions,
            "deletions": entry.deletions,
            "changes": entry.additions + entry.deletions,
            "blob_url": f"{self.html_url}/{repo.full_name}/blob/{pull.head_sha}/{path}",
            "raw_url": f"{self.html_url}/{repo.full_name}/raw/{pull.head_sha}/{path}",
            "contents_url": (
                f"{self.api_url}/repos/{repo.full_name}/contents/{path}?ref={pull.head_sha}"
            ),
        }
        if entry.patch is not None:
            item["patch"] = entry.patch
        if entry.previous_filename is not None:
            item["previous_filename"] = entry.previous_filename
        return item

    def comment_json(self, repo: Repo, comment: Comment) -> dict[str, Any]:
        """issue-comment."""
        api = f"{self.api_url}/repos/{repo.full_name}"
        kind = "pull" if comment.issue_number in repo.pulls else "issues"
        url = f"{api}/issues/comments/{comment.id}"
        return {
            "id": comment.id,
            "node_id": node_id("IC_", comment.id),
            "url": url,
            "html_url": (
                f"{self.html_url}/{repo.full_name}/{kind}/{comment.issue_number}"
                f"#issuecomment-{comment.id}"
            ),
            "body": comment.body,
            "user": self.user_json(comment.user),
            "created_at": timestamp(comment.created_at),
            "updated_at": timestamp(comment.updated_at),
            "issue_url": f"{api}/issues/{comment.issue_number}",
            "author_association": self.association(repo, comment.user),
            "performed_via_github_app": None,
            "reactions": {
                "url": f"{url}/reactions",
                "total_count": 0,
                "+1": 0,
                "-1": 0,
                "laugh": 0,
                "hooray": 0,
                "confused": 0,
                "heart": 0,
                "rocket": 0,
                "eyes": 0,
            },
        }

    def content_json(self, repo: Repo, commit: Commit, path: str) -> dict[str, Any]:
        """content-file; above 1 MB without content and with encoding "none", like GitHub."""
        sha = commit.tree[path]
        data = repo.blobs[sha]
        large = len(data) > LARGE_FILE
        return {
            **self._content_entry(repo, commit, path, "file", sha, len(data)),
            "content": "" if large else _base64_lines(data),
            "encoding": "none" if large else "base64",
        }

    def _content_entry(
        self, repo: Repo, commit: Commit, path: str, kind: str, sha: str, size: int
    ) -> dict[str, Any]:
        api = f"{self.api_url}/repos/{repo.full_name}"
        ref = self._ref_name(repo, commit)
        url = f"{api}/contents/{quote(path)}?ref={quote(ref, safe='')}"
        blob_or_tree = "blob" if kind == "file" else "tree"
        html = f"{self.html_url}/{repo.full_name}/{blob_or_tree}/{ref}/{quote(path)}"
        git = f"{api}/git/{'blobs' if kind == 'file' else 'trees'}/{sha}"
        return {
            "type": kind,
            "name": path.rsplit("/", 1)[-1],
            "path": path,
            "sha": sha,
            "size": size,
            "url": url,
            "html_url": html,
            "git_url": git,
            "download_url": (
                f"https://raw.githubusercontent.com/{repo.full_name}/{ref}/{quote(path)}"
                if kind == "file"
                else None
            ),
            "_links": {"self": url, "git": git, "html": html},
        }

    def _ref_name(self, repo: Repo, commit: Commit) -> str:
        for name, sha in repo.refs.items():
            if sha == commit.sha and name.startswith("heads/"):
                return name.removeprefix("heads/")
        return commit.sha

    def association(self, repo: Repo, login: str) -> str:
        return "OWNER" if login == repo.owner else "NONE"

    # -- request plumbing ----------------------------------------------------------------------

    def find_repo(self, call: Call) -> Repo:
        repo = self.repos.get(f"{call.params['owner']}/{call.params['repo']}")
        if repo is None or (repo.private and call.login is None):
            raise ApiError(404, "Not Found", docs=f"{DOCS}/repos/repos#get-a-repository")
        return repo

    def require_write(self, call: Call, docs: str) -> None:
        if call.token is None:
            raise ApiError(401, "Requires authentication", docs=docs)
        if call.token.read_only:
            raise ApiError(403, "Resource not accessible by integration", docs=docs)

    def paginate(self, call: Call, items: list[Any], *, cap: int | None = None) -> Answer:
        """One page of `items` with GitHub's `Link` header (first/prev/next/last)."""
        try:
            per_page = max(1, min(100, int(call.arg("per_page", "30") or 30)))
            page = max(1, int(call.arg("page", "1") or 1))
        except ValueError as exc:
            raise ApiError(422, "Invalid pagination parameters") from exc
        if cap is not None:
            items = items[:cap]
        last = max(1, -(-len(items) // per_page))
        chunk = items[(page - 1) * per_page : page * per_page]
        links: list[str] = []

        def url(number: int) -> str:
            query = {k: v[-1] for k, v in call.query.items() if k not in ("page", "per_page")}
            query.update(per_page=str(per_page), page=str(number))
            return f"<{self.api_url}{call.path}?{urlencode(query)}>"

        if page < last:
            links += [f'{url(page + 1)}; rel="next"', f'{url(last)}; rel="last"']
        if page > 1:
            links = [f'{url(page - 1)}; rel="prev"', *links, f'{url(1)}; rel="first"']
        return Answer(200, chunk, {"Link": ", ".join(links)} if links else {})


def _tree_sha(commit: Commit) -> str:
    listing = json.dumps(sorted(commit.tree.items())).encode()
    return hashlib.sha1(listing, usedforsecurity=False).hexdigest()


def _base64_lines(data: bytes) -> str:
    """GitHub wraps base64 content at 60 characters with a trailing newline."""
    text = base64.b64encode(data).decode()
    return "".join(text[i : i + 60] + "\n" for i in range(0, len(text), 60))


# ---------------------------------------------------------------------------------------------
# Routes (templates exactly as in the description: the validator is told which one matched)


@_route("GET", "/user")
def _get_user(fake: GitHubServer, call: Call) -> Answer:
    docs = f"{DOCS}/users/users#get-the-authenticated-user"
    if call.token is None:
        raise ApiError(401, "Requires authentication", docs=docs)
    if call.token.installation:
        raise ApiError(403, "Resource not accessible by integration", docs=docs)
    return Answer(200, fake.private_user_json(call.token.login))


@_route("GET", "/repos/{owner}/{repo}")
def _get_repo(fake: GitHubServer, call: Call) -> Answer:
    return Answer(200, fake.repo_json(fake.find_repo(call)))


def _find_pull(fake: GitHubServer, call: Call) -> tuple[Repo, PullRequest]:
    repo = fake.find_repo(call)
    pull = repo.pulls.get(int(call.params["pull_number"]))
    if pull is None:
        raise ApiError(404, "Not Found", docs=f"{DOCS}/pulls/pulls#get-a-pull-request")
    return repo, pull


@_route("GET", "/repos/{owner}/{repo}/pulls/{pull_number}")
def _get_pull(fake: GitHubServer, call: Call) -> Answer:
    repo, pull = _find_pull(fake, call)
    return Answer(200, fake.pull_json(repo, pull))


@_route("GET", "/repos/{owner}/{repo}/pulls/{pull_number}/files")
def _list_pull_files(fake: GitHubServer, call: Call) -> Answer:
    repo, pull = _find_pull(fake, call)
    entries = [fake.file_json(repo, pull, f) for f in fake.pull_files(repo, pull)[:FILES_CAP]]
    return fake.paginate(call, entries, cap=FILES_CAP)


def _issue_number(fake: GitHubServer, call: Call, repo: Repo) -> int:
    number = int(call.params["issue_number"])
    if number not in repo.pulls and number not in repo.issues:
        raise ApiError(404, "Not Found", docs=f"{DOCS}/issues/issues#get-an-issue")
    return number


@_route("GET", "/repos/{owner}/{repo}/issues/{issue_number}/comments")
def _list_comments(fake: GitHubServer, call: Call) -> Answer:
    repo = fake.find_repo(call)
    number = _issue_number(fake, call, repo)
    found = fake.comments(repo.full_name, number)
    since = call.arg("since")
    if since:
        moment = datetime.fromisoformat(since.replace("Z", "+00:00"))
        found = [c for c in found if c.updated_at >= moment]
    return fake.paginate(call, [fake.comment_json(repo, c) for c in found])


def _comment_body(call: Call, docs: str) -> str:
    body = call.body.get("body") if isinstance(call.body, dict) else None
    if not isinstance(body, str) or not body.strip():
        raise ApiError(
            422,
            "Validation Failed",
            errors=[{"resource": "IssueComment", "code": "missing_field", "field": "body"}],
            docs=docs,
        )
    if len(body) > COMMENT_MAX:
        raise ApiError(
            422,
            "Validation Failed",
            errors=[
                {
                    "resource": "IssueComment",
                    "code": "custom",
                    "field": "body",
                    "message": f"Body is too long (maximum is {COMMENT_MAX} characters)",
                }
            ],
            docs=docs,
        )
    return body


@_route("POST", "/repos/{owner}/{repo}/issues/{issue_number}/comments")
def _create_comment(fake: GitHubServer, call: Call) -> Answer:
    docs = f"{DOCS}/issues/comments#create-an-issue-comment"
    repo = fake.find_repo(call)
    number = _issue_number(fake, call, repo)
    fake.require_write(call, docs)
    body = _comment_body(call, docs)
    assert call.login is not None
    comment = fake.add_comment(repo.full_name, number, body, user=call.login)
    data = fake.comment_json(repo, comment)
    return Answer(201, data, {"Location": data["url"]})


def _find_comment(fake: GitHubServer, call: Call) -> tuple[Repo, Comment]:
    repo = fake.find_repo(call)
    comment = repo.comments.get(int(call.params["comment_id"]))
    if comment is None:
        raise ApiError(404, "Not Found", docs=f"{DOCS}/issues/comments#get-an-issue-comment")
    return repo, comment


@_route("GET", "/repos/{owner}/{repo}/issues/comments/{comment_id}")
def _get_comment(fake: GitHubServer, call: Call) -> Answer:
    repo, comment = _find_comment(fake, call)
    return Answer(200, fake.comment_json(repo, comment))


@_route("PATCH", "/repos/{owner}/{repo}/issues/comments/{comment_id}")
def _update_comment(fake: GitHubServer, call: Call) -> Answer:
    docs = f"{DOCS}/issues/comments#update-an-issue-comment"
    repo, comment = _find_comment(fake, call)
    fake.require_write(call, docs)
    comment.body = _comment_body(call, docs)
    comment.updated_at = fake.tick()
    return Answer(200, fake.comment_json(repo, comment))


@_route("DELETE", "/repos/{owner}/{repo}/issues/comments/{comment_id}")
def _delete_comment(fake: GitHubServer, call: Call) -> Answer:
    repo, comment = _find_comment(fake, call)
    fake.require_write(call, f"{DOCS}/issues/comments#delete-an-issue-comment")
    del repo.comments[comment.id]
    return Answer(204, None)


@_route("GET", "/repos/{owner}/{repo}/contents/{path}")
def _get_content(fake: GitHubServer, call: Call) -> Answer:
    docs = f"{DOCS}/repos/contents#get-repository-content"
    repo = fake.find_repo(call)
    ref = call.arg("ref")
    commit = repo.resolve(ref)
    if commit is None:
        raise ApiError(404, f"No commit found for the ref {ref}", docs=docs)
    path = unquote(call.params["path"]).strip("/")
    if path in commit.tree:
        return Answer(200, fake.content_json(repo, commit, path))
    prefix = f"{path}/"
    below = sorted(p for p in commit.tree if p.startswith(prefix))
    if not below:
        raise ApiError(404, "Not Found", docs=docs)
    entries: dict[str, dict[str, Any]] = {}
    for child in below:
        name = child[len(prefix) :].split("/", 1)[0]
        child_path = prefix + name
        if child_path in entries:
            continue
        if child_path in commit.tree:
            sha = commit.tree[child_path]
            entries[child_path] = fake._content_entry(
                repo, commit, child_path, "file", sha, len(repo.blobs[sha])
            )
        else:
            tree_sha = hashlib.sha1(child_path.encode(), usedforsecurity=False).hexdigest()
            entries[child_path] = fake._content_entry(repo, commit, child_path, "dir", tree_sha, 0)
    return Answer(200, list(entries.values()))


@_route("GET", "/repos/{owner}/{repo}/git/blobs/{file_sha}")
def _get_blob(fake: GitHubServer, call: Call) -> Answer:
    repo = fake.find_repo(call)
    sha = call.params["file_sha"]
    data = repo.blobs.get(sha)
    if data is None:
        raise ApiError(404, "Not Found", docs=f"{DOCS}/git/blobs#get-a-blob")
    return Answer(
        200,
        {
            "sha": sha,
            "node_id": node_id("B_", int(sha[:8], 16)),
            "size": len(data),
            "url": f"{fake.api_url}/repos/{repo.full_name}/git/blobs/{sha}",
            "content": _base64_lines(data),
            "encoding": "base64",
        },
    )


def _body(call: Call) -> dict[str, Any]:
    # the validator has checked the body against the operation's schema
    return call.body if isinstance(call.body, dict) else {}


def _invalid(resource: str, field: str, code: str = "invalid", *, docs: str) -> ApiError:
    return ApiError(
        422,
        "Validation Failed",
        errors=[{"resource": resource, "code": code, "field": field}],
        docs=docs,
    )


def _custom(resource: str, message: str, *, docs: str) -> ApiError:
    return ApiError(
        422,
        "Validation Failed",
        errors=[{"resource": resource, "code": "custom", "message": message}],
        docs=docs,
    )


# -- git refs


def _ref_param(call: Call) -> str:
    return unquote(call.params["ref"]).strip("/")


@_route("GET", "/repos/{owner}/{repo}/git/ref/{ref}")
def _get_ref(fake: GitHubServer, call: Call) -> Answer:
    repo = fake.find_repo(call)
    name = _ref_param(call)
    if name not in repo.refs:
        raise ApiError(404, "Not Found", docs=f"{DOCS}/git/refs#get-a-reference")
    return Answer(200, fake.ref_json(repo, name))


@_route("POST", "/repos/{owner}/{repo}/git/refs")
def _create_ref(fake: GitHubServer, call: Call) -> Answer:
    docs = f"{DOCS}/git/refs#create-a-reference"
    repo = fake.find_repo(call)
    fake.require_write(call, docs)
    body = _body(call)
    ref, sha = str(body["ref"]), str(body["sha"])
    if not ref.startswith("refs/") or ref.count("/") < 2:
        raise ApiError(
            422, "Reference name must start with 'refs/' and have at least two slashes.", docs=docs
        )
    name = ref.removeprefix("refs/")
    if name in repo.refs:
        raise ApiError(422, "Reference already exists", docs=docs)
    if sha not in repo.commits:
        raise ApiError(422, "Object does not exist", docs=docs)
    fake.set_ref(repo.full_name, name, sha)
    data = fake.ref_json(repo, name)
    return Answer(201, data, {"Location": data["url"]})


@_route("PATCH", "/repos/{owner}/{repo}/git/refs/{ref}")
def _update_ref(fake: GitHubServer, call: Call) -> Answer:
    docs = f"{DOCS}/git/refs#update-a-reference"
    repo = fake.find_repo(call)
    fake.require_write(call, docs)
    name = _ref_param(call)
    body = _body(call)
    sha = str(body["sha"])
    if name not in repo.refs:
        raise ApiError(422, "Reference does not exist", docs=docs)
    if sha not in repo.commits:
        raise ApiError(422, "Object does not exist", docs=docs)
    if not body.get("force") and repo.refs[name] not in fake.ancestors(repo, sha):
        raise ApiError(422, "Update is not a fast forward", docs=docs)
    fake.set_ref(repo.full_name, name, sha)
    return Answer(200, fake.ref_json(repo, name))


# -- file commits and history


@_route("PUT", "/repos/{owner}/{repo}/contents/{path}")
def _put_content(fake: GitHubServer, call: Call) -> Answer:
    """A commit of one file on a branch. Like GitHub: replacing a file needs its blob `sha`
    (422 without it, 409 when it is not the file's current one)."""
    docs = f"{DOCS}/repos/contents#create-or-update-file-contents"
    repo = fake.find_repo(call)
    fake.require_write(call, docs)
    body = _body(call)
    path = unquote(call.params["path"]).strip("/")
    branch = str(body.get("branch") or repo.default_branch)
    head = repo.refs.get(f"heads/{branch}")
    if head is None:
        raise ApiError(404, f"Branch {branch} not found", docs=docs)
    try:
        data = base64.b64decode("".join(str(body["content"]).split()), validate=True)
    except (binascii.Error, ValueError):
        raise ApiError(422, "content is not valid Base64", docs=docs) from None
    current = repo.commits[head].tree.get(path)
    given = body.get("sha")
    if current is not None and given is None:
        raise ApiError(422, 'Invalid request.\n\n"sha" wasn\'t supplied.', docs=docs)
    if given is not None and given != current:
        raise ApiError(409, f"{path} does not match {given}", docs=docs)
    sha = fake.commit(
        repo.full_name, branch, {path: data}, message=str(body["message"]), author=call.login
    )
    return Answer(
        201 if current is None else 200, fake.file_commit_json(repo, repo.commits[sha], path)
    )


@_route("GET", "/repos/{owner}/{repo}/commits")
def _list_commits(fake: GitHubServer, call: Call) -> Answer:
    """Newest first from `sha` (default: the default branch); with `path`, those changing it."""
    repo = fake.find_repo(call)
    ref = call.arg("sha")
    start = repo.resolve(ref)
    if start is None:
        raise ApiError(
            404, f"No commit found for SHA: {ref}", docs=f"{DOCS}/commits/commits#list-commits"
        )
    path = (call.arg("path") or "").strip("/") or None
    commits = fake.history(repo, start.sha, path)
    return fake.paginate(call, [fake.commit_json(repo, c) for c in commits])


# -- pull requests


def _newest_first(call: Call, items: list[Any], keys: dict[str, Callable[[Any], Any]]) -> list[Any]:
    """GitHub's `sort` (default created) and `direction` (default desc) of a list."""
    key = keys.get(call.arg("sort") or "created", keys["created"])
    return sorted(items, key=key, reverse=(call.arg("direction") or "desc") == "desc")


@_route("GET", "/repos/{owner}/{repo}/pulls")
def _list_pulls(fake: GitHubServer, call: Call) -> Answer:
    repo = fake.find_repo(call)
    state = call.arg("state") or "open"
    found = [p for p in repo.pulls.values() if state in ("all", p.state)]
    head = call.arg("head")
    if head and ":" in head:  # GitHub ignores a `head` without its `owner:`
        owner, _, branch = head.partition(":")
        found = [p for p in found if owner.lower() == repo.owner.lower() and p.head_ref == branch]
    if base := call.arg("base"):
        found = [p for p in found if p.base_ref == base]
    found = _newest_first(
        call,
        found,
        {"created": lambda p: (p.created_at, p.number), "updated": lambda p: p.updated_at},
    )
    return fake.paginate(call, [fake.pull_simple_json(repo, p) for p in found])


@_route("POST", "/repos/{owner}/{repo}/pulls")
def _create_pull(fake: GitHubServer, call: Call) -> Answer:
    docs = f"{DOCS}/pulls/pulls#create-a-pull-request"
    repo = fake.find_repo(call)
    fake.require_write(call, docs)
    assert call.token is not None and call.login is not None
    if call.token.installation and not repo.actions_can_create_pulls:
        raise ApiError(
            403, "GitHub Actions is not permitted to create or approve pull requests.", docs=docs
        )
    body = _body(call)
    title = body.get("title")
    if not isinstance(title, str) or not title.strip():
        raise _invalid("PullRequest", "title", "missing_field", docs=docs)
    owner, _, head = str(body["head"]).rpartition(":")
    base = str(body["base"])
    if (owner and owner.lower() != repo.owner.lower()) or f"heads/{head}" not in repo.refs:
        raise _invalid("PullRequest", "head", docs=docs)
    if f"heads/{base}" not in repo.refs:
        raise _invalid("PullRequest", "base", docs=docs)
    if any(
        p.state == "open" and p.head_ref == head and p.base_ref == base for p in repo.pulls.values()
    ):
        message = f"A pull request already exists for {repo.owner}:{head}."
        raise _custom("PullRequest", message, docs=docs)
    head_sha, base_sha = repo.refs[f"heads/{head}"], repo.refs[f"heads/{base}"]
    if head_sha in fake.ancestors(repo, base_sha):
        raise _custom("PullRequest", f"No commits between {base} and {head}", docs=docs)
    moment = fake.tick()
    pull = PullRequest(
        number=repo.next_number,
        id=fake.next_id(),
        title=title,
        user=call.login,
        head_ref=head,
        base_ref=base,
        head_sha=head_sha,
        base_sha=base_sha,
        files=[],
        body=body.get("body"),
        created_at=moment,
        updated_at=moment,
        diff_of_branches=True,
    )
    repo.next_number += 1
    repo.pulls[pull.number] = pull
    data = fake.pull_json(repo, pull)
    return Answer(201, data, {"Location": data["url"]})


@_route("PATCH", "/repos/{owner}/{repo}/pulls/{pull_number}")
def _update_pull(fake: GitHubServer, call: Call) -> Answer:
    docs = f"{DOCS}/pulls/pulls#update-a-pull-request"
    repo, pull = _find_pull(fake, call)
    fake.require_write(call, docs)
    body = _body(call)
    if "title" in body:
        if not str(body["title"]).strip():
            raise _invalid("PullRequest", "title", "missing_field", docs=docs)
        pull.title = str(body["title"])
    if "body" in body:
        pull.body = body["body"]
    if "base" in body:
        if f"heads/{body['base']}" not in repo.refs:
            raise _invalid("PullRequest", "base", docs=docs)
        pull.base_ref = str(body["base"])
    moment = fake.tick()
    if body.get("state") in ("open", "closed") and body["state"] != pull.state:
        pull.state = body["state"]
        pull.closed_at = moment if pull.state == "closed" else None
    pull.updated_at = moment
    return Answer(200, fake.pull_json(repo, pull))


# -- labels and issues


@_route("GET", "/repos/{owner}/{repo}/labels/{name}")
def _get_label(fake: GitHubServer, call: Call) -> Answer:
    repo = fake.find_repo(call)
    label = repo.labels.get(unquote(call.params["name"]).lower())
    if label is None:
        raise ApiError(404, "Not Found", docs=f"{DOCS}/issues/labels#get-a-label")
    return Answer(200, fake.label_json(repo, label))


@_route("POST", "/repos/{owner}/{repo}/labels")
def _create_label(fake: GitHubServer, call: Call) -> Answer:
    docs = f"{DOCS}/issues/labels#create-a-label"
    repo = fake.find_repo(call)
    fake.require_write(call, docs)
    body = _body(call)
    name = str(body["name"]).strip()
    color = str(body.get("color") or "ededed").removeprefix("#")
    description = body.get("description")
    if not name:
        raise _invalid("Label", "name", "missing_field", docs=docs)
    if not re.fullmatch(r"[0-9a-fA-F]{6}", color):
        raise _invalid("Label", "color", docs=docs)
    if description is not None and len(str(description)) > 100:
        raise _invalid("Label", "description", docs=docs)
    if name.lower() in repo.labels:
        raise _invalid("Label", "name", "already_exists", docs=docs)
    label = fake.add_label(
        repo.full_name, name, color=color.lower(), description=description or None
    )
    data = fake.label_json(repo, label)
    return Answer(201, data, {"Location": data["url"]})


@_route("GET", "/repos/{owner}/{repo}/issues")
def _list_issues(fake: GitHubServer, call: Call) -> Answer:
    """Issues and, as on GitHub, pull requests (those carry `pull_request`)."""
    repo = fake.find_repo(call)
    state = call.arg("state") or "open"
    items: list[Issue | PullRequest] = [
        repo.pulls.get(n) or repo.issues[n] for n in repo.pulls.keys() | repo.issues.keys()
    ]
    found = [i for i in items if state in ("all", i.state)]
    if labels := call.arg("labels"):
        wanted = {name.strip().lower() for name in labels.split(",") if name.strip()}
        found = [i for i in found if wanted <= {n.lower() for n in i.labels}]
    if creator := call.arg("creator"):
        found = [i for i in found if i.user.lower() == creator.lower()]
    comments = {n: 0 for n in repo.pulls.keys() | repo.issues.keys()}
    for comment in repo.comments.values():
        comments[comment.issue_number] += 1
    found = _newest_first(
        call,
        found,
        {
            "created": lambda i: (i.created_at, i.number),
            "updated": lambda i: (i.updated_at, i.number),
            "comments": lambda i: (comments[i.number], i.number),
        },
    )
    return fake.paginate(call, [fake.issue_json(repo, i.number) for i in found])


def _label_names(value: Any) -> list[str]:
    names = [v.get("name") if isinstance(v, dict) else v for v in value or []]
    return [str(n) for n in names if n]


@_route("POST", "/repos/{owner}/{repo}/issues")
def _create_issue(fake: GitHubServer, call: Call) -> Answer:
    docs = f"{DOCS}/issues/issues#create-an-issue"
    repo = fake.find_repo(call)
    fake.require_write(call, docs)
    assert call.login is not None
    body = _body(call)
    title = str(body["title"])
    if not title.strip():
        raise _invalid("Issue", "title", "missing_field", docs=docs)
    text = body.get("body")
    if isinstance(text, str) and len(text) > COMMENT_MAX:
        raise _invalid("Issue", "body", docs=docs)
    issue = fake.add_issue(
        repo.full_name,
        title=title,
        user=call.login,
        body=text,
        labels=_label_names(body.get("labels")),
    )
    data = fake.issue_json(repo, issue.number)
    return Answer(201, data, {"Location": data["url"]})


@_route("PATCH", "/repos/{owner}/{repo}/issues/{issue_number}")
def _update_issue(fake: GitHubServer, call: Call) -> Answer:
    """Title, body, labels and state of an issue (or of a pull request, as GitHub allows)."""
    docs = f"{DOCS}/issues/issues#update-an-issue"
    repo = fake.find_repo(call)
    number = _issue_number(fake, call, repo)
    fake.require_write(call, docs)
    body = _body(call)
    item: Issue | PullRequest = repo.pulls.get(number) or repo.issues[number]
    if body.get("title") is not None:
        item.title = str(body["title"])
    if "body" in body:
        if isinstance(body["body"], str) and len(body["body"]) > COMMENT_MAX:
            raise _invalid("Issue", "body", docs=docs)
        item.body = body["body"]
    if "labels" in body:
        item.labels = [fake.label(repo.full_name, n).name for n in _label_names(body["labels"])]
    moment = fake.tick()
    state = body.get("state")
    if state in ("open", "closed") and state != item.state:
        item.state = state
        item.closed_at = moment if state == "closed" else None
        if isinstance(item, Issue):
            item.closed_by = call.login if state == "closed" else None
            item.state_reason = (
                (body.get("state_reason") or "completed") if state == "closed" else "reopened"
            )
    item.updated_at = moment
    return Answer(200, fake.issue_json(repo, number))


GRAPHQL_PATH = "/graphql"
VIEWER_QUERY = "query { viewer { login } }"
GRAPHQL_DOCS = "https://docs.github.com/graphql/guides/forming-calls-with-graphql"


def _graphql_words(query: str) -> list[str]:
    return query.replace("{", " { ").replace("}", " } ").split()


def _graphql_viewer(fake: GitHubServer, call: Call) -> Answer:
    """`viewer { login }`: the token's own login, for installation tokens too (`<app>[bot]`)."""
    if call.token is None:
        raise ApiError(401, "This endpoint requires you to be authenticated.", docs=GRAPHQL_DOCS)
    return Answer(200, {"data": {"viewer": {"login": call.token.login}}})


def match_route(method: str, path: str) -> tuple[str, dict[str, str], Handler] | None:
    for route_method, template, pattern, handler in _ROUTES:
        found = pattern.match(path)
        if route_method == method and found:
            return template, found.groupdict(), handler
    return None


# ---------------------------------------------------------------------------------------------
# HTTP


class _Handler(BaseHTTPRequestHandler):
    fake: GitHubServer
    protocol_version = "HTTP/1.1"  # keep-alive, as GitHub; every answer has Content-Length
    disable_nagle_algorithm = True
    timeout = 30  # an idle keep-alive connection frees its thread

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def do_PATCH(self) -> None:
        self._serve("PATCH")

    def do_PUT(self) -> None:
        self._serve("PUT")

    def do_DELETE(self) -> None:
        self._serve("DELETE")

    def _serve(self, method: str) -> None:
        fake = self.fake
        split = urlsplit(self.path)
        path, query_string = split.path, split.query
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if method == "GET" and (control := fake.control.get(path)) is not None:
            with fake.lock:
                payload = json.dumps(control()).encode()
            self._send(200, [("Content-Type", "application/json; charset=utf-8")], payload)
            return
        query: dict[str, list[str]] = {}
        for key, value in parse_qsl(query_string, keep_blank_values=True):
            query.setdefault(key, []).append(value)
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode(errors="replace")
        record = RecordedRequest(method, path, query, headers, body)
        with fake.lock:
            fake.requests.append(record)

        if (hostile := fake._take_hostile(method, path)) is not None:
            self._send_hostile(hostile.hostile)
            return
        if method == "POST" and path == GRAPHQL_PATH:
            self._graphql(record, headers, body)
            return
        routed = match_route(method, path)
        if routed is None:
            self._violation(record, f"{method} {path}: the fake serves no such operation")
            return
        template, params, handler = routed
        spec_request = SpecRequest(
            method, path, template, params, query_string, list(self.headers.items()), raw or None
        )
        if fake.validate and (problem := validate_request(spec_request)):
            self._violation(record, f"request {method} {path}: {problem}")
            return

        answer = self._answer(method, path, params, query, headers, body, record, handler)
        payload = b"" if answer.body is None else json.dumps(answer.body).encode()
        out_headers = [
            ("Content-Type", "application/json; charset=utf-8"),
            ("X-GitHub-Media-Type", "github.v3; format=json"),
            ("X-RateLimit-Limit", "5000"),
            ("X-RateLimit-Remaining", "4999"),
            ("X-RateLimit-Resource", "core"),
            *answer.headers.items(),
        ]
        if answer.body is None:
            out_headers = [h for h in out_headers if h[0] != "Content-Type"]
        if fake.validate:
            spec_response = SpecResponse(answer.status, out_headers, payload or None)
            if problem := validate_response(spec_request, spec_response):
                self._violation(record, f"response {answer.status} to {method} {path}: {problem}")
                return
        record.status = answer.status
        self._send(answer.status, out_headers, payload)

    def _answer(
        self,
        method: str,
        path: str,
        params: dict[str, str],
        query: dict[str, list[str]],
        headers: dict[str, str],
        body: Any,
        record: RecordedRequest,
        handler: Handler,
    ) -> Answer:
        fake = self.fake
        fault = fake._take_fault(method, path)
        if fault is not None and fault.mutate is None:
            error = ApiError(fault.status, fault.message, headers=fault.headers)
            return Answer(fault.status, error.body, error.headers)
        try:
            token = self._token(headers)
            call = Call(
                method, path, params, query, headers, body, token.login if token else None, token
            )
            record.login = call.login
            with fake.lock:
                answer = handler(fake, call)
        except ApiError as error:
            return Answer(error.status, error.body, error.headers)
        if fault is not None and fault.mutate is not None:
            answer.body = fault.mutate(answer.body)
        return answer

    def _graphql(self, record: RecordedRequest, headers: dict[str, str], body: Any) -> None:
        """GitHub's GraphQL endpoint, which the REST description does not cover: only the
        query golden-gate sends is served; anything else is a violation."""
        query = body.get("query") if isinstance(body, dict) else None
        if not isinstance(query, str) or _graphql_words(query) != _graphql_words(VIEWER_QUERY):
            self._violation(record, f"POST {GRAPHQL_PATH}: the fake serves only {VIEWER_QUERY!r}")
            return
        answer = self._answer("POST", GRAPHQL_PATH, {}, {}, headers, body, record, _graphql_viewer)
        record.status = answer.status
        payload = json.dumps(answer.body).encode()
        self._send(
            answer.status,
            [("Content-Type", "application/json; charset=utf-8"), *answer.headers.items()],
            payload,
        )

    def _token(self, headers: dict[str, str]) -> Token | None:
        auth = headers.get("authorization", "")
        if not auth:
            return None
        scheme, _, value = auth.partition(" ")
        token = (
            self.fake.tokens.get(value.strip()) if scheme.lower() in ("token", "bearer") else None
        )
        if token is None:
            raise ApiError(401, "Bad credentials", docs=DOCS)
        return token

    def _violation(self, record: RecordedRequest, problem: str) -> None:
        with self.fake.lock:
            self.fake.violations.append(problem)
        record.status = 500
        payload = json.dumps(
            {"message": f"OpenAPI violation: {problem}", "documentation_url": DOCS}
        ).encode()
        self._send(500, [("Content-Type", "application/json; charset=utf-8")], payload)

    def _send_hostile(self, behaviour: Any) -> None:
        from tests.fakes.judge_server import hostile_body

        self.close_connection = True
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            if behaviour.kind == "gzip_bomb":
                self.send_header("Content-Encoding", "gzip")
            self.end_headers()  # no length: the body ends when the connection does
            for piece in hostile_body(behaviour):
                self.wfile.write(piece)
                self.wfile.flush()
                if behaviour.kind == "trickle":
                    time.sleep(behaviour.delay_s)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client hung up: what it should do

    def _send(self, status: int, headers: list[tuple[str, str]], payload: bytes) -> None:
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if payload and self.command != "HEAD":
            self.wfile.write(payload)


def iter_routes() -> Iterator[tuple[str, str]]:
    """(METHOD, template) of every operation the fake serves."""
    for method, template, _, _ in _ROUTES:
        yield method, template
