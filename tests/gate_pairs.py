"""Report pairs whose gate outputs are pinned in tests/data/gate_outputs.json.

Each pair is a candidate report and an optional baseline, built here deterministically (or, for
the demo, read from tests/data/gate_pairs/), and written in four JSON shapes: as golden-gate
writes a report (`report_json`, indented by one), indented by two, compact, and with every
object's keys shuffled. `outputs` runs the gate the ways a user does (`golden-gate gate`,
`golden-gate report` as Markdown and as JSON, and the job summary) and returns what each
printed, with the exit code.

The hashes were recorded with the code before the slim report view (tests/core/test_reader.py), and
recorded again the same way when the charts changed what the comment, the summary and the
JSON verdict hold (with the charts' code still without the slim view; only those three hashes
changed), and the pairs' outputs once more in step 18, when the power statement became the
power of the gate's own test and baseline items a report leaves out became a warning, and
again when the statement gave two figures (spread, concentrated), an incomplete run stopped
printing a verdict and the comment showed each regressed item before and after (the
malformed reports' entries kept as the pre-slim code recorded them):

    .venv/bin/python -m tests.gate_pairs > tests/data/gate_outputs.json
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import math
import os
import random
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from golden_gate.core.item_result import (
    CheckOutcome,
    EvaluatorOutcome,
    ItemResult,
    JudgeVote,
    RunResult,
    Verdict,
)
from golden_gate.core.report import DatasetInfo, Report, RuleChanges, RunSettings, RunStats
from golden_gate.core.report_file import report_json

DATA = Path(__file__).resolve().parent / "data"
PAIRS = DATA / "gate_pairs"
OUTPUTS = DATA / "gate_outputs.json"
STAMP = "2025-01-01T00:00:00Z"
SHAPES = ("ours", "indent2", "compact", "shuffled")

Pair = tuple[dict[str, Any], dict[str, Any] | None]


def _dump(report: Report) -> dict[str, Any]:
    data = json.loads(report_json(report))
    if "created_at" in data:
        data["created_at"] = STAMP
    return data


def _run(
    passed: bool | None, i: int, *, answer: str | None = None, rerun: bool = False
) -> RunResult:
    if passed is None:
        return RunResult(
            status="error", error_side="judge", error="judge: HTTP 500 after 6 retries"
        )
    return RunResult(
        status="pass" if passed else "fail",
        rerun=rerun,
        answer=answer if answer is not None else f"Answer {i}: the refund window is 14 days.",
        sources=[f"docs/{i}.md"],
        checks=[CheckOutcome(name="citations", passed=True)],
        verdict=Verdict(
            passed=passed,
            score=passed,
            comment="" if passed else f'missing key point: "fact {i}"',
            latency_ms=12.5,
        ),
        http_status=200,
        latency_ms=40.0,
    )


def _item(item_id: str, runs: list[RunResult], **fields: Any) -> ItemResult:
    counted = [r for r in runs if not r.rerun and r.status != "error"]
    errors = sum(r.status == "error" and r.error_side == "judge" for r in runs)
    return ItemResult(
        id=item_id,
        tags=fields.pop("tags", ["smoke"]),
        passes=sum(r.status == "pass" for r in counted),
        runs=len(counted),
        errors=errors,
        question=fields.pop("question", f"What does the handbook say about {item_id}?"),
        item_hash=fields.pop("item_hash", hashlib.sha256(item_id.encode()).hexdigest()[:16]),
        run_results=runs,
        **fields,
    )


def _report(items: list[ItemResult], **fields: Any) -> Report:
    fields.setdefault("judge", "openai:gpt-4.1-mini")
    fields.setdefault("judge_prompt_hash", "a" * 64)
    fields.setdefault(
        "stats", RunStats(judge_calls=len(items), assistant_calls=len(items), elapsed_s=3.5)
    )
    return Report(
        format="golden-gate/1", tool_version="0.2.0", created_at=STAMP, results=items, **fields
    )


def demo() -> Pair:
    pair = PAIRS / "demo"
    return (
        json.loads((pair / "report.json").read_text(encoding="utf-8")),
        json.loads((pair / "baseline.json").read_text(encoding="utf-8")),
    )


def demo_alone() -> Pair:
    return demo()[0], None


def scale_1k() -> Pair:
    """bench/core_scale.py's shape at 1,000 items: 20 regressions, errors, unstable items."""
    from bench.core_scale import make_reports

    baseline, candidate = make_reports(1_000, 20)
    for data in (baseline, candidate):
        data["created_at"], data["tool_version"] = STAMP, "0.2.0"
    return candidate, baseline


