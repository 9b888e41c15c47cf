"""Who must approve a pull request's change to the gate's rules: CODEOWNERS at the base branch.

The comment's rule-change banner names them. CODEOWNERS is read at the base ref, like every
rule (a pull request could otherwise name itself the owner of what it changes), from the first
of GitHub's locations that exists there; the last matching line wins (core/codeowners.py).
Not being able to read it leaves the banner without owners (said in the log), never fails a
run: it informs the review, it decides nothing.
"""

from __future__ import annotations

from golden_gate import runner
from golden_gate.action.common import github_client, rules_ref
from golden_gate.action.context import Context
from golden_gate.action.inputs import ActionSettings
from golden_gate.core import codeowners
from golden_gate.core.report import RuleChanges
from golden_gate.errors import GateError


def with_approvers(changes: RuleChanges, settings: ActionSettings, ctx: Context) -> RuleChanges:
    """`changes` with the owners of its changed rule files, when it changes any."""
    from golden_gate.action.baseline import UnreadableAtRef, read_at_ref

    paths = changes.rule_paths
    ref = rules_ref(settings, ctx)
    if not paths or not ref:
        return changes
    github = github_client(settings, ctx)
    for location in codeowners.LOCATIONS:
        try:
            text, where = read_at_ref(
                location, ref, github=github, workspace=ctx.workspace, what="CODEOWNERS"
            )
        except (UnreadableAtRef, GateError) as exc:
            runner.warning(f"CODEOWNERS at {ref} could not be read ({exc}): the comment names "
                           "no owners", title="golden-gate")  # fmt: skip
            return changes
        if text is not None:
            owners, unowned = codeowners.approvers(codeowners.parse(text), paths)
            return changes.model_copy(
                update={"codeowners": where, "approvers": owners, "unowned": unowned}
            )
    return changes.model_copy(update={"unowned": list(paths)})
