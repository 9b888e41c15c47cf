"""The report: what one evaluation found, item by item and run by run.

The minimal shape `{"judge", "results": [{"id", "tags", "passes", "runs"}]}` is what teams'
hand-written harnesses produce and read; everything else sits beside those fields, so such
reports load as baselines and ours stay readable by them.

The report's header and whole: the dataset, the assistant, the rule changes, the run settings
and figures, and the results; each item's record is core/item_result.py, reading and writing a
report file core/report_file.py.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from golden_gate import __version__, redaction
from golden_gate.core.canaries import Canaries
from golden_gate.core.item_result import ItemResult, TokenUsage

REPORT_FORMAT = "golden-gate/1"
DETERMINISTIC = "deterministic"  # the tier (and the judge's name) when no judge ran


class DatasetInfo(BaseModel):
    path: str | None = None
    fingerprint: str | None = None
    items: int | None = None
    tags: list[str] = Field(default_factory=list)
    shard: str | None = None
    # Items whose golden line held half an emoji (a lone surrogate), evaluated with U+FFFD.
    repaired_items: list[str] | None = None
    # Which items the evaluation selected (selection_digest of their ids): a report whose
    # results and not-asked items do not add up to it was cut short, and cannot pass.
    selected: str | None = None


_DIGEST_BITS = 128


def selection_digest(ids: Iterable[str]) -> str:
    """An order-free digest of a set of item ids: the sum of each id's 128-bit BLAKE2b modulo
    2^128, so the shards' digests add up to the whole selection's."""
    total = 0
    for item_id in ids:
        digest = hashlib.blake2b(item_id.encode("utf-8"), digest_size=16).digest()
        total += int.from_bytes(digest, "big")
    return f"sum128:{total % (1 << _DIGEST_BITS):032x}"


def add_digests(digests: Iterable[str]) -> str:
    """The digest of the union of disjoint selections."""
    total = sum(int(d.removeprefix("sum128:"), 16) for d in digests)
    return f"sum128:{total % (1 << _DIGEST_BITS):032x}"


class AssistantInfo(BaseModel):
    url: str | None = None
    image_digests: dict[str, str] = Field(default_factory=dict)
    index_snapshot: str | None = None

    @field_validator("url")
    @classmethod
    def _no_credentials(cls, value: str | None) -> str | None:
        # `http://user:password@host` works for the requests; the report keeps the host only.
        return redaction.without_credentials(value) if value else value


class RuleFile(BaseModel):
    """A file that defines the yardstick (a judge prompt, a rubric, the comment template, the
    calibration), by the input that names it and its path in the repository."""

    input: str
    path: str


class RuleChanges(BaseModel):
    """What a pull request changed in the gate's own rules, against the base branch."""

    removed: list[str] = Field(default_factory=list)  # selected at base, gone from the set
    untagged: list[str] = Field(default_factory=list)  # still there, no longer selected
    reworded: list[str] = Field(default_factory=list)  # question, key points or sources changed
    added: list[str] = Field(default_factory=list)  # selected in the pull request only
    files: list[str] = Field(default_factory=list)  # rule files changed (prompt, workflow, ...)
    # In the baseline, not evaluated as the base defines it: counted as failed (core/rules.py).
    dropped: list[str] = Field(default_factory=list)
    # Rule files the pull request changed: the base's versions decided the verdict.
    not_used: list[RuleFile] = Field(default_factory=list)
    # Rule files only the pull request has, used: the base branch had no gate yet.
    own_rule_files: list[RuleFile] = Field(default_factory=list)
    # Rules the pull request's golden-gate.toml sets otherwise (`[gate] floor = 0.5 …`): the
    # base branch's decided the verdict.
    settings_not_used: list[str] = Field(default_factory=list)
    # Who must approve these changes: CODEOWNERS at the base branch (where it was read), the
    # owners of the changed rule files, and the changed rule files no owner covers.
    codeowners: str | None = None
    approvers: list[str] = Field(default_factory=list, exclude_if=lambda v: not v)
    unowned: list[str] = Field(default_factory=list, exclude_if=lambda v: not v)

    @property
    def any(self) -> bool:
        return bool(
            self.removed
            or self.untagged
            or self.reworded
            or self.added
            or self.files
            or self.dropped
            or self.not_used
            or self.own_rule_files
            or self.settings_not_used
        )

    @property
    def rule_paths(self) -> list[str]:
        """The repository paths of the rules this pull request changes (not the items)."""
        paths = [*self.files, *(f.path for f in (*self.not_used, *self.own_rule_files))]
        return list(dict.fromkeys(paths))


class RunSettings(BaseModel):
    """Every setting that changes what a pass means; a baseline made otherwise is not comparable."""

    model_config = ConfigDict(extra="allow")

    runs: int = 1
    rerun_failures: int = 0
    reruns_counted: bool = False  # golden-gate < 0.2 counted re-runs of failures (biased up)
    unanswered_counts_as_failure: bool = True
    judge_temperature: float | None = None
    checks_hash: str | None = None
    # `correctness:0.7,groundedness all` (evaluators, thresholds, rule); None: the judge alone.
    evaluators: str | None = None
    judge_panel: str | None = None  # how several judge models combine, when there are several


# The runner's cache services (see action.cache.entries.choose_service), and what a restore found.
CacheServiceKind = Literal["v2", "v1"]
RestoreStatus = Literal["restored", "miss", "failed"]


