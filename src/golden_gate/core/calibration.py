"""Judge calibration's records: the labels file a team writes, and the calibration report.

A team labels answers by hand (`labels.jsonl`: `id`, `answer`, `label` pass/fail, optional
`note`); `evaluation.calibrate` has the judge judge the same answers and `build_report` compares
the two with Cohen's kappa (`core.agreement`), which discounts the agreement two raters would
reach by chance given how often each says "pass".
**The decision.** Calibration passes when it is complete (at most `max_error_rate` of the
judge calls failed), kappa is defined, and the kappa *point estimate* is at least
`min_kappa` (default 0.6, the bottom of Landis and Koch's "substantial" band). Not the
interval's lower bound: that would mostly measure how many labels a team wrote (at kappa 0.8
with balanced labels, 60 labels give an interval about ±0.15 wide), so a good judge would fail
for want of labels. The interval is always shown beside the estimate, and a warning says when it
reaches below `min_kappa`.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from golden_gate import __version__, jsonl, jsontext
from golden_gate.core.agreement import (
    Confusion,
    Kappa,
    cohens_kappa,
    decide,
    error_share_too_high,
    observed_agreement,
)
from golden_gate.core.golden import GoldenItem
from golden_gate.core.item_result import Verdict
from golden_gate.errors import EXIT_FAILED, EXIT_INCOMPLETE, EXIT_PASSED, InputError
from golden_gate.files import read_text, write_result
from golden_gate.jsonl import Problems, records
from golden_gate.text import cut

CALIBRATION_FORMAT: Final = "golden-gate-calibration/1"
DEFAULT_MIN_KAPPA = 0.6
DEFAULT_MAX_ERROR_RATE = 0.10
HumanLabel = Literal["pass", "fail"]


# -- the labels file -------------------------------------------------------------------------


class Label(BaseModel):
    """One answer a human judged; unknown fields (a labeller's name, a date) are kept."""

    model_config = ConfigDict(extra="allow", strict=True, frozen=True)

    id: str = Field(min_length=1)
    answer: str
    # None: not labelled yet ("" or null, as `golden-gate review` writes it); parse_labels
    # skips the line.
    label: HumanLabel | None
    note: str | None = None

    @field_validator("label", mode="before")
    @classmethod
    def _blank_is_unlabelled(cls, value: object) -> object:
        return None if value == "" else value

    @property
    def passed(self) -> bool:
        return self.label == "pass"


def parse_labels(
    lines: Iterable[str], *, source: str, golden_items: Sequence[GoldenItem]
) -> list[Label]:
    """Parse labels JSONL against a golden set; one InputError names every bad line.

    Besides malformed lines, an id that is not in the golden set, an item with no key points
    (the judge never sees it) and a duplicate id are errors, and so is a file without both
    labels (kappa would be undefined, after paying for every judge call).
    """
    items = {item.id: item for item in golden_items}
    labels: list[Label] = []
    problems = Problems()
    blank = 0
    for where, _, label in records(lines, source=source, model=Label, problems=problems):
        if label.label is None:
            blank += 1
            continue
        item = items.get(label.id)
        if item is None:
            close = difflib.get_close_matches(label.id, list(items), n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            problems.append(f"{where}: id '{label.id}' is not in the golden set{hint}")
            continue
        if not item.reference_key_points:
            problems.append(
                f"{where}: item '{label.id}' has no reference_key_points, so the judge has "
                "nothing to compare the answer against"
            )
            continue
        labels.append(label)
    problems.raise_if_any()
    if not labels and blank:
        raise InputError(
            f"{source}: no answer is labelled yet ({blank} wait for a label of pass or fail)"
        )
    if not labels:
        raise InputError(f"{source}: the labels file is empty (no labels)")
    kinds = {label.label for label in labels}
    if len(kinds) == 1:
        (only,) = kinds
        other = "fail" if only == "pass" else "pass"
        raise InputError(
            f"{source}: every label is '{only}'; calibration needs answers labelled '{other}' "
            "too (Cohen's kappa is undefined otherwise)"
        )
    return labels


def load_labels(path: str | Path, golden_items: Sequence[GoldenItem]) -> list[Label]:
    """Load and check a labels file against the golden set."""
    text = read_text(path, what="labels file")
    return parse_labels(jsonl.lines(text), source=str(path), golden_items=golden_items)


def labels_fingerprint(labels: Sequence[Label]) -> str:
    """sha256 of what was measured (id, answer, label in order); notes do not count."""
    digest = hashlib.sha256()
    for label in labels:
        line = json.dumps([label.id, label.answer, label.label], ensure_ascii=False)
        digest.update(line.encode("utf-8") + b"\n")
    return "sha256:" + digest.hexdigest()


# -- the report ------------------------------------------------------------------------------


class Disagreement(BaseModel):
    """An answer where the judge and the human differ."""

    id: str
    human: HumanLabel
    judge: HumanLabel
    comment: str = ""  # the judge's, cut
    answer: str = ""  # an excerpt
    note: str | None = None  # the human's


class LabelError(BaseModel):
    """A labelled answer the judge could not judge; excluded from the agreement."""

    id: str
    error: str


class CalibrationReport(BaseModel):
    """One calibration run: who judged, how well it agreed, and where it did not."""

    model_config = ConfigDict(extra="allow")

    format: Literal["golden-gate-calibration/1"] = CALIBRATION_FORMAT
    tool_version: str | None = None
    created_at: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
    judge: str
    judge_prompt_hash: str | None = None
    judge_identity_hash: str
    golden_fingerprint: str | None = None
    labels_fingerprint: str | None = None
    labels: int = Field(ge=0)  # labelled answers, judged or not
    n: int = Field(ge=0)  # answers with a verdict: what kappa is computed on
    agreement: float | None = None
    kappa: Kappa
    confusion: Confusion
    disagreements: list[Disagreement] = Field(default_factory=list)
    errors: list[LabelError] = Field(default_factory=list)
    judge_calls: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    min_kappa: float
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE
    passed: bool
    complete: bool = True
    incomplete_reason: str | None = None
    warnings: list[str] = Field(default_factory=list)

    @property
    def verdict(self) -> Literal["passed", "failed", "incomplete"]:
        if not self.complete:
            return "incomplete"
        return "passed" if self.passed else "failed"

    @property
    def date(self) -> str:
        return self.created_at[:10]


@dataclass
class Outcome:
    """The judge's verdict on one labelled answer, or why there is none."""

    label: Label
    verdict: Verdict | None = None
    error: str | None = None


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def build_report(
    outcomes: Sequence[Outcome],
    *,
    judge_name: str,
    judge_prompt_hash: str | None,
    judge_identity_hash: str,
    min_kappa: float,
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE,
    judge_calls: int = 0,
    cache_hits: int = 0,
    cache_misses: int = 0,
    golden_fingerprint: str | None = None,
    labels_fingerprint: str | None = None,
    answer_excerpt_chars: int = 500,
    created_at: str | None = None,
) -> CalibrationReport:
    """Turn per-answer outcomes into the report (no I/O; the clock unless `created_at`)."""
    judged = [o for o in outcomes if o.verdict is not None]
    confusion = Confusion.tally(
        (o.label.passed, o.verdict.passed) for o in judged if o.verdict is not None
    )
    kappa = cohens_kappa(confusion)
    errors = [
        LabelError(id=o.label.id, error=o.error or "no verdict")
        for o in outcomes
        if o.verdict is None
    ]
    complete = not error_share_too_high(len(errors), len(outcomes), max_error_rate)
    incomplete_reason = None
    if not complete:
        incomplete_reason = (
            f"the judge failed on {len(errors)} of {len(outcomes)} labelled answers "
            f"({len(errors) / len(outcomes):.0%}, above {max_error_rate:.0%})"
        )
    disagreements = [
        Disagreement(
            id=o.label.id,
            human=o.label.label,
            judge="pass" if o.verdict.passed else "fail",
            comment=cut(o.verdict.comment, 1000),
            answer=cut(o.label.answer, answer_excerpt_chars),
            note=o.label.note,
        )
        for o in judged
        if o.verdict is not None and o.verdict.passed != o.label.passed
    ]
    warnings = []
    if errors and complete:
        warnings.append(
            f"the judge failed on {len(errors)} labelled answers; they are left out of the "
            "agreement"
        )
    if (
        kappa.value is not None
        and kappa.ci_low is not None
        and kappa.ci_low < min_kappa <= kappa.value
    ):
        warnings.append(
            f"kappa clears min-kappa {min_kappa:.2f}, but its {kappa.confidence:.0%} interval "
            f"reaches down to {kappa.ci_low:.2f}: more labels would settle it"
        )
    return CalibrationReport(
        tool_version=__version__,
        created_at=created_at or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        judge=judge_name,
        judge_prompt_hash=judge_prompt_hash,
        judge_identity_hash=judge_identity_hash,
        golden_fingerprint=golden_fingerprint,
        labels_fingerprint=labels_fingerprint,
        labels=len(outcomes),
        n=confusion.n,
        agreement=observed_agreement(confusion),
        kappa=kappa,
        confusion=confusion,
        disagreements=disagreements,
        errors=errors,
        judge_calls=judge_calls,
        cache_hits=cache_hits,
        cache_misses=cache_misses,
        min_kappa=min_kappa,
        max_error_rate=max_error_rate,
        passed=decide(kappa, min_kappa=min_kappa, complete=complete),
        complete=complete,
        incomplete_reason=incomplete_reason,
        warnings=warnings,
    )


def check_min_kappa(min_kappa: float) -> None:
    if not -1 <= min_kappa <= 1 or math.isnan(min_kappa):
        raise InputError(f"min-kappa must be between -1 and 1, got {min_kappa}")


def calibration_exit_code(report: CalibrationReport) -> int:
    """0 passed, 1 below min-kappa (or kappa undefined), 3 too many judge errors."""
    if not report.complete:
        return EXIT_INCOMPLETE
    return EXIT_PASSED if report.passed else EXIT_FAILED


# -- files -----------------------------------------------------------------------------------


def calibration_json(report: CalibrationReport) -> str:
    return report.model_dump_json(indent=1) + "\n"


def save_calibration(report: CalibrationReport, path: str | Path) -> None:
    write_result(path, calibration_json(report), what="calibration")


def parse_calibration(text: str, *, source: str) -> CalibrationReport:
    """Parse `calibration.json`; anything else is an InputError naming `source`."""
    try:
        data = jsontext.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{source}: not a calibration: invalid JSON at line {exc.lineno} ({exc.msg})"
        ) from None
    if not isinstance(data, dict) or data.get("format") != CALIBRATION_FORMAT:
        raise InputError(
            f"{source}: not a calibration: expected an object with "
            f'"format": "{CALIBRATION_FORMAT}" (written by golden-gate calibrate)'
        )
    try:
        return CalibrationReport.model_validate(data)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(p) for p in problem["loc"])
        raise InputError(f"{source}: not a calibration: {where}: {problem['msg']}") from None


def load_calibration(path: str | Path) -> CalibrationReport:
    text = read_text(path, what="calibration")
    return parse_calibration(text, source=str(path))
