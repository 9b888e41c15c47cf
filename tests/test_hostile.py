"""Hostile questions, answers and judge comments never break or escape the PR comment."""

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from golden_gate.gate import GateSettings, evaluate_gate
from golden_gate.render import COMMENT_LIMIT, marker, render_comment
from golden_gate.report import ItemResult, Report, RunResult, Verdict

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
    "owner/repo#9",
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
ISSUE = re.compile(r"(?<![&\w])#\d")
INVISIBLE = re.compile("[\u200c-\u200f\u202a-\u202e\u2066-\u2069\ufeff\x00\x1b]")
ITEM_ROW = re.compile(r"\| \d+/\d+( \(\d+ errors\))? \|$")
OUR_TAGS = re.compile(r"</?(details|summary|code)>")


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
    assert body.count("<!--") == 1 and body.count("-->") == 1
    assert (
        body.count("<details>") == body.count("</details>") == 4
    )  # improved, unstable, errors, tags
    assert body.count("<summary>") == 4
    assert not MENTION.search(body), MENTION.search(body)
    assert not LINK.search(body), LINK.search(body)
    assert not ISSUE.search(body), ISSUE.search(body)
    assert not INVISIBLE.search(body)
    without_ours = OUR_TAGS.sub("", body.replace(marker("x"), ""))
    assert "<" not in without_ours.replace("&lt;", "")
    tables = [line for line in body.splitlines() if line.startswith("| ")]
    for line in tables:  # every row has the column count of its header: no pipe got through
        assert line.count("|") - line.count("\\|") in (3, 6), line
    item_rows = [line for line in tables if ITEM_ROW.search(line)]
    assert len(item_rows) == 7  # 3 regressed, 2 improved, 1 unstable, 1 error


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
