"""What a run costs, before it runs: N · R · (c_sys + (1 − h) · c_judge).

N items, R runs an item, c_sys what one run of the assistant costs (its own token usage, read
at `usage-path`, at `assistant-prices`), h the judge cache's hit rate, c_judge what judging
one run costs when nothing is cached (the judge's tokens per call at `judge-prices`, times the
verdicts a run needs). The terms come from a report that measured them (the baseline: the
last run on main); a term nobody measured is said so, never guessed. Also the latency and
token percentiles beside the baseline's, for information: performance is not gated here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel

from golden_gate.core.item_result import ItemResult, TokenUsage
from golden_gate.core.report import Percentiles, RunStats

if TYPE_CHECKING:
    from golden_gate.core.report import Report

Prices = tuple[float, float]  # USD per million input and output tokens


def read_usage(value: object) -> TokenUsage | None:
    """The token usage a response reports, in the shapes the APIs write it (OpenAI
    `prompt_tokens`/`completion_tokens`, Anthropic and LangChain `input_tokens`/
    `output_tokens`, Gemini `promptTokenCount`/`candidatesTokenCount`), or a bare number of
    tokens (counted as output); None when it holds none of these."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float) and math.isfinite(value) and value >= 0:
        return TokenUsage(output_tokens=int(value))
    if not isinstance(value, dict):
        return None
    pairs = (
        ("prompt_tokens", "completion_tokens"),
        ("input_tokens", "output_tokens"),
        ("promptTokenCount", "candidatesTokenCount"),
    )
    for inp, out in pairs:
        if inp in value or out in value:
            return TokenUsage(
                input_tokens=_count(value.get(inp)), output_tokens=_count(value.get(out))
            )
    for total in ("total_tokens", "totalTokenCount"):
        if total in value:
            return TokenUsage(output_tokens=_count(value.get(total)))
    return None


