"""An item's outcome and its runs: each run's answer, checks, verdicts and tokens, and which
runs count. The records of one line of a report's `results` (core/report.py holds the rest)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

RunStatus = Literal["pass", "fail", "error"]
# Which side an error run failed on: an answer the assistant could not give is a failed run;
# a judge that could not judge is no verdict about the assistant and is counted apart.
# A custom check that hung or crashed is no verdict either ("check"), counted apart like the judge.
ErrorSide = Literal["assistant", "judge", "check"]


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
