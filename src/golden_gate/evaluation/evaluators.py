"""Evaluators and judge panels: what is asked of each answer, and by how many judges.

Built on the `Judge` interface (judge.py), never inside it. An *evaluator* is one question
asked of an answer (correctness against the key points, relevancy to the question,
groundedness in the retrieved context, ...), each from an openevals prompt or a custom prompt
file. A *panel* is the judge models that answer it (`--judge-model a,b,c`); each member of each
evaluator is its own `Judge`, so its verdicts are cached apart.

How votes combine, with an error counted as "unknown": a run's outcome is decided when it is the
same whether the unknown votes passed or failed, and is an error (not a verdict) otherwise.
"""

from __future__ import annotations

import hashlib
import json
import os
import string
from collections.abc import Callable
from functools import cached_property, partial
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from golden_gate.errors import InputError
from golden_gate.evaluation import providers
from golden_gate.evaluation.deferred_judge import DeferredJudge
from golden_gate.evaluation.judge import KEYPOINTS, Judge, JudgeSettings, make_judge
from golden_gate.evaluation.judge_prompt import load_prompt
from golden_gate.evaluation.presets import CORRECTNESS, PRESETS, Reads

Rule = Literal["all", "any", "majority"]
PanelRule = Literal["majority", "all"]
CUSTOM_PLACEHOLDERS = ("inputs", "outputs", "reference_outputs", "context")


class EvaluatorSpec(BaseModel):
    """One entry of `--evaluators`: a preset name or a prompt file, and an optional threshold."""

    name: str
    prompt_file: Path | None = None  # a custom evaluator; `name` is the file's stem
    # With a threshold the judge gives a score in [0, 1] and the run passes at or above it;
    # without one the judge says true or false.
    threshold: float | None = Field(default=None, ge=0, le=1, allow_inf_nan=False)

    @property
    def label(self) -> str:
        # A custom prompt by its name only: its text is in the prompt hash, and its path
        # differs between machines.
        text = self.name
        return text if self.threshold is None else f"{text}:{self.threshold:g}"


class EvaluatorSettings(BaseModel):
    evaluators: list[EvaluatorSpec] = Field(
        default_factory=lambda: [EvaluatorSpec(name=CORRECTNESS)], min_length=1
    )
    rule: Rule = "all"  # how a run's evaluators combine
    judge_panel: PanelRule = "majority"  # how several judge models combine, per evaluator


def reference_free(settings: EvaluatorSettings) -> bool:
    """Whether an evaluator judges an answer without the item's reference (relevancy,
    conciseness, groundedness, hallucination, or a prompt file without {reference_outputs}):
    then an item without key points, URLs or a refusal is still judged."""
    for spec in settings.evaluators:
        if spec.prompt_file is None and spec.name == "trajectory":
            continue  # it judges against the item's expected_tools
        if spec.prompt_file is None and spec.name != CORRECTNESS:
            return True
        if spec.prompt_file is not None:
            try:
                text = spec.prompt_file.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue  # loading the evaluator says what is wrong with the file
            if "{reference_outputs}" not in text:
                return True
    return False


def parse_evaluators(text: str, *, flag: str, root: Path | None = None) -> list[EvaluatorSpec]:
    """`correctness,groundedness:0.7,prompts/tone.txt`; InputError naming `flag` otherwise."""
    specs: list[EvaluatorSpec] = []
    for entry in (part.strip() for part in text.split(",")):
        if not entry:
            continue
        name, threshold = entry, None
        head, sep, tail = entry.rpartition(":")
        if sep:
            try:
                threshold = float(tail)
            except ValueError:
                raise InputError(
                    f"{flag}: '{entry}' has a threshold that is not a number (use name:0.7)"
                ) from None
            if not 0 <= threshold <= 1:
                raise InputError(f"{flag}: the threshold of '{head}' must be within 0 and 1")
            name = head
        if name in PRESETS:
            spec = EvaluatorSpec(name=name, threshold=threshold)
        elif "/" in name or "." in name:
            path = (root / name) if root is not None else Path(name)
            spec = EvaluatorSpec(name=Path(name).stem, prompt_file=path, threshold=threshold)
        else:
            known = ", ".join(PRESETS)
            raise InputError(
                f"{flag}: unknown evaluator '{name}' (presets: {known}; or a prompt file path)"
            )
        if any(s.name == spec.name for s in specs):
            raise InputError(f"{flag}: the evaluator '{spec.name}' is named twice")
        specs.append(spec)
    if not specs:
        raise InputError(f"{flag}: name at least one evaluator (e.g. {CORRECTNESS})")
    return specs


