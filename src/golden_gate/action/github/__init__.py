"""Everything golden-gate says to the GitHub REST API, through PyGithub.

- `changed_files`: the pull request's changed files (with the old names of renames), and
  whether GitHub's cap of 3000 files was reached (then the scope must be "run",
  docs/architecture.md#the-runner-contract);
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

The client is put together from its parts: client.py (the session, the retries, the token's
login, `GitHubError`), pulls.py (pull requests and files), issues.py (issues and comments).
"""

from __future__ import annotations

from golden_gate.action.github.issues import Issues
from golden_gate.action.github.pulls import PullRequests


class GitHub(PullRequests, Issues):
    """One repository on one GitHub API, authenticated by one token."""
