"""The baseline promotion pull request's description (`mode: baseline`): the old and new pass
rates and every item that flipped, escaped, within GitHub's size limit."""

from __future__ import annotations

from pydantic import BaseModel, Field

from golden_gate.core.report import Report
from golden_gate.rendering.environment import templates_dir
from golden_gate.rendering.escape import code_span, inline
from golden_gate.rendering.render import COMMENT_LIMIT

BODY_LIMIT = COMMENT_LIMIT  # pull request bodies share GitHub's 65,536-character cap


class Flips(BaseModel):
    """Items whose outcome differs between the old baseline and the new one."""

    now_failing: list[str] = Field(default_factory=list)
    now_passing: list[str] = Field(default_factory=list)
    added: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.now_failing) + len(self.now_passing)


def flips(new: Report, old: Report | None) -> Flips:
    if old is None:
        return Flips(added=sorted(r.id for r in new.counted))
    before = {r.id: r.passed for r in old.counted}
    after = {r.id: r.passed for r in new.counted}
    shared = before.keys() & after.keys()
    return Flips(
        now_failing=sorted(i for i in shared if before[i] and not after[i]),
        now_passing=sorted(i for i in shared if after[i] and not before[i]),
        added=sorted(after.keys() - before.keys()),
        removed=sorted(before.keys() - after.keys()),
    )


def pull_request_body(new: Report, old: Report | None, *, path: str, run_url: str | None) -> str:
    """The promotion pull request's description, within GitHub's size limit."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        autoescape=False,  # Markdown; the data is escaped below
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    template = env.get_template("baseline_pr.md.j2")
    change = flips(new, old)
    items = new.by_id()
    questions = {i: inline(items[i].question, limit=120) for i in items}

    def body(max_rows: int) -> str:
        return template.render(
            path=code_span(path, limit=200),
            run_url=inline(run_url, limit=300) if run_url else None,
            old_rate=old.pass_rate_text() if old is not None else "n/a",
            new_rate=new.pass_rate_text(),
            judge=code_span(new.judge, limit=80),
            flips=change,
            rows={
                name: [(code_span(i), questions.get(i, "")) for i in ids[:max_rows]]
                for name, ids in (
                    ("now_failing", change.now_failing),
                    ("now_passing", change.now_passing),
                    ("added", change.added),
                    ("removed", change.removed),
                )
            },
            max_rows=max_rows,
        )

    for max_rows in (1000, 300, 100, 30, 10, 0):
        text = body(max_rows)
        if len(text) <= BODY_LIMIT:
            return text
    return text[:BODY_LIMIT]
