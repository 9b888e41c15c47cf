"""The slim report view (golden_gate/core/slim.py) changes no output.

tests/data/gate_outputs.json holds, for report pairs built by tests/gate_pairs.py, the sha256 of
what `gate`, `report` (Markdown and JSON) and the job summary printed with the code before the
slim view, and the sentence and exit code of malformed reports. Each is reproduced here: through
the commands as they are, and with every report read the slim way however small it is.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from golden_gate.core import slim
from golden_gate.core.gate import GateSettings, evaluate_gate
from golden_gate.core.report import load_report
from golden_gate.errors import InputError
from golden_gate.rendering.render import render_comment, render_summary
from tests.gate_pairs import (
    MALFORMED,
    OUTPUTS,
    PAIR_BUILDERS,
    SHAPES,
    _cli,
    _inside,
    _sha,
    malformed_outputs,
    outputs,
    write_pair,
)

RECORDED = json.loads(OUTPUTS.read_text())
# Read by the fast path only where a row shows them: a malformed run elsewhere goes unnoticed.
UNREAD_RUNS = {"large-bad-run-status", "large-failed-bad-run"}


@pytest.fixture(scope="module")
def pairs() -> dict[str, tuple]:
    return {name: build() for name, build in PAIR_BUILDERS.items()}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", list(PAIR_BUILDERS))
def test_the_commands_print_what_they_printed_before(tmp_path, pairs, name, shape):
    names = write_pair(pairs[name], tmp_path, shape)
    assert outputs(tmp_path, names) == RECORDED["pairs"][name]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", list(PAIR_BUILDERS))
def test_read_the_slim_way_however_small_nothing_changes(tmp_path, pairs, name, shape):
    names = write_pair(pairs[name], tmp_path, shape)
    want = RECORDED["pairs"][name]
    report = slim.load(tmp_path / names[0], large=0)
    baseline = slim.load(tmp_path / names[1], rows=False, large=0) if len(names) > 1 else None
    fast = isinstance(report, slim._FileReport)
    # Indented reports take the fast path; a compact one, one with no items, or one with half
    # an emoji (which pydantic's parser refuses and report.py repairs) is parsed in full.
    assert fast == (shape != "compact" and name not in ("hostile", "empty"))
    gate = evaluate_gate(report, baseline, GateSettings())
    assert _sha(gate.model_dump_json(indent=2) + "\n") == want["verdict_json"]
    assert _sha(render_comment(report, gate, baseline=baseline)) == want["comment"]
    assert _sha(render_summary(report, gate, baseline=baseline)) == want["summary"]


@pytest.mark.parametrize("name", ["demo", "scale-1k", "scale-1k-alone", "panel", "judge-errors"])
def test_gate_writes_the_comment_and_summary_the_action_renders(tmp_path, pairs, name):
    names = write_pair(pairs[name], tmp_path, "ours")
    want = RECORDED["pairs"][name]
    with _inside(tmp_path):
        code, stdout, _ = _cli(
            ["gate", *names, "--comment-file", "comment.md", "--summary-file", "summary.md"]
        )
    assert (code, _sha(stdout)) == (want["exit_code"], want["gate_stdout"])
    assert _sha((tmp_path / "comment.md").read_text(encoding="utf-8")) == want["comment"]
    assert _sha((tmp_path / "summary.md").read_text(encoding="utf-8")) == want["summary"]


@pytest.mark.parametrize("name", sorted(set(MALFORMED) - UNREAD_RUNS))
def test_a_malformed_report_gets_the_same_sentence_and_exit_code(tmp_path, name):
    assert malformed_outputs(tmp_path, name, MALFORMED[name]) == RECORDED["malformed"][name]


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_read_the_slim_way_a_malformed_report_is_the_same_sentence(tmp_path, name):
    recorded = RECORDED["malformed"][name]["report"]
    path = tmp_path / "bad.json"
    path.write_bytes(MALFORMED[name])
    if name in UNREAD_RUNS:
        report = slim.load(path, large=0)
        assert len(report.items) > 1  # the runs are not read...
        with pytest.raises(InputError) as caught:
            report.record("a")  # ...until a row shows the item
    else:
        with pytest.raises(InputError) as caught:
            slim.load(path, large=0)
    assert recorded["exit_code"] == caught.value.exit_code == 2
    assert recorded["stderr"] == f"golden-gate: error: {caught.value}\n".replace(
        str(path), "bad.json"
    )


def test_a_malformed_run_is_refused_once_a_row_shows_its_item(tmp_path):
    (tmp_path / "bad.json").write_bytes(MALFORMED["large-failed-bad-run"])
    with _inside(tmp_path):
        # Alone: the failed items' rows are shown (a baseline sharing one of its 12,001 items
        # would make it "not comparable", and an incomplete run shows no item rows).
        code, _, stderr = _cli(["gate", "bad.json", "--comment-file", "c.md"])
    assert code == 2
    assert stderr == RECORDED["malformed"]["large-failed-bad-run"]["report"]["stderr"]


@pytest.mark.parametrize("shape", ["ours", "indent2"])
def test_a_row_reads_the_record_the_full_parse_reads(tmp_path, pairs, shape):
    for name in ("scale-1k", "unknown-fields", "panel", "several-runs"):
        names = write_pair(pairs[name], tmp_path, shape)
        view = slim.load(tmp_path / names[0], large=0)
        assert isinstance(view, slim._FileReport)
        full = load_report(tmp_path / names[0])
        for item in full.results:
            assert view.record(item.id) == item
        assert view.record("no such item") is None
        assert view.items.ids == [item.id for item in full.results]
        assert view.items.runs == [item.runs for item in full.results]


def test_two_large_reports_read_at_once_are_read_as_one_at_a_time(tmp_path, pairs):
    # Forking is only done with no other thread running (pytest's workers have some), so in a
    # fresh interpreter.
    names = write_pair(pairs["scale-1k"], tmp_path, "ours")
    script = f"""
