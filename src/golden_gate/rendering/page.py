"""The report page: one self-contained HTML file a reviewer opens in a browser (`golden-gate
view`, the Action's `html-report`).

Nothing untrusted is in the HTML itself: the page is a fixed template (`templates/page/`) with
the results embedded as JSON in a `<script type="application/json">` block, every `<`, `>`, `&`
and line separator in it written as a JSON escape, so no string can close the block. The
page's own script (hashed into a strict Content-Security-Policy, with Trusted Types required so
no HTML sink can take a string) builds the table with `textContent` only.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

from golden_gate import redaction, surrogates
from golden_gate.core import retrieval
from golden_gate.core.item_result import (
    EvaluatorOutcome,
    ItemResult,
    RunResult,
    ToolCall,
    counts,
)
from golden_gate.core.report import Report, RetrievalFigures, RetrievalItem, RetrievalRecord
from golden_gate.core.verdict import GateResult
from golden_gate.files import write_result
from golden_gate.rendering.charts import TrendPoint
from golden_gate.rendering.environment import templates_dir

# Long answers stay whole up to here (a reviewer reads them); beyond, the page would grow
# without bound with a runaway answer.
TEXT_LIMIT = 20_000
_EXTRA_LIMIT = 4_000
# Tool calls, turns and expected pages listed per run or item (the report bounds them too).
_MAX_LISTED = 50
# A character that could end the data block or a JavaScript string, as a JSON escape.
_JSON_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def _text(value: str | None, limit: int = TEXT_LIMIT) -> str | None:
    if value is None:
        return None
    return value if len(value) <= limit else value[:limit] + f" … [{len(value) - limit} more]"


def _run(run: RunResult, *, with_answer: bool) -> dict[str, Any]:
    record: dict[str, Any] = {"st": run.status}
    if run.rerun:
        record["rerun"] = True
    if with_answer and run.answer is not None:
        record["a"] = _text(run.answer)
    if run.checks:
        record["ch"] = [[c.name, c.passed, _text(c.reason, 2000)] for c in run.checks]
    if run.evaluations:
        record["ev"] = [
            [
                e.evaluator,
                e.status,
                _text(e.comment, 4000),
                e.score,
                [[v.judge, v.passed, _text(v.comment, 4000), v.error] for v in e.votes],
            ]
            for e in run.evaluations
        ]
    elif run.verdict is not None:
        record["v"] = [run.verdict.passed, run.verdict.score, _text(run.verdict.comment, 4000)]
    if run.error:
        record["err"] = _text(f"{run.error_side or 'error'}: {run.error}", 2000)
    if run.sources:
        record["src"] = [_text(s, 500) for s in run.sources[:50]]
    if run.tool_calls is not None:  # an empty list is a finding: no tool was called
        record["tc"] = _calls(run.tool_calls)
    if run.turns:
        record["tn"] = [
            [
                t.turn,
                _text(t.question, 4000),
                t.status,
                _text(t.answer, 4000),
                _text(t.why, 2000),
                _calls(t.tool_calls) if t.tool_calls is not None else None,
            ]
            for t in run.turns[:_MAX_LISTED]
        ]
        if run.failed_turn is not None:
            record["ft"] = run.failed_turn
    if run.__pydantic_extra__:  # what later steps record (trajectories, turns): shown as is
        extra = json.dumps(run.__pydantic_extra__, ensure_ascii=False, indent=1, default=str)
        record["x"] = _text(extra, _EXTRA_LIMIT)
    return record


def _calls(calls: list[ToolCall]) -> list[list[str | None]]:
    return [[_text(c.name, 200), _text(c.arguments, 500)] for c in calls[:_MAX_LISTED]]


def _runs(item: ItemResult) -> list[dict[str, Any]]:
    several = len(item.run_results) > 1
    return [_run(run, with_answer=several) for run in item.run_results]


def _outcomes(run: RunResult) -> list[EvaluatorOutcome]:
    return run.evaluations or []


def _failed_by(item: ItemResult) -> list[str]:
    """The evaluators that failed some run of the item."""
    names: dict[str, None] = {}
    for run in item.run_results:
        names.update(dict.fromkeys(run.failed_evaluators))
    return list(names)


def _flags(item: ItemResult, base: ItemResult | None) -> list[str]:
    """Which filters an item is in: what a reviewer asks of a run."""
    flags = []
    if item.has_errors:
        flags.append("errored")
    if item.unstable:
        flags.append("unstable")
    if not item.errored and not item.passed:
        flags.append("failing")
    if base is None:
        flags.append("new")
    elif not item.errored and not base.errored:
        if item.score < base.score:
            flags.append("regressed")
        elif item.score > base.score:
            flags.append("improved")
        if not item.passed and not base.passed:
            flags.append("failing-both")
    return flags


def _retrieval_item(now: RetrievalItem, before: RetrievalItem | None, k: int) -> dict[str, Any]:
    """Each expected page's rank in each run that returned sources (None: not returned), this
    run's and the baseline's, and the item's hit@k both times: a few numbers an item."""
    expected = now.expected[:_MAX_LISTED]
    base_at = {url: n for n, url in enumerate(before.expected)} if before is not None else {}
    pages = []
    for n, url in enumerate(expected):
        mine = [run[n] if n < len(run) else None for run in now.ranks]
        if before is None or url not in base_at:
            theirs = None
        else:
            at = base_at[url]
            theirs = [run[at] if at < len(run) else None for run in before.ranks]
        pages.append([_text(url, 500), mine, theirs])
    record: dict[str, Any] = {"e": pages}
    score = retrieval.item_score(now, k)
    base_score = retrieval.item_score(before, k) if before is not None else None
    record["h"] = [
        float(score.hit) if score is not None else None,
        float(base_score.hit) if base_score is not None else None,
    ]
    return record


