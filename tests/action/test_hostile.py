"""Hostile questions, answers and judge comments never break or escape the PR comment."""

import asyncio
import json
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from golden_gate import cli, runner
from golden_gate.core.gate import evaluate_gate
from golden_gate.core.golden import GoldenItem
from golden_gate.core.item_result import ItemResult, RunResult, Verdict
from golden_gate.core.report import Report
from golden_gate.core.report_file import parse_report, report_json
from golden_gate.core.verdict import GateSettings
from golden_gate.evaluation.cache import VerdictCache
from golden_gate.evaluation.evaluate import evaluate
from golden_gate.evaluation.judge import KeypointsJudge
from golden_gate.evaluation.response import AssistantSettings
from golden_gate.evaluation.target import AssistantClient
from golden_gate.rendering.render import (
    COMMENT_LIMIT,
    SUMMARY_LIMIT,
    marker,
    render_comment,
    render_summary,
)
from tests.fakes.assistant_server import AssistantServer
from tests.mermaid import without_charts

FRAGMENTS = [
    "<details>",
    "</details>",
    "<summary>x</summary>",
    "</td></tr></table>",
    "|",
    "||",
    "`",
    "```",
    "@octocat",
    "@org/team",
    "@ org",
    "x@y.com",
    "#123",
    "GH-7",
    "gh-12",
    "owner/repo#9",
    "org/repo@0123456789abcdef0123456789abcdef01234567",
    "deadbeefcafe",
    "![x](http://evil.example/p.png)",
    "[click](https://evil.example)",
    "<https://evil.example>",
    "https://evil.example",
    "www.evil.example",
    "<!-- golden-gate:report id=default -->",
    "<!--",
    "-->",
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "&#64;user",
    "&lt;b&gt;",
    "\\",
    "**bold**",
    "_em_",
    "~~s~~",
    "$x$",
    "\n",
    "\r\n",
    "\n\n| a | b |\n|---|---|",
    "\u200b",
    "\u200d",
    "\u202e",
    "\u2066",
    "\ufeff",
    "\x00",
    "\x1b[31m",
    "# heading",
    "> quote",
    "- item",
    "1. item",
    "---",
    "<br>",
    "{{ marker }}",
    "{% raw %}",
    "javascript:alert(1)",
]
hostile = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=8)), min_size=0, max_size=12
).map("".join)

MENTION = re.compile(r"(?<![\w&])@[A-Za-z0-9]")
LINK = re.compile(r"(?i)https?://|www\.|\]\(|\]\[|<a\s|<img|<script")
ISSUE = re.compile(r"(?<![&\w])#\d|\b[gG][hH]-\d")
SHA = re.compile(r"(?i)(?<![0-9a-z])[0-9a-f]{7,}(?![0-9a-z])")  # GitHub links it to a commit
INVISIBLE = re.compile("[\u200c-\u200f\u202a-\u202e\u2066-\u2069\ufeff\x00\x1b]")
ITEM_ROW = re.compile(
    r"\| \d+/\d+( \(\d+ unanswered\))?( \(\d+ not judged\))?( \(\d+ check errors?\))? \|$"
)
OUR_TAGS = re.compile(r"</?(details|summary|code|sub)>")


def run(status: str, text: str) -> RunResult:
    passed = status == "pass"
    return RunResult(
        status=status,  # type: ignore[arg-type]
        answer=text if status != "error" else None,
        error=text if status == "error" else None,
        verdict=None if status == "error" else Verdict(passed=passed, comment=text),
    )