from golden_gate.core import slim
prepared = []
report, baseline = slim.load_pair({names[0]!r}, {names[1]!r}, meanwhile=lambda: prepared.append(1))
alone, base_alone = slim.load({names[0]!r}), slim.load({names[1]!r}, rows=False)
assert type(report).__name__ == type(baseline).__name__ == "_FileReport" and prepared == [1]
assert report.items == alone.items and report.header == alone.header
assert report.starts == alone.starts and report.evaluations == alone.evaluations
assert baseline.items == base_alone.items and baseline.header == base_alone.header
assert report.record(report.items.ids[7]) == alone.record(alone.items.ids[7]) is not None
print("same")
"""
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.stdout == "same\n", done.stderr


def test_a_report_the_copy_cannot_read_is_read_again_for_its_sentence(tmp_path, pairs):
    names = write_pair(pairs["scale-1k"], tmp_path, "ours")
    (tmp_path / "bad.json").write_bytes(MALFORMED["large-passes-over-runs"])
    script = f"""
from golden_gate.core import slim
from golden_gate.errors import InputError
try:
    slim.load_pair("bad.json", {names[1]!r})
except InputError as exc:
    print(exc)
"""
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    expected = RECORDED["malformed"]["large-passes-over-runs"]["report"]["stderr"]
    assert f"golden-gate: error: {done.stdout}" == expected, done.stderr


@pytest.mark.parametrize("chunk", [700, 4096, 65_536])
def test_a_report_read_in_small_chunks_reads_the_same(tmp_path, pairs, chunk):
    # Items and the head larger than a chunk, items cut across chunks: the buffer grows and
    # carries what is left of an item to the next read.
    for name, shape in (("scale-1k", "ours"), ("unknown-fields", "indent2"), ("panel", "ours")):
        names = write_pair(pairs[name], tmp_path, shape)
        whole = slim.load(tmp_path / names[0], large=0)
        bits = slim.load(tmp_path / names[0], large=0, chunk=chunk)
        assert isinstance(bits, slim._FileReport) and isinstance(whole, slim._FileReport)
        assert bits.items == whole.items and bits.header == whole.header
        assert bits.starts == whole.starts and bits.evaluations == whole.evaluations
        for item_id in bits.items.ids[::37]:
            assert bits.record(item_id) == whole.record(item_id) is not None


def test_a_forked_reader_that_dies_leaves_the_report_to_this_process(tmp_path, monkeypatch):
    import os
    import signal

    from golden_gate.core.report import save_report
    from tests.helpers import report

    parent = os.getpid()
    reading = slim._read_paused

    def killed_in_the_copy(path, **kwargs):
        if os.getpid() != parent:  # the forked copy: gone before it hands anything back
            os.kill(os.getpid(), signal.SIGKILL)
        return reading(path, **kwargs)

    monkeypatch.setattr(slim, "_read_paused", killed_in_the_copy)
    candidate, baseline = tmp_path / "r.json", tmp_path / "b.json"
    save_report(report({"a": True, "b": False}), candidate)
    save_report(report({"a": True, "b": True}), baseline)
    view, base = slim.load_pair(candidate, baseline, large=1)
    assert view.items.ids == ["a", "b"] and view.items.passes == [1, 0]
    assert base is not None and base.items.passes == [1, 1]


# Values JSON allows where the full model coerces, refuses or keeps them: read the slim way,
# each gives the full parse's columns or its sentence (the fast path keeps only exact types).
ODD_ITEMS = {
    "count-written-as-float": {"passes": 1.0},
    "count-as-string": {"runs": "1"},
    "count-as-true": {"passes": True},
    "big-count": {"runs": 10**30, "passes": 10**29},
    "errors-null": {"errors": None},
    "unanswered-float": {"unanswered": 0.0},
    "tags-null": {"tags": None},
    "tags-empty": {"tags": []},
    "tag-a-number": {"tags": ["smoke", 3]},
    "tags-an-object": {"tags": {"smoke": 1}},
    "cluster-a-number": {"cluster": 5},
    "cluster-null": {"cluster": None},
    "origin-empty": {"origin": ""},
    "origin-null": {"origin": None},
    "origin-pull-request": {"origin": "pull-request"},
    "question-a-number": {"question": 3},
    "question-null": {"question": None},
    "hash-a-list": {"item_hash": ["x"]},
    "id-a-number": {"id": 5},
    "runs-an-object": {"run_results": {}},
    "runs-null": {"run_results": None},
    "runs-empty": {"run_results": []},
    "item-a-list": None,
}


# Exact types: the fast path takes these; the others go to the full parse.
TAKEN_AS_THEY_ARE = {
    "big-count", "tags-empty", "cluster-null", "origin-null", "origin-pull-request",
    "question-null", "runs-empty",
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(ODD_ITEMS))
def test_an_odd_value_reads_the_slim_way_as_the_full_parse_reads_it(tmp_path, name):
    from tests.gate_pairs import _bad_item, _large

    odd = ODD_ITEMS[name]
    text = _large(_bad_item(**odd) if odd is not None else None)
    if odd is None:  # an item that is not an object
        text = text.replace(b'"results": [\n  {', b'"results": [\n  [1],\n  {', 1)
    path = tmp_path / "odd.json"
    path.write_bytes(text)
    try:
        full = slim.of(load_report(path))
    except InputError as refused:
        with pytest.raises(InputError) as caught:
            slim.load(path, large=0)
        assert str(caught.value) == str(refused)
        return
    view = slim.load(path, large=0)
    assert isinstance(view, slim._FileReport) == (name in TAKEN_AS_THEY_ARE)
    for column in ("ids", "passes", "runs", "errors", "unanswered", "hashes", "clusters", "own"):
        assert getattr(view.items, column) == getattr(full.items, column), column
    assert list(map(list, view.items.tags)) == list(map(list, full.items.tags))  # () is []
    assert view.header == full.header


def test_the_fast_paths_exact_types_are_the_models_fields():
    # A change to ItemResult's kept fields fails here first: slim._EXACT must follow it.
    from typing import Literal

    from golden_gate.core.report import ItemResult

    declared = {
        "id": (str, True),
        "tags": (list[str], False),
        "passes": (int, True),
        "runs": (int, True),
        "errors": (int, False),
        "unanswered": (int, False),
        "cluster": (str | None, False),
        "origin": (Literal["base", "pull-request"] | None, False),
        "item_hash": (str | None, False),
        "question": (str | None, False),
    }
    assert set(slim._EXACT) == set(declared) == {*slim._FIELDS, "question"}
    for name, (annotation, required) in declared.items():
        info = ItemResult.model_fields[name]
        assert (info.annotation, info.is_required()) == (annotation, required), name
        bounds = [getattr(m, "ge", None) for m in info.metadata]
        assert bounds == ([0] if name in slim._COUNTS else []), name
    assert {None, "base", "pull-request"} == slim._ORIGINS


def test_where_the_full_parse_is_not_to_be_done_a_record_that_needs_it_says_so(tmp_path):
    # A forked copy making rows (render.py) leaves such a record to the process that made it.
    path = tmp_path / "bad.json"
    path.write_bytes(MALFORMED["large-failed-bad-run"])
    view = slim.load(path, large=0)
    assert isinstance(view, slim._FileReport)
    view.parse_in_full = False
    assert view.record(view.items.ids[1]) is not None  # the fast path reads a good item
    with pytest.raises(slim.NeedsFullParse):
        view.record("a")
    assert "_full" not in vars(view)  # the whole report was not parsed
    view.parse_in_full = True
    with pytest.raises(InputError):
        view.record("a")


def test_many_rows_with_a_bad_run_in_the_copys_half_get_the_full_parses_sentence(tmp_path):
    # 600 regressed rows: half are made by a forked copy, which leaves the bad item to this
    # process (one full parse, here). A fresh interpreter: pytest's workers run threads.
    run = {"status": "pass", "answer": "A long enough answer. " * 40, "checks": []}

    def report(failing: set[int], bad: int | None = None) -> str:
        items = []
        for i in range(1200):
            runs = [{**run, "status": "fail" if i in failing else "pass"}]
            if i == bad:
                runs = [{"status": "great"}]
            items.append({"id": f"q{i:04d}", "passes": 0 if i in failing else 1, "runs": 1,
                          "run_results": runs})  # fmt: skip
        return json.dumps({"judge": "j", "results": items}, indent=1)

    failing = set(range(0, 1200, 2))
    (tmp_path / "base.json").write_text(report(set()))
    (tmp_path / "cand.json").write_text(report(failing, bad=1100))
    assert (tmp_path / "cand.json").stat().st_size > slim.LARGE_REPORT_BYTES
    with pytest.raises(InputError) as refused:
        load_report(tmp_path / "cand.json")
    done = subprocess.run(
        [sys.executable, "-m", "golden_gate", "gate", "cand.json", "base.json",
         "--comment-file", "c.md"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"golden-gate: error: {refused.value}\n".replace(
        str(tmp_path / "cand.json"), "cand.json"
    )
