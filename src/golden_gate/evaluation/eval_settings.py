"""The evaluation's settings: how many runs, what the judge may cost, what counts as an error."""

from __future__ import annotations

import math

from pydantic import BaseModel, Field

from golden_gate.errors import InputError
from golden_gate.limits import MAX_CANARIES, MAX_CONCURRENCY, MAX_RERUN_FAILURES, MAX_RUNS


class EvalSettings(BaseModel):
    runs: int = Field(default=1, ge=1, le=MAX_RUNS)
    # Diagnostic re-runs of a failed item: shown (consistent or flaky), never counted, because
    # re-running only failures biases the pass rate up and hides spread drops
    # (docs/architecture.md#the-gate-exactly).
    rerun_failures: int = Field(default=0, ge=0, le=MAX_RERUN_FAILURES)
    max_error_rate: float = Field(default=0.10, ge=0, le=1)
    max_judge_calls: int | None = Field(default=None, ge=0)
    judge_concurrency: int = Field(default=8, ge=1, le=MAX_CONCURRENCY)
    # USD per million input and output tokens; only the user's prices, never a built-in table.
    judge_prices: tuple[float, float] | None = None
    # The same for the assistant's own tokens (usage-path): c_sys.
    assistant_prices: tuple[float, float] | None = None
    # Past this spend (judge + assistant, at the prices above) the run stops, incomplete.
    max_cost_usd: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    # The answer as the report keeps it: whole for any answer a person reads (pairwise, the
    # report page, review), cut only past this, so a runaway reply cannot swell the report.
    answer_excerpt_chars: int = Field(default=20_000, ge=0)
    # The models the assistant answers with (assistant-model): a judge among them is warned of.
    assistant_models: list[str] = Field(default_factory=list)
    # Golden items each model judge's canaries are derived from, per evaluator (0: none).
    canaries: int = Field(default=2, ge=0, le=MAX_CANARIES)
    # Items with a simulated user run (nightly); off, the pipeline leaves them out.
    simulate_users: bool = False


# Timeouts beside successes in one run: calls queued in a server with fewer slots than ours.
SLOT_TIMEOUTS = 3
# Runs the judge failed on are asked about once more at the end of the run: at most this share
# of the runs (at least REJUDGE_MIN), so a judge that is down costs a bounded number of calls.
REJUDGE_SHARE = 0.10
REJUDGE_MIN = 10


def parse_prices(text: str, *, name: str) -> tuple[float, float]:
    """`input,output` USD per million tokens; InputError naming `name` otherwise."""
    parts = [part.strip() for part in text.split(",")]
    try:
        prices = tuple(float(part) for part in parts)
    except ValueError:
        prices = ()
    if len(prices) != 2 or not all(math.isfinite(p) and p >= 0 for p in prices):
        raise InputError(
            f"{name} must be two non-negative numbers 'input,output' "
            f"(USD per million tokens), got '{text}'"
        )
    return prices[0], prices[1]