def scale_1k_alone() -> Pair:
    """Without a baseline the failed items are the table: the comment drops rows to fit."""
    return scale_1k()[0], None


def several_runs() -> Pair:
    """Three runs an item, clusters, unstable items: the exact sign-flip test on fractions."""
    base_items, cand_items = [], []
    for n in range(120):
        cluster = f"page-{n // 6}" if n < 36 else None
        base_items.append(_item(f"q{n:04d}", [_run(True, n) for _ in range(3)], cluster=cluster))
        kept = 3 if n % 7 else (1 if n % 2 else 2)
        runs = [_run(r < kept, n) for r in range(3)]
        cand_items.append(_item(f"q{n:04d}", runs, cluster=cluster))
    settings = RunSettings(runs=3, checks_hash="c" * 16, evaluators="correctness")
    return (
        _dump(_report(cand_items, run_settings=settings)),
        _dump(_report(base_items, run_settings=settings)),
    )


def monte_carlo() -> Pair:
    """Runs counted so unevenly that the exact distribution is too wide: sampled signs."""
    base_items, cand_items = [], []
    for n in range(2_400):
        runs = 5 + n % 9
        lost = (n % 13 == 0) + (n % 29 == 0) * 2
        gained = n % 31 == 0
        base = runs - 1 - (n % 11 == 0)
        cand = min(runs, max(0, base - lost + gained))
        item_id = f"mc{n:05d}"
        base_items.append(ItemResult(id=item_id, passes=base, runs=runs, tags=["load"]))
        cand_items.append(ItemResult(id=item_id, passes=cand, runs=runs, tags=["load"]))
    return _dump(_report(cand_items)), _dump(_report(base_items))


def judge_errors() -> Pair:
    """Runs the judge could not judge would flip the pass: inconclusive (exit 3)."""
    base_items = [_item(f"e{n:03d}", [_run(True, n)]) for n in range(200)]
    cand_items = []
    for n in range(200):
        if n < 19:
            cand_items.append(_item(f"e{n:03d}", [_run(None, n)]))
        elif n < 23:
            run = RunResult(
                status="error", error_side="assistant", error="HTTP 502", http_status=502
            )
            cand_items.append(
                ItemResult(id=f"e{n:03d}", passes=0, runs=1, unanswered=1, run_results=[run])
            )
        else:
            cand_items.append(_item(f"e{n:03d}", [_run(True, n)]))
    return _dump(_report(cand_items)), _dump(_report(base_items))


def panel() -> Pair:
    """Two evaluators, two judges: evaluator rates and the judges' agreement."""
    items = []
    for n in range(40):
        outcomes = []
        for evaluator in ("correctness", "groundedness"):
            votes = [
                JudgeVote(judge="openai:gpt-4.1-mini", passed=n % 5 != 0, comment="ok"),
                JudgeVote(judge="anthropic:claude-sonnet-4-6", passed=n % 7 != 0, comment="ok"),
            ]
            if evaluator == "groundedness" and n % 9 == 0:
                votes[1] = JudgeVote(judge="anthropic:claude-sonnet-4-6", error="HTTP 429")
            status = "pass" if all(v.passed for v in votes) else "fail"
            outcomes.append(EvaluatorOutcome(evaluator=evaluator, status=status, votes=votes))
        passed = all(o.status == "pass" for o in outcomes)
        run = _run(passed, n).model_copy(update={"evaluations": outcomes})
        items.append(_item(f"p{n:03d}", [run], tags=["rag", "smoke"] if n % 2 else ["rag"]))
    settings = RunSettings(evaluators="correctness,groundedness (all)", judge_panel="majority")
    fields = {"judge": "openai:gpt-4.1-mini,anthropic:claude-sonnet-4-6", "run_settings": settings}
    base = [i.model_copy(update={"passes": 1}) for i in items]
    return _dump(_report(items, **fields)), _dump(_report(base, **fields))


def own_items() -> Pair:
    """A pull request that changes the gate's rules: its own items count toward the floor only."""
    base_items = [_item(f"r{n:03d}", [_run(n % 4 != 0, n)]) for n in range(60)]
    cand_items = []
    for n in range(66):
        origin = "pull-request" if n >= 58 else "base"
        cand_items.append(_item(f"r{n:03d}", [_run(n % 4 != 0 or n > 50, n)], origin=origin))
    changes = RuleChanges(
        removed=["r998"],
        untagged=["r999"],
        reworded=["r058", "r059"],
        added=[f"r{n:03d}" for n in range(60, 66)],
        files=["prompts/judge.txt"],
    )
    dataset = DatasetInfo(path="evals/golden.jsonl", fingerprint="1" * 64, items=66, tags=["smoke"])
    base_dataset = dataset.model_copy(update={"fingerprint": "2" * 64, "items": 60})
    return (
        _dump(_report(cand_items, rule_changes=changes, dataset=dataset)),
        _dump(_report(base_items, dataset=base_dataset)),
    )


