"""golden-gate against a real judge: llama.cpp's llama-server serving SmolLM2-135M-Instruct.

A model this small is a weak judge, and that is the point: these tests check what a
self-hosted user meets (the generation cap on every request, a runaway ending as one quick
error, verdicts kept apart per server, calibration saying the judge is weak), not how good the
verdicts are. A handful of items keeps the tier within minutes on 2 CPU cores.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from golden_gate.example_assistant import golden_path, start
from tests import helpers
from tests.llm.conftest import MODEL_ALIAS, RecordingProxy

pytestmark = pytest.mark.llm

ITEMS = ("install-ports", "install-requirements", "config-file")
JUDGE = f"openai:{MODEL_ALIAS}"


@pytest.fixture(scope="module")
def assistant() -> Any:
    with start("baseline") as running:
        yield running.url


@pytest.fixture
def golden(tmp_path: Path) -> Path:
    lines = Path(golden_path()).read_text(encoding="utf-8").splitlines()
    chosen = [line for line in lines if line.strip() and json.loads(line)["id"] in ITEMS]
    path = tmp_path / "golden.jsonl"
    path.write_text("\n".join(chosen) + "\n", encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-server-needs-no-key")


def golden_gate(*args: object, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The command as a user runs it, with time for a CPU-bound judge."""
    return helpers.golden_gate(*args, cwd=cwd, timeout=900)


