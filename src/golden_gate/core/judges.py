"""Which model judged: a judge name is not a yardstick until the model behind it is pinned.

Pure: the evaluation records each judge's identity (report.JudgeIdentity: its endpoint, the
seed it was sent, the models its server said answered); this module says what those records
mean: a floating alias, a judge that is the assistant's own model, a baseline judged by
another snapshot or another server.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from golden_gate.core.report import JudgeIdentity

# Providers that publish dated snapshots behind their aliases (gpt-4o → gpt-4o-2024-08-06,
# claude-sonnet-4-5 → claude-sonnet-4-5-20250929, gemini-1.5-pro → gemini-1.5-pro-002).
SNAPSHOT_PROVIDERS = ("openai", "anthropic", "google_genai")
# Their own APIs; at any other endpoint (a gateway, a team's server) names are someone else's.
PROVIDER_HOSTS = ("api.openai.com", "api.anthropic.com", "generativelanguage.googleapis.com")
_PINNED = re.compile(r"(-\d{4}-\d{2}-\d{2}|-\d{8}|-\d{3}|@\d{8})$")


def model_of(name: str) -> str:
    """`openai:GPT-4o` → `gpt-4o`: the model without its provider, for comparing names."""
    return name.split(":", 1)[1].strip().lower() if ":" in name else name.strip().lower()


def floating_alias(judge: JudgeIdentity) -> str | None:
    """Why the judge's name is a floating alias, or None when it names a snapshot (or that
    cannot be told).

    Seen in the replies (asked for `gpt-4o`, answered by `gpt-4o-2024-08-06`) wherever the
    judge runs; by its name alone only at the API of a provider that publishes dated
    snapshots, not at another server, whose names are its owner's.
    """
    name, served_models = judge.judge, judge.served_models
    provider = name.split(":", 1)[0].strip().lower() if ":" in name else ""
    host = (judge.endpoint or "").split("://", 1)[-1].split("/", 1)[0].split(":", 1)[0]
    own_server = bool(host) and host not in PROVIDER_HOSTS
    asked = model_of(name)
    dated = sorted(m for m in served_models if m.lower().startswith(asked + "-"))
    if dated:
        return (
            f"judge '{name}' is a floating alias: its server answered as {', '.join(dated)}; "
            "name that snapshot, so the yardstick cannot move under the same name"
        )
    unpinned = asked.endswith("-latest") or not _PINNED.search(asked)
    if provider in SNAPSHOT_PROVIDERS and not own_server and unpinned:
        return (
            f"judge '{name}' is a floating alias: the provider moves it to new snapshots; "
            "name a dated snapshot, so the yardstick cannot move under the same name"
        )
    return None


def same_as_assistant(
    judges: Sequence[JudgeIdentity], assistant_models: Sequence[str]
) -> str | None:
    """A warning when a judge is the assistant's own model: it grades its own answers."""
    own = {model_of(m) for m in assistant_models if m.strip()}
    for judge in judges:
        names = {model_of(judge.judge), *(model_of(m) for m in judge.served_models)}
        shared = sorted(names & own)
        if shared:
            return (
                f"judge '{judge.judge}' is the assistant's own model ({shared[0]}): a model "
                "grading its own answers is lenient with them; judge with a different model"
            )
    return None


def moved(
    candidate: Sequence[JudgeIdentity] | None, baseline: Sequence[JudgeIdentity] | None
) -> list[str]:
    """ "The yardstick moved" for each judge name that both reports used but whose served
    model or endpoint differs."""
    if not candidate or not baseline:
        return []
    base = {j.judge: j for j in baseline}
    warnings = []
    for judge in candidate:
        before = base.get(judge.judge)
        if before is None:
            continue  # another judge name: said by the judge comparison itself
        now, then = set(judge.served_models), set(before.served_models)
        if now and then and now != then:
            warnings.append(
                f"the yardstick moved: judge '{judge.judge}' was answered by "
                f"{', '.join(before.served_models)} for the baseline and by "
                f"{', '.join(judge.served_models)} for this run"
            )
        if judge.endpoint and before.endpoint and judge.endpoint != before.endpoint:
            warnings.append(
                f"the yardstick moved: judge '{judge.judge}' was asked at {before.endpoint} for "
                f"the baseline and at {judge.endpoint} for this run"
            )
    return warnings
