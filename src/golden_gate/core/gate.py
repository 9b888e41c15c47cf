"""The gate: a floor on the Wilson lower bound and a paired sign-flip test against a baseline.

Per item, score = passed runs / counted runs. The floor is on the mean score; the regression
test is an exact paired sign-flip test on score differences (with one run per item, exactly the
sign test). Pure: takes reports, returns a GateResult; no I/O
(docs/architecture.md#the-gate-exactly).

The gate's one decision; its records (verdict.py), the comparison with the baseline
(comparison.py), the tally of a report's items (tally.py) and the power (power.py) are modules
of their own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from golden_gate.core import retrieval, slim
from golden_gate.core.comparison import (
    comparability_warnings,
    compare_tallies,
    dropped_items,
    not_comparable,
)
from golden_gate.core.power import (
    Differences,
    floor_reachable,
    power_note,
    unreachable_floor_message,
)
from golden_gate.core.report import Report, selection_digest
from golden_gate.core.rules import PR_SUFFIX
from golden_gate.core.sign_flip import MONTE_CARLO_DRAWS
from golden_gate.core.slices import SliceProblem, SliceVerdict, gate_slices
from golden_gate.core.slim import ItemColumns, SlimReport
from golden_gate.core.stats import floor_percent
from golden_gate.core.tally import Tally, changed_items
from golden_gate.core.verdict import Comparison, GateResult, GateSettings, Reason

if TYPE_CHECKING:
    from golden_gate.core.calibration import CalibrationReport


def evaluate_gate(
    candidate: Report | SlimReport,
    baseline: Report | SlimReport | None,
    settings: GateSettings | None = None,
    *,
    calibration: CalibrationReport | None = None,
) -> GateResult:
    """The gate's one decision: the floor (on the judge's verdicts, or with `floor-basis =
    human` on what people would say, from `calibration`) and, with a baseline, the paired
    regression test. Every output shows this result; none decides again.

    Runs the judge could not judge are not verdicts; but if counting them as failures would
    fail a gate that passes, the pass rests on what was not seen: `inconclusive` says so.
    """
    settings = settings or GateSettings()
    cand = slim.of(candidate)
    base = slim.of(baseline) if baseline is not None else None
    base_tally = Tally(base.items) if base is not None else None
    missing = _missing_items(cand, base_tally) if base_tally is not None else []
    # Items the pull request dropped are counted in the comparison already (compare_tallies).
    missing = [i for i in missing if i not in dropped_items(cand)]
    share = len(missing) / base_tally.n if missing and base_tally is not None else 0.0
    # Critical means critical: a missing item under critical-tags is never absorbed by the
    # allowance (one skipped or deleted failing test among a hundred would pass unseen).
    critical = _critical_missing(missing, base_tally, settings.critical_tags)
    items = cand.items
    counted_missing = missing if share > MISSING_SHARE else critical
    if counted_missing and base_tally is not None:
        items = _with_missing_failed(items, counted_missing, base_tally)
        cand = SlimReport(cand.header, items)
    # Questions changed since the baseline: the same count for the pessimistic pass below.
    changed = changed_items(cand.items, base.items) if base is not None else None
    result = _evaluate_gate(cand, cand.items, base, base_tally, changed, settings, calibration)
    _gate_retrieval(result, cand, base, settings)
    if missing:
        shown = ", ".join(missing[:MISSING_SHOWN])
        more = f" and {len(missing) - MISSING_SHOWN} more" if len(missing) > MISSING_SHOWN else ""
        counted = (
            "counted as failed runs (more than "
            f"{MISSING_SHARE:.0%} of the baseline's items: a truncated report cannot pass)"
            if share > MISSING_SHARE
            else f"not counted (at most {MISSING_SHARE:.0%} of the baseline's items)"
            if not critical
            else f"{len(critical)} under critical-tags counted as failed runs (a critical item "
            f"is never left out), the rest not counted (at most {MISSING_SHARE:.0%} of the "
            "baseline's items)"
        )
        result.warnings.insert(
            0,
            f"{len(missing)} baseline item(s) missing from this report ({share:.1%} of the "
            f"baseline's {base_tally.n if base_tally else 0}): {shown}{more}; {counted}",
        )
    result.warnings.extend(cand.header.warnings or [])  # what the evaluation itself saw
    cut_short = _cut_short(slim.of(candidate))
    if cut_short:
        result.inconclusive = cut_short
        return result
    if base is not None:
        unrelated = not_comparable(cand, base, result, changed)
        if unrelated is not None:
            result.inconclusive = unrelated
            return result
    if result.passed and not result.inconclusive and any(cand.items.errors):
        worst = cand.items.with_errors_counted()
        pessimistic = _evaluate_gate(
            cand, worst, base, base_tally, changed, settings, calibration, with_power=False
        )
        if not pessimistic.passed:
            result.inconclusive = (
                f"{_no_verdict(cand)}, and counted as failures they would fail the gate "
                f"({pessimistic.reasons[0].message}): {_again(cand)}"
            )
    return result


def _no_verdict(cand: SlimReport) -> str:
    """The runs counted apart, by what failed on them: the judge or a hand-written check."""
    total = sum(cand.items.errors)
    checks = min(total, cand.header.stats.check_errors if cand.header.stats else 0)
    judge = total - checks
    if not checks:
        return f"{total} run(s) got no verdict (the judge failed on them)"
    if not judge:
        return f"{total} run(s) got no verdict (a hand-written check failed to run on them)"
    return (
        f"{total} run(s) got no verdict (the judge failed on {judge}, a hand-written check "
        f"failed to run on {checks})"
    )


def _again(cand: SlimReport) -> str:
    checks = cand.header.stats.check_errors if cand.header.stats else 0
    fix = "make the check run (fix it, or raise check-timeout)"
    if not checks:
        return "judge them again"
    return (
        f"{fix} and run them again"
        if checks >= sum(cand.items.errors)
        else (f"judge them again, and {fix}")
    )


def _gate_retrieval(
    result: GateResult, cand: SlimReport, base: SlimReport | None, settings: GateSettings
) -> None:
    """The retrieval layer's floor and paired test (core/retrieval.py), as reasons of their own:
    retrieval that got worse fails the gate even when every answer passes."""
    items = cand.items
    clusters = {**items.clusters, **(base.items.clusters if base is not None else {})}
    found = retrieval.gate(
        cand.header.retrieval,
        base.header.retrieval if base is not None else None,
        tags=dict(zip(items.ids, items.tags, strict=True)),
        clusters=clusters,
        own=items.own,
        k=settings.retrieval_k,
        floor=settings.retrieval_floor,
        alpha=settings.alpha,
        min_drop=settings.min_drop,
        confidence=settings.confidence,
    )
    if found is None:
        return
    result.retrieval = found
    if cand.header.retrieval is None and base is not None and base.header.retrieval is not None:
        # Retrieval the baseline measured and this run did not: a set-up that lost its
        # sources-path should be seen, though it cannot fail the gate.
        result.warnings.append(
            "the baseline measured retrieval and this run did not: set `sources-path` to "
            "where the response lists its sources"
        )
    k = found.k
    if found.below_floor and found.overall is not None and found.lower_bound is not None:
        result.reasons.append(
            Reason(
                code="retrieval-below-floor",
                message=f"retrieval below the floor: hit@{k} lower bound "
                f"{found.lower_bound:.3f} < {found.floor:.2f} (hit@{k} "
                f"{found.overall.hit_rate:.1%} over {found.overall.items} items)",
            )
        )
    compared = found.comparison
    if compared is not None and compared.significant:
        result.reasons.append(
            Reason(
                code="retrieval-regression",
                message=f"significant retrieval regression: hit@{k} fell for "
                f"{len(compared.fell)} item(s), rose for {len(compared.rose)}, p = "
                f"{compared.p_value:.4f} < {settings.alpha:g}, net drop {compared.net_drop:.1%}",
            )
        )
    if result.reasons:
        result.verdict = "failed"


# Baseline items a candidate report leaves out: above this share of the baseline's counted
# items they count as failed runs (a report cut short cannot pass); at or below it, a warning.
MISSING_SHARE = 0.02
MISSING_SHOWN = 10


def _cut_short(candidate: SlimReport) -> str | None:
    """Why the report is not all its evaluation selected, when it records its selection."""
    header = candidate.header
    dataset = header.dataset
    if dataset is None or not dataset.selected:
        return None
    present = [*candidate.items.ids, *(header.not_asked or [])]
    if selection_digest(present) == dataset.selected:
        return None
    selected = f"the {dataset.items} items" if dataset.items is not None else "the items"
    return (
        f"the report holds {len(candidate.items)} item(s)"
        + (f" and {len(header.not_asked)} not asked" if header.not_asked else "")
        + f", not {selected} its evaluation selected: it was cut short or edited; "
        "evaluate again"
    )


def _missing_items(candidate: SlimReport, base_tally: Tally) -> list[str]:
    """Baseline items (counted there) absent from the candidate report altogether, among the
    items its selection covers: with tags, the baseline items carrying one of them; none when
    the candidate is one shard of a split evaluation."""
    dataset = candidate.header.dataset
    if (dataset is not None and dataset.shard) or not len(candidate.items):
        return []  # a shard holds part of the items; an empty report is "no results"
    # Items an interrupted evaluation never asked are said by the report (incomplete).
    present = set(candidate.items.ids).union(candidate.header.not_asked or ())
    tags = set(dataset.tags) if dataset is not None and dataset.tags else None
    base = base_tally.items
    counted = set(base_tally.counted_ids)
    return sorted(
        i
        for i, item_tags in zip(base.ids, base.tags, strict=True)
        if i in counted and i not in present and (tags is None or tags.intersection(item_tags))
    )


def _critical_missing(
    missing: list[str], base: Tally | None, critical_tags: Sequence[str]
) -> list[str]:
    """The missing items the baseline tags with a critical tag."""
    wanted = {t for t in critical_tags if t}
    if not missing or base is None or not wanted:
        return []
    tags = dict(zip(base.items.ids, base.items.tags, strict=True))
    return [i for i in missing if wanted.intersection(tags[i])]


def _with_missing_failed(items: ItemColumns, missing: list[str], base: Tally) -> ItemColumns:
    """The candidate's items and each missing one as failed runs (as many as the baseline's)."""
    runs = base.counted
    tags = dict(zip(base.items.ids, base.items.tags, strict=True))
    return ItemColumns(
        ids=[*items.ids, *missing],
        tags=[*items.tags, *(tags[i] for i in missing)],
        passes=[*items.passes, *([0] * len(missing))],
        runs=[*items.runs, *(runs[i][1] for i in missing)],
        errors=[*items.errors, *([0] * len(missing))],
        unanswered=[*items.unanswered, *([0] * len(missing))],
        hashes=[*items.hashes, *([None] * len(missing))],
        clusters=items.clusters,
        own=items.own,
    )


def _evaluate_gate(
    candidate: SlimReport,
    items: ItemColumns,
    baseline: SlimReport | None,
    base_tally: Tally | None,
    changed: int | None,
    settings: GateSettings,
    calibration: CalibrationReport | None,
    *,
    with_power: bool = True,
) -> GateResult:
    """The gate on `items` (the candidate's, or them with unjudged runs counted as failures;
    only its verdict is read then, so `with_power` False skips the power statement), its
    floor on the basis the settings name."""
    result = _judge_basis_gate(
        candidate, items, baseline, base_tally, changed, settings, with_power=with_power
    )
    if calibration is not None or settings.floor_basis == "human":
        from golden_gate.core import human_basis  # scipy, only for a gate with a calibration

        human_basis.apply(result, SlimReport(candidate.header, items), calibration)
    return result


def _judge_basis_gate(
    candidate: SlimReport,
    items: ItemColumns,
    baseline: SlimReport | None,
    base_tally: Tally | None,
    changed: int | None,
    settings: GateSettings,
    *,
    with_power: bool,
) -> GateResult:
    tally = Tally(items)
    n, k = tally.n, tally.k
    errored = sorted(tally.errored)
    unstable = sorted(tally.unstable)
    if n == 0:
        message = (
            "no results: the report has no items"
            if not len(items)
            else f"no results: none of the {len(items)} items got a verdict"
        )
        return GateResult(
            verdict="failed",
            reasons=[Reason(code="no-results", message=message)],
            settings=settings,
            n=0,
            k=0,
            errored=errored,
        )

    reasons: list[Reason] = []
    warnings: list[str] = []
    notes: list[str] = []
    pass_rate = tally.score
    # The base branch's clusters rule, as in the paired test.
    clusters = {**tally.clusters, **(base_tally.clusters if base_tally is not None else {})}
    bound = tally.floor_bound(settings.confidence, clusters)
    lower = bound.lower
    if lower < settings.floor:
        reasons.append(
            Reason(
                code="below-floor",
                message=f"below the floor: lower bound {lower:.3f} < {settings.floor:.2f} "
                f"({_rate_text(tally)} passed)",
            )
        )
    if tally.own and tally.base_n:
        # The pull request's own items may only make the floor stricter, never carry it.
        base_lower = tally.floor_bound(settings.confidence, clusters, base_only=True).lower
        if base_lower < settings.floor <= lower:
            reasons.append(
                Reason(
                    code="below-floor",
                    message=f"below the floor on the base branch's items: lower bound "
                    f"{base_lower:.3f} < {settings.floor:.2f} over {tally.base_n} items (the "
                    f"pull request's {len(tally.own)} own items are not counted for this)",
                )
            )
    if not settings.floor_on:
        only = "only the paired test can fail it" if baseline is not None else "nothing can fail it"
        notes.append(f"floor 0: the floor is off for this gate; {only}.")
    if not settings.paired_test_on and baseline is not None:
        notes.append("alpha 0: the paired test is off for this gate; only the floor can fail it.")
    if not floor_reachable(n, settings):
        notes.append(unreachable_floor_message(n, settings) + ".")
    if bound.clusters:
        notes.append(
            f"the floor's bound counts the {bound.clusters} clusters' correlation: "
            f"{n} items weigh as {bound.effective_items:.0f} independent ones (design effect "
            f"{bound.design_effect:.2f}, then the t correction for the clusters it is estimated "
            "from)."
        )
    notes.append(
        f"{n} items can only show the assistant is unlikely to pass fewer than "
        f"{floor_percent(lower)} of such questions ({settings.confidence:.0%} confidence); "
        "a green check is not proof of quality."
    )
    if tally.unanswered:
        notes.append(
            f"{tally.unanswered} run(s) the assistant could not answer count as failed runs."
        )

    comparison = None
    spread: Differences | None = None
    if baseline is None or base_tally is None:
        notes.append("no baseline: only the floor applies.")
    else:
        tallies = (tally, base_tally)
        warnings.extend(comparability_warnings(candidate, baseline, tallies, changed))
        if warnings and settings.require_comparable:
            reasons.append(
                Reason(code="not-comparable", message="not comparable with the baseline")
            )
        comparison, spread = compare_tallies(*tallies, settings, dropped_items(candidate))
        unpaired = _named_yet_unpaired(tally, base_tally) if comparison.shared == 0 else 0
        if unpaired:
            reasons.append(
                Reason(
                    code="not-comparable",
                    message=f"nothing pairs with the baseline, though it names {unpaired} of "
                    "this run's items: their definitions differ from the baseline's record, so "
                    "the regression test cannot run",
                )
            )
        if comparison.dropped:
            notes.append(
                f"{len(comparison.dropped)} baseline item(s) this run did not evaluate as the "
                "base branch defines them (dropped) count as failed items in the comparison."
            )
        if comparison.significant:
            reasons.append(
                Reason(
                    code="significant-regression",
                    message=f"significant regression: {comparison.b} regressed vs "
                    f"{comparison.c} improved, p = {comparison.p_value:.4f} < "
                    f"{settings.alpha:g}, {comparison.net_text}",
                )
            )
        elif comparison.p_value < settings.alpha:
            notes.append(
                f"the drop is real (p = {comparison.p_value:.4f} < {settings.alpha:g}) but small: "
                f"net drop {comparison.net_drop:.1%} is not above min-drop "
                f"{settings.min_drop:.1%}, so the gate passes."
            )
        if comparison.shared == 0:
            spread = None
            notes.append("no items are shared with the baseline: the regression test did not run.")
        elif comparison.underpowered and comparison.units == 0:
            notes.append(
                "no shared item changed outcome since the baseline: the paired test had nothing "
                "to weigh."
            )
        elif comparison.underpowered:
            changed_units = (
                "1 item or cluster"
                if comparison.units == 1
                else f"{comparison.units} items or clusters"
            )
            notes.append(
                f"only {changed_units} changed outcome; with so few the test can never reach "
                f"significance at alpha {settings.alpha:g}, so 'no regression' is not evidence "
                "of none."
            )
        if comparison.method == "Monte-Carlo sign-flip" and comparison.p_value_error:
            notes.append(
                f"p was estimated by {MONTE_CARLO_DRAWS:,} seeded random sign flips "
                f"(standard error {comparison.p_value_error:.4f})."
            )
    slices: list[SliceVerdict] = []
    if settings.sliced:
        slices, problems = _slices(
            items, base_tally, settings, comparison, dropped_items(candidate)
        )
        reasons.extend(Reason(code=p.code, message=p.message) for p in problems)
        notes.extend(
            f"tag '{s.tag}': not enough items for a verdict of its own ({s.why})."
            for s in slices
            if s.verdict == "not enough items"
        )
    power = None
    if with_power:
        power = power_note(tally, base_tally, spread, settings, comparison)
        paired = comparison is not None and comparison.shared > 0
        notes.append(power.sentence(comparison.shared if paired and comparison else n))
    return GateResult(
        verdict="failed" if reasons else "passed",
        reasons=reasons,
        settings=settings,
        n=n,
        k=k,
        score_sum=tally.score_sum,
        pass_rate=pass_rate,
        lower_bound=lower,
        comparison=comparison,
        power=power,
        warnings=warnings,
        notes=notes,
        errored=errored,
        unanswered=tally.unanswered,
        unstable=unstable,
        slices=slices,
    )


def _slices(
    items: ItemColumns,
    base_tally: Tally | None,
    settings: GateSettings,
    comparison: Comparison | None,
    dropped: frozenset[str],
) -> tuple[list[SliceVerdict], list[SliceProblem]]:
    """The sliced tags' verdicts, each slice's paired test the same as the whole gate's."""

    def compare(cand: Tally, base: Tally) -> tuple[float, float, int, list[str]]:
        result, _ = compare_tallies(cand, base, settings, dropped)
        return result.p_value, result.net_drop, result.shared, result.regressions

    return gate_slices(
        items,
        base_tally.items if base_tally is not None else None,
        floor_by_tag=settings.floor_by_tag,
        critical_tags=settings.critical_tags,
        min_items=settings.min_slice_items,
        confidence=settings.confidence,
        alpha=settings.alpha,
        min_drop=settings.min_drop,
        compare=compare,
        regressed=comparison.regressions if comparison is not None else (),
    )


def _named_yet_unpaired(tally: Tally, base_tally: Tally) -> int:
    """The run's counted items (the pull request's own too, by the id they copy) that the
    baseline also counts: with none paired, a pass would rest on no comparison at all."""
    named = {i.removesuffix(PR_SUFFIX) for i in tally.counted_ids}
    return len(named.intersection(base_tally.counted_ids))


def _rate_text(tally: Tally) -> str:
    if abs(tally.score_sum - tally.k) > 1e-9:
        return f"{tally.score:.1%} of runs"
    return f"{tally.k}/{tally.n}"