def evaluate(
    golden: Path, assistant: str, proxy: RecordingProxy, tmp_path: Path, *extra: object
) -> tuple[Any, dict[str, Any]]:
    report = tmp_path / f"report-{len(list(tmp_path.glob('report-*')))}.json"
    done = golden_gate(
        "eval", golden, "--assistant-url", assistant,
        "--judge-model", JUDGE, "--judge-base-url", f"{proxy.url}/v1",
        "--judge-concurrency", "2", "--judge-timeout", "120", "--judge-retries", "1",
        "--max-error-rate", "1", "--cache-dir", tmp_path / "cache", "--quiet",
        "--judge-canaries", "0",  # checked on their own below: here the calls are counted
        "-o", report, *extra,
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done, json.loads(report.read_text(encoding="utf-8"))


def asked_again(done: Any) -> int:
    """The runs a judge error sent back to the judge at the end of the run (evaluate.py)."""
    import re

    found = re.search(r"asked the judge again about (\d+) run", done.stderr)
    return int(found.group(1)) if found else 0


def judged_runs(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [run for item in report["results"] for run in item["run_results"]]


def test_every_request_is_capped_and_a_second_run_asks_only_what_failed(
    golden, assistant, proxies, tmp_path
):
    proxy = proxies[0]
    done, first = evaluate(golden, assistant, proxy, tmp_path, "--judge-max-tokens", "384")
    sent = proxy.completions
    # The judge preflight's one call, one call an item (nothing retried, nothing doubled), and
    # one more for each run the judge failed on, asked again once at the end of the run.
    assert len(sent) == 1 + len(ITEMS) + asked_again(done)
    for body in sent:
        cap = body.get("max_completion_tokens", body.get("max_tokens"))
        assert cap == 384, body
        assert body["temperature"] == 0
        assert body["response_format"]["type"] == "json_schema"
    runs = judged_runs(first)
    errors = [run for run in runs if run["status"] == "error"]
    for run in runs:
        assert run.get("verdict") or run["error"].startswith(f"judge: judge {JUDGE} failed: ")
        assert "\n" not in (run.get("error") or "")
    assert len(errors) < len(runs), "the real judge gave no verdict at all"

    again, second = evaluate(golden, assistant, proxy, tmp_path, "--judge-max-tokens", "384")
    # Verdicts are cached (the preflight's too), errors never: the second run asks again only
    # what failed.
    assert len(proxy.completions) - len(sent) == len(errors) + asked_again(again)
    assert sum(r["verdict"]["cached"] for r in judged_runs(second) if r.get("verdict")) == len(
        runs
    ) - len(errors)


def test_a_real_judge_is_checked_by_its_canaries_and_the_outcome_is_said(
    golden, assistant, proxies, tmp_path
):
    # A 135M judge is weak: whether it gets its canaries right or not, the run says which, and
    # a judge that fails them never yields a result (exit 3 naming the probe).
    proxy = proxies[0]
    report = tmp_path / "report.json"
    done = golden_gate(
        "eval", golden, "--assistant-url", assistant,
        "--judge-model", JUDGE, "--judge-base-url", f"{proxy.url}/v1",
        "--judge-concurrency", "2", "--judge-timeout", "120", "--judge-retries", "1",
        "--judge-max-tokens", "384", "--max-error-rate", "1",
        "--cache-dir", tmp_path / "cache", "-o", report,
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode in (0, 3), done.stderr
    written = json.loads(report.read_text(encoding="utf-8"))
    canaries = written["canaries"]
    assert canaries["probes"] and canaries["checks"]
    probes = len(canaries["probes"])
    assert len(ITEMS) + probes <= len(proxy.completions) <= 2 * (len(ITEMS) + probes)
    failed = [c for c in canaries["checks"] if c["status"] != "passed"]
    if failed:
        assert done.returncode == 3
        assert "canar" in done.stdout + done.stderr
    else:
        assert done.returncode == 0


def test_a_runaway_reply_stops_the_run_at_the_preflight_in_one_request(
    golden, assistant, proxies, tmp_path
):
    proxy = proxies[0]
    report = tmp_path / "report.json"
    done = golden_gate(
        "eval", golden, "--assistant-url", assistant,
        "--judge-model", JUDGE, "--judge-base-url", f"{proxy.url}/v1",
        "--judge-timeout", "120", "--judge-max-tokens", "4", "--cache-dir", tmp_path / "cache",
        "--quiet", "--judge-canaries", "0", "-o", report,
        cwd=tmp_path,
    )  # fmt: skip
    # A judge that cannot give a verdict within judge-max-tokens is a setting to fix, found by
    # the preflight's one request (a length stop is not retried): no item asked or judged.
    assert done.returncode == 2, done.stderr
    assert len(proxy.completions) == 1
    assert "generation cap of 4 tokens" in done.stderr and "judge-max-tokens" in done.stderr
    assert "CompletionUsage" not in done.stderr
    written = json.loads(report.read_text(encoding="utf-8"))
    assert not written["complete"] and len(written["not_asked"]) == len(ITEMS)


def test_two_servers_behind_one_model_name_never_share_verdicts(
    golden, assistant, proxies, tmp_path
):
    first, second = proxies
    done_a, _ = evaluate(golden, assistant, first, tmp_path, "--judge-max-tokens", "384")
    done_b, b = evaluate(golden, assistant, second, tmp_path, "--judge-max-tokens", "384")
    assert len(first.completions) == 1 + len(ITEMS) + asked_again(done_a)
    # The same cache, but another server: proved again (the preflight) and every item asked.
    assert len(second.completions) == 1 + len(ITEMS) + asked_again(done_b)
    assert not any(r["verdict"]["cached"] for r in judged_runs(b) if r.get("verdict"))


def test_calibration_through_a_real_server_reports_kappa_and_its_interval(proxies, tmp_path):
    # Six of the bundled human labels, three "pass" and three "fail".
    bundled = Path(__file__).parents[2] / "examples" / "calibration" / "labels.jsonl"
    chosen = {"pass": [], "fail": []}
    for line in bundled.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if len(chosen[row["label"]]) < 3:
            chosen[row["label"]].append(line)
    rows = chosen["pass"] + chosen["fail"]
    labels = tmp_path / "labels.jsonl"
    labels.write_text("\n".join(rows) + "\n", encoding="utf-8")
    golden = golden_path()
    out = tmp_path / "calibration.json"
    done = golden_gate(
        "calibrate", golden, "--labels", labels, "-o", out,
        "--judge-model", JUDGE, "--judge-base-url", f"{proxies[0].url}/v1",
        "--judge-concurrency", "2", "--judge-timeout", "120", "--judge-max-tokens", "384",
        "--cache-dir", tmp_path / "cache",
        cwd=tmp_path,
    )  # fmt: skip
    # 1: kappa below --min-kappa; 3: more than 10 % of the calls gave no verdict. Either is
    # said plainly, and the calibration report is written whatever the outcome.
    assert done.returncode in (0, 1, 3), done.stderr
    assert "judge calibrated" in done.stdout or "κ" in done.stdout, done.stdout
    assert len(proxies[0].completions) == len(rows)
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["judge_calls"] == len(rows)
    assert result["n"] + len(result["errors"]) == len(rows)
    for error in result["errors"]:
        assert error["error"].startswith(f"judge {JUDGE} failed: "), error
        assert "\n" not in error["error"]
    if done.returncode == 3:
        assert result["errors"], "incomplete without an error"
    kappa = result["kappa"]
    # A 135M-parameter judge: whatever kappa it earns comes with its interval, or a reason.
    if kappa["value"] is None:
        assert kappa["reason"]
    else:
        assert -1 <= kappa["ci_low"] <= kappa["value"] <= kappa["ci_high"] <= 1


def test_two_evaluators_and_a_two_judge_panel_on_a_real_server(
    golden, assistant, proxies, tmp_path
):
    proxy = proxies[0]
    panel = f"{JUDGE},{JUDGE}-second"  # one server, two names: two judges to the cache
    comment = tmp_path / "comment.md"
    done = golden_gate(
        "run", golden, "--assistant-url", assistant, "--comment-file", comment,
        "-o", tmp_path / "r.json",
        "--judge-model", panel, "--judge-base-url", f"{proxy.url}/v1",
        "--evaluators", "correctness,relevancy",
        "--judge-concurrency", "2", "--judge-timeout", "120", "--judge-retries", "1",
        "--judge-max-tokens", "384", "--max-error-rate", "1", "--floor", "0.01",
        "--cache-dir", tmp_path / "cache", "--quiet", "--judge-canaries", "0",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode in (0, 1, 3), done.stderr
    # Every item asked of each judge for each evaluator, once; a run the judges failed on is
    # asked again once at the end (its cached verdicts are not asked for again).
    asked = len(ITEMS) * 2 * 2 + 2  # and the preflight's one call to each judge of the panel
    assert asked <= len(proxy.completions) <= asked + asked_again(done) * 2 * 2
    assert {body["model"] for body in proxy.completions} == {MODEL_ALIAS, f"{MODEL_ALIAS}-second"}
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert report["judge"] == panel
    for run in judged_runs(report):
        assert [e["evaluator"] for e in run["evaluations"]] == ["correctness", "relevancy"]
        assert all(len(e["votes"]) == 2 for e in run["evaluations"])
    text = comment.read_text(encoding="utf-8")
    assert "| Evaluators | <code>correctness</code>" in text
    assert "<code>relevancy</code>" in text
