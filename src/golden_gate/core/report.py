"""The report: what one evaluation found, item by item and run by run.

The minimal shape `{"judge", "results": [{"id", "tags", "passes", "runs"}]}` is what teams'
hand-written harnesses produce and read; everything else sits beside those fields, so such
reports load as baselines and ours stay readable by them.

About 470 lines, one module: the records and their one reader and writer are the report's
JSON contract, and they change together.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import PydanticSerializationError

from golden_gate import __version__, jsontext, redaction, surrogates
from golden_gate.core.canaries import Canaries
from golden_gate.errors import InputError
from golden_gate.files import read_text, write_result

REPORT_FORMAT = "golden-gate/1"
RunStatus = Literal["pass", "fail", "error"]
# Which side an error run failed on: an answer the assistant could not give is a failed run;
# a judge that could not judge is no verdict about the assistant and is counted apart.
# A custom check that hung or crashed is no verdict either ("check"), counted apart like the judge.
ErrorSide = Literal["assistant", "judge", "check"]
DETERMINISTIC = "deterministic"  # the tier (and the judge's name) when no judge ran


class CheckOutcome(BaseModel):
    """One deterministic check on one answer."""

    name: str
    passed: bool
    reason: str = ""
    # The check could not decide (hung, crashed): the run is an error. Unsaid when False.
    errored: bool = Field(default=False, exclude_if=lambda v: not v)


class ToolCall(BaseModel):
    """One tool call the assistant made, as the report keeps it (bounded: core/trajectory.py)."""

    name: str
    arguments: str = ""  # the arguments as compact JSON text, cut


class TurnResult(BaseModel):
    """One turn of a conversation: the user's message, the answer, and how it fared."""

    turn: int = Field(ge=1)
    question: str
    status: RunStatus
    answer: str | None = None
    why: str = ""
    tool_calls: list[ToolCall] | None = None