def models(model: str) -> list[str]:
    """The panel's judge models from `judge-model` `a,b`."""
    names = [m.strip() for m in model.split(",") if m.strip()]
    return names or [KEYPOINTS]


def combine(votes: list[bool | None], rule: Rule | PanelRule) -> bool | None:
    """Votes (None: no verdict) under `rule`; None when the unknown votes could decide it."""

    def outcome(filled: list[bool]) -> bool:
        if rule == "all":
            return all(filled)
        if rule == "any":
            return any(filled)
        return sum(filled) * 2 > len(filled)  # strict majority: a tie fails

    best = outcome([True if v is None else v for v in votes])
    worst = outcome([False if v is None else v for v in votes])
    return best if best == worst else None


class Evaluator:
    """One evaluator with one judge per panel member."""

    def __init__(
        self,
        spec: EvaluatorSpec,
        judges: list[Judge],
        *,
        needs_context: bool,
        reads: Reads = "answer",
    ) -> None:
        self.reads = reads
        self.spec = spec
        self.name = spec.name
        self.threshold = spec.threshold
        self.judges = judges
        self.needs_context = needs_context

    def identity(self, judge: Judge) -> str:
        """The cache identity of `judge`'s verdicts for this evaluator.

        Plain correctness keeps the judge's own identity, so verdicts cached before evaluators
        existed stay valid. The threshold is left out: it is applied to the cached score.
        """
        if self.name == CORRECTNESS and self.spec.prompt_file is None:
            return judge.identity()
        return json.dumps({"evaluator": self.name, "judge": judge.identity()}, sort_keys=True)

    def passed(self, score: float | bool | None, judged_pass: bool) -> bool:
        if self.threshold is None or isinstance(score, bool) or score is None:
            return judged_pass
        # A score outside [0, 1] (a verdict cached from elsewhere) never clears a threshold.
        return 0 <= score <= 1 and score >= self.threshold


class Panel:
    """Every evaluator and judge of a run; what `evaluate` asks each answer."""

    def __init__(
        self,
        evaluators: list[Evaluator],
        *,
        rule: Rule = "all",
        judge_panel: PanelRule = "majority",
    ) -> None:
        self.evaluators = evaluators
        self.rule = rule
        self.judge_panel = judge_panel
        self._ready = False
        first = evaluators[0].judges
        self.judge_names = [j.name for j in first]
        self.name = ",".join(self.judge_names)
        # One evaluator, one judge, plain correctness: the report looks as it always did.
        self.plain = (
            len(evaluators) == 1
            and len(first) == 1
            and evaluators[0].name == CORRECTNESS
            and evaluators[0].spec.prompt_file is None
            and evaluators[0].threshold is None
        )
        self.temperature = first[0].temperature
        # What `run_settings.evaluators` records, so a baseline judged otherwise is flagged.
        self.settings_label = ",".join(e.spec.label for e in evaluators) + (
            f" ({rule})" if len(evaluators) > 1 else ""
        )

    @cached_property
    def prompt_hash(self) -> str | None:
        """The judges' prompts (asked when the run ends: a judge may still be being built)."""
        if self.plain:
            return self.evaluators[0].judges[0].prompt_hash
        # What the prompts ask and how scores are read, not where the judges live: a judge
        # moved to another server asks the same question.
        ids = [
            f"{e.name}|{j.name}|{j.prompt_hash}|{e.threshold}"
            for e in self.evaluators
            for j in e.judges
        ]
        return _sha256("\n".join(ids))

    async def ready(self) -> None:
        """Wait for the judges still being built; a build's error is raised here."""
        if self._ready:
            return
        for evaluator in self.evaluators:
            for judge in evaluator.judges:
                if isinstance(judge, DeferredJudge):
                    await judge.ready()
        self._ready = True

    @classmethod
    def of(cls, judge: Judge) -> Panel:
        """One judge as the plain correctness evaluator."""
        return cls([Evaluator(EvaluatorSpec(name=CORRECTNESS), [judge], needs_context=False)])

    def identity(self) -> str:
        """Everything that can change a verdict, for the cache archive's key prefix."""
        if self.plain:
            return self.evaluators[0].judges[0].identity()
        return "\n".join(
            f"{e.identity(j)}|{e.threshold}" for e in self.evaluators for j in e.judges
        )

    async def aclose(self) -> None:
        for evaluator in self.evaluators:
            for judge in evaluator.judges:
                await judge.aclose()


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _preset_prompt(name: str) -> str:
    from golden_gate.evaluation import openevals_prompts

    return openevals_prompts.prompt(PRESETS[name].prompt)


