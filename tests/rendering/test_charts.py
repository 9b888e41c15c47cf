"""Charts: the Mermaid we emit renders with the real renderer, and hostile names stay inert."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from golden_gate.core.gate import evaluate_gate
from golden_gate.core.report import Report
from golden_gate.core.verdict import GateSettings
from golden_gate.history import from_git, git_trend, trend
from golden_gate.rendering import charts
from golden_gate.rendering.charts import TagBar, TrendPoint
from golden_gate.rendering.render import render_comment, render_summary
from tests.helpers import golden_gate, item, report
from tests.mermaid import BLOCK, without_charts

ROOT = Path(__file__).resolve().parents[2]
MMDC = ROOT / ".tools" / "node_modules" / ".bin" / "mmdc"
PUPPETEER = ROOT / ".tools" / "mermaid-puppeteer.json"
HOSTILE_TAGS = [
    'x"] \n```\n<img src=x onerror=alert(1)>',
    "%%{init: {'securityLevel': 'loose'}}%%",
    "click A href 'javascript:alert(1)'",
    "@octocat #1 https://evil.example/",
    "a;b\nline-break`backticks`",
    "&#34;entity&lt;",
]


def _render(markdown: str, out: Path, fmt: str = "svg") -> list[Path]:
    """Every ```mermaid block of `markdown` rendered by mermaid-cli; fails on a parse error."""
    assert MMDC.is_file() and PUPPETEER.is_file(), "run `make test`: scripts/setup-mermaid.sh"
    source = out / "in.md"
    source.write_text(markdown, encoding="utf-8")
    done = subprocess.run(
        [str(MMDC), "-p", str(PUPPETEER), "-i", str(source), "-o", str(out / "out.md"),
         "-e", fmt, "-b", "white", "-q"],
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return sorted(out.glob(f"out-*.{fmt}"))


def test_labels_keep_only_safe_characters():
    for hostile in HOSTILE_TAGS:
        safe = charts.label(hostile)
        assert not set(safe) & set("\"\n`<>%{}#&;@'[]=!|*\\"), safe
        assert len(safe) <= 24
    assert charts.label("configuration") == "configuration"
    assert charts.label("设置 v2.1 (beta)") == "设置 v2.1 (beta)"
    assert charts.label("") == "_"


def test_trend_needs_two_points_and_draws_the_floor():
    one = [TrendPoint(label="this run", pass_rate=0.9, lower_bound=0.8)]
    assert charts.trend_chart(one, floor=0.8, title="t") is None
    two = [TrendPoint(label="a", pass_rate=1.0, lower_bound=0.83), *one]
    chart = charts.trend_chart(two, floor=0.8, title="t")
    assert chart is not None
    assert "line [100, 90]" in chart and "line [83, 80]" in chart and "line [80, 80]" in chart


def test_many_tags_keep_the_regressed_ones():
    bars = [TagBar(tag=f"t{i:02d}", rate=1.0, base_rate=1.0) for i in range(30)]
    bars[29] = TagBar(tag="t29", rate=0.5, base_rate=1.0, regressed=3)
    chart, left_out = charts.tag_chart(bars) or ("", 0)
    assert left_out == 30 - charts.MAX_TAGS
    assert '"t29 ▼3"' in chart


def test_failing_demo_comment_has_both_charts_and_they_render(tmp_path):
    out = tmp_path / "demo"
    done = golden_gate("demo", "--out", out)
    assert done.returncode == 0, done.stderr
    comment = (out / "comment.md").read_text()
    blocks = BLOCK.findall(comment)
    assert len(blocks) == 2
    assert "xychart-beta" in blocks[0] and '"this run"' in blocks[0]
    assert '"backups ▼2"' in blocks[1]
    summary = (out / "summary.md").read_text()
    assert len(BLOCK.findall(summary)) == 2
    images = _render(comment, tmp_path, fmt="png")
    assert len(images) == 2
    for image in images:
        assert image.stat().st_size > 5_000  # a drawn chart, not an empty canvas
    # Kept for a look: pytest's tmp_path of the last run holds demo-trend.png and demo-tags.png.
    images[0].rename(tmp_path / "demo-trend.png")
    images[1].rename(tmp_path / "demo-tags.png")


def _hostile_report() -> tuple[Report, Report]:
    tagged = [item(f"q{i}", i % 3 != 0, tags=[tag]) for i, tag in enumerate(HOSTILE_TAGS * 2)]
    candidate = Report(judge="j", results=tagged)
    baseline = Report(
        judge="j", results=[item(f"q{i}", True, tags=[HOSTILE_TAGS[0]]) for i in range(12)]
    )
    return candidate, baseline