class TokenUsage(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens


class Verdict(BaseModel):
    """The judge's decision on one answer."""

    passed: bool
    score: float | bool | None = None
    comment: str = ""
    # Reused, not judged for this run: from the cache or from an identical answer's call.
    cached: bool = False
    tokens: TokenUsage | None = None
    latency_ms: float | None = None
    served_model: str | None = None  # the model the judge's server says answered
    # Requests sent to the judge's server for this verdict: 1, or more after retries.
    attempts: int | None = None


class JudgeVote(BaseModel):
    """One panel member's verdict for one evaluator, or why it gave none."""

    judge: str
    passed: bool | None = None  # None: this judge could not judge (see `error`)
    score: float | bool | None = None
    comment: str = ""
    cached: bool = False
    error: str | None = None
    served_model: str | None = None  # the model this judge's server says answered


class EvaluatorOutcome(BaseModel):
    """One evaluator's decision on one run: its panel's votes combined."""

    evaluator: str
    status: RunStatus
    score: float | bool | None = None  # the first judge's score, for a reader
    comment: str = ""
    votes: list[JudgeVote] = Field(default_factory=list)


class RunResult(BaseModel):
    """One run of one item: the answer, the checks, the verdict, or the error that stopped it."""

    model_config = ConfigDict(extra="allow")

    status: RunStatus
    error_side: ErrorSide | None = None
    rerun: bool = False  # a diagnostic re-run of a failure: shown, never counted
    answer: str | None = None
    sources: list[str] | None = None
    checks: list[CheckOutcome] = Field(default_factory=list)
    verdict: Verdict | None = None  # with several evaluators or judges: their combination
    evaluations: list[EvaluatorOutcome] | None = None  # only with several evaluators or judges
    error: str | None = None
    http_status: int | None = None
    latency_ms: float | None = None
    surrogates_replaced: int | None = None  # halves of emoji in the answer, replaced by U+FFFD
    usage: TokenUsage | None = None  # the assistant's own tokens for this answer (usage-path)
    tool_calls: list[ToolCall] | None = None  # read at tools-path (the last turn's, in a chat)
    turns: list[TurnResult] | None = None  # a conversation's turns, in order
    failed_turn: int | None = None  # the first turn that did not pass (1-based)

    @property
    def failed_check(self) -> CheckOutcome | None:
        return next((c for c in self.checks if not c.passed), None)

    @property
    def why(self) -> str:
        """Why this run did not pass, in one line (naming the turn, in a conversation)."""
        reason = self._why()
        if self.failed_turn is not None and reason:
            return f"turn {self.failed_turn}: {reason}"
        return reason

    def _why(self) -> str:
        if self.status == "error":
            side = "assistant" if self.error_side == "assistant" else "error"
            return f"{side}: {self.error or 'unknown'}"
        check = self.failed_check
        if check is not None:
            return f"check {check.name}: {check.reason}"
        failing = [e for e in self.evaluations or [] if e.status == "fail"]
        if failing and self.status == "fail":
            return "; ".join(f"{e.evaluator} failed: {e.comment or 'fail'}" for e in failing)
        if self.verdict is not None and not self.verdict.passed:
            return f"judge: {self.verdict.comment}" if self.verdict.comment else "judge: fail"
        return ""

    @property
    def failed_evaluators(self) -> list[str]:
        return [e.evaluator for e in self.evaluations or [] if e.status == "fail"]


def counts(run: RunResult) -> bool:
    """A counted run: a verdict, or an answer the assistant could not give (a failure).

    Diagnostic re-runs never count; a run the judge could not judge counts apart.
    """
    return not run.rerun and (run.status != "error" or run.error_side == "assistant")


def tally_runs(runs: list[RunResult]) -> dict[str, int]:
    """An item's `passes`, `runs`, `errors` and `unanswered` from its runs."""
    counted = [r for r in runs if counts(r)]
    return {
        "passes": sum(r.status == "pass" for r in counted),
        "runs": len(counted),
        "errors": sum(r.status == "error" and not counts(r) and not r.rerun for r in runs),
        "unanswered": sum(r.status == "error" for r in counted),
    }


class ItemResult(BaseModel):
    """An item's outcome: `passes` of `runs` counted runs.

    Counted runs are the first `runs` asked: passes, failures and answers the assistant could
    not give (`unanswered`, failures too). Runs the judge could not judge are `errors`, apart;
    diagnostic re-runs of failures are in `run_results` only.
    """

    model_config = ConfigDict(extra="allow")

    id: str
    tags: list[str] = Field(default_factory=list)
    passes: int = Field(ge=0)
    runs: int = Field(ge=0)
    errors: int = Field(default=0, ge=0)
    unanswered: int = Field(default=0, ge=0)
    cluster: str | None = None
    origin: Literal["base", "pull-request"] | None = None  # who defined the item (rules.py)
    question: str | None = None
    item_hash: str | None = None
    # The tool calls the golden item expects, as text (core/trajectory.py), for the comment.
    expected_tools: list[str] | None = None
    run_results: list[RunResult] = Field(default_factory=list)

    @model_validator(mode="after")
    def _passes_within_runs(self) -> ItemResult:
        if self.passes > self.runs:
            raise ValueError(f"item '{self.id}': passes ({self.passes}) exceeds runs ({self.runs})")
        return self

    @property
    def passed(self) -> bool:
        """Majority rule: strictly more than half of the counted runs passed."""
        return self.passes * 2 > self.runs

    @property
    def score(self) -> float:
        """The fraction of counted runs that passed (0 for an item without counted runs)."""
        return self.passes / self.runs if self.runs else 0.0

    @property
    def errored(self) -> bool:
        """No run produced a verdict: the item cannot be counted."""
        return self.runs == 0

    @property
    def has_errors(self) -> bool:
        """Some run ended in an error, on either side."""
        return self.runs == 0 or self.errors > 0 or self.unanswered > 0

    @property
    def unstable(self) -> bool:
        """The counted runs disagree."""
        return 0 < self.passes < self.runs

    @property
    def why(self) -> str:
        """Why the item failed: the first failing run's reason."""
        for run in self.run_results:
            if run.status == "fail":
                return run.why
        for run in self.run_results:
            if run.status == "error":
                return run.why
        return ""

    @property
    def tool_calls(self) -> list[ToolCall] | None:
        """The tool calls a reviewer should see: the first failing run's, else the first's."""
        runs = [r for r in self.run_results if r.tool_calls is not None]
        failing = [r for r in runs if r.status == "fail"]
        return (failing or runs)[0].tool_calls if runs else None

    @property
    def answer(self) -> str | None:
        """The answer a reviewer should see: the first failing run's, else the first one's."""
        for run in self.run_results:
            if run.status == "fail" and run.answer is not None:
                return run.answer
        return next((r.answer for r in self.run_results if r.answer is not None), None)


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


def parse_report(text: str, *, source: str) -> Report:
    """Parse a report or baseline; a bad one is an InputError naming the file."""
    try:
        # Depth is bounded below, on the few unknown fields, not on every item (a large
        # report's whole walk would cost half its parse).
        data = jsontext.loads(text, check_depth=False)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{source}: not a report: invalid JSON at line {exc.lineno} ({exc.msg})"
        ) from None
    if surrogates.may_hold_surrogates(text):  # rare: a walk over every string only then
        data, _ = surrogates.repair_json(data)
    if not isinstance(data, dict) or "results" not in data:
        raise InputError(f"{source}: not a report: expected an object with 'judge' and 'results'")
    try:
        report = Report.model_validate(data)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(p) for p in problem["loc"])
        message = problem["msg"].removeprefix("Value error, ")
        detail = f"{where}: {message}" if where else message
        raise InputError(f"{source}: not a report: {detail}") from None
    deep = _too_deep_field(report)
    if deep is not None:
        raise InputError(
            f"{source}: not a report: {deep}: nested more than {jsontext.MAX_DEPTH} deep"
        )
    return report