def minimal_baseline() -> Pair:
    """A baseline in the shape teams' own harnesses write, against one of ours; another judge."""
    cand_items = [
        _item(f"m{n:03d}", [_run(n % 10 != 3, n)], tags=["smoke", "billing"]) for n in range(50)
    ]
    baseline = {
        "judge": "openai:gpt-4o",
        "results": [
            {"id": f"m{n:03d}", "tags": ["smoke"], "passes": int(n % 10 != 5), "runs": 1}
            for n in range(5, 55)
        ],
    }
    return _dump(_report(cand_items, tier="full")), baseline


def hostile() -> Pair:
    """Text that must be escaped, other scripts, half an emoji (a lone surrogate escape)."""
    texts = [
        "<details><summary>x</summary> | ` ``` @octocat #123",
        "<!-- golden-gate:report id=default --> [click](https://evil.example)",
        "Die Rückerstattung dauert 14 Tage — 返金は14日以内です 🎉",
        "line one\nline two\r\n| a | b |\n|---|---|",
        "half an emoji: \ud83d and the rest",
        "x" * 5_000,
    ]
    base_items, cand_items = [], []
    for n in range(30):
        text = texts[n % len(texts)]
        base_items.append(_item(f"h{n:02d}", [_run(True, n, answer="fine")], question=text))
        cand_items.append(
            _item(f"h{n:02d}", [_run(n % 3 != 0, n, answer=text)], question=text, tags=[text[:12]])
        )
    # Written by json.dumps, which spells the lone surrogate as an escape, as other writers do.
    cand = _report(cand_items).model_dump(mode="json", exclude_none=True, fallback=str)
    return cand, _dump(_report(base_items))


def incomplete() -> Pair:
    items = [_item(f"i{n:02d}", [_run(n != 3, n)]) for n in range(12)]
    cand = _report(items, complete=False, incomplete_reason="interrupted after 12 of 40 items")
    return _dump(cand), _dump(_report([_item(f"i{n:02d}", [_run(True, n)]) for n in range(40)]))


def empty() -> Pair:
    return _dump(_report([])), _dump(_report([_item("x", [_run(True, 0)])]))


def unknown_fields() -> Pair:
    """Fields we do not know, at every level, and item fields after `run_results`."""
    cand, base = scale_1k()
    cand = {**cand, "results": cand["results"][:200], "vendor": {"build": [1, {"deep": [2]}]}}
    base = {**base, "results": base["results"][:200]}
    reordered = []
    for n, item in enumerate(cand["results"]):
        runs = [{**run, "trace": {"spans": [n, n + 1]}} for run in item["run_results"]]
        head = {"run_results": runs, "note": {"k": [n]}} if n % 2 else {"run_results": runs}
        reordered.append({**head, **{k: v for k, v in item.items() if k != "run_results"}})
    cand["results"] = reordered
    return cand, base


PAIR_BUILDERS: dict[str, Callable[[], Pair]] = {
    "demo": demo,
    "demo-alone": demo_alone,
    "scale-1k": scale_1k,
    "scale-1k-alone": scale_1k_alone,
    "several-runs": several_runs,
    "monte-carlo": monte_carlo,
    "judge-errors": judge_errors,
    "panel": panel,
    "own-items": own_items,
    "minimal-baseline": minimal_baseline,
    "hostile": hostile,
    "incomplete": incomplete,
    "empty": empty,
    "unknown-fields": unknown_fields,
}


def shaped(data: dict[str, Any], shape: str) -> str:
    """The report as text in one of SHAPES; UTF-8 but for lone surrogates, which are escaped."""
    if shape == "ours":
        text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    elif shape == "indent2":
        text = json.dumps(data, indent=2)
    elif shape == "shuffled":  # every object's keys in another order, as another writer may
        text = json.dumps(_shuffled(data, random.Random(35)), indent=1, ensure_ascii=False)
    else:
        text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return _LONE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


_LONE = re.compile("[\ud800-\udfff]")


