"""Deterministic checks: cheap, exact, run before any judge call.

An answer that fails one is never sent to the judge; each outcome carries a reason a reviewer
can act on.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence

from pydantic import BaseModel, Field, field_validator

from golden_gate.core.golden import GoldenItem
from golden_gate.core.report import CheckOutcome

DEFAULT_REFUSAL_PHRASES = [
    "can't answer",
    "cannot answer",
    "can not answer",
    "unable to answer",
    "i don't know",
    "i do not know",
    "not able to help",
    "outside the scope",
    "out of scope",
    "no information",
]


class CheckSettings(BaseModel):
    refusal_phrases: list[str] = Field(default_factory=lambda: list(DEFAULT_REFUSAL_PHRASES))
    forbidden_patterns: list[str] = Field(default_factory=list)

    @field_validator("forbidden_patterns")
    @classmethod
    def _patterns_compile(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(
                    f"forbidden-patterns: '{pattern}' is not a regex ({exc})"
                ) from None
        return patterns


def checks_hash(settings: CheckSettings) -> str:
    """What the deterministic checks demand, hashed: a change moves the yardstick."""
    text = json.dumps(settings.model_dump(mode="json"), sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _normalise_ref(text: str) -> str:
    return text.strip().lower().rstrip("/")


def check_citations(item: GoldenItem, answer: str, sources: Sequence[str]) -> CheckOutcome | None:
    """Every reference url must be cited: in the answer text or among the returned sources."""
    if not item.reference_urls:
        return None
    text = answer.lower()
    cited = {_normalise_ref(s) for s in sources}
    missing = [
        url
        for url in item.reference_urls
        if _normalise_ref(url) not in text and _normalise_ref(url) not in cited
    ]
    if missing:
        return CheckOutcome(
            name="citations", passed=False, reason="missing citation: " + ", ".join(missing)
        )
    return CheckOutcome(name="citations", passed=True)


def check_refusal(item: GoldenItem, answer: str, phrases: Sequence[str]) -> CheckOutcome | None:
    """An out-of-scope question (must_refuse) must be refused, not answered."""
    if not item.must_refuse:
        return None
    text = answer.lower().replace("’", "'")
    if any(phrase.lower() in text for phrase in phrases):
        return CheckOutcome(name="refusal", passed=True)
    return CheckOutcome(
        name="refusal",
        passed=False,
        reason="expected a refusal for an out-of-scope question, got an answer",
    )


def check_length(item: GoldenItem, answer: str) -> CheckOutcome | None:
    if item.min_chars is None and item.max_chars is None:
        return None
    size = len(answer.strip())
    if item.min_chars is not None and size < item.min_chars:
        reason = f"answer has {size} characters, fewer than min_chars {item.min_chars}"
        return CheckOutcome(name="length", passed=False, reason=reason)
    if item.max_chars is not None and size > item.max_chars:
        reason = f"answer has {size} characters, more than max_chars {item.max_chars}"
        return CheckOutcome(name="length", passed=False, reason=reason)
    return CheckOutcome(name="length", passed=True)


def check_forbidden(answer: str, patterns: Sequence[str]) -> CheckOutcome | None:
    if not patterns:
        return None
    for pattern in patterns:
        if re.search(pattern, answer):
            return CheckOutcome(
                name="forbidden", passed=False, reason=f"matches forbidden pattern '{pattern}'"
            )
    return CheckOutcome(name="forbidden", passed=True)


def run_checks(
    item: GoldenItem, answer: str, sources: Sequence[str], settings: CheckSettings
) -> list[CheckOutcome]:
    """All checks that apply to this item, in a fixed order."""
    outcomes = [
        check_refusal(item, answer, settings.refusal_phrases),
        check_citations(item, answer, sources),
        check_length(item, answer),
        check_forbidden(answer, settings.forbidden_patterns),
    ]
    return [o for o in outcomes if o is not None]


def needs_judge(item: GoldenItem) -> bool:
    """Only items with key points have something for the judge to compare against."""
    return bool(item.reference_key_points)
