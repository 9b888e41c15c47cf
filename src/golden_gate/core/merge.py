"""Merging shard reports from a matrix into the report one unsharded run would have written."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from golden_gate.core import retrieval
from golden_gate.core.canaries import Canaries, check
from golden_gate.core.cost import performance
from golden_gate.core.golden import Shard
from golden_gate.core.item_result import ItemResult, TokenUsage
from golden_gate.core.report import (
    DatasetInfo,
    JudgeIdentity,
    Report,
    RetrievalRecord,
    RunStats,
    add_digests,
    new_report,
)
from golden_gate.errors import InputError


def _shard(report: Report, source: str) -> Shard:
    text = report.dataset.shard if report.dataset else None
    if not text:
        raise InputError(f"{source}: not a shard report (no dataset.shard)")
    return Shard.parse(text, where=f"{source}: dataset.shard")


def _agree(
    reports: Sequence[tuple[str, Report]], what: str, value: Callable[[Report], object]
) -> None:
    first_source, first = reports[0]
    for source, report in reports[1:]:
        if value(report) != value(first):
            raise InputError(
                f"{source}: its {what} ({value(report)!r}) differs from {first_source}'s "
                f"({value(first)!r}); shards of one evaluation must agree"
            )


def _sum_stats(reports: Sequence[Report]) -> RunStats:
    stats = [r.stats for r in reports if r.stats is not None]
    total = RunStats()
    summed = ("judge_calls", "judge_attempts", "cache_hits", "cache_misses", "assistant_calls")
    for field in (*summed, "judge_timeouts", "check_errors"):
        setattr(total, field, sum(getattr(s, field) for s in stats))
    total.input_tokens = sum(s.input_tokens for s in stats)
    total.output_tokens = sum(s.output_tokens for s in stats)
    costs = [s.cost_usd for s in stats if s.cost_usd is not None]
    total.cost_usd = sum(costs) if costs else None
    elapsed = [s.elapsed_s for s in stats if s.elapsed_s is not None]
    total.elapsed_s = max(elapsed) if elapsed else None  # shards run side by side
    total.budget_exhausted = any(s.budget_exhausted for s in stats)
    # The assistant's own tokens and their cost (usage-path): what `plan --cost` reads.
    used = [s.assistant_tokens for s in stats if s.assistant_tokens is not None]
    if used:
        total.assistant_tokens = TokenUsage(
            input_tokens=sum(u.input_tokens for u in used),
            output_tokens=sum(u.output_tokens for u in used),
        )
    spent = [s.assistant_cost_usd for s in stats if s.assistant_cost_usd is not None]
    total.assistant_cost_usd = round(sum(spent), 6) if spent else None
    performance(total, [item for r in reports for item in r.results])
    return total


def merge_reports(reports: Sequence[tuple[str, Report]]) -> Report:
    """Refuse shards that disagree, are missing or duplicated, or share an item; then merge."""
    if not reports:
        raise InputError("no shard reports to merge")
    shards = [(_shard(report, source), source) for source, report in reports]
    counts = {shard.count for shard, _ in shards}
    if len(counts) != 1:
        raise InputError(f"the shards disagree on their number: {sorted(counts)}")
    count = counts.pop()
    seen: dict[int, str] = {}
    for shard, source in shards:
        if shard.index in seen:
            raise InputError(f"{source}: shard {shard} is duplicated (also {seen[shard.index]})")
        seen[shard.index] = source
    missing = sorted(set(range(1, count + 1)) - seen.keys())
    if missing:
        raise InputError(
            f"shard(s) {', '.join(f'{i}/{count}' for i in missing)} missing from the reports"
        )
    _agree(reports, "golden set", lambda r: r.dataset.fingerprint if r.dataset else None)
    _agree(reports, "judge", lambda r: r.judge)
    _agree(reports, "judge prompt", lambda r: r.judge_prompt_hash)
    _agree(reports, "tier", lambda r: r.tier)
    _agree(reports, "run settings", lambda r: r.run_settings)
    owner: dict[str, str] = {}
    results = []
    for source, report in sorted(reports, key=lambda pair: _shard(pair[1], pair[0]).index):
        for item in report.results:
            if item.id in owner:
                raise InputError(f"{source}: item '{item.id}' is also in {owner[item.id]}")
            owner[item.id] = source
            results.append(item)
    first = reports[0][1]
    dataset = first.dataset or DatasetInfo()
    incomplete = [f"{s}: {r.incomplete_reason}" for s, r in reports if not r.complete]
    # The shards' selections add up to the whole one's (when every shard recorded its own).
    digests = [r.dataset.selected if r.dataset else None for _, r in reports]
    selected = add_digests(d for d in digests if d) if all(digests) else None
    return new_report(
        judge=first.judge,
        judge_prompt_hash=first.judge_prompt_hash,
        tier=first.tier,
        results=results,
        dataset=dataset.model_copy(
            update={"shard": None, "items": len(results), "selected": selected}
        ),
        assistant=first.assistant,
        run_settings=first.run_settings,
        rule_changes=first.rule_changes,
        stats=_sum_stats([r for _, r in reports]),
        warnings=[f"{s}: {w}" for s, r in reports for w in r.warnings or []] or None,
        complete=not incomplete,
        incomplete_reason="; ".join(incomplete) or None,
        not_asked=[i for _, r in reports for i in r.not_asked or []] or None,
        canaries=_merged_canaries([r for _, r in reports]),
        judges=_merged_judges([r for _, r in reports]),
        retrieval=_merged_retrieval([r for _, r in reports], results),
        shards=count,
    )


def _merged_retrieval(
    reports: list[Report], results: Sequence[ItemResult]
) -> RetrievalRecord | None:
    """Every shard's items' ranks, summarised again over them all."""
    found = [r.retrieval for r in reports if r.retrieval is not None]
    if not found:
        return None
    merged = RetrievalRecord(
        k=found[0].k,
        items={i: item for record in found for i, item in record.items.items()},
        without_sources=[i for record in found for i in record.without_sources],
    )
    retrieval.summarise(merged, {r.id: r.tags for r in results})
    return merged


def _merged_canaries(reports: list[Report]) -> Canaries | None:
    """Every shard's probes (each shard derives its own from its items), checked together."""
    found = [r.canaries for r in reports if r.canaries is not None]
    if not found:
        return None
    probes = [p for c in found for p in c.probes]
    return Canaries(items=found[0].items, checks=check(probes), probes=probes)


def _merged_judges(reports: list[Report]) -> list[JudgeIdentity] | None:
    """Per judge name, the models that answered in any shard."""
    merged: dict[str, JudgeIdentity] = {}
    for report in reports:
        for judge in report.judges or []:
            known = merged.get(judge.judge)
            if known is None:
                merged[judge.judge] = judge.model_copy()
                continue
            served = sorted({*known.served_models, *judge.served_models})
            merged[judge.judge] = known.model_copy(update={"served_models": served})
    return list(merged.values()) or None


def shard_report_path(path: Path, shard: Shard) -> Path:
    """`report.json` → `report-shard-2-of-4.json`, beside it."""
    return path.with_name(f"{path.stem}-shard-{shard.index}-of-{shard.count}{path.suffix}")
