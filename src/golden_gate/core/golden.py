"""Golden sets: one item a JSONL line, loaded with every problem named by file and line."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from golden_gate import jsonl
from golden_gate.core.patterns import check_entries, check_schema
from golden_gate.errors import InputError
from golden_gate.files import read_text, write_result
from golden_gate.jsonl import Problems, records

# Names people write for a field, beyond what an edit distance catches (`tag` is one edit).
ALSO_CALLED = {
    "keypoints": "reference_key_points",
    "referencepoints": "reference_key_points",
    "expectedkeypoints": "reference_key_points",
    "urls": "reference_urls",
    "referencesources": "reference_urls",
    "refuse": "must_refuse",
    "shouldrefuse": "must_refuse",
    "outofscope": "must_refuse",
}


def _squashed(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def _edits(a: str, b: str) -> int:
    """Levenshtein distance."""
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        diagonal, row[0] = row[0], i
        for j, y in enumerate(b, start=1):
            diagonal, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, diagonal + (x != y))
    return row[-1]


def near_miss(name: str, known: Iterable[str]) -> str | None:
    """The known field `name` was probably meant to be (`reference_keypoints`, `tag`,
    `must_refuses`, `Tags`), or None for a name of its own (a team's metadata). Short names
    allow one edit, longer ones two; `id` only its own spelling."""
    squashed = _squashed(name)
    if squashed in ALSO_CALLED:
        return ALSO_CALLED[squashed]
    best: tuple[int, str] | None = None
    for field in known:
        target = _squashed(field)
        allowed = 0 if len(target) < 3 else 1 if len(target) < 8 else 2
        distance = _edits(squashed, target)
        if distance <= allowed and (best is None or distance < best[0]):
            best = (distance, field)
    return best[1] if best is not None else None


@dataclass(frozen=True)
class Decides:
    """Marks a field of an item that decides its verdict: the item hash (`item_hash`) reads the
    marks, so a field is hashed where it is declared, never by a list kept beside it. `when`:
    how it is hashed so that items written before it keep their hash: always, when set (its
    value neither None nor empty), or when given (written on the item's line)."""

    when: Literal["always", "when-set", "when-given"]


ALWAYS, WHEN_SET, WHEN_GIVEN = Decides("always"), Decides("when-set"), Decides("when-given")

ToolsMatch = Literal["strict", "unordered", "subset", "superset"]
ArgMatch = Literal["exact", "ignore", "regex"]
MAX_TURNS = 50


class ExpectedCall(BaseModel):
    """One tool call an item expects: its name and the arguments that matter, each compared
    exactly, by a regex (searched in the value) or not at all; unnamed arguments are ignored."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: str = Field(min_length=1)
    args: dict[str, object] | None = None  # None: any arguments
    args_match: dict[str, ArgMatch] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _regexes_compile(self) -> ExpectedCall:
        for key, mode in self.args_match.items():
            if self.args is None or key not in self.args:
                raise ValueError(f"tool '{self.name}': args_match names '{key}', not in args")
            if mode == "regex":
                pattern = self.args[key]
                if not isinstance(pattern, str):
                    raise ValueError(f"tool '{self.name}': the regex for '{key}' is not a string")
                try:
                    re.compile(pattern)
                except re.error as exc:
                    raise ValueError(
                        f"tool '{self.name}': '{pattern}' for '{key}' is not a regex ({exc})"
                    ) from None
        return self


class Turn(BaseModel):
    """One user message of a conversation, with what its answer must say (all optional)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    question: str = Field(min_length=1)
    reference_key_points: list[str] = Field(default_factory=list)
    reference_urls: list[str] = Field(default_factory=list)
    must_refuse: bool = False
    min_chars: int | None = Field(default=None, ge=0)
    max_chars: int | None = Field(default=None, ge=1)
    expected_tools: list[ExpectedCall] | None = None
    tools_match: ToolsMatch = "strict"
    forbidden_tools: list[str] = Field(default_factory=list)
    max_steps: int | None = Field(default=None, ge=0)

    @property
    def has_reference(self) -> bool:
        return (
            self.must_refuse
            or any(x.strip() for x in [*self.reference_key_points, *self.reference_urls])
            or self.expected_tools is not None
            or bool(self.forbidden_tools)
            or self.max_steps is not None
        )


MAX_SIMULATED_TURNS = 10


class SimulatedUser(BaseModel):
    """A simulated user (`simulate-users`): a pinned persona, its first message, a bound."""

    model_config = ConfigDict(extra="forbid", strict=True)

    persona: str = Field(min_length=1)
    first_message: str = Field(min_length=1)
    max_turns: int = Field(default=3, ge=1, le=MAX_SIMULATED_TURNS)


class GoldenItem(BaseModel):
    """One question with what a correct answer must say and cite; unknown fields are kept,
    except a near-miss of a known one (a typo must never silently turn a check off)."""

    model_config = ConfigDict(extra="allow", strict=True)

    id: str = Field(min_length=1)
    # or `turns`: a conversation (the first turn's text is shown as it)
    question: Annotated[str, ALWAYS] = ""
    reference_key_points: Annotated[list[str], ALWAYS] = Field(default_factory=list)
    reference_urls: Annotated[list[str], ALWAYS] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    must_refuse: Annotated[bool, ALWAYS] = False
    min_chars: Annotated[int | None, WHEN_SET] = Field(default=None, ge=0)
    max_chars: Annotated[int | None, WHEN_SET] = Field(default=None, ge=1)
    # Related questions (e.g. several about one page): the regression test flips their signs
    # together, so they are not counted as independent evidence.
    cluster: str | None = Field(default=None, min_length=1)
    # Hand-written checks (evaluation/checks.py): substrings or `/regex/` the answer must or
    # must not hold, a JSON Schema the answer must parse and validate against ({} = any JSON),
    # and whether every citation the answer makes must be among its returned sources.
    must_include: Annotated[list[str], WHEN_SET] = Field(default_factory=list)
    must_not_include: Annotated[list[str], WHEN_SET] = Field(default_factory=list)
    json_schema: Annotated[dict[str, Any] | None, WHEN_SET] = None
    # None: the config's `citations-in-sources`
    citations_in_sources: Annotated[bool | None, WHEN_SET] = None
    # An agent's tool calls (read at tools-path): deterministic checks before any judge.
    expected_tools: Annotated[list[ExpectedCall] | None, WHEN_GIVEN] = None
    tools_match: Annotated[ToolsMatch, WHEN_GIVEN] = "strict"
    forbidden_tools: Annotated[list[str], WHEN_GIVEN] = Field(default_factory=list)
    max_steps: Annotated[int | None, WHEN_GIVEN] = Field(default=None, ge=0)  # tool calls at most
    # A conversation: the user's messages in order, each its own request; one item for the
    # statistics (its turns are not independent evidence).
    turns: Annotated[list[Turn] | None, WHEN_GIVEN] = Field(
        default=None, min_length=1, max_length=MAX_TURNS
    )
    # A conversation a model plays the user of (nightly, behind simulate-users).
    simulated_user: Annotated[SimulatedUser | None, WHEN_GIVEN] = None
    # Lone surrogates on the item's line, replaced with U+FFFD when it was read.
    _surrogates_replaced: int = PrivateAttr(default=0)
    _where: str = PrivateAttr(default="")  # `file:line` it was read from, for problems

    @model_validator(mode="before")
    @classmethod
    def _no_near_misses(cls, data: object) -> object:
        if isinstance(data, dict):
            known = cls.model_fields
            for name in data:
                if isinstance(name, str) and name not in known:
                    meant = near_miss(name, known)
                    if meant is not None and meant not in data:
                        raise ValueError(f"unknown field '{name}': did you mean '{meant}'?")
                    if meant is not None:
                        raise ValueError(
                            f"unknown field '{name}' beside '{meant}': a misspelt copy? remove one"
                        )
            given = [k for k in ("question", "turns", "simulated_user") if data.get(k) is not None]
            if len(given) > 1:
                raise ValueError(
                    f"an item has a 'question', 'turns' or 'simulated_user', not {given}"
                )
            if not given:
                raise ValueError("missing field 'question' (or 'turns', a conversation)")
        return data

    @field_validator("must_include", "must_not_include")
    @classmethod
    def _patterns_compile(cls, entries: list[str], info: ValidationInfo) -> list[str]:
        return check_entries(entries, what=str(info.field_name))

    @field_validator("json_schema")
    @classmethod
    def _schema_valid(cls, schema: dict[str, Any] | None) -> dict[str, Any] | None:
        if schema is not None:
            check_schema(schema, what="json_schema")
        return schema

    @field_validator("question")
    @classmethod
    def _question_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the question is empty")
        return value

    @model_validator(mode="after")
    def _turns_hold_their_rules(self) -> GoldenItem:
        if self.turns:
            per_turn = ("reference_key_points", "reference_urls", "must_refuse", "expected_tools")
            misplaced = [f for f in per_turn if f in self.model_fields_set]
            if misplaced:
                raise ValueError(
                    f"'{misplaced[0]}' belongs on the turn it judges (an item with 'turns')"
                )
            # Shown wherever an item's question is (tables, JUnit, the page); not "set".
            self.__dict__["question"] = self.turns[0].question
        if self.simulated_user is not None:
            self.__dict__["question"] = self.simulated_user.first_message
        return self

    @property
    def surrogates_replaced(self) -> int:
        return self._surrogates_replaced

    @property
    def where(self) -> str:
        """`file:line` of the item, or its id when it was not read from a file."""
        return self._where or f"item '{self.id}'"

    @property
    def has_reference(self) -> bool:
        """Whether anything in the item judges an answer: key points, URLs or a refusal."""
        return (
            self.must_refuse
            or bool(self.must_include or self.must_not_include)
            or self.json_schema is not None
            or any(
                isinstance(x, str) and x.strip()
                for x in [*self.reference_key_points, *self.reference_urls]
            )
            or self.expected_tools is not None
            or bool(self.forbidden_tools)
            or self.max_steps is not None
            or any(turn.has_reference for turn in self.turns or ())
            or self.simulated_user is not None  # judged by a transcript evaluator
        )

    @property
    def reference(self) -> str:
        """The key points as the bullet list the judge reads as the reference answer."""
        return "\n".join(f"- {point}" for point in self.reference_key_points)


def parse_golden(lines: Iterable[str], *, source: str) -> list[GoldenItem]:
    """Parse JSONL text; raise one InputError naming every bad line as `source:line: problem`."""
    problems = Problems()
    items = []
    for where, number, item in records(lines, source=source, model=GoldenItem, problems=problems):
        item._surrogates_replaced = problems.repaired.get(number, 0)
        item._where = where
        items.append(item)
    problems.raise_if_any()
    if not items:
        raise InputError(f"{source}: the golden set is empty (no items)")
    return items


JUDGEABLE_SHOWN = 10


def check_judgeable(
    items: Sequence[GoldenItem], *, reference_free: bool, strict: bool = False
) -> None:
    """InputError naming every item nothing can judge (no key points, URLs or refusal, and no
    evaluator that works without a reference: it would pass whatever the answer) and, when
    `strict`, every field the schema does not know."""
    problems = Problems()
    known = ", ".join(GoldenItem.model_fields)
    vacuous = [] if reference_free else [i for i in items if not i.has_reference]
    if vacuous:
        named = ", ".join(f"{i.where}: item '{i.id}'" for i in vacuous[:JUDGEABLE_SHOWN])
        more = (
            f" and {len(vacuous) - JUDGEABLE_SHOWN} more" if len(vacuous) > JUDGEABLE_SHOWN else ""
        )
        has = "has" if len(vacuous) == 1 else "have"
        problems.append(
            f"{named}{more} {has} nothing to judge an answer by (no reference_key_points, "
            "reference_urls or must_refuse), so would pass whatever the answer: add key "
            "points, or an evaluator that needs no reference (relevancy, conciseness, "
            "groundedness)"
        )
    for item in items if strict else ():
        if item.model_extra:
            names = ", ".join(f"'{name}'" for name in item.model_extra)
            problems.append(
                f"{item.where}: unknown field {names} (golden-strict is on; the fields are {known})"
            )
    problems.raise_if_any()


def check_tools_readable(items: Sequence[GoldenItem]) -> None:
    """InputError naming the first item with tool-call rules, when tools-path is not set (its
    rules could never be checked: every run would fail them)."""
    for item in items:
        rules = [item, *(item.turns or ())]
        if any(
            r.expected_tools is not None or r.forbidden_tools or r.max_steps is not None
            for r in rules
        ):
            raise InputError(
                f"{item.where}: item '{item.id}' checks tool calls (expected_tools, "
                "forbidden_tools or max_steps) but tools-path is not set: say where the "
                "response holds them (e.g. tool_calls, or choices.0.message.tool_calls)"
            )


def load_golden(path: str | Path) -> list[GoldenItem]:
    """Load a golden set from a JSONL file."""
    text = read_text(path, what="golden set")
    return parse_golden(jsonl.lines(text), source=str(path))


# Marks of imported items no person has reviewed (key points drawn from an answer, a question
# from production traces): never selected, so never gated, until `review --candidates`.
UNREVIEWED_TAGS = frozenset({"needs-review", "needs-reference"})


def unreviewed(item: GoldenItem) -> bool:
    return not UNREVIEWED_TAGS.isdisjoint(item.tags)


def select(items: Sequence[GoldenItem], tags: Sequence[str]) -> list[GoldenItem]:
    """Items carrying any of `tags`, in file order; all items when no tags are given. Items
    still to be reviewed are never selected."""
    wanted = {t.strip() for t in tags if t.strip()}
    if not wanted:
        return [item for item in items if not unreviewed(item)]
    return [item for item in items if wanted.intersection(item.tags) and not unreviewed(item)]


def check_tags_used(items: Sequence[GoldenItem], tags: Sequence[str], *, where: object) -> None:
    """InputError naming `subset-tags` when a tag selects nothing: a tag no item in `where`
    carries (a typo beside a real tag would run fewer items, silently), or none selected."""
    carried = {tag for item in items for tag in item.tags}
    wanted = [tag.strip() for tag in tags if tag.strip()]
    unused = [tag for tag in wanted if tag not in carried]
    if not unused:
        return
    shown = ", ".join(f"'{tag}'" for tag in unused)
    there = ", ".join(sorted(carried)[:20]) + (", ..." if len(carried) > 20 else "")
    raise InputError(
        f"subset-tags: no item in {where} carries {shown} (the tags there: {there or 'none'})"
    )


class Shard(BaseModel):
    """Shard `index` of `count` (1-based), written `i/n`."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str, *, where: str = "input 'shard'") -> Shard:
        index, sep, count = text.strip().partition("/")
        try:
            shard = cls(index=int(index), count=int(count)) if sep else None
        except ValueError:
            shard = None
        if shard is None or not 1 <= shard.index <= shard.count:
            raise InputError(f"{where} must be i/n with 1 ≤ i ≤ n, got '{text}'")
        return shard

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def shard_of(items: Sequence[GoldenItem], shard: Shard) -> list[GoldenItem]:
    """A stable, balanced partition: items ranked by a hash of their id, dealt round-robin.

    The same selection always puts an item in the same shard, and shards differ by at most one
    item (a plain hash modulo n would be stable too, but off balance by ~sqrt(items) items).
    """
    ranked = sorted(items, key=lambda item: hashlib.sha256(item.id.encode("utf-8")).digest())
    chosen = {item.id for item in ranked[shard.index - 1 :: shard.count]}
    return [item for item in items if item.id in chosen]  # file order, as without shards


# The fields of the fingerprint's first form, written even at their defaults; every field
# added since is written only when given, so a set without it keeps the fingerprint it had.
# Frozen: a new field needs no entry here.
FINGERPRINT_FIRST_FORM = frozenset(
    {
        "id", "question", "reference_key_points", "reference_urls", "tags", "must_refuse",
        "min_chars", "max_chars", "cluster",
    }
)  # fmt: skip


def canonical_line(item: GoldenItem) -> str:
    """The item as one JSON line with sorted keys: the form the fingerprint hashes."""
    unset = set(GoldenItem.model_fields) - FINGERPRINT_FIRST_FORM - item.model_fields_set
    data = item.model_dump(mode="json", exclude_defaults=False, exclude=unset)
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def verdict_fields(when: Literal["always", "when-set", "when-given"]) -> list[str]:
    """The item's fields marked `Decides(when)`, in the order they are declared."""
    return [
        name for name, info in GoldenItem.model_fields.items() if Decides(when) in info.metadata
    ]


def item_hash(item: GoldenItem) -> str:
    """Hash of what an answer is judged against (the fields marked `Decides`, not the tags):
    did a shared item change? A field marked when-set or when-given is hashed only then, so
    the hash of an item without it stays what it was."""
    what: list[Any] = [getattr(item, name) for name in _ALWAYS]
    checks = {name: getattr(item, name) for name in _WHEN_SET if getattr(item, name) not in _UNSET}
    if checks:
        what.append(checks)
    given = set(_WHEN_GIVEN) & item.model_fields_set
    if given:
        what.append(item.model_dump(mode="json", include=given))
    return hashlib.sha256(json.dumps(what, ensure_ascii=False).encode("utf-8")).hexdigest()[:16]


_UNSET: tuple[Any, ...] = (None, [])
_ALWAYS, _WHEN_SET, _WHEN_GIVEN = (
    verdict_fields("always"),
    verdict_fields("when-set"),
    verdict_fields("when-given"),
)


def fingerprint(items: Sequence[GoldenItem]) -> str:
    """sha256 of the canonical items in order: equal fingerprints mean the same questions."""
    digest = hashlib.sha256()
    for item in items:
        digest.update(canonical_line(item).encode("utf-8"))
        digest.update(b"\n")
    return "sha256:" + digest.hexdigest()


def write_golden(items: Sequence[GoldenItem], path: str | Path) -> None:
    """Write items as JSONL with the same schema (unknown fields included)."""
    lines = [
        json.dumps(item.model_dump(mode="json", exclude_unset=True), ensure_ascii=False)
        for item in items
    ]
    write_result(path, "".join(line + "\n" for line in lines), what="golden set")
