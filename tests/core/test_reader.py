"""The report reader (golden_gate/core/slim.py): any JSON shape, the same output.

tests/data/gate_outputs.json holds, for report pairs built by tests/gate_pairs.py, the sha256 of
what `gate`, `report` (Markdown) and the job summary printed with the code before the slim view,
the verdict `report --format json` printed (compared with a float tolerance: its last bits
follow the BLAS kernel), and the sentence and exit code of malformed reports. Each is
reproduced here, in every shape (indented as golden-gate writes, indented by two, compact, keys
shuffled): through the commands as they are, and with every report read the slim way however
small it is.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from golden_gate.core import slim
from golden_gate.core.gate import evaluate_gate
from golden_gate.core.report_file import load_report
from golden_gate.core.verdict import GateSettings
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
    same,
    write_pair,
)

RECORDED = json.loads(OUTPUTS.read_text())
# Read by the fast path only where a row shows them: a malformed run elsewhere goes unnoticed.
UNREAD_RUNS = {"large-bad-run-status", "large-failed-bad-run"}
# Small ones too, when read the slim way (the commands parse a small report in full).
UNREAD_RUNS_SLIM = UNREAD_RUNS | {"bad-run-status"}


@pytest.fixture(scope="module")
def pairs() -> dict[str, tuple]:
    return {name: build() for name, build in PAIR_BUILDERS.items()}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", list(PAIR_BUILDERS))
def test_the_commands_print_what_they_printed_before(tmp_path, pairs, name, shape):
    names = write_pair(pairs[name], tmp_path, shape)
    assert same(outputs(tmp_path, names), RECORDED["pairs"][name])


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", list(PAIR_BUILDERS))
def test_read_the_slim_way_however_small_nothing_changes(tmp_path, pairs, name, shape):
    names = write_pair(pairs[name], tmp_path, shape)
    want = RECORDED["pairs"][name]
    report = slim.load(tmp_path / names[0], large=0)
    baseline = slim.load(tmp_path / names[1], large=0) if len(names) > 1 else None
    fast = isinstance(report, slim._FileReport)
    # Every shape is decoded the slim way; a report with half an emoji (which the decoder
    # refuses and report.py repairs) or with fields the model keeps as extras is parsed in full.
    assert fast == (name not in ("hostile", "unknown-fields"))
    gate = evaluate_gate(report, baseline, GateSettings())
    assert same(json.loads(gate.model_dump_json()), want["verdict"])
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
    if name in UNREAD_RUNS_SLIM:
        report = slim.load(path, large=0)
        assert len(report.items) >= 1  # the runs are not read...
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


@pytest.mark.parametrize("shape", SHAPES)
def test_a_row_reads_the_record_the_full_parse_reads(tmp_path, pairs, shape):
    for name in ("scale-1k", "panel", "several-runs"):
        names = write_pair(pairs[name], tmp_path, shape)
        view = slim.load(tmp_path / names[0], large=0)
        assert isinstance(view, slim._FileReport)
        full = load_report(tmp_path / names[0])
        for item in full.results:
            assert view.record(item.id) == item
        assert view.record("no such item") is None
        assert view.items.ids == [item.id for item in full.results]
        assert view.items.runs == [item.runs for item in full.results]


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
        assert b"[1]" in text
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


def test_the_decoders_fields_are_the_models_fields():
    # A change to ItemResult's fields fails here first: slim._Item must follow it.
    import msgspec

    from golden_gate.core.item_result import ItemResult

    model = ItemResult.model_fields
    fields = {f.name: f for f in msgspec.structs.fields(slim._Item)}
    assert set(fields) == set(model)
    for name, info in model.items():
        assert fields[name].required == info.is_required(), name
        if name == "run_results":  # skipped undecoded; a row decodes its item with the model
            continue
        kept = fields[name].type
        bounds = []
        if getattr(kept, "__metadata__", None):  # Annotated[int, Meta(ge=0)]
            bounds = [m.ge for m in kept.__metadata__]
            kept = kept.__origin__
        assert kept == info.annotation, name
        assert bounds == [getattr(m, "ge", None) for m in info.metadata], name
        if not info.is_required():
            field = fields[name]
            made = field.default_factory is not msgspec.NODEFAULT
            default = field.default_factory() if made else field.default
            assert default == info.get_default(call_default_factory=True), name


def test_a_row_of_a_moved_file_is_read_by_the_full_parse(tmp_path, pairs):
    # A row reads its item at the offset the first read found, and checks the id it finds.
    names = write_pair(pairs["scale-1k"], tmp_path, "compact")
    path = tmp_path / names[0]
    view = slim.load(path, large=0)
    assert isinstance(view, slim._FileReport)
    full = load_report(path)
    path.write_text(" " * 7 + path.read_text(encoding="utf-8"), encoding="utf-8")
    wanted = view.items.ids[3]
    assert view.record(wanted) == full.by_id()[wanted]


def test_many_rows_with_a_bad_run_among_them_get_the_full_parses_sentence(tmp_path):
    # 600 regressed rows, read before the first render: the bad item's is left to the full
    # parse, which says what is wrong.
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


@pytest.mark.parametrize("indent", [None, 1, 4])
def test_the_minimal_shape_reads_the_slim_way(tmp_path, indent):
    # Another harness's report: a judge and items of id, tags, passes and runs, nothing more.
    items = [
        {"id": f"m{i:05d}", "tags": ["smoke"] if i % 2 else [], "passes": i % 3 != 0, "runs": 1}
        for i in range(20_000)
    ]
    for item in items:
        item["passes"] = int(item["passes"])
    path = tmp_path / "minimal.json"
    path.write_text(json.dumps({"judge": "other-harness", "results": items}, indent=indent))
    assert path.stat().st_size >= slim.LARGE_REPORT_BYTES
    view = slim.load(path)
    assert isinstance(view, slim._FileReport)
    full = slim.of(load_report(path))
    assert view.items == full.items and view.header == full.header
    gate = evaluate_gate(view, None, GateSettings())
    assert gate == evaluate_gate(full, None, GateSettings())
    assert view.record("m00003") == full.full().by_id()["m00003"]