def _too_deep_field(report: Report) -> str | None:
    """An unknown field nested too deep to be written again; typed fields are shallow."""

    def deep(where: str, owner: BaseModel) -> str | None:
        for name, value in (owner.__pydantic_extra__ or {}).items():
            if jsontext.nested_deeper(value, jsontext.MAX_DEPTH):
                return where + name
        return None

    found = deep("", report)
    for i, item in enumerate(report.results):
        if found is not None:
            return found
        found = too_deep_item_field(item, f"results.{i}.")
    return found


def too_deep_item_field(item: ItemResult, where: str = "") -> str | None:
    """An unknown field of the item or its runs nested too deep to be written again."""

    def deep(where: str, owner: BaseModel) -> str | None:
        for name, value in (owner.__pydantic_extra__ or {}).items():
            if jsontext.nested_deeper(value, jsontext.MAX_DEPTH):
                return where + name
        return None

    found = deep(where, item) if item.__pydantic_extra__ else None
    for j, run in enumerate(item.run_results):
        if run.__pydantic_extra__:
            found = found or deep(f"{where}run_results.{j}.", run)
    return found


def load_report(path: str | Path) -> Report:
    text = read_text(path, what="report")
    return parse_report(text, source=str(path))


def report_json(report: Report) -> str:
    """The report as written, with every registered secret scrubbed from every string."""
    try:
        text = report.model_dump_json(indent=1, exclude_none=True)
    except PydanticSerializationError:  # a lone surrogate that no reader repaired: repair here
        data, _ = surrogates.repair_json(report.model_dump(mode="json", exclude_none=True))
        text = json.dumps(data, indent=1, ensure_ascii=False)
    if redaction.present(text):  # rare: re-encode only then, string by string (JSON stays valid)
        text = json.dumps(redaction.scrub_json(json.loads(text)), indent=1, ensure_ascii=False)
    return text + "\n"


def save_report(report: Report, path: str | Path) -> None:
    write_result(path, report_json(report), what="report")