def test_hostile_tags_render_inert(tmp_path):
    candidate, baseline = _hostile_report()
    gate = evaluate_gate(candidate, baseline, GateSettings())
    history = [TrendPoint(label='"]\n```<script>', pass_rate=0.9, lower_bound=0.7)]
    for text in (
        render_comment(candidate, gate, baseline=baseline, history=history),
        render_summary(candidate, gate, baseline=baseline, history=history),
    ):
        rest, blocks = without_charts(text)
        assert len(blocks) == 2 and "```" not in rest
        assert text.count("```") == 4
    svgs = _render(render_comment(candidate, gate, baseline=baseline, history=history), tmp_path)
    assert len(svgs) == 2
    for svg in svgs:
        drawn = svg.read_text()
        assert "<a " not in drawn and 'href="javascript' not in drawn
        assert "onerror" not in drawn.replace("onerror_alert", "")
        assert "<img" not in drawn and "<script" not in drawn


def test_trend_from_git_history(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q", str(repo)], check=True)
    path = repo / "baseline.json"
    for passed in (6, 8, 10):
        outcomes = {f"q{i}": i < passed for i in range(10)}
        path.write_text(report(outcomes).model_dump_json())
        subprocess.run([*git, "-C", str(repo), "add", "."], check=True)
        subprocess.run([*git, "-C", str(repo), "commit", "-qm", f"{passed}"], check=True)
    points = git_trend(path, confidence=0.95)
    assert [round(p.pass_rate, 2) for p in points] == [0.6, 0.8, 1.0]  # oldest first
    assert all(p.lower_bound < p.pass_rate for p in points)
    versions = from_git("baseline.json", ref="HEAD", cwd=repo, limit=2)
    assert versions is not None and len(versions) == 2
    assert trend(versions, path="baseline.json", confidence=0.95)[-1].pass_rate == 1.0
    assert git_trend(tmp_path / "elsewhere.json", confidence=0.95) == []
    assert from_git("baseline.json", ref="no-such-ref", cwd=repo, limit=2) is None


@pytest.mark.parametrize("bad", ["not json", '{"judge": "j"}'])
def test_versions_that_are_not_reports_are_skipped(bad):
    from golden_gate.history import Version

    good = report({"a": True, "b": False}).model_dump_json()
    versions = [
        Version(sha="b" * 40, date="2026-11-02", message="", text=bad),
        Version(sha="a" * 40, date="2026-11-01", message="", text=good),
    ]
    points = trend(versions, path="b.json", confidence=0.95)
    assert len(points) == 1 and points[0].label == "11-01 aaaaaa"


def test_report_with_trend_reads_the_baselines_git_history(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-C", str(repo)]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    names = [f"q{i}" for i in range(20)]
    base = repo / "baseline.json"
    for passed in (16, 20):
        base.write_text(report({n: i < passed for i, n in enumerate(names)}).model_dump_json())
        subprocess.run([*git, "add", "."], check=True)
        subprocess.run([*git, "commit", "-qm", str(passed)], check=True)
    cand = tmp_path / "cand.json"
    cand.write_text(report({n: i < 12 for i, n in enumerate(names)}).model_dump_json())
    plain = golden_gate("report", cand, "--baseline", base)
    assert len(BLOCK.findall(plain.stdout)) == 1  # by tag only: the trend is asked for
    trended = golden_gate("report", cand, "--baseline", base, "--trend")
    blocks = BLOCK.findall(trended.stdout)
    assert len(blocks) == 2
    assert "line [80, 100, 60]" in blocks[0]


def test_a_large_version_is_read_as_a_slim_view_with_the_same_point():
    from golden_gate.core import slim
    from golden_gate.core.report_file import report_json
    from golden_gate.history import Version

    names = [f"q{i:05d}" for i in range(4000)]
    big = report({n: i % 5 != 0 for i, n in enumerate(names)})
    for result in big.results:
        result.run_results[0].answer = "a long answer " * 30
    text = report_json(big)
    assert len(text) >= slim.LARGE_REPORT_BYTES  # the chunked, slim read
    small = report({n: i % 5 != 0 for i, n in enumerate(names[:40])})
    versions = [
        Version(sha="b" * 40, date="2026-11-02", message="", text=text),
        Version(sha="a" * 40, date="2026-11-01", message="", text=report_json(small)),
    ]
    old, new = trend(versions, path="b.json", confidence=0.95)
    assert (old.pass_rate, new.pass_rate) == (0.8, 0.8)
    assert new.lower_bound > old.lower_bound  # 4,000 items bound the rate tighter than 40


def test_a_version_that_cannot_be_read_is_left_off_the_trend(monkeypatch):
    """A large version is read through a temporary file; a full disk there is no point on the
    trend, never a failed gate."""
    import tempfile

    from golden_gate.core import slim
    from golden_gate.history import Version

    text = report({"a": True, "b": False}).model_dump_json(indent=1)
    versions = [Version(sha="1" * 40, date="2026-11-30", message="m", text=text)]
    monkeypatch.setattr(slim, "LARGE_REPORT_BYTES", 1)

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(tempfile, "TemporaryDirectory", full_disk)
    assert trend(versions, path="baseline.json", confidence=0.95) == []
