"""The retrieval layer through the command, as a user runs it: an assistant on 127.0.0.1 whose
retriever got worse fails the gate on retrieval alone while every answer passes; hostile
source strings stay inert in the comment; absent sources never gate; the retrieval-relevance
evaluator asks the judge about the question and the fenced context only."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.assistant_server import AssistantServer
from tests.fakes.judge_server import JudgeServer
from tests.helpers import golden_gate, write_feature_golden

N = 8
PAGES = [f"docs/p{i}.md" for i in range(N)]


def _golden(path: Path, urls: list[str] | None = None) -> Path:
    lines = [
        {
            "id": f"q{i}",
            "question": f"How do I configure feature {i}?",
            "reference_key_points": [f"set option {i}"],
            "reference_urls": [urls[i] if urls else PAGES[i]],
            "tags": ["smoke", "config" if i % 2 else "install"],
        }
        for i in range(N)
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _answers(lost: set[int], expected: list[str] | None = None) -> dict[str, Any]:
    """Every answer right and citing its page; for the `lost` items the page is ranked last."""
    answers = {}
    for i in range(N):
        page = (expected or PAGES)[i]
        others = [p for p in PAGES if p != PAGES[i]]
        ranked = [*others, page] if i in lost else [page, *others]
        answers[f"How do I configure feature {i}?"] = {
            "text": f"Set option {i}. Source: {page}",
            "sources": ranked,
        }
    return answers


def _shape(answer: Any, sources: list[Any]) -> Any:
    return {"answer": answer["text"], "sources": answer["sources"]}


def _eval(golden: Path, answers: dict[str, Any], out: Path, *flags: object) -> Any:
    with AssistantServer(answers=answers, shape=_shape) as assistant:
        return golden_gate(
            "eval", golden, "--assistant-url", assistant.url, "--judge-model", "keypoints",
            "--sources-path", "sources", "--cache", "off", "--quiet", "-o", out, *flags,
        )  # fmt: skip


def _run(golden: Path, answers: dict[str, Any], tmp: Path, *flags: object) -> Any:
    with AssistantServer(answers=answers, shape=_shape) as assistant:
        return golden_gate(
            "run", golden, "--assistant-url", assistant.url, "--judge-model", "keypoints",
            "--cache", "off", "--quiet", "--baseline", tmp / "base.json",
            "--comment-file", tmp / "comment.md", "--summary-file", tmp / "summary.md",
            "-o", tmp / "report.json", "--floor", "0.5", *flags,
        )  # fmt: skip


def test_a_retriever_that_got_worse_fails_the_run_though_every_answer_passes(tmp_path):
    golden = _golden(tmp_path / "golden.jsonl")
    made = _eval(golden, _answers(set()), tmp_path / "base.json")
    assert made.returncode == 0, made.stderr
    done = _run(golden, _answers({0, 1, 2, 3, 4, 5}), tmp_path, "--sources-path", "sources")
    assert done.returncode == 1, done.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    assert all(r["passes"] == r["runs"] == 1 for r in report["results"])  # the judge passed all
    assert report["retrieval"]["items"]["q0"]["ranks"] == [[8]]
    assert report["retrieval"]["overall"]["hit_rate"] == 0.25
    assert report["retrieval"]["by_tag"]["install"]["items"] == 4
    comment = (tmp_path / "comment.md").read_text()
    headline = comment.splitlines()[2]
    assert "significant retrieval regression" in headline
    assert "significant regression:" not in headline and "below the floor" not in headline
    assert "### Retrieval" in comment
    assert "| hit@5 | **25.0%** | 100.0% |" in comment
    assert "| <code>q0</code> | <code>docs/p0.md</code> | 1 → 8 | 100% → 0% |" in comment
    assert "<code>q7</code>" not in comment.split("### Retrieval")[1].split("<details>")[0]
    # The job summary carries the same section.
    assert (
        "| <code>q5</code> | <code>docs/p5.md</code> | 1 → 8 |"
        in (tmp_path / "summary.md").read_text()
    )
    # With a wider k the same pages are retrieved, and the gate passes.
    wide = _run(
        golden, _answers({0, 1, 2, 3, 4, 5}), tmp_path, "--sources-path", "sources",
        "--retrieval-k", "8",
    )  # fmt: skip
    assert wide.returncode == 0, wide.stdout + wide.stderr


def test_a_run_without_sources_says_so_and_never_gates_on_retrieval(tmp_path):
    golden = _golden(tmp_path / "golden.jsonl")
    assert _eval(golden, _answers(set()), tmp_path / "base.json").returncode == 0
    # No sources-path: whatever the retriever did, retrieval cannot pass or fail this run.
    done = _run(golden, _answers(set(range(N))), tmp_path, "--retrieval-floor", "0.9")
    assert done.returncode == 0, done.stdout + done.stderr
    comment = (tmp_path / "comment.md").read_text()
    assert "this run recorded no sources" in comment
    assert "retrieval is not measured and does not gate" in comment
    # A baseline made without sources: the run measures retrieval but cannot compare it.
    assert (
        _eval(golden, _answers(set()), tmp_path / "base.json", "--sources-path", "").returncode == 0
    )
    done = _run(golden, _answers(set(range(N))), tmp_path, "--sources-path", "sources")
    assert done.returncode == 0, done.stdout + done.stderr
    comment = (tmp_path / "comment.md").read_text()
    assert "the baseline has no retrieval data" in comment
    assert "| hit@5 | **0.0%** | n/a |" in comment


def test_hostile_source_strings_stay_inert_in_the_comment(tmp_path):
    hostile = [
        "docs/p0.md</code><img src=x onerror=alert(1)>|x",
        "docs/p1.md) [click](javascript:alert(1)) @octocat",
        "docs/p2.md\n\n## forged heading\n| a | b |",
        *PAGES[3:],
    ]
    golden = _golden(tmp_path / "golden.jsonl", urls=hostile)
    assert _eval(golden, _answers(set(), hostile), tmp_path / "base.json").returncode == 0
    page = tmp_path / "page.html"
    done = _run(
        golden, _answers({0, 1, 2}, hostile), tmp_path, "--sources-path", "sources",
        "--html-report", page,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    assert "<img" not in done.stdout + done.stderr  # the log
    html = page.read_text()
    assert "onerror=alert" in html.replace("\\u003c", "<")  # the source is on the page ...
    assert "<img src=x" not in html  # ... as data, never markup
    comment = (tmp_path / "comment.md").read_text()
    section = comment.split("### Retrieval")[1]
    assert "<img" not in comment and "](javascript:" not in comment
    assert "@octocat" not in comment  # a mention would notify someone
    assert "\n## forged heading" not in comment
    rows = [line for line in section.splitlines() if line.startswith("| <code>q")]
    assert len(rows) == 3
    for row in rows:  # every row keeps its four cells: no pipe got through
        assert len(re.findall(r"(?<!\\)\|", row)) == 5, row


@pytest.fixture
def judge(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    with JudgeServer() as server:
        yield server


def test_retrieval_relevance_asks_about_the_question_and_the_fenced_context(tmp_path, judge):
    golden = write_feature_golden(tmp_path / "golden.jsonl", n=2)
    relevant = {
        "answer": "Set option 0. Source: docs/config.md",
        "sources": ["docs/config.md"],
        "retrieval": {"passages": [{"text": "To configure feature 0, set option 0."}]},
    }
    off_topic = {
        "answer": "Set option 1. Source: docs/config.md",
        "sources": ["docs/config.md"],
        "retrieval": {"passages": [{"text": "The cafeteria serves soup on Tuesdays."}]},
    }
    answers = {
        "How do I configure feature 0?": relevant,
        "How do I configure feature 1?": off_topic,
    }
    with AssistantServer(answers=answers, shape=lambda a, s: a) as assistant:
        done = golden_gate(
            "eval", golden, "--assistant-url", assistant.url, "-o", tmp_path / "r.json",
            "--quiet", "--judge-model", "openai:judge-strict", "--judge-base-url",
            judge.base_url, "--evaluators", "retrieval-relevance", "--context-path",
            "retrieval.passages", "--cache", "off", "--judge-canaries", "0",
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert [r["passes"] for r in report["results"]] == [1, 0]
    assert report["run_settings"]["evaluators"] == "retrieval-relevance"
    prompts = judge.prompts
    assert len(prompts) == 2
    for prompt in prompts:
        assert "retrieved context for relevance" in prompt
        assert "<untrusted_text" in prompt.split("<retrieved_context>")[1]  # fenced
        assert "<untrusted_text" in prompt.split("<inputs>")[1].split("</inputs>")[0]
        assert "restart the server" not in prompt.split("<inputs>")[1].split("<retrieved")[0]
        assert "reference" not in prompt.split("<inputs>")[1].lower()  # no reference given
