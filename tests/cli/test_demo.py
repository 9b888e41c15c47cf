"""`golden-gate demo` and `golden-gate run` as a newcomer runs them: offline, in seconds."""

import json

from golden_gate.core.report_file import load_report
from golden_gate.example_assistant import golden_path, start
from tests.helpers import golden_gate


def test_demo_fails_the_gate_with_named_regressions(tmp_path):
    done = golden_gate("demo", "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    comment = done.stdout
    assert comment.startswith("<!-- golden-gate:report id=demo -->")
    assert "golden-gate failed" in comment
    assert "significant regression" in comment
    assert "### Regressed items (6)" in comment
    for item_id in ("backups-restore", "trouble-sealed-503", "upgrade-versions"):
        assert f"<code>{item_id}</code>" in comment
    assert "offline **keypoints** judge" in comment
    assert "`golden-gate run` would exit 1" in done.stderr
    report = load_report(tmp_path / "out" / "report.json")
    assert report.judge == "keypoints" and len(report.results) == 14
    assert (tmp_path / "out" / "comment.md").read_text() == comment.removesuffix("\n")
    assert (tmp_path / "out" / "summary.md").is_file()


def test_demo_shows_the_page_its_retriever_lost(tmp_path):
    done = golden_gate("demo", "--out", tmp_path)
    assert done.returncode == 0, done.stderr
    section = done.stdout.split("### Retrieval")[1].split("<details>")[0]
    assert "| hit@5 | **69.2%** | 100.0% |" in section
    assert "| <code>install-ports</code> | <code>docs/install.md</code> | 1 → 6 |" in section
    assert "| <code>trouble-sealed-503</code> | <code>docs/troubleshooting.md</code> | 1 → not" in (
        section
    )


def test_demo_retriever_variant_fails_on_retrieval_alone_with_every_answer_passing(tmp_path):
    done = golden_gate("demo", "--variant", "retriever", "--out", tmp_path)
    assert done.returncode == 0, done.stderr
    comment = done.stdout
    assert "golden-gate failed" in comment
    headline = comment.splitlines()[2]
    assert headline.startswith("**failed: retrieval below the floor: hit@")
    assert "regression" not in headline and "pass rate" not in headline  # the only reason
    assert "| Pass rate | **14/14** (100.0%)" in comment
    assert "**0** regressed · **0** improved" in comment
    assert "| <code>install-requirements</code> | <code>docs/install.md</code> | 1 → 6 |" in comment
    report = load_report(tmp_path / "report.json")
    assert all(r.passes == r.runs == 1 for r in report.results)
    assert report.retrieval is not None
    assert report.retrieval.items["install-ports"].ranks == [[6]]
    assert "`golden-gate run` would exit 1" in done.stderr


def test_demo_baseline_variant_passes(tmp_path):
    done = golden_gate("demo", "--variant", "baseline", "--out", tmp_path)
    assert done.returncode == 0, done.stderr
    assert "golden-gate passed" in done.stdout


def test_plan_cost_on_the_demo_prints_every_term_and_the_total(tmp_path):
    from golden_gate.demo import write_config

    done = golden_gate("plan", "--cost", "--config", write_config(tmp_path))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split("  cost: ")[1].splitlines()
    # 14 smoke items, one run each, at the demo's assistant-prices, the offline judge free
    assert lines[0].startswith("N · R · (c_sys + (1 − h) · c_judge) = 14 × 1 × ($0.0000")
    assert lines[0].endswith(") = $0.0013")
    assert lines[1].strip() == "N = 14 items, R = 1 run(s) an item"
    assert lines[2].strip().startswith("c_sys = $0.0000")
    assert "assistant tokens a run in baseline.json at assistant-prices" in lines[2]
    assert lines[3].strip() == "h = 0.00: the judge cache's hit rate in baseline.json"
    assert lines[4].strip().startswith("c_judge = $0: the judge used no tokens")
    assert "no assistant token usage" not in done.stdout


def test_run_command_exit_codes_and_files(tmp_path):
    baseline = tmp_path / "baseline.json"
    with start("baseline") as assistant:
        first = golden_gate(
            "eval",
            golden_path(),
            "--assistant-url",
            assistant.url,
            "--subset-tags",
            "smoke",
            "-o",
            baseline,
            "--quiet",
            cwd=tmp_path,
        )
    assert first.returncode == 0, first.stderr
    assert "14/14 items passed" in first.stdout
    with start("candidate") as assistant:
        done = golden_gate(
            "run",
            golden_path(),
            "--assistant-url",
            assistant.url,
            "--subset-tags",
            "smoke",
            "--baseline",
            baseline,
            "--floor",
            "0.5",
            "-o",
            tmp_path / "r.json",
            "--comment-file",
            tmp_path / "c.md",
            "--quiet",
            cwd=tmp_path,
        )
    assert done.returncode == 1, done.stdout + done.stderr
    regressed = [line.split(": ")[1] for line in done.stdout.splitlines() if "regressed: " in line]
    assert len(regressed) == 6 and regressed == sorted(regressed)
    assert (tmp_path / "c.md").read_text().startswith("<!-- golden-gate:report id=default -->")
    assert json.loads((tmp_path / "r.json").read_text())["results"]


def test_run_against_a_dead_assistant_exits_3_and_keeps_the_report(tmp_path):
    with start("baseline") as assistant:
        url = assistant.url  # stopped when the block ends: nothing listens there now
    done = golden_gate(
        "run",
        golden_path(),
        "--assistant-url",
        url,
        "--subset-tags",
        "smoke",
        "--floor",
        "0.7",
        "--retries",
        "0",
        "-o",
        tmp_path / "r.json",
        "--quiet",
        cwd=tmp_path,
    )
    assert done.returncode == 3, done.stdout + done.stderr
    assert "the evaluation could not be completed" in done.stderr
    report = load_report(tmp_path / "r.json")
    # The first request (the preflight) found nothing listening: no other item was asked.
    assert not report.complete and report.results == [] and len(report.not_asked) == 14
    assert "connection refused" in report.incomplete_reason


def test_bad_golden_line_exits_2(tmp_path):
    golden = tmp_path / "g.jsonl"
    golden.write_text('{"id": "a", "question": "q?"}\n{"id": "a"\n')
    done = golden_gate("eval", golden, "--assistant-url", "http://127.0.0.1:9", cwd=tmp_path)
    assert done.returncode == 2
    assert (
        done.stderr.strip() == f"golden-gate: error: {golden}:2: invalid JSON "
        "(Expecting ',' delimiter, column 11)"
    )


def test_sigterm_mid_run_leaves_a_valid_partial_report(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    from tests.fakes.assistant_server import AssistantServer

    golden = tmp_path / "g.jsonl"
    golden.write_text(
        "".join(
            json.dumps(
                {"id": f"q{i:02d}", "question": f"Q{i}?", "reference_key_points": ["answer"]}
            )
            + "\n"
            for i in range(40)
        )
    )
    with AssistantServer(default_answer="An answer.", latency_s=0.3) as assistant:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "golden_gate",
                "eval",
                str(golden),
                "--assistant-url",
                assistant.url,
                "--concurrency",
                "2",
                "-o",
                str(tmp_path / "r.json"),
            ],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 30
        while assistant.request_count < 6 and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 3, out + err
    assert "interrupted after" in err
    report = load_report(tmp_path / "r.json")
    assert not report.complete and report.incomplete_reason.startswith("interrupted after")
    assert 0 < len(report.results) < 40
    assert all(r.passed for r in report.results)