def build(question: str, answer: str, why: str, item_id: str) -> tuple[Report, Report]:
    ids = [f"{item_id}-{n}" for n in range(8)]
    base = Report(
        judge="j",
        results=[ItemResult(id=i, tags=[why[:20] or "t"], passes=1, runs=1) for i in ids[:6]]
        + [ItemResult(id=i, passes=0, runs=1) for i in ids[6:]],
    )
    rows = [
        ItemResult(
            id=ids[0],
            tags=[why[:20] or "t"],
            passes=0,
            runs=1,
            question=question,
            run_results=[run("fail", answer)],
        ),
        ItemResult(
            id=ids[1],
            tags=[why[:20] or "t"],
            passes=0,
            runs=1,
            question=question,
            run_results=[run("fail", why)],
        ),
        ItemResult(
            id=ids[2],
            passes=1,
            runs=3,
            question=question,
            run_results=[run("pass", answer), run("fail", why), run("fail", answer)],
        ),
        ItemResult(
            id=ids[3],
            passes=0,
            runs=0,
            errors=1,
            question=question,
            run_results=[run("error", why)],
        ),
        ItemResult(
            id=ids[4], passes=1, runs=1, question=question, run_results=[run("pass", answer)]
        ),
        ItemResult(
            id=ids[5], passes=1, runs=1, question=question, run_results=[run("pass", answer)]
        ),
        ItemResult(
            id=ids[6], passes=1, runs=1, question=question, run_results=[run("pass", answer)]
        ),
        ItemResult(
            id=ids[7], passes=1, runs=1, question=question, run_results=[run("pass", answer)]
        ),
    ]
    return Report(judge=why[:40] or "j", results=rows), base


def check_structure(body: str) -> None:
    assert body.startswith(marker("x") + "\n")
    body, charts = without_charts(body)  # each chart checked statement by statement
    assert len(charts) == 1  # by tag (no history given: no trend)
    assert body.count("<!--") == 1 and body.count("-->") == 1
    assert (
        body.count("<details>") == body.count("</details>") == 5
    )  # regressed before and after, improved, unstable, errors, tags
    assert body.count("<summary>") == 5
    assert not MENTION.search(body), MENTION.search(body)
    assert not LINK.search(body), LINK.search(body)
    assert not ISSUE.search(body), ISSUE.search(body)
    assert not SHA.search(body), SHA.search(body)
    assert not INVISIBLE.search(body)
    without_ours = OUR_TAGS.sub("", body.replace(marker("x"), ""))
    assert "<" not in without_ours.replace("&lt;", "")
    tables = [line for line in body.splitlines() if line.startswith("| ")]
    for line in tables:  # every row has the column count of its header: no pipe got through
        assert line.count("|") - line.count("\\|") in (3, 4, 6), line
    item_rows = [line for line in tables if ITEM_ROW.search(line)]
    assert len(item_rows) == 7  # 3 regressed, 2 improved, 1 unstable, 1 error
    # The before-and-after table: its header and the 3 regressed items.
    assert sum(line.count("|") - line.count("\\|") == 4 for line in tables) == 4


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile, hostile, hostile, hostile)
def test_random_hostile_strings_keep_the_comment_intact(question, answer, why, item_id):
    candidate, baseline = build(question, answer, why, item_id or "id")
    gate = evaluate_gate(candidate, baseline, GateSettings(floor=0.01))
    body = render_comment(candidate, gate, baseline=baseline, comment_id="x")
    check_structure(body)


def test_megabyte_strings_are_cut_and_the_comment_stays_small():
    huge = ("<details>@org/team ![x](http://e.x) |" * 40_000)[:1_000_000]
    candidate, baseline = build(huge, huge, huge, "big")
    gate = evaluate_gate(candidate, baseline, GateSettings(floor=0.01))
    body = render_comment(candidate, gate, baseline=baseline, comment_id="x")
    check_structure(body)
    assert len(body) < 20_000 < COMMENT_LIMIT


# -- one malformed item is that item's problem, never the run's ------------------------------