def _item(
    item: ItemResult, base: ItemResult | None, extra: dict[str, Any] | None = None
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": item.id,
        "tags": item.tags,
        "f": _flags(item, base),
        "p": item.passes,
        "r": item.runs,
        "q": _text(item.question or (base.question if base else None), 4000),
        "a": _text(item.answer),
        "why": _text(item.why, 4000),
        "runs": _runs(item),
    }
    failed_by = _failed_by(item)
    if failed_by:
        record["ev"] = failed_by
    if item.expected_tools is not None:
        record["xt"] = [_text(t, 500) for t in item.expected_tools[:_MAX_LISTED]]
    if extra:
        if extra.get("fell"):
            record["f"].append("retrieval-fell")
        if "rt" in extra:
            record["rt"] = extra["rt"]
    if base is not None:
        record["b"] = {
            "p": base.passes,
            "r": base.runs,
            "a": _text(base.answer),
            "why": _text(base.why, 4000),
            "runs": _runs(base),
        }
    return record


def _removed(base: ItemResult) -> dict[str, Any]:
    """An item only the baseline has: listed with the baseline's side, never dropped."""
    return {
        "id": base.id,
        "tags": base.tags,
        "f": ["removed"],
        "rm": 1,
        "p": 0,
        "r": 0,
        "q": _text(base.question, 4000),
        "a": None,
        "why": None,
        "runs": [],
        "b": {
            "p": base.passes,
            "r": base.runs,
            "a": _text(base.answer),
            "why": _text(base.why, 4000),
            "runs": _runs(base),
        },
    }


def _removed_items(report: Report, baseline: Report) -> list[ItemResult]:
    """The baseline's items this run should have asked and did not: within its selection (the
    tags it ran, the whole set without tags). A subset or one shard leaves the rest of the
    baseline out on purpose: those are counted in the figures, not listed."""
    dataset = report.dataset
    if dataset is not None and dataset.shard is not None:
        return []
    wanted = set(dataset.tags) if dataset is not None and dataset.tags else None
    present = {item.id for item in report.results}
    return [
        item
        for item in baseline.results
        if item.id not in present and (wanted is None or wanted.intersection(item.tags))
    ]