def _same_judge(name: str) -> tuple[str, str]:
    """What makes two panel names one judge: `gpt-4o`, `openai:gpt-4o`, `OPENAI:gpt-4o`."""
    if name.strip().lower() == KEYPOINTS:
        return (KEYPOINTS, "")
    provider, model = providers.resolve(name)
    return (provider.name, model.lower())


def make_panel(
    judge: JudgeSettings, settings: EvaluatorSettings | None = None, *, background: bool = False
) -> Panel:
    """The evaluators the settings name, each with one judge per model; InputError when an
    evaluator needs a model judge and only the offline one is given.

    `background`: model judges are built on a thread while the caller goes on (a run's first
    requests); what can be checked without building them is checked here first.
    """
    settings = settings or EvaluatorSettings()
    names = models(judge.model)
    if len({_same_judge(name) for name in names}) != len(names):
        raise InputError("judge-model: a judge model is named twice in the panel")
    evaluators = []
    offline = any(m.lower() == KEYPOINTS for m in names)
    for spec in settings.evaluators:
        if offline and (spec.name != CORRECTNESS or spec.prompt_file is not None):
            raise InputError(
                f"evaluators: '{spec.name}' needs a model judge; the offline keypoints "
                "judge only judges correctness (set judge-model to provider:model)"
            )
        evaluators.append(_evaluator(spec, names, judge, background=background))
    return Panel(evaluators, rule=settings.rule, judge_panel=settings.judge_panel)


def _evaluator(
    spec: EvaluatorSpec, names: list[str], judge: JudgeSettings, *, background: bool
) -> Evaluator:
    # A threshold asks the judge for a score in [0, 1] instead of true or false.
    scoring = {"continuous": True} if spec.threshold is not None else {}
    members = [judge.model_copy(update={"model": m, **scoring}) for m in names]
    if spec.name == CORRECTNESS and spec.prompt_file is None:
        # Today's correctness judge: the judge-prompt file or CORRECTNESS_PROMPT, or keypoints.
        if background:
            judges = [
                _deferred(member, partial(make_judge, member), own_prompt=True)
                for member in members
            ]
        else:
            judges = [make_judge(member) for member in members]
        return Evaluator(spec, judges, needs_context=False)
    if spec.prompt_file is not None:
        prompt = load_prompt(spec.prompt_file, required=("outputs",), allowed=CUSTOM_PLACEHOLDERS)
        fields = {f for _, f, _, _ in string.Formatter().parse(prompt) if f}
        needs_context = "context" in fields
    elif background:  # openevals' prompt is read on the judge's thread
        prompt, needs_context = None, PRESETS[spec.name].needs_context
    else:
        prompt = _preset_prompt(spec.name)
        fields = {f for _, f, _, _ in string.Formatter().parse(prompt) if f}
        needs_context = "context" in fields
    if background:
        judges = [
            _deferred(member, partial(_llm_judge, member, prompt, spec.name), own_prompt=False)
            for member in members
        ]
    else:
        judges = [_llm_judge(member, prompt, spec.name) for member in members]
    reads = PRESETS[spec.name].reads if spec.prompt_file is None else "answer"
    return Evaluator(spec, judges, needs_context=needs_context, reads=reads)


def _llm_judge(settings: JudgeSettings, prompt: str | None, preset: str) -> Judge:
    from golden_gate.evaluation.judge import LLMJudge

    return LLMJudge(settings, prompt=prompt if prompt is not None else _preset_prompt(preset))


def _deferred(settings: JudgeSettings, build: Callable[[], Judge], *, own_prompt: bool) -> Judge:
    """A model judge built on a thread, after the checks that need no SDK; keypoints now.

    `own_prompt`: the judge reads the judge-prompt file (the correctness judge does)."""
    if settings.model.strip().lower() == KEYPOINTS:
        return build()
    if own_prompt and settings.prompt_file is not None:
        load_prompt(settings.prompt_file)  # an unreadable or broken prompt: said now
    if not providers.key_available(settings.model, os.environ, settings.base_url):
        provider, _ = providers.resolve(settings.model)
        keys = " or ".join(provider.key_env)
        raise InputError(
            f"judge model '{settings.model}' could not be set up: no API key (set {keys})"
        )
    return DeferredJudge(build, name=settings.model, temperature=settings.temperature)
