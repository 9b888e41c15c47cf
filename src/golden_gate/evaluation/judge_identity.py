"""Which model judged each judge name in a run: its endpoint, the seed it was sent and the
models its server said answered (report.JudgeIdentity), and what core/judges.py makes of them
(a floating alias, the assistant's own model)."""

from __future__ import annotations

from collections.abc import Sequence

from golden_gate.core.canaries import Canaries
from golden_gate.core.item_result import ItemResult
from golden_gate.core.judges import floating_alias, same_as_assistant
from golden_gate.core.report import JudgeIdentity
from golden_gate.evaluation.evaluators import Panel
from golden_gate.evaluation.judge import KEYPOINTS


def served(results: Sequence[ItemResult], plain_judge: str = "") -> dict[str, set[str]]:
    """Per judge name (a panel has several): which models its server said answered; a plain
    run's verdicts name no judge, and are `plain_judge`'s."""
    served: dict[str, set[str]] = {}
    for item in results:
        for run in item.run_results:
            if run.evaluations:
                for outcome in run.evaluations:
                    for vote in outcome.votes:
                        if vote.served_model:
                            served.setdefault(vote.judge, set()).add(vote.served_model)
            elif run.verdict is not None and run.verdict.served_model:
                served.setdefault(plain_judge, set()).add(run.verdict.served_model)
    return served


def identities(
    panel: Panel, results: Sequence[ItemResult], probes: Canaries | None
) -> list[JudgeIdentity]:
    """Each model judge's identity, over the answers' verdicts and the canaries'."""
    found_served = served(results, panel.judge_names[0])
    for probe in probes.probes if probes else []:
        if probe.served_model:
            found_served.setdefault(probe.judge, set()).add(probe.served_model)
    found: dict[str, JudgeIdentity] = {}
    for evaluator in panel.evaluators:
        for judge in evaluator.judges:
            if judge.name in found or judge.name.strip().lower() == KEYPOINTS:
                continue
            found[judge.name] = JudgeIdentity(
                judge=judge.name,
                endpoint=judge.endpoint,
                seed=judge.seed,
                served_models=sorted(found_served.get(judge.name, ())),
            )
    return list(found.values())


def identity_warnings(
    judges: Sequence[JudgeIdentity], assistant_models: Sequence[str]
) -> list[str]:
    """Floating aliases, and a judge that is the assistant's own model (assistant-model)."""
    warnings = [w for w in map(floating_alias, judges) if w]
    own = same_as_assistant(judges, assistant_models)
    if own:
        warnings.append(own)
    return warnings