def _figures(
    report: Report, gate: GateResult, baseline: Report | None, removed: int
) -> list[list[str]]:
    figures = [["items", str(gate.n)], ["pass rate", gate.pass_rate_text]]
    if gate.lower_bound is not None:
        figures.append(
            [
                f"Wilson lower bound ({gate.settings.confidence:.0%})",
                f"{gate.lower_bound:.4f} (floor {gate.settings.floor:.2f})",
            ]
        )
    comparison = gate.comparison
    if comparison is not None:
        figures += [
            ["regressed / improved", f"{comparison.b} / {comparison.c} of {comparison.shared}"],
            ["p-value", f"{comparison.p_value:.4g} ({comparison.method}, alpha "
             f"{gate.settings.alpha:g})"],
            ["net drop", f"{comparison.net_drop:.1%}"],
        ]  # fmt: skip
        if comparison.only_in_baseline or comparison.only_in_candidate:
            figures.append(
                [
                    "only in one report",
                    f"{len(comparison.only_in_candidate)} new in this run, "
                    f"{len(comparison.only_in_baseline)} only in the baseline ({removed} "
                    "within this run's selection, listed as removed; the rest not asked)",
                ]
            )
    figures.append(["judge", report.judge])
    if report.created_at:
        figures.append(["created", report.created_at])
    if baseline is not None and baseline.created_at:
        figures.append(["baseline created", baseline.created_at])
    return figures


def _tally_tags(report: Report) -> dict[str, list[int]]:
    """Per tag: counted items, passed."""
    seen: dict[str, list[int]] = {}
    for item in report.results:
        if item.errored:
            continue
        for tag in item.tags:
            tally = seen.setdefault(tag, [0, 0])
            tally[0] += 1
            tally[1] += item.passed
    return seen


def _tags(report: Report, baseline: Report | None, gate: GateResult) -> list[list[Any]]:
    """Per tag: items counted, passed; the baseline's counted and passed (None without it);
    regressed and improved items."""
    seen = _tally_tags(report)
    base = _tally_tags(baseline) if baseline is not None else {}
    moved: dict[str, list[int]] = {}
    if gate.comparison is not None:
        tags = {item.id: item.tags for item in report.results}
        for column, ids in ((0, gate.comparison.regressions), (1, gate.comparison.improvements)):
            for item_id in ids:
                for tag in tags.get(item_id, ()):
                    moved.setdefault(tag, [0, 0])[column] += 1
    rows = []
    for tag in sorted(seen.keys() | base.keys()):
        n, k = seen.get(tag, (0, 0))
        base_n, base_k = base.get(tag, (None, None))
        regressed, improved = moved.get(tag, (0, 0))
        rows.append([tag, n, k, base_n, base_k, regressed, improved])
    return rows


def _trend(gate: GateResult, history: list[TrendPoint] | None) -> dict[str, Any] | None:
    """The baseline's earlier pass rates then this run's, oldest first: what the comment's
    trend chart draws (none without history: a trend needs two points)."""
    if not history or gate.pass_rate is None or gate.lower_bound is None:
        return None
    points = [[p.label, p.pass_rate, p.lower_bound] for p in history]
    points.append(["this run", gate.pass_rate, gate.lower_bound])
    return {"floor": gate.settings.floor, "points": points[-24:]}


def _retrieval_extras(
    report: Report, gate: GateResult, baseline: Report | None
) -> dict[str, dict[str, Any]]:
    """Per measured item: its expected pages' ranks (`rt`), and the `retrieval-fell` filter's
    flag for the items whose hit@k fell."""
    record = report.retrieval
    if record is None:
        return {}
    k = gate.retrieval.k if gate.retrieval is not None else record.k
    before: RetrievalRecord | None = baseline.retrieval if baseline is not None else None
    base_items = before.items if before is not None else {}
    found: dict[str, dict[str, Any]] = {
        item_id: {"rt": _retrieval_item(item, base_items.get(item_id), k)}
        for item_id, item in record.items.items()
    }
    comparison = gate.retrieval.comparison if gate.retrieval is not None else None
    for change in comparison.fell if comparison is not None else ():
        found.setdefault(change.id, {})["fell"] = 1
    return found


def _figures_of(figures: RetrievalFigures | None) -> list[float | int] | None:
    if figures is None:
        return None
    return [figures.hit_rate, figures.mrr, figures.recall, figures.items]


