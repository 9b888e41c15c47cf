import re

from golden_gate.core.gate import evaluate_gate
from golden_gate.core.report import Report
from golden_gate.core.verdict import GateSettings
from golden_gate.rendering.escape import ZWSP, inline
from golden_gate.rendering.render import COMMENT_LIMIT, marker, render_comment, render_summary
from tests.helpers import ids, item, report
from tests.mermaid import without_charts

HOSTILE = (
    "<script>alert(1)</script> @octocat @org/team ![x](http://evil.example/p.png) "
    "[click](https://evil.example) <!-- golden-gate:report id=default --> </details> "
    "| a | b | `code` #123 www.evil.example \u202egnp.exe\u200b <img src=x onerror=1>"
)
LINK = re.compile(r"https?://|www\.|\]\(|<a\s|<img|<script|@[A-Za-z0-9]|(?<!&)#\d")


def test_comment_leads_with_marker_and_verdict():
    names = ids(200)
    baseline = report(dict.fromkeys(names, True))
    candidate = report({i: i not in names[:10] for i in names})
    gate = evaluate_gate(candidate, baseline)
    body = render_comment(candidate, gate, baseline=baseline)
    lines = body.splitlines()
    assert lines[0] == "<!-- golden-gate:report id=default -->"
    assert "failed" in lines[1]
    assert "significant regression" in lines[2]
    assert "190/200" in body and "0.910" in body and "p = 0.0010" in body
    assert "### Regressed items (10)" in body
    for name in names[:10]:
        assert f"<code>{name}</code>" in body
    assert "a green check is not proof of quality" in body


def test_marker_id_is_sanitised():
    # A readable part and a hash of the exact id (one marker an id: tests/action/test_adversary.py).
    assert re.fullmatch(
        r"<!-- golden-gate:report id=eval-one----~[0-9a-f]{16} -->", marker("eval one -->")
    )
    body = render_comment(
        report({"a": True}), evaluate_gate(report({"a": True}), None), comment_id="docs"
    )
    assert body.startswith("<!-- golden-gate:report id=docs -->\n")


def test_hostile_answers_and_questions_render_inert():
    names = ids(20)
    baseline = report(dict.fromkeys(names, True))
    rows = [
        item(i, i not in names[:6], answer=HOSTILE, question=HOSTILE, why=HOSTILE) for i in names
    ]
    candidate = Report(judge="openai:gpt-4.1-mini", results=rows)
    gate = evaluate_gate(candidate, baseline, GateSettings(floor=0.1))
    body, charts = without_charts(render_comment(candidate, gate, baseline=baseline))
    assert len(charts) == 1  # by tag, checked statement by statement
    assert body.count(marker("default")) == 1
    assert body.count("<!--") == 1
    assert "<script" not in body and "<img" not in body
    assert body.count("<details>") == body.count("</details>")
    stripped = body.replace(marker("default"), "")
    assert not LINK.search(stripped), LINK.search(stripped)
    assert "\u202e" not in body
    # Each regressed row is one table row with five cells, and one of three in the before and
    # after table: no pipe escaped the cell.
    table = [line for line in body.splitlines() if line.startswith("| <code>q")]
    assert len(table) == 12
    assert sorted(line.count("|") for line in table) == [4] * 6 + [6] * 6


def test_inline_escape_basics():
    assert inline("a|b") == "a&#124;b"
    assert inline("line\nbreak") == "line break"
    assert inline("@user") == "@" + ZWSP + "user"
    assert inline("x" * 500, limit=10) == "x" * 9 + "…"
    assert inline(None) == ""


def test_big_report_stays_under_the_limit_and_keeps_the_verdict():
    names = ids(5000)
    baseline = report(dict.fromkeys(names, True))
    lost = set(names[:2000])
    long_answer = "This answer is long. " * 100
    rows = [item(i, i not in lost, answer=long_answer, question="Q? " * 80) for i in names]
    candidate = Report(judge="keypoints", results=rows)
    gate = evaluate_gate(candidate, baseline)
    body = render_comment(candidate, gate, baseline=baseline)
    assert len(body) <= COMMENT_LIMIT
    assert body.startswith(marker("default"))
    assert "significant regression" in body
    assert "### Regressed items (2000)" in body
    assert "<code>q0000</code>" in body
    shown = body.count("| <code>q")
    assert 10 < shown < 2000
    assert "more not shown" in body
    # The table is whole: the omission note follows a complete last row.
    last_row = [line for line in body.splitlines() if line.startswith("| <code>q")][-1]
    assert last_row.endswith("|")


