"""Deterministic checks: cheap, exact, run before any judge call.

An answer that fails one is never sent to the judge; each outcome carries a reason a reviewer
can act on. The checks are a table (`BUILT_IN`: name, function) run in order, then the custom
checks of the config (custom_checks.py, in worker processes). A check that cannot decide (a
pattern out of time, a custom check that hung or crashed) is `errored`: the run is an error,
never a pass.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationInfo, field_validator

from golden_gate.core.golden import GoldenItem
from golden_gate.core.item_result import CheckOutcome
from golden_gate.core.patterns import (
    Needle,
    PatternTimeout,
    check_entries,
    check_schema,
    compiled,
    schema_problem,
    search,
)
from golden_gate.core.retrieval import same_source, source_key
from golden_gate.evaluation.custom_checks import CustomCheck, CustomChecks

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
    # Defaults for every item, beside the item's own (golden items carry the same names).
    must_include: list[str] = Field(default_factory=list)
    must_not_include: list[str] = Field(default_factory=list)
    json_schema_file: Path | None = None
    citations_in_sources: bool = False
    custom_checks: list[CustomCheck] = Field(default_factory=list)
    check_timeout_s: float = Field(default=10.0, gt=0, le=600)

    @field_validator("refusal_phrases")
    @classmethod
    def _phrases(cls, phrases: list[str]) -> list[str]:
        for phrase in phrases:
            if not phrase.strip():
                # "" is in every answer: every must_refuse item would pass whatever it said.
                raise ValueError("a refusal phrase is empty: it would count every answer")
        return [phrase.strip() for phrase in phrases]

    @field_validator("forbidden_patterns")
    @classmethod
    def _patterns_compile(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            compiled(pattern)  # ValueError naming the pattern
        return patterns

    @field_validator("must_include", "must_not_include")
    @classmethod
    def _needles(cls, entries: list[str], info: ValidationInfo) -> list[str]:
        return check_entries(entries, what=str(info.field_name).replace("_", "-"))

    @field_validator("json_schema_file")
    @classmethod
    def _schema_file(cls, path: Path | None) -> Path | None:
        if path is not None:
            load_schema(path)
        return path

    @field_validator("custom_checks")
    @classmethod
    def _custom_readable(cls, checks: list[CustomCheck]) -> list[CustomCheck]:
        for check in checks:
            check.source()  # ValueError: unreadable, not Python, or no such function
        return checks


def load_schema(path: Path) -> dict[str, Any]:
    """The JSON Schema in `path`; ValueError saying why it is not one."""
    try:
        schema = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"{path}: cannot read the JSON Schema ({exc.strerror})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not JSON ({exc})") from None
    check_schema(schema, what=str(path))
    return schema


def checks_hash(settings: CheckSettings) -> str:
    """What the deterministic checks demand, hashed: a change moves the yardstick. A file (the
    JSON Schema, a custom check) counts by its bytes, not its path. Settings left at their
    default are not in it, so a report from before they existed keeps its hash."""
    data = settings.model_dump(mode="json", include={"refusal_phrases", "forbidden_patterns"})
    extra = settings.model_dump(
        mode="json", exclude_defaults=True, exclude={"refusal_phrases", "forbidden_patterns"}
    )
    if settings.json_schema_file is not None:
        extra["json_schema_file"] = hashlib.sha256(
            settings.json_schema_file.read_bytes()
        ).hexdigest()
    if settings.custom_checks:
        extra["custom_checks"] = [c.identity() for c in settings.custom_checks]
    text = json.dumps({**data, **extra}, sort_keys=True)
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
    if any(phrase.lower().replace("’", "'") in text for phrase in phrases):
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
        try:
            found = search(pattern, answer)
        except PatternTimeout as exc:
            return CheckOutcome(name="forbidden", passed=False, errored=True, reason=str(exc))
        if found:
            return CheckOutcome(
                name="forbidden", passed=False, reason=f"matches forbidden pattern '{pattern}'"
            )
    return CheckOutcome(name="forbidden", passed=True)


def _needles(name: str, answer: str, entries: Sequence[str], *, wanted: bool) -> CheckOutcome:
    """must_include (`wanted`) or must_not_include: the first entry that breaks it, named."""
    for entry in entries:
        try:
            found = Needle(entry).found_in(answer)
        except PatternTimeout as exc:
            return CheckOutcome(name=name, passed=False, errored=True, reason=str(exc))
        if found != wanted:
            said = "does not include" if wanted else "includes"
            return CheckOutcome(name=name, passed=False, reason=f"the answer {said} '{entry}'")
    return CheckOutcome(name=name, passed=True)


def check_must_include(
    item: GoldenItem, answer: str, settings: CheckSettings
) -> CheckOutcome | None:
    entries = [*settings.must_include, *item.must_include]
    return _needles("must_include", answer, entries, wanted=True) if entries else None


def check_must_not_include(
    item: GoldenItem, answer: str, settings: CheckSettings
) -> CheckOutcome | None:
    entries = [*settings.must_not_include, *item.must_not_include]
    return _needles("must_not_include", answer, entries, wanted=False) if entries else None


def check_json_schema(answer: str, schema: dict[str, Any] | None) -> CheckOutcome | None:
    """The answer parses as JSON and validates against the schema (`{}`: any JSON)."""
    if schema is None:
        return None

    def constant(name: str) -> Any:  # NaN, Infinity: JSON has no such numbers
        raise ValueError(f"{name} is not JSON")

    try:
        value = json.loads(answer, parse_constant=constant)
    except (json.JSONDecodeError, ValueError) as exc:
        return CheckOutcome(name="json_schema", passed=False, reason=f"not JSON: {exc}")
    except RecursionError:
        return CheckOutcome(name="json_schema", passed=False, reason="not JSON: nested too deep")
    problem = schema_problem(schema, value)
    if problem is not None:
        return CheckOutcome(name="json_schema", passed=False, reason=f"schema: {problem}")
    return CheckOutcome(name="json_schema", passed=True)


# --- citations the answer makes -----------------------------------------------------------------

_DOC_SUFFIXES = (".md", ".mdx", ".html", ".htm", ".pdf", ".txt", ".rst")
_SOURCE_LINE = re.compile(r"^[ \t>*-]*sources?[ \t]*:(.*)$", re.IGNORECASE | re.MULTILINE)
_EDGE = "()[]<>{}\"'`*_,.;:!?"


def citations(answer: str) -> list[str]:
    """What the answer cites, in order: the entries of a `Source:`/`Sources:` line (comma or
    semicolon separated), the targets of Markdown links, bare http(s) URLs, and paths to a
    document (`docs/install.md`, `guide/setup.html`). A word-by-word scan, no backtracking."""
    found: list[str] = []
    for line in _SOURCE_LINE.finditer(answer):
        found += [p.strip().strip(_EDGE) for p in re.split(r"[,;]", line.group(1)) if p.strip()]
    for token in answer.split():
        _, link, target = token.partition("](")
        if link:
            token = target.split(")", 1)[0]
        token = token.strip(_EDGE)
        lower = token.lower()
        if (
            lower.startswith(("http://", "https://"))
            or (link and token)
            or ("/" in lower and lower.split("#", 1)[0].split("?", 1)[0].endswith(_DOC_SUFFIXES))
        ):
            found.append(token)
    return list(dict.fromkeys(c for c in found if c))


def _page(ref: str) -> tuple[str | None, str]:
    """A citation or a source as one page, by the retrieval layer's rules (core/retrieval.py,
    docs/golden-sets.md "How sources are matched"): one normaliser for both."""
    return source_key(ref.strip().strip(_EDGE))


def _among(citation: str, sources: Sequence[tuple[str | None, str]]) -> bool:
    """The same page as a returned source, or one's path the other's under a prefix (the answer
    cites `install.md` of a source `docs/install.md`)."""
    host, path = _page(citation)
    if not path:
        return False
    for source in sources:
        if same_source((host, path), source):
            return True
        hosts_agree = host is None or source[0] is None or host == source[0]
        if (
            hosts_agree
            and source[1]
            and (path.endswith("/" + source[1]) or source[1].endswith("/" + path))
        ):
            return True
    return False


def check_citations_in_sources(
    item: GoldenItem, answer: str, sources: Sequence[str], settings: CheckSettings
) -> CheckOutcome | None:
    """Every citation the answer makes is among the sources it returned: none invented."""
    on = item.citations_in_sources
    if not (settings.citations_in_sources if on is None else on):
        return None
    pages = [_page(s) for s in sources]
    invented = [c for c in citations(answer) if not _among(c, pages)]
    if invented:
        more = f" and {len(invented) - 5} more" if len(invented) > 5 else ""
        shown = ", ".join(invented[:5]) + more
        returned = "none" if not sources else ", ".join(sources[:5])
        return CheckOutcome(
            name="citations_in_sources",
            passed=False,
            reason=f"cites {shown}, not among the returned sources ({returned})",
        )
    return CheckOutcome(name="citations_in_sources", passed=True)


# --- the table ------------------------------------------------------------------------------------

# What a built-in check is given: the item, the answer, the sources it returned, the settings
# and the config's JSON Schema (loaded); its outcome, or None when it does not apply.
Check = Callable[
    [GoldenItem, str, Sequence[str], CheckSettings, "dict[str, Any] | None"], CheckOutcome | None
]


def _schema_for(item: GoldenItem, schema: dict[str, Any] | None) -> dict[str, Any] | None:
    return item.json_schema if item.json_schema is not None else schema


BUILT_IN: tuple[tuple[str, Check], ...] = (
    ("refusal", lambda i, a, s, c, j: check_refusal(i, a, c.refusal_phrases)),
    ("citations", lambda i, a, s, c, j: check_citations(i, a, s)),
    ("length", lambda i, a, s, c, j: check_length(i, a)),
    ("forbidden", lambda i, a, s, c, j: check_forbidden(a, c.forbidden_patterns)),
    ("must_include", lambda i, a, s, c, j: check_must_include(i, a, c)),
    ("must_not_include", lambda i, a, s, c, j: check_must_not_include(i, a, c)),
    ("json_schema", lambda i, a, s, c, j: check_json_schema(a, _schema_for(i, j))),
    ("citations_in_sources", lambda i, a, s, c, j: check_citations_in_sources(i, a, s, c)),
)


def run_checks(
    item: GoldenItem,
    answer: str,
    sources: Sequence[str],
    settings: CheckSettings,
    schema: dict[str, Any] | None = None,
) -> list[CheckOutcome]:
    """All built-in checks that apply to this item, in the table's order. `schema`: the
    config's JSON Schema, loaded (an item's own `json_schema` replaces it)."""
    if schema is None and settings.json_schema_file is not None:
        schema = load_schema(settings.json_schema_file)
    outcomes = [check(item, answer, sources, settings, schema) for _, check in BUILT_IN]
    return [o for o in outcomes if o is not None]


class Checker:
    """A run's checks: the built-in table, then the custom checks (in worker processes, only
    for an answer the built-in ones pass: cheapest first)."""

    def __init__(self, settings: CheckSettings) -> None:
        self.settings = settings
        self.schema = load_schema(settings.json_schema_file) if settings.json_schema_file else None
        self.custom = (
            CustomChecks(settings.custom_checks, settings.check_timeout_s)
            if settings.custom_checks
            else None
        )

    async def run(
        self, item: GoldenItem, answer: str, sources: Sequence[str]
    ) -> list[CheckOutcome]:
        outcomes = run_checks(item, answer, sources, self.settings, self.schema)
        if self.custom is not None and all(o.passed for o in outcomes):
            data = item.model_dump(mode="json")
            outcomes += await self.custom.run(data, answer)
        return outcomes

    async def close(self) -> None:
        if self.custom is not None:
            await self.custom.close()


def errored(outcomes: Sequence[CheckOutcome]) -> CheckOutcome | None:
    """The first check that could not decide, if any."""
    return next((o for o in outcomes if o.errored), None)


def needs_judge(item: GoldenItem) -> bool:
    """Only items with key points have something for the judge to compare against."""
    return bool(item.reference_key_points)
