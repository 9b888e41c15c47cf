"""The one output path (publish.py): every command that gates writes every output asked of it,
the same bytes whichever command wrote them, and the formats are registered in one place."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from golden_gate.cli.options import COMMANDS
from golden_gate.options import BY_NAME
from golden_gate.publish import FORMATS
from golden_gate.settings import Settings
from tests.helpers import golden_gate

# Where each format's flag writes (report-path: `-o` for merge, the flag for eval and run).
GATING = ("gate", "merge", "run")


def test_every_format_is_a_setting_every_gating_command_takes():
    fields = Settings.model_fields
    for output in FORMATS:
        assert output.setting in BY_NAME, output.setting
        assert output.path(Settings(golden=Path("g.jsonl"))) in (None, Path("report.json"))
    # The Settings fields the formats read are the output paths, each once.
    paths = [name for name in fields if name.endswith("_path") and name != "cache_dir"]
    assert {"report_path", "comment_path", "summary_path", "junit_path", "html_path"} <= set(paths)
    for command in GATING:
        taken = set(COMMANDS[command])
        missing = {o.setting for o in FORMATS} - taken - {"report-path"}
        assert not missing, f"{command} does not take {missing}"


def _outputs(directory: Path) -> list[str]:
    return ["--comment-file", str(directory / "comment.md"), "--summary-file",
            str(directory / "summary.md"), "--junit-xml", str(directory / "junit.xml"),
            "--html-report", str(directory / "report.html")]  # fmt: skip


def _written(directory: Path) -> dict[str, str]:
    names = ("comment.md", "summary.md", "junit.xml", "report.html")
    return {name: (directory / name).read_text() for name in names}


def _but_stats(text: str) -> str:
    stats = ("judge call", "a run of this size")  # the counts, and the cost line from them
    return "\n".join(line for line in text.splitlines() if not any(s in line for s in stats))


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    done = golden_gate("demo", "--out", out)
    assert done.returncode == 0, done.stderr
    return out


def test_gate_and_merge_write_every_output_asked_and_the_same_bytes(demo, tmp_path):
    from golden_gate.core.report import selection_digest
    from golden_gate.demo import baseline_path

    by_gate, by_merge = tmp_path / "gate", tmp_path / "merge"
    by_gate.mkdir()
    by_merge.mkdir()
    gated = golden_gate("gate", demo / "report.json", baseline_path(), *_outputs(by_gate))
    assert gated.returncode == 1, gated.stderr
    # The same report in two shards, merged and gated against the same baseline.
    report = json.loads((demo / "report.json").read_text())
    shards = []
    for k in (1, 2):
        part = copy.deepcopy(report)
        part["results"] = report["results"][k - 1 :: 2]
        part["dataset"]["shard"] = f"{k}/2"
        part["dataset"]["selected"] = selection_digest(i["id"] for i in part["results"])
        shards.append(by_merge / f"s{k}.json")
        shards[-1].write_text(json.dumps(part))
    merged = golden_gate(
        "merge", *shards, "--baseline", baseline_path(), "-o", by_merge / "merged.json",
        *_outputs(by_merge),
    )  # fmt: skip
    assert merged.returncode == 1, merged.stderr
    assert (by_merge / "merged.json").is_file()
    from_gate, from_merge = _written(by_gate), _written(by_merge)
    assert "### Regressed items (6)" in from_gate["comment.md"]
    assert from_gate["summary.md"].startswith("## ")
    assert from_gate["junit.xml"].count("<testcase ") == 14
    assert '"regressed"' in from_gate["report.html"]
    # One path: the merged report renders as the report does, but for the run's statistics
    # (each shard here copied the whole run's, so the merge adds them up).
    for name in ("comment.md", "summary.md"):
        assert _but_stats(from_merge[name]) == _but_stats(from_gate[name]), name
    assert from_merge["junit.xml"].count("<testcase ") == 14


def test_a_file_that_cannot_be_written_leaves_the_others_and_the_verdict(demo, tmp_path):
    from golden_gate.demo import baseline_path

    blocked = tmp_path / "a-directory.md"
    blocked.mkdir()  # the summary cannot be written here
    done = golden_gate(
        "gate", demo / "report.json", baseline_path(), "--summary-file", blocked,
        "--comment-file", tmp_path / "comment.md", "--junit-xml", tmp_path / "junit.xml",
    )  # fmt: skip
    assert done.returncode == 3, done.stdout + done.stderr  # an output lost: incomplete
    assert done.stdout.startswith("golden-gate: failed: below the floor")  # printed first
    assert str(blocked) in done.stderr
    assert (tmp_path / "comment.md").is_file() and (tmp_path / "junit.xml").is_file()


def test_eval_and_run_write_every_output_asked(tmp_path):
    from tests.fakes.assistant_server import AssistantServer
    from tests.helpers import write_feature_golden

    golden = write_feature_golden(tmp_path / "golden.jsonl", n=3, sources=False)
    answers = {f"How do I configure feature {i}?": f"Set option {i}, then restart the server."
               for i in range(3)}  # fmt: skip
    with AssistantServer(answers) as assistant:
        common = (golden, "--assistant-url", assistant.url, "--judge-model", "keypoints")
        evaluated = golden_gate(
            "eval", *common, "-o", tmp_path / "base.json", "--junit-xml", tmp_path / "e.xml",
            "--html-report", tmp_path / "e.html",
        )  # fmt: skip
        assert evaluated.returncode == 0, evaluated.stderr
        ran = golden_gate(
            "run", *common, "--baseline", tmp_path / "base.json", "-o", tmp_path / "r.json",
            "--floor", "0.2", *_outputs(tmp_path),
        )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert json.loads((tmp_path / "base.json").read_text())["results"]
    assert (tmp_path / "e.xml").read_text().count("<testcase ") == 3
    assert (tmp_path / "e.html").read_text().startswith("<!doctype html>")
    assert json.loads((tmp_path / "r.json").read_text())["results"]
    written = _written(tmp_path)
    assert "golden-gate passed" in written["comment.md"]
    assert "**0** regressed · **0** improved on 3 shared items" in written["comment.md"]
    assert written["junit.xml"].count("<testcase ") == 3
    assert written["summary.md"] and written["report.html"].startswith("<!doctype html>")
