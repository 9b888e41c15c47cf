"""The report page (`golden-gate view`): the demo's page in headless Chromium, as a reviewer
uses it, and hostile answers that render as text and run nothing."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path

import pytest

from golden_gate.core import retrieval
from golden_gate.core.gate import evaluate_gate
from golden_gate.core.item_result import (
    CheckOutcome,
    EvaluatorOutcome,
    ItemResult,
    JudgeVote,
    RunResult,
    ToolCall,
    TurnResult,
    Verdict,
)
from golden_gate.core.report import Report
from golden_gate.core.report_file import load_report
from golden_gate.core.report_file import save_report as save
from golden_gate.core.verdict import GateSettings
from golden_gate.demo import baseline_path
from golden_gate.rendering.page import render_page
from tests.browser import CHROMIUM, browser
from tests.helpers import golden_gate

# Each would set window.__pwned if it ran: as a tag, a handler, a link, an escape from the data
# block, a forged attribute.
PAYLOAD = (
    "<script>window.__pwned = 1</script>"
    '<img src=x onerror="window.__pwned = 2">'
    "[click](javascript:window.__pwned=3) "
    '<a href="javascript:window.__pwned=4">link</a> '
    "</script><script>window.__pwned = 5</script> "
    "<!-- <svg onload=window.__pwned=6> --> \u2028 &lt;b&gt; "
    "unseal the server"
)
CONTROL_JSON = json.dumps(PAYLOAD).replace("</", "<\\/")  # a JS string that ends no script
HOSTILE_ID = '<img src=x onerror="window.__pwned=7">'
REGRESSED = "backups-restore"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    done = golden_gate("demo", "--out", out)
    assert done.returncode == 0, done.stderr
    return out


def _hostile(demo: Path, out: Path) -> Path:
    """The demo's report with one regressed item's answer, question, tag and judge reason
    hostile, and an item whose id is."""
    report = load_report(demo / "report.json")
    item = report.by_id()[REGRESSED]
    item.question = PAYLOAD
    item.tags.append("<b>tag</b>")
    run = item.run_results[0]
    run.answer = PAYLOAD
    assert run.verdict is not None
    run.verdict.comment = "missing key point: " + PAYLOAD
    report.results.append(
        ItemResult(
            id=HOSTILE_ID,
            tags=[PAYLOAD],
            passes=0,
            runs=1,
            question=PAYLOAD,
            run_results=[
                RunResult(
                    status="fail",
                    answer=PAYLOAD,
                    sources=[PAYLOAD],
                    checks=[CheckOutcome(name=PAYLOAD, passed=False, reason=PAYLOAD)],
                    verdict=Verdict(passed=False, comment=PAYLOAD),
                )
            ],
        )
    )
    path = out / "hostile.json"
    save(report, path)
    return path


def _view(report: Path, out: Path) -> Path:
    page = out / "report.html"
    done = golden_gate("view", report, "--baseline", baseline_path(), "-o", page)
    assert done.returncode == 0, done.stderr
    assert f"wrote {page}" in done.stdout
    return page


def _select(status: str) -> str:
    return (
        "(() => { const s = document.getElementById('f-status'); "
        f"s.value = {json.dumps(status)}; s.dispatchEvent(new Event('change')); }})()"
    )


def _rows() -> str:
    return "[...document.querySelectorAll('#items tr.row button')].map(b => b.textContent)"


def _open(item_id: str) -> str:
    return (
        f"[...document.querySelectorAll('#items tr.row button')]"
        f".find(b => b.textContent === {json.dumps(item_id)}).click()"
    )


def _text(selector: str) -> str:
    return f"[...document.querySelectorAll({json.dumps(selector)})].map(e => e.textContent)"


SCRIPT_RAN = (
    "window.__pwned !== undefined || document.querySelectorAll("
    "'img, a, iframe, object, embed, svg, [onerror], [onload]').length > 0 || "
    "document.scripts.length !== 2"
)


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium: scripts/setup-mermaid.sh")
def test_the_demo_page_filters_opens_an_item_and_shows_both_answers(demo, tmp_path):
    page = demo / "report.html"  # `golden-gate demo` writes it, as the Action does
    report, baseline = load_report(demo / "report.json"), load_report(baseline_path())
    gate = evaluate_gate(report, baseline, GateSettings())
    assert gate.comparison is not None and len(gate.comparison.regressions) == 6
    item, base = report.by_id()[REGRESSED], baseline.by_id()[REGRESSED]
    with browser() as tab:
        tab.open(page.as_uri())
        tab.wait("document.body.dataset.ready === '1'")
        assert tab.eval("document.getElementById('verdict').textContent") == "failed"
        assert tab.eval("document.querySelectorAll('#items tr.row').length") == 14
        tab.eval(_select("regressed"))
        assert sorted(tab.eval(_rows())) == gate.comparison.regressions
        assert tab.eval("document.getElementById('count').textContent").startswith("6 of 14")
        tab.eval(_open(REGRESSED))
        answers = tab.eval(_text("td.detail .side > .answer"))
        assert answers == [base.answer, item.answer]  # baseline's, then this run's
        deleted = " ".join(tab.eval(_text("td.detail .wdiff del")))
        assert "unseal the server again with the original unseal keys." in deleted
        assert item.run_results[0].verdict is not None
        reasons = " ".join(tab.eval(_text("td.detail .judge")))
        assert item.run_results[0].verdict.comment in reasons
        assert "all 1 key points covered" in reasons  # the baseline's judge, beside it
        # The view is in the address: a reload (or a link) shows the same.
        assert tab.eval("location.hash") == f"#status=regressed&open={REGRESSED}"
        tab.reload()
        tab.wait("document.body.dataset.ready === '1'")
        assert len(tab.eval(_rows())) == 6
        assert tab.eval(_text("td.detail .side > .answer")) == answers
        # Free text: the words of a reason, in any case.
        tab.eval(
            "(() => { const s = document.getElementById('f-search'); s.value = 'MISSING CITATION';"
            " s.dispatchEvent(new Event('input')); })()"
        )
        tab.wait("document.getElementById('count').textContent.startsWith('2 of')")
        assert sorted(tab.eval(_rows())) == ["trouble-address-in-use", "trouble-sealed-503"]
        tab.eval(_select("improved"))
        assert tab.eval(_rows()) == []


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium: scripts/setup-mermaid.sh")
def test_on_a_laptop_screen_the_regressed_items_show_without_scrolling(demo):
    # 1366×768, less the browser's own bars: what a laptop shows of the page at first.
    with browser() as tab:
        tab.send(
            "Emulation.setDeviceMetricsOverride",
            width=1366, height=660, deviceScaleFactor=1, mobile=False,
        )  # fmt: skip
        tab.open((demo / "report.html").as_uri())
        tab.wait("document.body.dataset.ready === '1'")
        rows = tab.eval(
            "[...document.querySelectorAll('#items tr.row')].map(r => [r.querySelector('button')"
            ".textContent, r.querySelector('.status').textContent, "
            "r.getBoundingClientRect().bottom])"
        )
        regressed = [(name, bottom) for name, status, bottom in rows if status == "regressed"]
        assert len(regressed) == 6
        assert all(bottom <= 660 for _, bottom in regressed), regressed
        assert tab.eval("scrollY") == 0
        # Tag bars are coloured by rate: a meter shows green only in its optimum region (at
        # or above the floor), amber below it, red 20 points further down.
        meters = tab.eval(
            "[...document.querySelectorAll('#tags tbody tr')].map(r => [r.cells[0].textContent,"
            " ...['value', 'low', 'high', 'optimum'].map(k => r.querySelector('meter')[k])])"
        )
        by_tag = {tag: rest for tag, *rest in meters}
        floor = 0.7  # the demo's
        assert by_tag["troubleshooting"][0] == 0 < by_tag["troubleshooting"][1]  # red
        assert by_tag["smoke"][1] <= by_tag["smoke"][0] < by_tag["smoke"][2] == floor  # amber
        assert by_tag["install"][0] == 1 >= by_tag["install"][2]  # green
        assert {row[4] for row in meters} == {1}  # the optimum: all passing


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium: scripts/setup-mermaid.sh")
def test_hostile_answers_render_as_text_and_run_nothing(demo, tmp_path):
    page = _view(_hostile(demo, tmp_path), tmp_path)
    with browser() as tab:
        # The detector works: the same payload in a page without our policy runs.
        control = tmp_path / "control.html"
        control.write_text(
            "<!doctype html><body><div id=x></div><script>document.getElementById('x')"
            f".innerHTML = {CONTROL_JSON};</script>",
            encoding="utf-8",
        )
        tab.open(control.as_uri())
        tab.wait("window.__pwned !== undefined")
        assert tab.errors == []

        tab.open(page.as_uri() + "#open=" + REGRESSED)
        tab.wait("document.body.dataset.ready === '1'")
        answers = tab.eval(_text("td.detail .side > .answer"))
        assert answers[1] == PAYLOAD  # as text, exactly
        assert tab.eval(_text("td.detail .question")) == [PAYLOAD]
        assert any(PAYLOAD in reason for reason in tab.eval(_text("td.detail .judge")))
        tab.eval(_select("new"))
        assert tab.eval(_rows()) == [HOSTILE_ID]
        tab.eval(_open(HOSTILE_ID))
        detail = tab.eval("document.querySelector('td.detail').textContent")
        assert detail.count(PAYLOAD) >= 4  # question, answer, check, source, judge
        tab.eval(_select(""))
        tab.eval(
            "(() => { const s = document.getElementById('f-search'); s.value = '<script>';"
            " s.dispatchEvent(new Event('input')); })()"
        )
        tab.wait("document.getElementById('count').textContent.startsWith('2 of')")
        tab.eval("new Promise(done => setTimeout(done, 500))")  # any error event has fired
        assert not tab.eval(SCRIPT_RAN)
        assert tab.errors == []  # and nothing threw (an HTML sink would, under Trusted Types)


def test_no_string_can_leave_the_data_block_and_the_policy_hashes_the_script(demo, tmp_path):
    report = load_report(_hostile(demo, tmp_path))
    html = render_page(report, evaluate_gate(report, None, GateSettings()))
    assert html.count("</script>") == 2 and html.count("<script") == 2
    assert "<img" not in html and "<!--" not in html and "\u2028" not in html
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert policy is not None
    script = re.findall(r"<script>(.*?)</script>", html, re.S)[-1]
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}';" in policy.group(1)
    assert "unsafe-inline" not in policy.group(1) and "require-trusted-types-for" in html
    block = re.search(r'<script type="application/json" id="gg-data">(.*?)</script>', html, re.S)
    assert block is not None
    data = json.loads(block.group(1))
    hostile = next(i for i in data["items"] if i["id"] == HOSTILE_ID)
    assert hostile["a"] == PAYLOAD and hostile["runs"][0]["ch"][0][0] == PAYLOAD


def test_view_of_a_report_that_is_not_one_is_bad_input(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    done = golden_gate("view", bad, "-o", tmp_path / "page.html")
    assert done.returncode == 2
    assert f"{bad}: not a report" in done.stderr and not (tmp_path / "page.html").exists()


def test_the_action_writes_the_page_beside_the_report_and_says_where(world, candidate):
    pull = world.pull(["prompts/answer.txt"])
    event = world.event("pull_request.opened", pull)
    done = world.run("pull_request", event, assistant_url=candidate)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.outputs["html-report"] == "golden-gate/report.html"
    html = (world.workspace / "golden-gate" / "report.html").read_text(encoding="utf-8")
    block = re.search(r'<script type="application/json" id="gg-data">(.*?)</script>', html, re.S)
    assert block is not None
    data = json.loads(block.group(1))
    assert data["verdict"] == "failed" and len(data["items"]) == 14
    regressed = sorted(i["id"] for i in data["items"] if "regressed" in i["f"])
    assert len(regressed) == 6 and all(i["b"]["a"] for i in data["items"] if "b" in i)

    # Off in golden-gate.toml (an empty input means "not given").
    (world.workspace / "golden-gate" / "report.html").unlink()
    world.configure_options(html_report="")
    off = world.run("pull_request", event, assistant_url=candidate)
    assert off.returncode == 1 and off.outputs["html-report"] == ""
    assert not (world.workspace / "golden-gate" / "report.html").exists()


def test_a_registered_secret_in_an_answer_never_reaches_the_page():
    from golden_gate import redaction

    secret = "sk-test-0123456789abcdef"  # made up
    redaction.register(secret)
    try:
        report = Report(
            judge="j",
            results=[
                ItemResult(
                    id="leak",
                    passes=0,
                    runs=1,
                    run_results=[RunResult(status="fail", answer=f"the key is {secret}")],
                )
            ],
        )
        html = render_page(report, evaluate_gate(report, None, GateSettings()))
    finally:
        redaction.clear()
    assert secret not in html and "the key is ***" in html


def _judged(item_id: str, failing: list[str]) -> ItemResult:
    outcomes = [
        EvaluatorOutcome(
            evaluator=name,
            status="fail" if name in failing else "pass",
            comment=f"{name} says {'no' if name in failing else 'yes'}",
            votes=[
                JudgeVote(judge="judge-a", passed=name not in failing, comment="a's reason"),
                JudgeVote(judge="judge-b", passed=None, error="timed out"),
            ],
        )
        for name in ("correctness", "groundedness")
    ]
    status = "fail" if failing else "pass"
    run = RunResult(status=status, answer="an answer", evaluations=outcomes)
    return ItemResult(id=item_id, passes=int(not failing), runs=1, run_results=[run])


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium: scripts/setup-mermaid.sh")
def test_filter_by_the_evaluator_that_failed_and_read_each_judges_vote(tmp_path):
    report = Report(
        judge="judge-a,judge-b",
        results=[
            _judged("both", ["correctness", "groundedness"]),
            _judged("grounded-only", ["groundedness"]),
            _judged("fine", []),
        ],
    )
    save(report, tmp_path / "r.json")
    done = golden_gate("view", tmp_path / "r.json", "-o", tmp_path / "p.html")
    assert done.returncode == 0, done.stderr
    with browser() as tab:
        tab.open((tmp_path / "p.html").as_uri() + "#evaluator=correctness")
        tab.wait("document.body.dataset.ready === '1'")
        assert tab.eval(_rows()) == ["both"]
        options = "[...document.querySelectorAll('#f-evaluator option')].map(o => o.value)"
        assert tab.eval(options) == ["", "correctness", "groundedness"]
        tab.eval(
            "(() => { const s = document.getElementById('f-evaluator'); s.value = 'groundedness';"
            " s.dispatchEvent(new Event('change')); })()"
        )
        assert tab.eval(_rows()) == ["both", "grounded-only"]
        tab.eval(_open("grounded-only"))
        judged = " ".join(tab.eval(_text("td.detail .evals li")))
        assert "groundedness: fail — groundedness says no" in judged
        assert "judge-a: fail — a's reason" in judged
        assert "judge-b: no vote (timed out)" in judged


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium: scripts/setup-mermaid.sh")
def test_errors_sources_reruns_and_other_fields_show_without_a_baseline(tmp_path):
    runs = [
        RunResult(status="pass", answer="first words", sources=["docs/a.md", "docs/b.md"]),
        RunResult(status="fail", answer="second words", trajectory=["search", "answer"]),
        RunResult(status="fail", answer="a re-run", rerun=True),
    ]
    report = Report(
        judge="j",
        results=[
            ItemResult(id="several", passes=1, runs=2, run_results=runs),
            ItemResult(
                id="broken",
                passes=0,
                runs=0,
                errors=1,
                run_results=[
                    RunResult(status="error", error_side="judge", error="judge timed out")
                ],
            ),
        ],
    )
    save(report, tmp_path / "r.json")
    assert golden_gate("view", tmp_path / "r.json", "-o", tmp_path / "p.html").returncode == 0
    with browser() as tab:
        tab.open((tmp_path / "p.html").as_uri() + "#status=errored&open=broken")
        tab.wait("document.body.dataset.ready === '1'")
        assert tab.eval(_rows()) == ["broken"]
        assert "judge: judge timed out" in " ".join(tab.eval(_text("td.detail .st-error")))
        tab.eval("location.hash = '#status=unstable&open=several'")
        tab.wait("document.querySelector('td.detail .sources') !== null")
        assert tab.eval(_text("td.detail .sources li")) == ["docs/a.md", "docs/b.md"]
        assert '"trajectory"' in " ".join(tab.eval(_text("td.detail pre")))
        runs_shown = " ".join(tab.eval(_text("td.detail .run h4")))
        assert "run 3: fail (diagnostic re-run, not counted)" in runs_shown
        assert tab.eval(_text("td.detail .run > .answer")) == [
            "first words",
            "second words",
            "a re-run",
        ]
        disabled = "[...document.querySelectorAll('#f-status option:disabled')].map(o => o.value)"
        assert "regressed" in tab.eval(disabled)  # no baseline: nothing can have regressed
    assert tab.errors == []


def _git(cwd: Path, *args: str) -> None:
    import subprocess

    env = {
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "GIT_CONFIG_GLOBAL": "/dev/null", "PATH": "/usr/bin:/bin",
    }  # fmt: skip
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def _both_sides(tmp_path: Path) -> tuple[Path, Path]:
    """A baseline committed twice (the trend) and a report: one item regressed, one failing in
    both, one unstable, one errored, one only in the baseline (removed), one new."""
    from tests.helpers import item

    def unstable(item_id: str) -> ItemResult:
        runs = [RunResult(status="pass", answer="yes"), RunResult(status="fail", answer="no")]
        return ItemResult(id=item_id, tags=["smoke"], passes=1, runs=2, run_results=runs)

    errored = ItemResult(
        id="broken", tags=["smoke"], passes=0, runs=0, errors=1,
        run_results=[RunResult(status="error", error_side="judge", error="judge timed out")],
    )  # fmt: skip
    fine = [item(f"ok{k}", True, tags=["smoke", "billing"]) for k in range(6)]
    base = tmp_path / "base.json"
    _git(tmp_path, "init", "-q", "-b", "main")
    older = Report(judge="j", results=[*fine, item("slipped", True), item("gone", False)])
    save(older, base)
    _git(tmp_path, "add", "base.json")
    _git(tmp_path, "commit", "-q", "-m", "older baseline")
    baseline = Report(
        judge="j",
        results=[
            *fine,
            item("slipped", True, answer="restart the server, then unseal it"),
            item("stuck", False),
            unstable("flaky"),
            item("broken", True),
            item("gone", True, answer="the removed item's answer", tags=["legacy"]),
        ],
    )
    save(baseline, base)
    _git(tmp_path, "commit", "-q", "-am", "newer baseline")
    report = Report(
        judge="j",
        results=[
            *fine,
            item("slipped", False, answer="restart the server", why="missing: unseal"),
            item("stuck", False),
            unstable("flaky"),
            errored,
            item("fresh", True),
        ],
    )
    save(report, tmp_path / "r.json")
    return tmp_path / "r.json", base


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium: scripts/setup-mermaid.sh")
def test_removed_items_the_trend_and_the_tags_chart_and_every_filter(tmp_path):
    report, base = _both_sides(tmp_path)
    page = tmp_path / "p.html"
    done = golden_gate("view", report, "--baseline", base, "--trend", "-o", page, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    with browser() as tab:
        tab.open(page.as_uri())
        tab.wait("document.body.dataset.ready === '1'")
        # Every item of both runs is listed: the baseline's removed one is not dropped.
        assert tab.eval("document.getElementById('count').textContent").startswith("12 of 12")
        for status, expected in (
            ("regressed", ["slipped"]),
            ("failing-both", ["flaky", "stuck"]),  # 1 of 2 runs: not a pass, in both
            ("unstable", ["flaky"]),
            ("errored", ["broken"]),
            ("new", ["fresh"]),
            ("removed", ["gone"]),
        ):
            tab.eval(_select(status))
            assert tab.eval(_rows()) == expected, status
        status = _text("#items tr.row td.status")
        assert tab.eval(status) == ["only in the baseline"]
        tab.eval(_open("gone"))
        sides = tab.eval(_text("td.detail .side"))
        assert "the removed item's answer" in sides[0]
        assert "not in this run" in sides[1]
        assert tab.eval("document.querySelector('td.detail .wdiff')") is None
        # The trend: both committed versions of the baseline, then this run.
        assert tab.eval("document.getElementById('trend-box').hidden") is False
        rows = tab.eval(_text("#trend-table tbody tr"))
        assert len(rows) == 3 and rows[-1].startswith("this run")
        assert "87.5%" in rows[0]  # the older baseline: 7 of 8
        assert tab.eval("document.querySelectorAll('#trend svg path').length") == 2
        # Per tag: this run's rate beside the baseline's, with the regressions counted.
        tags = {r.split("\n")[0]: r for r in tab.eval(
            "[...document.querySelectorAll('#tags tbody tr')].map(tr => "
            "[...tr.children].map(td => td.textContent.trim()).join('\\n'))"
        )}  # fmt: skip
        assert tags["smoke"].split("\n")[1:] == ["10", "7", "70.0%", "80.0%", "1", "0"]
        assert tags["legacy"].split("\n")[1:] == ["0", "0", "—", "100.0%", "0", "0"]
    assert tab.errors == []


def test_without_history_or_baseline_no_trend_and_no_removed_items(tmp_path):
    from golden_gate.rendering.page import page_data

    report, _ = _both_sides(tmp_path)
    cand = load_report(report)
    gate = evaluate_gate(cand, None, GateSettings())
    data = page_data(cand, gate)
    assert data["trend"] is None and not any("removed" in i["f"] for i in data["items"])
    assert [t[3] for t in data["tags"]] == [None, None]  # no baseline column


def test_a_subset_lists_as_removed_only_the_baseline_items_it_should_have_asked(demo):
    from golden_gate.rendering.page import page_data

    report, baseline = load_report(demo / "report.json"), load_report(baseline_path())
    gate = evaluate_gate(report, baseline, GateSettings())
    assert report.dataset is not None and report.dataset.tags == ["smoke"]
    report.results = [i for i in report.results if i.id != REGRESSED]  # lost from the subset
    data = page_data(report, gate, baseline)
    assert [i["id"] for i in data["items"] if "removed" in i["f"]] == [REGRESSED]
    figure = dict(data["figures"])["only in one report"]
    assert "10 only in the baseline (1 within this run's selection" in figure


# -- retrieval ranks, tool calls and conversation turns ---------------------------------------

DOCS = "https://docs.example/backups"
OTHERS = [f"https://docs.example/other-{n}" for n in range(5)]


def _agents(tmp_path: Path, hostile: str | None = None) -> Path:
    """A baseline and a candidate with retrieval (sources-path), an agent's tool calls and a
    conversation; with `hostile`, every string an answer or a PR could write is it."""
    text = hostile or ""
    url = hostile if hostile is not None else DOCS
    source = "javascript:window.__pwned=9" if hostile is not None else DOCS
    expected = [url, "https://docs.example/restore"]
    per_item = {
        # id: (this run's sources, the baseline's)
        "restore": ([[*OTHERS, source]], [[source, "x"]]),  # rank 6 now: out of the top 5
        "steady": ([[source]], [[source]]),
    }

    def report(side: int) -> Report:
        results = [
            ItemResult(
                id=item_id,
                passes=1,
                runs=1,
                question=f"{item_id}? {text}",
                run_results=[
                    RunResult(status="pass", answer="answer " + text, sources=runs[side][0])
                ],
            )
            for item_id, runs in per_item.items()
        ]
        results.append(
            ItemResult(
                id="agent",
                passes=side,
                runs=1,
                expected_tools=[
                    'search({"q":"/refund/"})',
                    "open_ticket(*)",
                    *([text] if text else []),
                ],
                run_results=[
                    RunResult(
                        status="pass" if side else "fail",
                        answer="done " + text,
                        tool_calls=[
                            ToolCall(name="search" + text, arguments='{"q":"refund ' + text + '"}'),
                            ToolCall(name="close_ticket", arguments="{}"),
                        ],
                    )
                ],
            )
        )
        results.append(
            ItemResult(
                id="chat",
                passes=side,
                runs=1,
                run_results=[
                    RunResult(
                        status="pass" if side else "fail",
                        answer="second answer " + text,
                        failed_turn=None if side else 2,
                        turns=[
                            TurnResult(
                                turn=1,
                                question="first question " + text,
                                status="pass",
                                answer="first answer " + text,
                            ),
                            TurnResult(
                                turn=2,
                                question="second question " + text,
                                status="pass" if side else "fail",
                                answer="second answer " + text,
                                why="" if side else "judge: forgot the context " + text,
                            ),
                        ],
                    )
                ],
            )
        )
        observed = [(i, [], expected, runs[side]) for i, runs in per_item.items()]
        return Report(judge="j", results=results, retrieval=retrieval.record(observed, k=5))

    save(report(0), tmp_path / "candidate.json")
    save(report(1), tmp_path / "baseline.json")
    page = tmp_path / "agents.html"
    done = golden_gate(
        "view", tmp_path / "candidate.json", "--baseline", tmp_path / "baseline.json", "-o", page
    )
    assert done.returncode == 0, done.stderr
    return page


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium: scripts/setup-mermaid.sh")
def test_retrieval_ranks_tool_calls_and_turns_show_beside_the_baseline(tmp_path):
    page = _agents(tmp_path)
    with browser() as tab:
        tab.open(page.as_uri())
        tab.wait("document.body.dataset.ready === '1'")
        figures = tab.eval(_text("#retrieval dt, #retrieval dd"))
        assert figures[:4] == ["hit@5", "50.0% (baseline 100.0%)", "MRR", "0.583 (baseline 1.000)"]
        assert "hit@5 fell for 1, rose for 0 of 2 shared; p = 0.5" in figures
        tab.eval(_select("retrieval-fell"))
        assert tab.eval(_rows()) == ["restore"]
        tab.eval(_open("restore"))
        ranks = tab.eval(
            "[...document.querySelectorAll('td.detail table.ranks tr')]"
            ".map(r => [...r.cells].map(c => c.textContent))"
        )
        assert ranks == [
            ["expected page", "rank this run", "rank in the baseline"],
            [DOCS, "6", "1"],
            ["https://docs.example/restore", "not returned", "not returned"],
        ]
        assert "hit@5 fell" in " ".join(tab.eval(_text("td.detail h3")))
        sources = tab.eval(_text("td.detail .sources li"))
        assert sources == [DOCS, "x", *OTHERS, DOCS]  # the baseline's, this run's
        assert tab.eval("document.querySelectorAll('td.detail a').length") == 0  # text only

        tab.eval("location.hash = '#open=agent'")
        tab.wait("document.querySelector('td.detail ol.calls') !== null")
        calls = tab.eval(_text("td.detail ol.calls"))
        assert calls[0] == 'search({"q":"/refund/"})open_ticket(*)'  # expected
        assert tab.eval(_text("td.detail .side:last-child ol.calls li")) == [
            'search({"q":"refund "})',
            "close_ticket()",
        ]

        tab.eval("location.hash = '#open=chat'")
        tab.wait("document.querySelector('td.detail ol.turns') !== null")
        turns = tab.eval(_text("td.detail .side:last-child li.turn > p"))
        assert turns[:2] == ["turn 1: pass", "turn 2: fail — the first turn that did not pass"]
        assert tab.eval(_text("td.detail .side:last-child li.failed-turn .why")) == [
            "why: judge: forgot the context "
        ]
        assert tab.eval(_text("td.detail .side:first-child li.failed-turn")) == []
    assert tab.errors == []


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium: scripts/setup-mermaid.sh")
def test_hostile_tool_calls_turns_and_sources_render_as_text_and_run_nothing(tmp_path):
    page = _agents(tmp_path, hostile=PAYLOAD)
    with browser() as tab:
        tab.open(page.as_uri())
        tab.wait("document.body.dataset.ready === '1'")
        for item_id in ("restore", "agent", "chat"):
            tab.eval(f"location.hash = {json.dumps('#open=' + item_id)}")
            tab.wait(f"document.querySelector('tr.open button')?.textContent === '{item_id}'")
            detail = tab.eval("document.querySelector('td.detail').textContent")
            assert PAYLOAD in detail
            if item_id == "restore":
                assert tab.eval(_text("td.detail td.url"))[0] == PAYLOAD
                assert "javascript:window.__pwned=9" in tab.eval(_text("td.detail .sources li"))
            if item_id == "agent":
                assert PAYLOAD in tab.eval(_text("td.detail ol.calls li"))  # expected, as is
            tab.eval("new Promise(done => setTimeout(done, 300))")
            assert not tab.eval(SCRIPT_RAN)
    assert tab.errors == []