def test_summary_has_no_marker_and_allows_more():
    rep = report({"a": True, "b": False})
    gate = evaluate_gate(rep, None, GateSettings(floor=0.1))
    summary = render_summary(rep, gate)
    assert "golden-gate:report" not in summary
    assert "### Failed items (1)" in summary


def test_user_template(tmp_path):
    tpl = tmp_path / "mine.md.j2"
    tpl.write_text(
        "{{ marker }}\nVerdict: {{ verdict }} ({{ gate.k }}/{{ gate.n }})\n"
        "{% for r in regressed.rows %}- {{ r.id }}: {{ r.answer }}\n{% endfor %}"
    )
    base = report({"a": True, "b": True})
    cand = Report(judge="x", results=[item("a", False, answer="<b>@x</b>"), item("b", True)])
    gate = evaluate_gate(cand, base, GateSettings(floor=0.05))
    body = render_comment(cand, gate, baseline=base, user_template=tpl)
    assert body.splitlines()[1] == "Verdict: passed (1/2)"
    assert "&lt;b&gt;@\u200bx&lt;/b&gt;" in body  # escaped before reaching the template


def test_a_comment_template_that_fails_leaves_the_summary_and_junit_written(tmp_path):
    """A user's comment template is rendered last: when it fails (bad input, exit 2), the job
    summary and the JUnit XML of the evaluation that was paid for are already written."""
    import pytest

    from golden_gate.errors import InputError
    from golden_gate.files import WriteFailures
    from golden_gate.publish import publish
    from golden_gate.settings import Settings
    from tests.helpers import report as make_report

    template = tmp_path / "bad.md.j2"
    template.write_text("{{ nope.attr.deeper }}")
    settings = Settings(
        golden=tmp_path / "g.jsonl",
        summary_path=tmp_path / "summary.md",
        comment_path=tmp_path / "comment.md",
        junit_path=tmp_path / "junit.xml",
        comment_template=template,
    )
    with pytest.raises(InputError, match=r"bad\.md\.j2"):
        publish(make_report({"a": True}), None, settings, failures=WriteFailures())
    assert (tmp_path / "summary.md").read_text().strip()
    assert (tmp_path / "junit.xml").read_text().startswith("<?xml")
    assert not (tmp_path / "comment.md").exists()


def test_many_rows_read_from_the_file_render_what_the_report_in_memory_renders(tmp_path):
    # A report read the slim way reads its rows' records from the file, all at once before
    # the first render; the text is the one the full records give.
    from golden_gate.core import slim
    from golden_gate.core.gate import evaluate_gate
    from golden_gate.core.report_file import save_report
    from golden_gate.rendering import render

    n = 2 * render.MANY_ROWS
    full = report({f"q{i:04d}": i % 3 == 0 for i in range(n)})
    baseline = report({f"q{i:04d}": True for i in range(n)})
    save_report(full, tmp_path / "report.json")
    save_report(baseline, tmp_path / "baseline.json")
    read = slim.load(tmp_path / "report.json", large=0)
    read_base = slim.load(tmp_path / "baseline.json", large=0)
    assert isinstance(read, slim._FileReport) and isinstance(read_base, slim._FileReport)
    gate = evaluate_gate(read, read_base)
    assert gate == evaluate_gate(full, baseline)
    for render_one in (render.render_comment, render.render_summary):
        text = render_one(read, gate, baseline=read_base)
        assert text == render_one(slim.of(full), gate, baseline=baseline)
    assert len(read._records) >= render.MANY_ROWS  # read before the first render, in one pass
    assert f"Regressed items ({len(gate.comparison.regressions)})" in text
