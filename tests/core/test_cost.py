"""The cost before the run: usage-path records the assistant's tokens per run, `plan --cost`
prints N · R · (c_sys + (1 − h) · c_judge) with its terms, max-cost-usd stops a run as
incomplete (exit 3, the report written), and latency/tokens are shown, never gated."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from golden_gate.core.cost import cost_terms, money, percentiles, read_usage
from golden_gate.core.item_result import TokenUsage
from golden_gate.core.report import Report, RunStats
from golden_gate.core.report_file import load_report
from golden_gate.example_assistant import golden_path, start
from tests.evaluation.test_judge import MODEL
from tests.fakes.judge_server import JudgeServer

DUMMY = "sk-test-cost-00000000000000000000"


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    env["OPENAI_API_KEY"] = DUMMY
    for name in ("OPENAI_BASE_URL", "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        env.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", "golden_gate", *args],
        capture_output=True, text=True, env=env, timeout=300, cwd=cwd,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"prompt_tokens": 10, "completion_tokens": 5}, (10, 5)),
        ({"input_tokens": 7, "output_tokens": 3}, (7, 3)),
        ({"promptTokenCount": 4, "candidatesTokenCount": 2, "totalTokenCount": 6}, (4, 2)),
        ({"total_tokens": 9}, (0, 9)),
        (12, (0, 12)),
        ({"prompt_tokens": "lots", "completion_tokens": -3}, (0, 0)),
        ("12", None),
        (True, None),
        (float("nan"), None),
        ({"other": 1}, None),
    ],
)
def test_usage_in_the_shapes_the_apis_write_it(value, expected):
    usage = read_usage(value)
    assert (None if usage is None else (usage.input_tokens, usage.output_tokens)) == expected


def test_the_formula_from_a_measured_report():
    measured = Report(
        judge="openai:x",
        results=[],
        stats=RunStats(
            assistant_calls=10,
            assistant_tokens=TokenUsage(input_tokens=5000, output_tokens=1000),
            judge_calls=6,  # 6 judged, 4 from the cache, of 10 verdicts
            cache_hits=4,
            cache_misses=6,
            input_tokens=6000,
            output_tokens=600,
        ),
    )
    terms = cost_terms(
        items=100, runs=3, measured=measured, judge_prices=(0.4, 1.6), assistant_prices=(1, 2)
    )
    # c_sys: 500 in + 100 out a run at $1/$2 a million; c_judge: one verdict a run of
    # 1000 in + 100 out at $0.40/$1.60 a million; h = 0.4.
    assert terms.c_sys == pytest.approx(0.0007)
    assert terms.c_judge == pytest.approx(0.00056)
    assert terms.hit_rate == pytest.approx(0.4)
    assert terms.total == pytest.approx(100 * 3 * (0.0007 + 0.6 * 0.00056))
    assert terms.formula() == (
        "N · R · (c_sys + (1 − h) · c_judge) = 100 × 3 × ($0.00070 + (1 − 0.40) × $0.00056) = $0.31"
    )
    unpriced = cost_terms(items=100, runs=3, measured=measured)
    assert unpriced.total is None and unpriced.sys_tokens == 600
    assert "no prices, no total" in unpriced.formula()
    assert money(0) == "$0" and money(1234.5) == "$1,234.50"


def test_percentiles_are_nearest_rank():
    spread = percentiles([float(v) for v in range(1, 101)])
    assert spread is not None and (spread.p50, spread.p95, spread.count) == (50, 95, 100)
    assert percentiles([]) is None


@pytest.fixture(scope="module")
def measured(tmp_path_factory) -> Path:
    """`golden-gate eval` of the example assistant with usage-path and both prices, judged by
    the fake OpenAI judge: the report plan --cost measures its terms on."""
    tmp = tmp_path_factory.mktemp("measured")
    with JudgeServer() as server, start("baseline") as assistant:
        done = _cli(
            "eval", str(golden_path()), "--assistant-url", assistant.url,
            "--usage-path", "usage", "--assistant-prices", "0.15,0.60",
            "--judge-model", MODEL, "--judge-base-url", server.base_url,
            "--judge-prices", "0.40,1.60", "--judge-canaries", "0",
            "--cache-dir", str(tmp / "verdicts"), "-o", str(tmp / "report.json"), "--quiet",
            cwd=tmp,
        )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return tmp / "report.json"


def test_usage_path_records_the_assistants_tokens_per_run(measured):
    report = load_report(measured)
    runs = [run for item in report.results for run in item.run_results]
    answered = [run for run in runs if run.answer is not None]
    assert answered and all(run.usage is not None for run in answered)
    assert all(run.usage.input_tokens >= 420 for run in answered)
    stats = report.stats
    assert stats is not None and stats.assistant_tokens is not None
    assert stats.assistant_tokens.input_tokens == sum(r.usage.input_tokens for r in answered)
    assert stats.assistant_cost_usd is not None and stats.assistant_cost_usd > 0
    assert stats.cost_usd is not None and stats.cost_usd > 0
    assert stats.latency_ms is not None and stats.tokens_per_answer is not None


def test_plan_cost_prints_the_formula_with_its_terms_and_total(measured, tmp_path):
    done = _cli(
        "plan", str(golden_path()), "--cost", "--runs", "3", "--baseline", str(measured),
        "--judge-prices", "0.40,1.60", "--assistant-prices", "0.15,0.60", "--floor", "0.5",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = load_report(measured)
    terms = cost_terms(
        items=len(report.results), runs=3, measured=report,
        judge_prices=(0.4, 1.6), assistant_prices=(0.15, 0.6),
    )  # fmt: skip
    assert f"  cost: {terms.formula()}\n" in done.stdout
    assert f"N = {len(report.results)} items, R = 3 run(s) an item" in done.stdout
    assert "c_sys = $" in done.stdout and "assistant tokens a run in report.json" in done.stdout
    assert "h = 0.00: the judge cache's hit rate in report.json" in done.stdout
    assert "c_judge = $" in done.stdout and terms.total and terms.total > 0

    # Without prices given, the terms are priced at what the baseline recorded it paid.
    done = _cli(
        "plan", str(golden_path()), "--cost", "--baseline", str(measured), "--floor", "0.5",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.stdout.count("in report.json at the cost it recorded") == 2


def test_the_comment_says_the_cost_and_the_performance_for_information(measured, tmp_path):
    done = _cli("report", str(measured), "--floor", "0.5", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    cost = next(line for line in done.stdout.splitlines() if line.startswith("| Cost |"))
    assert "this run judge \\$" in cost and "assistant \\$" in cost
    assert "N · R · (c_sys + (1 − h) · c_judge) =" in cost
    assert "$0" not in cost.replace("\\$", "")  # every dollar escaped: no math in Markdown
    perf = next(line for line in done.stdout.splitlines() if line.startswith("| Performance |"))
    assert "latency p50" in perf and "tokens an answer p50" in perf and "not gated" in perf


def test_max_cost_usd_stops_the_run_as_incomplete_with_the_report_written(tmp_path):
    with start("baseline") as assistant:
        done = _cli(
            "run", str(golden_path()), "--assistant-url", assistant.url,
            "--usage-path", "usage", "--assistant-prices", "100,100",  # ~$0.05 an answer
            "--max-cost-usd", "0.2", "--concurrency", "1", "--judge-model", "keypoints",
            "-o", str(tmp_path / "report.json"), "--floor", "0.5", "--quiet",
            cwd=tmp_path,
        )  # fmt: skip
    assert done.returncode == 3, done.stdout + done.stderr
    report = load_report(tmp_path / "report.json")
    assert not report.complete
    assert report.incomplete_reason.startswith("stopped at max-cost-usd 0.2: the run had spent $")
    assert report.not_asked and len(report.results) + len(report.not_asked) == 24
    assert 0 < len(report.results) < 24
    # Incomplete, never a regression or a failed gate.
    assert "regress" not in done.stdout.lower()
    json.loads((tmp_path / "report.json").read_text())  # written whole


def test_max_cost_usd_without_prices_is_bad_input(tmp_path):
    done = _cli(
        "eval", str(golden_path()), "--assistant-url", "http://127.0.0.1:9",
        "--max-cost-usd", "1", "--judge-model", "keypoints", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2
    assert "max-cost-usd needs judge-prices or assistant-prices" in done.stderr