class JudgeIdentity(BaseModel):
    """Which model really judged under one judge name: what the gate compares with the
    baseline's (one name can hide another snapshot, another server)."""

    judge: str  # as configured: `provider:model`
    endpoint: str | None = None  # the URL verdicts came from, without credentials
    seed: int | None = None  # sent with every call, where the provider takes one
    # What the judge's server said answered, over this report's verdicts (cached ones too).
    served_models: list[str] = Field(default_factory=list)


class JudgeCacheStats(BaseModel):
    """Where this run's verdicts were kept between runs, and what the restore found."""

    service: CacheServiceKind | None = None  # the cache service used; None: the directory
    restore: RestoreStatus | None = None  # with a service only
    note: str = ""  # the log's line, e.g. "legacy cache service v1 (...); no saved verdicts ..."


class Percentiles(BaseModel):
    """p50 and p95 (nearest rank) of one measure over a run's answers."""

    p50: float
    p95: float
    count: int


class RunStats(BaseModel):
    judge_calls: int = 0  # made: answered or failed (not cut short by an interrupt)
    # HTTP requests really sent to the judge for those calls: first tries and retries.
    judge_attempts: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    assistant_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None  # only with the user's judge-prices
    # The assistant's own tokens (usage-path) and, with assistant-prices, their cost.
    assistant_tokens: TokenUsage | None = None
    assistant_cost_usd: float | None = None
    # For information, never gated: the assistant's latency (ms) and tokens an answer.
    latency_ms: Percentiles | None = None
    tokens_per_answer: Percentiles | None = None
    elapsed_s: float | None = None
    budget_exhausted: bool = False
    judge_timeouts: int = 0  # judge calls that failed because every try timed out
    # Runs counted apart because a hand-written check hung or crashed (not the judge's doing).
    check_errors: int = 0
    judge_cache: JudgeCacheStats | None = None  # the Action's judge cache; None elsewhere


class RetrievalItem(BaseModel):
    """One item's expected sources (`reference_urls`) and, for each run that returned sources,
    the rank of each among the distinct pages returned (1 = first; None: not returned)."""

    expected: list[str]
    ranks: list[list[int | None]] = Field(default_factory=list)


class RetrievalFigures(BaseModel):
    """Means over items of per-item hit@k, reciprocal rank and recall@k."""

    items: int
    hit_rate: float
    mrr: float
    recall: float


class RetrievalRecord(BaseModel):
    """The retrieval layer's data (core/retrieval.py): written only with `sources-path`, and
    only for items with `reference_urls`. Ranks do not depend on k, so a gate can use its own."""

    k: int
    items: dict[str, RetrievalItem] = Field(default_factory=dict)
    # Items with reference_urls whose every answer came without sources: not measured.
    without_sources: list[str] = Field(default_factory=list)
    overall: RetrievalFigures | None = None  # at `k`
    by_tag: dict[str, RetrievalFigures] = Field(default_factory=dict)


class Report(BaseModel):
    """One evaluation; `judge` and `results` are the minimal shape, the rest is ours."""

    model_config = ConfigDict(extra="allow")

    judge: str
    results: list[ItemResult]
    format: str | None = None
    tool_version: str | None = None
    created_at: str | None = None
    tier: Literal["full", "deterministic"] = "full"
    judge_prompt_hash: str | None = None
    dataset: DatasetInfo | None = None
    assistant: AssistantInfo | None = None
    run_settings: RunSettings | None = None
    rule_changes: RuleChanges | None = None
    stats: RunStats | None = None
    # What the evaluation saw that the reader should know (a judge short of server slots, ...).
    warnings: list[str] | None = None
    complete: bool = True
    incomplete_reason: str | None = None
    not_asked: list[str] | None = None  # selected items an interrupted evaluation never finished
    # Probes of the judge with known verdicts (core/canaries.py): apart from `results`, never
    # counted by the floor or the paired test.
    canaries: Canaries | None = None
    judges: list[JudgeIdentity] | None = None  # one per judge model of the panel
    retrieval: RetrievalRecord | None = None  # with `sources-path` only

    @model_validator(mode="after")
    def _unique_ids(self) -> Report:
        seen: set[str] = set()
        for result in self.results:
            if result.id in seen:
                raise ValueError(f"item '{result.id}' appears twice in results")
            seen.add(result.id)
        return self

    @property
    def counted(self) -> list[ItemResult]:
        """Items with at least one verdict: the ones the gate counts."""
        return [r for r in self.results if not r.errored]

    def pass_rate_text(self) -> str:
        """The pass rate the gate uses, `n/a` when no item was counted.

        `k/n (p%)` with one run per item; with several, the mean of per-item pass fractions.
        """
        counted = self.counted
        if not counted:
            return "n/a"
        if all(r.runs == 1 for r in counted):
            passed = sum(r.passes for r in counted)
            return f"{passed}/{len(counted)} ({passed / len(counted):.1%})"
        rate = sum(r.score for r in counted) / len(counted)
        return f"{rate:.1%} of runs over {len(counted)} items"

    def by_id(self) -> dict[str, ItemResult]:
        return {r.id: r for r in self.results}


def new_report(**fields: object) -> Report:
    """A report stamped with our format, version and time."""
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return Report(format=REPORT_FORMAT, tool_version=__version__, created_at=stamp, **fields)