def _shuffled(value: Any, rng: random.Random) -> Any:
    if isinstance(value, dict):
        keys = list(value)
        rng.shuffle(keys)
        return {key: _shuffled(value[key], rng) for key in keys}
    if isinstance(value, list):
        return [_shuffled(child, rng) for child in value]
    return value


def write_pair(pair: Pair, directory: Path, shape: str) -> list[str]:
    """Write the pair as report.json (and baseline.json); the names, relative to `directory`."""
    candidate, baseline = pair
    names = ["report.json"]
    (directory / "report.json").write_text(shaped(candidate, shape), encoding="utf-8")
    if baseline is not None:
        (directory / "baseline.json").write_text(shaped(baseline, shape), encoding="utf-8")
        names.append("baseline.json")
    return names


@contextlib.contextmanager
def _inside(directory: Path) -> Iterator[None]:
    before = Path.cwd()
    os.chdir(directory)
    try:
        yield
    finally:
        os.chdir(before)


def _cli(argv: list[str]) -> tuple[int, str, str]:
    from golden_gate import cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(argv)
    return code, out.getvalue(), err.getvalue()


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def same(seen: Any, want: Any, *, rel: float = 1e-9) -> bool:
    """Equal, floats within `rel`: their last bits differ with the CPU and the BLAS kernel
    (OPENBLAS_CORETYPE), so the verdict is recorded as JSON, not as a hash of its text."""
    if isinstance(want, float) or isinstance(seen, float):
        if isinstance(seen, bool) or isinstance(want, bool):
            return seen == want
        if not isinstance(seen, int | float) or not isinstance(want, int | float):
            return False
        return math.isclose(seen, want, rel_tol=rel, abs_tol=1e-12)
    if isinstance(want, dict):
        return (
            isinstance(seen, dict)
            and seen.keys() == want.keys()
            and all(same(seen[k], want[k], rel=rel) for k in want)
        )
    if isinstance(want, list):
        return (
            isinstance(seen, list)
            and len(seen) == len(want)
            and all(same(a, b, rel=rel) for a, b in zip(seen, want, strict=True))
        )
    return type(seen) is type(want) and seen == want


def outputs(directory: Path, names: list[str]) -> dict[str, Any]:
    """What the gate prints for the pair in `directory`: sha256 of each text, the exit codes."""
    with _inside(directory):
        code, gate_out, gate_err = _cli(["gate", *names])
        baseline = ["--baseline", names[1]] if len(names) > 1 else []
        md_code, comment, _ = _cli(["report", names[0], *baseline])
        json_code, verdict, _ = _cli(["report", names[0], *baseline, "--format", "json"])
        summary = _summary(names)
    return {
        "exit_code": code,
        "gate_stdout": _sha(gate_out),
        "gate_stderr": _sha(gate_err),
        "comment": _sha(comment),
        "verdict": json.loads(verdict) if json_code in (0, 1) else _sha(verdict),
        "summary": _sha(summary),
        "report_exit_codes": [md_code, json_code],
    }


def _summary(names: list[str]) -> str:
    """The job summary as the Action renders it from the same two reports."""
    from golden_gate.core.gate import evaluate_gate
    from golden_gate.core.report_file import load_report
    from golden_gate.core.verdict import GateSettings
    from golden_gate.rendering.render import render_summary

    report = load_report(names[0])
    baseline = load_report(names[1]) if len(names) > 1 else None
    gate = evaluate_gate(report, baseline, GateSettings())
    return render_summary(report, gate, baseline=baseline)


# -- malformed reports: the one sentence and the exit code are pinned too -----------------------

GOOD = {"judge": "j", "results": [{"id": "a", "passes": 1, "runs": 1}]}
FILLER = 12_000  # good items after the bad one: a large report (over 1 MiB), as golden-gate writes


def _item_variant(**fields: Any) -> str:
    return json.dumps({"judge": "j", "results": [{"id": "a", "passes": 1, "runs": 1, **fields}]})


def _filler(n: int) -> list[dict[str, Any]]:
    run = {"status": "pass", "answer": "The refund window is 14 days.", "checks": []}
    return [
        {"id": f"f{i:05d}", "tags": ["smoke"], "passes": 1, "runs": 1, "run_results": [run]}
        for i in range(n)
    ]


def _large(
    first: dict[str, Any] | None = None, *, last: dict[str, Any] | None = None, **top: Any
) -> bytes:
    """A large report written as golden-gate writes one, with `first` and `last` items."""
    items = ([first] if first else []) + _filler(FILLER) + ([last] if last else [])
    return json.dumps({"judge": "j", "results": items, **top}, indent=1).encode()


def _bad_item(**fields: Any) -> dict[str, Any]:
    return {"id": "a", "passes": 1, "runs": 1, **fields}