def _retrieval_summary(gate: GateResult) -> dict[str, Any] | None:
    """The retrieval layer's figures beside the baseline's, its reasons and notes, or None
    when the layer is not in use."""
    found = gate.retrieval
    if found is None:
        return None
    comparison = found.comparison
    return {
        "k": found.k,
        "measured": found.measured,
        "now": _figures_of(found.overall),
        "base": _figures_of(found.baseline),
        "bound": found.lower_bound,
        "floor": found.floor,
        "reasons": [r.message for r in gate.reasons if r.code.startswith("retrieval-")],
        "notes": found.notes,
        "test": None
        if comparison is None
        else [len(comparison.fell), len(comparison.rose), comparison.shared, comparison.p_value],
        "without": len(found.without_sources),
    }


def page_data(
    report: Report,
    gate: GateResult,
    baseline: Report | None = None,
    history: list[TrendPoint] | None = None,
) -> dict[str, Any]:
    """Everything the page shows, as plain JSON values."""
    base = baseline.by_id() if baseline is not None else {}
    extras = _retrieval_extras(report, gate, baseline)
    items = [_item(item, base.get(item.id), extras.get(item.id)) for item in report.results]
    removed = _removed_items(report, baseline) if baseline is not None else []
    items += [_removed(item) for item in removed]
    return {
        "verdict": gate.run_verdict(report.complete),
        "headline": gate.headline,
        "figures": _figures(report, gate, baseline, len(removed)),
        "notes": [*gate.warnings, *gate.notes]
        + ([report.incomplete_reason] if report.incomplete_reason else []),
        "baseline": baseline is not None,
        "floor": gate.settings.floor,  # the tag bars are coloured by their rate against it
        "counted": sum(counts(r) for item in report.results for r in item.run_results),
        "tags": _tags(report, baseline, gate),
        "trend": _trend(gate, history),
        "retrieval": _retrieval_summary(gate),
        "evaluators": sorted(
            {e.evaluator for i in report.results for r in i.run_results for e in _outcomes(r)}
        ),
        "items": items,
    }


def _data_block(data: dict[str, Any]) -> str:
    import orjson  # a 100,000-item page's JSON in a second, not ten (json.dumps)

    try:
        raw = orjson.dumps(data)
    except TypeError:  # half an emoji nobody repaired (orjson refuses it): repaired here
        data, _ = surrogates.repair_json(data)
        raw = orjson.dumps(data)
    text = raw.decode("utf-8")
    if redaction.present(text):  # rare: scrubbed string by string only then (as report_json)
        data = redaction.scrub_json(json.loads(text))
        text = orjson.dumps(data).decode("utf-8")
    for char, escape in _JSON_ESCAPES.items():
        if char in text:
            text = text.replace(char, escape)
    return text


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()


def render_page(
    report: Report,
    gate: GateResult,
    baseline: Report | None = None,
    history: list[TrendPoint] | None = None,
) -> str:
    assets = templates_dir() / "page"
    script = (assets / "page.js").read_text(encoding="utf-8")
    style = (assets / "page.css").read_text(encoding="utf-8")
    policy = (
        f"default-src 'none'; script-src '{_sha256(script)}'; style-src '{_sha256(style)}'; "
        "img-src 'none'; connect-src 'none'; base-uri 'none'; form-action 'none'; "
        "require-trusted-types-for 'script'; trusted-types 'none'"
    )
    page = (assets / "page.html").read_text(encoding="utf-8")
    # One replacement each, in this order: nothing inserted can hold a later placeholder's name.
    for name, value in (
        ("@POLICY@", policy),
        ("@STYLE@", style),
        ("@SCRIPT@", script),
        ("@DATA@", _data_block(page_data(report, gate, baseline, history))),
    ):
        before, found, after = page.partition(name)
        assert found, name
        page = before + value + after
    return page


def write_page(
    path: str | Path,
    report: Report,
    gate: GateResult,
    baseline: Report | None = None,
    history: list[TrendPoint] | None = None,
) -> None:
    """`history`: the baseline's earlier pass rates, for the trend chart (as the comment's)."""
    write_result(path, render_page(report, gate, baseline, history), what="report page")
