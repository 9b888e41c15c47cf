"""The comparison with the baseline: the paired sign-flip test on per-item scores, whether the
yardstick moved (judge, prompt, golden set, run settings), whether the baseline can be compared
at all, and whether the changes look clustered. Pure; the decision is core/gate.py."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection
from fractions import Fraction
from itertools import compress
from operator import and_, gt, lt, ne, or_

from golden_gate import __version__
from golden_gate.core import judges, slim
from golden_gate.core.power import Differences
from golden_gate.core.report import Report
from golden_gate.core.sign_flip import paired_sign_flip_test
from golden_gate.core.slim import SlimReport
from golden_gate.core.stats import design_effect
from golden_gate.core.tally import Tally, changed_items, tally_of
from golden_gate.core.verdict import Comparison, GateResult, GateSettings


def comparability_warnings(
    candidate: Report | SlimReport,
    baseline: Report | SlimReport,
    tallies: tuple[Tally, Tally] | None = None,
    changed: int | None = None,
) -> list[str]:
    cand_view, base_view = slim.of(candidate), slim.of(baseline)
    candidate, baseline = cand_view.header, base_view.header
    warnings = []
    if candidate.judge != baseline.judge:
        warnings.append(
            f"the yardstick moved: the baseline was judged by '{baseline.judge}', "
            f"this run by '{candidate.judge}'"
        )
    if (
        candidate.judge_prompt_hash
        and baseline.judge_prompt_hash
        and candidate.judge_prompt_hash != baseline.judge_prompt_hash
    ):
        warnings.append("the yardstick moved: the judge prompt differs from the baseline's")
    if _other_golden_set(candidate, baseline) and candidate.rule_changes is not None:
        # A pull request that edits the golden set: its items are shown as its own (rules.py).
        warnings.append("the yardstick moved: the golden set differs from the baseline's")
    cand_tally, base_tally = tallies or (Tally(cand_view.items), Tally(base_view.items))
    if changed is None:
        changed = changed_items(cand_view.items, base_view.items)
    if changed:
        warnings.append(
            f"the yardstick moved: {changed} shared item(s) changed question or reference "
            "since the baseline"
        )
    if candidate.tier != baseline.tier:
        warnings.append(
            f"the yardstick moved: this run used the {candidate.tier} tier, "
            f"the baseline the {baseline.tier} tier"
        )
    warnings.extend(_run_settings_warnings(candidate, baseline, cand_tally, base_tally))
    warnings.extend(judges.moved(candidate.judges, baseline.judges))
    return warnings


_SETTING_NAMES = {
    "runs": "runs per item",
    "reruns_counted": "counting re-runs of failures",
    "unanswered_counts_as_failure": "counting unanswered runs as failures",
    "judge_temperature": "judge temperature",
    "checks_hash": "deterministic checks (refusal phrases, forbidden patterns)",
    "evaluators": "evaluators",
    "judge_panel": "judge panel rules",
}


def _run_settings_warnings(
    candidate: Report, baseline: Report, cand_tally: Tally, base_tally: Tally
) -> list[str]:
    """Settings that change what a pass means, recorded by both or inferred from the results."""
    cand, base = candidate.run_settings, baseline.run_settings
    if cand is not None and base is not None:
        return [
            f"the yardstick moved: {label} differ (baseline {getattr(base, name)}, "
            f"this run {getattr(cand, name)})"
            for name, label in _SETTING_NAMES.items()
            if getattr(base, name) is not None
            and getattr(cand, name) is not None
            and getattr(base, name) != getattr(cand, name)
            and not (name == "runs" and getattr(base, name) > getattr(cand, name))
        ]
    warnings = []
    if base is None and baseline.format is not None and baseline.tool_version is not None:
        warnings.append(_no_run_settings(baseline.tool_version))
    # A per-item score means the same at any number of runs; a baseline with more of them (as
    # `mode: baseline` makes it) is only a steadier sample of it.
    if cand_tally.runs and base_tally.runs and cand_tally.typical_runs > base_tally.typical_runs:
        warnings.append(
            f"the yardstick moved: the baseline has {base_tally.typical_runs} run(s) per item, "
            f"this run {cand_tally.typical_runs}"
        )
    return warnings


def _version(text: str) -> tuple[int, ...] | None:
    """`0.2.0` as (0, 2, 0); None for what is no release number (`0.3.0rc1` is 0.3.0)."""
    found = re.match(r"(?:golden-gate\s+)?v?(\d+(?:\.\d+)*)", text.strip())
    return tuple(int(part) for part in found.group(1).split(".")) if found else None


def _no_run_settings(made_by: str) -> str:
    """The warning for a baseline that records no run settings this version can read: one
    from a newer release records them where this one does not look, one from an older
    release counted re-runs of failures."""
    made, this = _version(made_by), _version(__version__)
    if made is not None and this is not None and made > this:
        return (
            f"the baseline was made by a newer golden-gate ({made_by}; this is {__version__}) "
            "and records no run settings this version can read: they were assumed to be this "
            "run's; update golden-gate to compare them"
        )
    return (
        f"the yardstick moved: the baseline was made by golden-gate {made_by}, which counted "
        "re-runs of failures and left unanswered runs out; make it again"
    )


def compare(
    candidate: Report | SlimReport, baseline: Report | SlimReport, settings: GateSettings
) -> Comparison:
    """Pair items counted in both reports: the paired sign-flip test on per-item scores."""
    dropped = dropped_items(slim.of(candidate))
    return compare_tallies(tally_of(candidate), tally_of(baseline), settings, dropped)[0]


def dropped_items(candidate: SlimReport) -> frozenset[str]:
    changes = candidate.header.rule_changes
    return frozenset(changes.dropped) if changes is not None else frozenset()


def compare_tallies(
    cand_tally: Tally,
    base_tally: Tally,
    settings: GateSettings,
    dropped: frozenset[str] = frozenset(),
) -> tuple[Comparison, Differences]:
    """The comparison, and what the power statement needs of the differences.

    `dropped`: baseline items the run did not evaluate, each paired as a failed item."""
    cand_items, base_items = cand_tally.items, base_tally.items
    shared: Collection[str]
    counted_dropped: list[str] = []
    if not cand_tally.own and not dropped and cand_items.ids == base_items.ids:
        # The same items in the same order (one golden set, run twice): paired by position,
        # in C, with no lookup an item. Shared: counted on both sides.
        ids = cand_items.ids
        cand_counted = list(map(bool, cand_items.runs))
        base_counted = list(map(bool, base_items.runs))
        both = list(map(and_, cand_counted, base_counted))
        shared = list(compress(ids, both))
        differ = map(
            or_,
            map(ne, cand_items.passes, base_items.passes),
            map(ne, cand_items.runs, base_items.runs),
        )
        cp, cr, bp, br = cand_items.passes, cand_items.runs, base_items.passes, base_items.runs
        changed = sorted(
            (ids[i], (cp[i], cr[i], bp[i], br[i]))
            for i in compress(range(len(ids)), map(and_, both, differ))
        )
        only_in_candidate = sorted(compress(ids, map(gt, cand_counted, base_counted)))
        only_in_baseline = sorted(compress(ids, map(lt, cand_counted, base_counted)))
    else:
        cand, base = cand_tally.counted, base_tally.counted
        # The pull request's own items (new, or reworded copies) are never paired: a re-added
        # id could otherwise offset a real regression with an easy question.
        shared = (cand.keys() - cand_tally.own) & base.keys()
        # A dropped item counts as a failed one (no run passed): its drop is the regression.
        counted_dropped = sorted(i for i in dropped if i in base and i not in shared)
        changed = sorted(
            [(i, (*cand[i], *base[i])) for i in shared if cand[i] != base[i]]
            + [(i, (0, 1, *base[i])) for i in counted_dropped]
        )
        shared = shared | set(counted_dropped)
        only_in_candidate = sorted(cand.keys() - base.keys())
        only_in_baseline = sorted(base.keys() - cand.keys() - dropped)
    shared_count = len(shared)
    fractions: dict[tuple[int, int, int, int], Fraction] = {}  # few distinct (pc, rc, pb, rb)
    totals: dict[str, Fraction] = {}
    regressions: list[str] = []
    improvements: list[str] = []
    # The base branch's clusters rule (a pull request could split a cluster to look stronger).
    clusters = {**cand_tally.clusters, **base_tally.clusters}
    # Only items whose (passes, runs) differ can differ in score, taken in the order of ids.
    for item_id, key in changed:  # key: passes and runs, the candidate's then the baseline's
        d = fractions.get(key)
        if d is None:
            d = fractions[key] = Fraction(key[0], key[1]) - Fraction(key[2], key[3])
        if d == 0:
            continue
        (regressions if d < 0 else improvements).append(item_id)
        unit = clusters.get(item_id)
        unit = item_id if unit is None else "\0cluster:" + unit
        before = totals.get(unit)
        totals[unit] = d if before is None else before + d
    test = paired_sign_flip_test(list(totals.values()))
    # Exact sums, over the few distinct differences rather than every unit.
    distinct = Counter(totals.values())
    total = sum((d * n for d, n in distinct.items()), Fraction(0))
    net_drop = float(-total / shared_count) if shared_count else 0.0
    # What the power statement models the items from: the mean squared per-item difference
    # (items, not clusters: a cluster's sum is not one item's), and the clusters' design effect.
    squares = 0.0
    deff = 1.0
    if shared_count:
        by_item = {(p, r, q, s): Fraction(p, r) - Fraction(q, s) for _, (p, r, q, s) in changed}
        item_squares = Counter(by_item[key] ** 2 for _, key in changed)
        squares = float(sum((d * k for d, k in item_squares.items()), Fraction(0)) / shared_count)
        if clusters:
            per_item = {item_id: float(by_item[key]) for item_id, key in changed}
            deff = design_effect(
                [per_item.get(i, 0.0) for i in shared], [clusters.get(i) for i in shared]
            )
    shared_clusters = {clusters[i] for i in shared if i in clusters} if clusters else set()
    units = len(shared_clusters) + (
        sum(1 for i in shared if i not in clusters) if clusters else shared_count
    )
    comparison = Comparison(
        shared=shared_count,
        regressions=regressions,
        improvements=improvements,
        p_value=test.p_value,
        p_value_error=test.error,
        method=test.method,
        units=test.units,
        clusters=len(shared_clusters) if shared_clusters else None,
        independent_units=units,
        net_drop=net_drop,
        significant=test.p_value < settings.alpha and net_drop > settings.min_drop,
        underpowered=settings.paired_test_on and test.min_possible_p >= settings.alpha,
        only_in_candidate=only_in_candidate,
        only_in_baseline=only_in_baseline,
        dropped=counted_dropped,
    )
    return comparison, Differences(mean_square=squares, design_effect=deff)


# Fewer of the run's items than this share pairing with the baseline (same id, same question
# and reference): the comparison would rest on a few items, so there is none (exit 3).
MIN_SHARED_SHARE = 0.5
REGENERATE = (
    "regenerate the baseline from this golden set and selection (golden-gate eval, or the "
    "Action's baseline mode)"
)


def _other_golden_set(candidate: Report | SlimReport, baseline: Report | SlimReport) -> bool:
    """Both record the fingerprint of one whole selection by the same tags, and they differ.
    Selections by other tags (a full-set baseline, a smoke-subset run: the usual pair) have
    fingerprints that cannot be compared; their items are, one by one, by their recorded
    question-and-reference hashes (`not_comparable`'s share of items that pair)."""
    cand, base = slim.of(candidate).header.dataset, slim.of(baseline).header.dataset
    return (
        cand is not None
        and base is not None
        and bool(cand.fingerprint and base.fingerprint)
        and sorted(cand.tags) == sorted(base.tags)
        and cand.shard is None
        and base.shard is None
        and cand.fingerprint != base.fingerprint
    )


def not_comparable(
    candidate: Report | SlimReport,
    baseline: Report | SlimReport,
    result: GateResult,
    changed: int | None,
) -> str | None:
    """Why the baseline cannot be compared with this run at all (exit 3, not a warning): it
    pairs with too few of the run's items (an item pairs by id and, where both record one, the
    same question-and-reference hash, whatever tags selected it), or (with no pull request
    editing the golden set) the same tags selected another golden set."""
    cand = slim.of(candidate)
    comparison = result.comparison
    if comparison is None:
        return None
    own = cand.header.rule_changes is not None
    if _other_golden_set(cand, baseline) and not own:
        return (
            "not comparable with the baseline: it was made from another golden set (the same "
            f"tags select items with another dataset fingerprint); {REGENERATE}"
        )
    run_items = result.n - len(tally_of(cand).own)
    same = comparison.shared - len(comparison.dropped) - (changed or 0)
    if run_items > 0 and same < MIN_SHARED_SHARE * run_items:
        return (
            f"not comparable with the baseline: only {max(same, 0)} of this run's {run_items} "
            f"items pair with it (same id, question and reference; at least "
            f"{MIN_SHARED_SHARE:.0%} must); {REGENERATE}"
        )
    return None


# Differences whose design effect by page reaches this (over at least PAGES_FOR_WARNING pages
# holding two or more shared items) are said to look clustered: bench/soundness.py measures
# how often it is said of independent and of clustered questions.
CLUSTERED_DEFF = 2.0
PAGES_FOR_WARNING = 8


def undeclared_clusters(
    candidate: Report | SlimReport, baseline: Report | SlimReport, pages: dict[str, str]
) -> str | None:
    """A warning when neither report declares clusters but the per-item differences with the
    baseline look clustered by page (`pages`: item id → its first reference page)."""
    cand, base = tally_of(candidate), tally_of(baseline)
    if cand.clusters or base.clusters:
        return None
    counted_c, counted_b = cand.counted, base.counted
    shared = sorted(counted_c.keys() & counted_b.keys() & pages.keys())
    groups = Counter(pages[i] for i in shared)
    if sum(1 for size in groups.values() if size > 1) < PAGES_FOR_WARNING:
        return None
    differences = [
        counted_c[i][0] / counted_c[i][1] - counted_b[i][0] / counted_b[i][1] for i in shared
    ]
    deff = design_effect(differences, [pages[i] for i in shared])
    if deff < CLUSTERED_DEFF:
        return None
    return (
        f"the changes since the baseline look clustered by page (design effect {deff:.1f} over "
        f"{len(groups)} pages): questions about one page are not independent evidence, so the "
        "paired test may false-alarm; give golden items a `cluster` (their page) to count each "
        "page once"
    )