MALFORMED: dict[str, bytes] = {
    "not-json": b"this is not JSON\n",
    "truncated": json.dumps(GOOD, indent=1).encode()[:-9],
    "a-list": b"[1, 2, 3]",
    "no-results": b'{"judge": "j"}',
    "results-not-a-list": b'{"judge": "j", "results": {"a": 1}}',
    "no-judge": b'{"results": []}',
    "item-without-id": b'{"judge": "j", "results": [{"passes": 1, "runs": 1}]}',
    "passes-over-runs": _item_variant(passes=3, runs=2).encode(),
    "negative-runs": _item_variant(runs=-1).encode(),
    "passes-not-a-number": _item_variant(passes="many").encode(),
    "bad-origin": _item_variant(origin="fork").encode(),
    "duplicate-ids": json.dumps(
        {"judge": "j", "results": [{"id": "a", "passes": 1, "runs": 1}] * 2}, indent=1
    ).encode(),
    "bad-run-status": _item_variant(run_results=[{"status": "great"}]).encode(),
    "bad-tier": json.dumps({**GOOD, "tier": "platinum"}).encode(),
    "too-deep": json.dumps({**GOOD, "x": json.loads("[" * 80 + "]" * 80)}).encode(),
    "long-number": b'{"judge": "j", "results": [], "n": ' + b"9" * 5000 + b"}",
    "bom": b"\xef\xbb\xbf" + json.dumps(GOOD).encode(),
    "invalid-utf8": b'{"judge": "j\xff", "results": []}',
    # The same faults in large reports, where the gate reads a slim view (golden_gate/core/slim.py).
    "large-truncated": _large()[: -(1 << 19)],
    "large-no-judge": _large().replace(b'"judge": "j",', b"", 1),
    "large-bad-tier": _large(tier="platinum"),
    "large-item-without-id": _large({"passes": 1, "runs": 1}),
    "large-passes-over-runs": _large(_bad_item(passes=3, runs=2)),
    "large-negative-runs": _large(_bad_item(runs=-1)),
    "large-passes-not-a-number": _large(_bad_item(passes="many")),
    "large-bad-origin": _large(_bad_item(origin="fork")),
    "large-bad-tags": _large(_bad_item(tags="smoke")),
    "large-duplicate-ids": _large(last={"id": "f00007", "passes": 0, "runs": 1}),
    "large-too-deep": _large(x=json.loads("[" * 80 + "]" * 80)),
    "large-too-deep-item": _large(_bad_item(x=json.loads("[" * 80 + "]" * 80))),
    "large-bad-run-status": _large(_bad_item(run_results=[{"status": "great"}])),
    "large-failed-bad-run": _large(_bad_item(passes=0, run_results=[{"status": "great"}])),
    "large-invalid-utf8": _large().replace(b"refund", b"ref\xffnd", 1),
    "large-nan-passes": _large(_bad_item(passes=float("nan"))),
}


def malformed_outputs(directory: Path, name: str, text: bytes) -> dict[str, Any]:
    """`golden-gate gate` on a malformed report (against a good baseline, and as the baseline)."""
    (directory / "bad.json").write_bytes(text)
    (directory / "good.json").write_text(json.dumps(GOOD), encoding="utf-8")
    with _inside(directory):
        as_report = _cli(["gate", "bad.json", "good.json"])
        as_baseline = _cli(["gate", "good.json", "bad.json"])
    return {
        "report": {"exit_code": as_report[0], "stderr": as_report[2]},
        "baseline": {"exit_code": as_baseline[0], "stderr": as_baseline[2]},
    }


def record() -> dict[str, Any]:
    """Every pair's outputs (identical in every shape, or this raises) and every malformed one."""
    import tempfile

    recorded: dict[str, Any] = {"pairs": {}, "malformed": {}}
    for name, build in PAIR_BUILDERS.items():
        pair = build()
        seen = []
        for shape in SHAPES:
            with tempfile.TemporaryDirectory() as tmp:
                names = write_pair(pair, Path(tmp), shape)
                seen.append(outputs(Path(tmp), names))
        if any(s != seen[0] for s in seen):
            raise AssertionError(f"{name}: the outputs differ between shapes: {seen}")
        recorded["pairs"][name] = seen[0]
    for name, text in MALFORMED.items():
        with tempfile.TemporaryDirectory() as tmp:
            recorded["malformed"][name] = malformed_outputs(Path(tmp), name, text)
    return recorded


if __name__ == "__main__":
    json.dump(record(), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