def _count(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return 0
    return max(int(value), 0)


def money(usd: float) -> str:
    """USD with two significant digits below a cent ($0.000085), cents above ($1.25)."""
    if usd <= 0:
        return "$0"
    if usd >= 0.01:
        return f"${usd:,.2f}"
    return f"${usd:.{1 - math.floor(math.log10(usd))}f}"


def price(tokens: TokenUsage, prices: Prices) -> float:
    return (tokens.input_tokens * prices[0] + tokens.output_tokens * prices[1]) / 1e6


class CostTerms(BaseModel):
    """The formula's terms, each None when no report measured it."""

    items: int
    runs: int
    c_sys: float | None = None  # USD a run of the assistant
    sys_tokens: float | None = None  # the assistant's tokens a run (without prices too)
    hit_rate: float | None = None
    c_judge: float | None = None  # USD to judge a run, nothing cached
    judge_tokens: float | None = None  # the judge's tokens to judge a run
    source: str = ""  # the report the terms came from
    recorded: bool = False  # priced at what the report recorded it paid, not at given prices

    @property
    def total(self) -> float | None:
        """N · R · (c_sys + (1 − h) · c_judge), None when a priced term is unknown."""
        if self.c_judge is None and self.c_sys is None:
            return None
        c_sys = self.c_sys or 0.0
        judged = (1 - (self.hit_rate or 0.0)) * (self.c_judge or 0.0)
        return self.items * self.runs * (c_sys + judged)

    def formula(self) -> str:
        """`N · R · (c_sys + (1 − h) · c_judge) = 24 × 3 × ($0.0012 + (1 − 0.40) × $0.0008)
        = $0.12`, with what is unknown said."""

        def usd(value: float | None, tokens: float | None) -> str:
            if value is not None:
                return money(value)
            return f"? ({tokens:,.0f} tokens, no prices)" if tokens is not None else "?"

        h = f"{self.hit_rate:.2f}" if self.hit_rate is not None else "0 (no cache record)"
        text = (
            f"N · R · (c_sys + (1 − h) · c_judge) = {self.items} × {self.runs} × "
            f"({usd(self.c_sys, self.sys_tokens)} + (1 − {h}) × "
            f"{usd(self.c_judge, self.judge_tokens)})"
        )
        total = self.total
        return text + (f" = {money(total)}" if total is not None else ": no prices, no total")

    def terms_lines(self) -> list[str]:
        """Each term, where it came from, or why it is unknown."""
        where = f" in {self.source}" if self.source else ""
        lines = [f"N = {self.items} items, R = {self.runs} run(s) an item"]
        if self.c_sys is not None:
            lines.append(
                f"c_sys = {money(self.c_sys)} a run: {self.sys_tokens:,.0f} assistant tokens a run"
                f"{where} at {'the cost it recorded' if self.recorded else 'assistant-prices'}"
            )
        elif self.sys_tokens is not None:
            lines.append(
                f"c_sys: {self.sys_tokens:,.0f} assistant tokens a run{where}; set "
                "assistant-prices to price them"
            )
        else:
            lines.append(f"c_sys: no assistant token usage recorded{where}; set usage-path")
        if self.hit_rate is not None:
            lines.append(f"h = {self.hit_rate:.2f}: the judge cache's hit rate{where}")
        else:
            lines.append(f"h: no judge cache record{where}; taken as 0 (every verdict paid)")
        if self.c_judge == 0 and not self.judge_tokens:
            lines.append(f"c_judge = $0: the judge used no tokens{where} (an offline judge)")
        elif self.c_judge is not None:
            lines.append(
                f"c_judge = {money(self.c_judge)} a run: {self.judge_tokens:,.0f} judge tokens a "
                f"run{where} at {'the cost it recorded' if self.recorded else 'judge-prices'}"
            )
        elif self.judge_tokens is not None:
            lines.append(
                f"c_judge: {self.judge_tokens:,.0f} judge tokens a run{where}; set judge-prices "
                "to price them"
            )
        else:
            lines.append(f"c_judge: no judge tokens recorded{where} (an offline judge is free)")
        return lines


def cost_terms(
    *,
    items: int,
    runs: int,
    measured: Report | None,
    judge_prices: Prices | None = None,
    assistant_prices: Prices | None = None,
    source: str = "",
) -> CostTerms:
    """The terms for N items × R runs, measured on `measured` (the baseline, or this run):
    its stats only, so a large report's header (slim.py) is enough. Tokens are priced at the prices
    given, else at what the report recorded it paid."""
    terms = CostTerms(items=items, runs=runs, source=source)
    stats = measured.stats if measured is not None else None
    if stats is None or not stats.assistant_calls:
        return terms
    asked = stats.assistant_calls
    if stats.assistant_tokens is not None:
        mean = TokenUsage(
            input_tokens=round(stats.assistant_tokens.input_tokens / asked),
            output_tokens=round(stats.assistant_tokens.output_tokens / asked),
        )
        terms.sys_tokens = float(mean.total)
        if assistant_prices is not None:
            terms.c_sys = price(mean, assistant_prices)
        elif stats.assistant_cost_usd is not None:
            terms.c_sys = stats.assistant_cost_usd / asked
            terms.recorded = True
    verdicts = stats.cache_hits + stats.cache_misses
    if verdicts:
        terms.hit_rate = stats.cache_hits / verdicts
    if stats.judge_calls:
        per_call = TokenUsage(
            input_tokens=round(stats.input_tokens / stats.judge_calls),
            output_tokens=round(stats.output_tokens / stats.judge_calls),
        )
        per_run = verdicts / asked  # evaluators × judges an answer, after the checks
        terms.judge_tokens = per_call.total * per_run
        if per_call.total == 0:  # an offline judge (keypoints): free
            terms.c_judge = 0.0
        elif judge_prices is not None:
            terms.c_judge = price(per_call, judge_prices) * per_run
        elif stats.cost_usd is not None:
            terms.c_judge = stats.cost_usd / stats.judge_calls * per_run
            terms.recorded = True
    return terms


def percentiles(values: Sequence[float]) -> Percentiles | None:
    """Nearest-rank p50 and p95, None without values."""
    if not values:
        return None
    ordered = sorted(values)

    def rank(q: float) -> float:
        return round(ordered[max(math.ceil(q * len(ordered)) - 1, 0)], 1)

    return Percentiles(p50=rank(0.5), p95=rank(0.95), count=len(ordered))


def performance(stats: RunStats, results: Sequence[ItemResult]) -> None:
    """The assistant's latency and tokens an answer, p50 and p95, into `stats`: shown, never
    gated. From the runs themselves, so shards merged give the whole run's figures."""
    asked = [
        run
        for item in results
        for run in item.run_results
        if not run.rerun and run.error_side != "assistant"
    ]
    stats.latency_ms = percentiles([r.latency_ms for r in asked if r.latency_ms is not None])
    stats.tokens_per_answer = percentiles([float(r.usage.total) for r in asked if r.usage])


def performance_line(stats: RunStats | None, baseline: RunStats | None) -> str | None:
    """`latency p50 1.20 s, p95 3.40 s (baseline 1.10 s, 2.90 s); tokens an answer …`, or None
    when the run recorded neither. Information only: performance is not gated."""
    if stats is None:
        return None
    parts = []
    for name, field, unit in (
        ("latency", "latency_ms", "ms"),
        ("tokens an answer", "tokens_per_answer", ""),
    ):
        mine = getattr(stats, field)
        if mine is None:
            continue
        text = f"{name} p50 {_show(mine.p50, unit)}, p95 {_show(mine.p95, unit)}"
        base = getattr(baseline, field) if baseline is not None else None
        if base is not None:
            text += f" (baseline {_show(base.p50, unit)}, {_show(base.p95, unit)})"
        parts.append(text)
    return "; ".join(parts) if parts else None


def _show(value: float, unit: str) -> str:
    if unit == "ms":
        return f"{value / 1000:.2f} s" if value >= 1000 else f"{value:.0f} ms"
    return f"{value:,.0f}"