def test_half_an_emoji_in_a_question_or_an_answer_is_repaired_and_recorded(tmp_path):
    golden = tmp_path / "golden.jsonl"
    lines = [
        {"id": "cut", "question": "Why is \ud83d cut?", "reference_key_points": ["emoji"]},
        {"id": "whole", "question": "Whole?", "reference_key_points": ["whole"]},
    ]
    golden.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    out = tmp_path / "out"
    answers = {"Why is \ufffd cut?": "An emoji cut \ud83d in half", "Whole?": "whole 😀"}
    with AssistantServer(answers=answers, sources=["docs/\udc00.md"]) as server:
        code = cli.main(
            ["run", str(golden), "--assistant-url", server.url, "--sources-path", "sources",
             "--quiet", "--floor", "0",
             "--cache", "off", "-o", str(out / "report.json"), "--comment-file",
             str(out / "comment.md"), "--summary-file", str(out / "summary.md")]
        )  # fmt: skip
        assert server.count("Why is \ufffd cut?") == 1  # the repaired question was asked
    assert code in (0, 1)
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["dataset"]["repaired_items"] == ["cut"]
    cut, whole = report["results"]
    (run,) = cut["run_results"]
    assert run["answer"] == "An emoji cut \ufffd in half" and run["sources"] == ["docs/\ufffd.md"]
    assert run["surrogates_replaced"] == 2 and run["status"] != "error"
    assert whole["run_results"][0]["surrogates_replaced"] == 1  # its source only
    assert (out / "comment.md").read_text(encoding="utf-8").startswith("<!-- golden-gate")
    assert (out / "summary.md").is_file()


def test_reports_read_back_and_written_survive_half_an_emoji(tmp_path):
    text = json.dumps({"judge": "j\ud83d", "results": [{"id": "a\udc00", "passes": 1, "runs": 1}]})
    report = parse_report(text, source="baseline.json")
    assert report.judge == "j\ufffd" and report.results[0].id == "a\ufffd"
    # A writer handed text nobody repaired still writes a whole report.
    report.results[0].question = "q\ud83d"
    assert json.loads(report_json(report))["results"][0]["question"] == "q\ufffd"


class ExplodingJudge(KeypointsJudge):
    """A judge with a bug that only one question triggers."""

    async def judge(self, *, question: str, answer: str, reference: str) -> Verdict:
        if "boom" in question:
            raise ZeroDivisionError("division by zero")
        return await super().judge(question=question, answer=answer, reference=reference)


def test_an_unexpected_exception_in_one_item_is_that_runs_error_not_the_evaluations():
    golden = [
        GoldenItem(id="boom", question="boom?", reference_key_points=["fine"]),
        GoldenItem(id="fine", question="fine?", reference_key_points=["fine"]),
    ]

    async def go() -> Report:
        async with AssistantClient(AssistantSettings(url=server.url, retries=0)) as client:
            return await evaluate(
                golden, client=client, judge=ExplodingJudge(), cache=VerdictCache(None)
            )

    with AssistantServer(default_answer="fine") as server:
        report = asyncio.run(go())
    boom, fine = report.results
    assert fine.passed and fine.errors == 0
    assert boom.errors == 1 and boom.runs == 0
    assert boom.run_results[0].error == "internal error: ZeroDivisionError: division by zero"


def test_the_summary_fits_the_runners_byte_limit_without_cutting_a_row(tmp_path):
    # 1,500 failing rows of CJK text: about 600 characters but 1,800 bytes each.
    cjk = "回答が間違っています" * 30
    report = Report(
        judge="j",
        results=[
            ItemResult(
                id=f"q{i:04d}", passes=0, runs=1, question=cjk, run_results=[run("fail", cjk)]
            )
            for i in range(1500)
        ],
    )
    gate = evaluate_gate(report, None, GateSettings())
    summary = render_summary(report, gate)
    assert len(summary.encode("utf-8")) <= SUMMARY_LIMIT < runner.SUMMARY_LIMIT
    rows = [line for line in summary.splitlines() if line.startswith("| <code>q")]
    assert 100 < len(rows) < 1500 and all(ITEM_ROW.search(line) for line in rows)
    runner.write_summary(summary, {"GITHUB_STEP_SUMMARY": str(tmp_path / "summary")})
    assert (tmp_path / "summary").read_text(encoding="utf-8") == summary  # written whole
