"""Pull requests and the files they are about: a pull request's changed files and head, a file
at a ref (the contents API) and its history, and a new version of one file proposed as one pull
request that later proposals update (`mode: baseline`).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from golden_gate.action.github.client import FILES_CAP, Client, GitHubError, RefNotFound
from golden_gate.errors import InputError
from golden_gate.git import blob_sha

if TYPE_CHECKING:
    from github.GitRef import GitRef
    from github.PullRequest import PullRequest


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
    head_repo: str | None = None  # owner/name of the head's repository (None: deleted fork)


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


class PullRequests(Client):
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
                head_repo=pull.head.repo.full_name if pull.head.repo is not None else None,
            )

        return self._call(f"reading pull request #{pr_number}", fetch)

    def read_file(
        self, path: str, ref: str, *, known: Mapping[str, str] | None = None
    ) -> str | None:
        """The text of `path` at `ref`, or None when the file does not exist there; raises
        `RefNotFound` when the ref itself does not exist.

        `known`: texts this run has read already, by blob sha; a blob among them is not
        downloaded again (a baseline can be 100 MB)."""
        from github import GithubException

        def fetch() -> str | None:
            repo = self._repo()
            try:
                content = repo.get_contents(path, ref=ref)
            except GithubException as exc:
                # A missing path is 404 "Not Found"; a missing ref is 404 "No commit found
                # for the ref ...": bad input, never "no such file" (that means no baseline).
                if exc.status == 404:
                    data = exc.data if isinstance(exc.data, dict) else {}
                    if str(data.get("message", "")).startswith("No commit found for the ref"):
                        raise RefNotFound(ref, self.repository) from None
                    return None
                raise
            if isinstance(content, list):
                raise GitHubError(None, f"{path} at {ref} is a directory, not a file")
            if content.type != "file":
                raise GitHubError(None, f"{path} at {ref} is a {content.type}, not a file")
            if known and content.sha in known:
                return known[content.sha]
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
        if current == blob_sha(data):
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

        if current != blob_sha(data):  # else the open pull request holds it already

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


def _decode_base64(text: str, path: str) -> bytes:
    try:
        return base64.b64decode(text)
    except (binascii.Error, ValueError):
        raise GitHubError(None, f"{path}: GitHub sent content that is not base64") from None
