"""Issues and their comments: the one sticky comment on a pull request (found by its marker
line and its author, edited in place), and one labelled issue, opened or updated while
something is wrong and closed with a comment when it is fixed (`mode: drift`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from golden_gate.action.github.client import Client, GitHubError, first_line
from golden_gate.errors import InputError

if TYPE_CHECKING:
    from github.Issue import Issue
    from github.IssueComment import IssueComment


LABEL_COLOR = "d93f0b"  # a drift label's colour when golden-gate makes it
LABEL_DESCRIPTION = "Opened by golden-gate while the scheduled evaluation finds quality drift"


@dataclass(frozen=True)
class CommentResult:
    url: str
    id: int
    action: Literal["created", "updated"]


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


class Issues(Client):
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

    def find_comment(
        self, pr_number: int, marker: str, legacy: str | None = None
    ) -> IssueComment | None:
        """The newest comment whose first line is `marker` (else `legacy`, an older release's
        marker for the same id) and whose author is this token's user; comments by anyone
        else are never ours, whatever they say."""
        login = self.own_login()
        if login is None:
            return None  # nothing can be proved ours: never edit, post a new one

        def scan() -> IssueComment | None:
            newest: dict[str, IssueComment] = {}
            for comment in self._issue(pr_number).get_comments():
                line = first_line(comment.body)
                if line not in (marker, legacy) or comment.user.login != login:
                    continue
                if line not in newest or _age(comment) >= _age(newest[line]):
                    newest[line] = comment
            return newest.get(marker) or (newest.get(legacy) if legacy else None)

        return self._call(f"listing the comments of pull request #{pr_number}", scan)

    def upsert_comment(
        self,
        pr_number: int,
        body: str,
        marker: str,
        *,
        legacy: str | None = None,
        keep: Callable[[str], bool] | None = None,
    ) -> CommentResult | None:
        """Edit the sticky comment in place, or create it. A body that does not start with
        `marker` (a custom template may leave it out) gets it as its first line, or the comment
        could never be found again. `keep(body)`: the sticky comment found must stay as it is
        (None is returned, nothing is written)."""
        from github import GithubException

        if first_line(body) != marker:
            body = f"{marker}\n{body}"
        found = self.find_comment(pr_number, marker, legacy)
        if found is not None and keep is not None and keep(found.body):
            return None
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


def _age(comment: IssueComment) -> tuple[datetime, int]:
    # Timestamps have one-second resolution: the id breaks ties (ids only grow).
    return (comment.created_at, comment.id)


def _is_pull_request(issue: Issue) -> bool:
    # GitHub lists pull requests among issues, marked by a `pull_request` key. The listed JSON
    # is read because `issue.pull_request` on a listed (lazy) issue without the key, that is
    # every real issue, would fetch the issue again.
    return "pull_request" in issue._rawData
