"""`golden-gate import`: each peer's format, written here in the shapes of real files, becomes a
golden set `eval` accepts; what maps and what is dropped is said; nothing is invented."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from golden_gate.cli import main
from golden_gate.core.golden import load_golden, select
from tests.fakes.assistant_server import AssistantServer

# The items every format carries in a round trip: question and expected answer.
PAIRS = [
    ("How long is the refund window?", "Refunds are accepted for 30 days.\nAfter that, none."),
    ("Which ports does the server use?", "8200 and 8201."),
    ('Who wrote the docs, "really"?', "The docs team, with ümlauts and emoji 🙂."),
]


def _promptfoo(path: Path) -> Path:
    lines = ["description: docs assistant", "prompts: ['{{question}}']", "tests:"]
    for q, a in PAIRS:
        lines += [
            "  - vars:",
            f"      question: {json.dumps(q)}",
            "    assert:",
            "      - type: factuality",
            f"        value: {json.dumps(a)}",
        ]
    path = path / "promptfooconfig.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _deepeval(path: Path) -> Path:
    path = path / "goldens.json"
    path.write_text(json.dumps([{"input": q, "expected_output": a, "context": ["c"]}
                                for q, a in PAIRS], indent=2))  # fmt: skip
    return path


def _deepeval_export(path: Path) -> Path:
    path = path / "dataset.json"
    goldens = [{"input": q, "expectedOutput": a, "retrievalContext": None} for q, a in PAIRS]
    path.write_text(json.dumps({"alias": "docs", "goldens": goldens}))
    return path


def _openai_evals(path: Path) -> Path:
    path = path / "samples.jsonl"
    path.write_text("".join(json.dumps({"input": [
        {"role": "system", "content": "Answer briefly."}, {"role": "user", "content": q}],
        "ideal": a}) + "\n" for q, a in PAIRS))  # fmt: skip
    return path


def _ragas_01(path: Path) -> Path:
    path = path / "testset.csv"
    with path.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["question", "contexts", "ground_truth", "evolution_type", "metadata"])
        for q, a in PAIRS:
            writer.writerow([q, json.dumps(["a page"]), a, "simple", "[{'page': 1}]"])
    return path


def _ragas_02(path: Path) -> Path:
    path = path / "testset.jsonl"
    path.write_text("".join(json.dumps({"user_input": q, "reference_contexts": ["p"],
        "reference": a, "synthesizer_name": "single_hop_specific_query_synthesizer"}) + "\n"
        for q, a in PAIRS))  # fmt: skip
    return path


def _langsmith(path: Path) -> Path:
    path = path / "examples.jsonl"
    path.write_text("".join(json.dumps({"id": f"e{i}", "dataset_id": "d", "inputs": {
        "question": q}, "outputs": {"answer": a}, "metadata": {"dataset_split": ["base"]}})
        + "\n" for i, (q, a) in enumerate(PAIRS)))  # fmt: skip
    return path


def _langfuse(path: Path) -> Path:
    path = path / "items.json"
    items = [{"id": f"i{i}", "datasetId": "d", "status": "ACTIVE", "input": {"question": q},
              "expectedOutput": a, "metadata": None} for i, (q, a) in enumerate(PAIRS)]  # fmt: skip
    path.write_text(json.dumps(items))
    return path


def _table(path: Path) -> Path:
    path = path / "qa.csv"
    with path.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["Prompt", "Gold", "Area"])
        for q, a in PAIRS:
            writer.writerow([q, a, "docs"])
    return path


FORMATS = {
    "promptfoo": (_promptfoo, []),
    "deepeval": (_deepeval, []),
    "deepeval-export": (_deepeval_export, []),
    "openai-evals": (_openai_evals, []),
    "ragas-0.1": (_ragas_01, []),
    "ragas-0.2": (_ragas_02, []),
    "langsmith": (_langsmith, []),
    "langfuse": (_langfuse, []),
    "table": (_table, ["--map", "question=Prompt,reference=Gold,tags=Area"]),
}


def _import(source: Path, out: Path, capsys, *extra: str) -> tuple[int, str, str]:
    code = main(["import", str(source), "-o", str(out), *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("fmt", FORMATS)
def test_round_trip_keeps_each_question_and_its_reference_as_written(tmp_path, capsys, fmt):
    write, extra = FORMATS[fmt]
    out = tmp_path / "golden.jsonl"
    code, said, err = _import(write(tmp_path), out, capsys, *extra)
    assert code == 0, err
    items = load_golden(out)
    # The expected answer, whole and unsplit, is the reference the judge reads.
    assert [(i.question, i.reference_key_points) for i in items] == [(q, [a]) for q, a in PAIRS]
    assert all("imported" in i.tags for i in items)
    assert "→ question" in said and "→ reference" in said
    again = tmp_path / "again.jsonl"
    assert _import(write(tmp_path), again, capsys, *extra)[0] == 0
    assert [i.id for i in load_golden(again)] == [i.id for i in items]  # ids are stable


def test_every_imported_set_is_accepted_by_eval(tmp_path, capsys):
    with AssistantServer(default_answer="Refunds are accepted for 30 days.") as assistant:
        for fmt, (write, extra) in FORMATS.items():
            where = tmp_path / fmt
            where.mkdir()
            out = where / "golden.jsonl"
            assert _import(write(where), out, capsys, *extra)[0] == 0
            code = main(["eval", str(out), "--assistant-url", assistant.url, "--judge-model",
                         "keypoints", "--quiet", "-o",
                         str(where / "report.json")])  # fmt: skip
            err = capsys.readouterr().err
            assert code == 0, (fmt, err)
            report = json.loads((where / "report.json").read_text())
            assert len(report["results"]) == len(PAIRS), fmt


def test_promptfoo_asserts_map_or_are_dropped_item_by_item(tmp_path, capsys):
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(
        "providers:\n  - id: https\n    config: {url: 'http://127.0.0.1:9/chat'}\n"
        "defaultTest:\n  assert:\n    - type: not-icontains\n      value: as an AI\n"
        "tests:\n"
        "  - description: refunds\n"
        "    vars: {question: 'Refund window?', context: 'policy'}\n"
        "    assert:\n"
        "      - {type: contains, value: '30 days'}\n"
        "      - {type: icontains, value: refund}\n"
        "      - {type: regex, value: '\\d+ days'}\n"
        "      - {type: llm-rubric, value: 'says refunds are accepted for 30 days'}\n"
        "      - {type: javascript, value: 'output.length < 500'}\n"
        "  - vars: {question: 'Give me JSON'}\n"
        "    assert:\n"
        "      - {type: is-json}\n"
        "      - {type: equals, value: '{}'}\n"
        "  - vars: {question: 'Anything?'}\n"
        "    assert:\n"
        "      - {type: latency, threshold: 500}\n"
    )
    out = tmp_path / "golden.jsonl"
    code, said, _ = _import(config, out, capsys)
    assert code == 0
    refund, as_json, anything = load_golden(out)
    assert refund.must_include == ["/30\\ days/", "refund", "/\\d+ days/"]
    assert refund.reference_key_points == ["says refunds are accepted for 30 days"]
    assert refund.must_not_include == ["as an AI"]  # defaultTest's, on every test
    assert as_json.json_schema == {} and as_json.must_include == ["/\\A\\{\\}\\Z/"]
    # A test whose only check has no equivalent keeps the default's: still something to judge.
    assert anything.must_not_include == ["as an AI"] and not anything.reference_key_points
    assert "assert javascript (no equivalent)" in said and "vars.context" in said
    assert f"{config}:9: " in said  # the item that dropped it, by line
    assert "assert latency (no equivalent)" in said


def test_records_with_nothing_to_judge_are_listed_not_written(tmp_path, capsys):
    # The real deepeval file's shape: input and additional_metadata, no expected output.
    goldens = tmp_path / "goldens.json"
    goldens.write_text(json.dumps([
        {"input": "What is the refund window?", "additional_metadata": {"topic": "billing"}},
        {"input": "Which ports?", "expected_output": "8200"},
    ], indent=2))  # fmt: skip
    out = tmp_path / "golden.jsonl"
    code, said, _ = _import(goldens, out, capsys)
    assert code == 0
    assert [i.question for i in load_golden(out)] == ["Which ports?"]
    assert f"{goldens}:2: nothing to judge" in said
    # For evaluators that need no reference, on request.
    code, _, _ = _import(goldens, tmp_path / "free.jsonl", capsys, "--without-reference")
    assert code == 0 and len(load_golden(tmp_path / "free.jsonl")) == 2
    only = tmp_path / "only.json"
    only.write_text(json.dumps([{"input": "What is the refund window?"}]))
    code, _, err = _import(only, tmp_path / "none.jsonl", capsys)
    assert code == 2 and f"{only}:1: nothing to judge" in err
    assert not (tmp_path / "none.jsonl").exists()


def test_key_points_are_drawn_only_when_asked_and_marked_for_review(tmp_path, capsys):
    source = _openai_evals(tmp_path)
    out = tmp_path / "golden.jsonl"
    assert _import(source, out, capsys, "--key-points")[0] == 0
    items = load_golden(out)
    assert items[0].reference_key_points == [
        "Refunds are accepted for 30 days.",
        "After that, none.",
    ]
    assert all("needs-review" in i.tags for i in items)
    assert select(items, []) == []  # never gated until reviewed


def test_openai_evals_ideal_list_is_any_of_them(tmp_path, capsys):
    source = tmp_path / "samples.jsonl"
    source.write_text(json.dumps({"input": "2+2?", "ideal": ["4", "four"]}) + "\n")
    out = tmp_path / "golden.jsonl"
    assert _import(source, out, capsys)[0] == 0
    (item,) = load_golden(out)
    assert item.must_include == ["/(?:4|four)/"] and not item.reference_key_points


@pytest.mark.parametrize(
    ("name", "text", "said"),
    [
        (
            "samples.jsonl",
            '{"input": "a", "ideal": "b"}\n{"input": \n',
            "samples.jsonl:2: not JSON",
        ),
        ("goldens.json", '[{"input": "a",\n "expected_output": }]', "goldens.json:2: not JSON"),
        ("testset.csv", 'question,ground_truth\n"a,b\n', "testset.csv:"),
        (
            "promptfooconfig.yaml",
            "tests:\n  - vars: {question: [\n",
            "promptfooconfig.yaml:3: not YAML",
        ),
        ("promptfooconfig.yaml", "tests: file://tests/*.yaml\n", "import those files"),
        ("items.json", '[{"datasetId": "d", "input": "q"}, 3]', "items.json:1: a dataset item"),
    ],
)
def test_bad_input_is_one_sentence_with_file_and_line(tmp_path, capsys, name, text, said):
    source = tmp_path / name
    source.write_text(text)
    code, _, err = _import(source, tmp_path / "golden.jsonl", capsys)
    assert code == 2 and said in err and err.count("\n") == 1, err
    assert not (tmp_path / "golden.jsonl").exists()


def test_an_existing_output_is_never_replaced_without_force(tmp_path, capsys):
    out = tmp_path / "golden.jsonl"
    out.write_text("keep\n")
    code, _, err = _import(_deepeval(tmp_path), out, capsys)
    assert code == 2 and "exists" in err and out.read_text() == "keep\n"


@pytest.mark.parametrize(
    ("name", "text", "said"),
    [
        (
            "deep.jsonl",
            '{"input": ' + "[" * 100_000 + "]" * 100_000 + "}\n",
            "deep.jsonl:1: not JSON",
        ),
        ("deep.json", "[" * 100_000 + "]" * 100_000, "deep.json"),
        ("big.json", '[{"input": "q", "expected_output": ' + "9" * 5000 + "}]", "4300 digits"),
        ("deep.yaml", "tests: " + "[" * 50_000 + "]" * 50_000 + "\n", "deep.yaml"),
    ],
)
def test_hostile_nesting_and_numbers_are_one_sentence(tmp_path, capsys, name, text, said):
    source = tmp_path / name
    source.write_text(text)
    fmt = {"deep.yaml": "promptfoo"}.get(name, "deepeval")
    code, _, err = _import(source, tmp_path / "golden.jsonl", capsys, "--format", fmt)
    assert code == 2 and said in err and err.count("\n") == 1, err


def test_a_json_document_over_the_cap_is_refused_before_it_is_read(tmp_path, capsys, monkeypatch):
    from golden_gate.importers import sources

    monkeypatch.setattr(sources, "MAX_DOCUMENT_BYTES", 100)
    source = _deepeval(tmp_path)
    code, _, err = _import(source, tmp_path / "golden.jsonl", capsys)
    assert code == 2 and "write it as JSONL" in err
    # JSONL is read a line at a time: no document cap.
    assert _import(_openai_evals(tmp_path), tmp_path / "g2.jsonl", capsys)[0] == 0


def test_names_from_the_file_cannot_drive_the_terminal(tmp_path, capsys):
    source = tmp_path / "samples.jsonl"
    source.write_text(
        json.dumps({"input": "q\x1b[2J?", "ideal": "a", "x\x1b]0;pwned\x07": 1}) + "\n"
    )
    code, said, _ = _import(source, tmp_path / "golden.jsonl", capsys)
    assert code == 0 and "\x1b" not in said and "\x07" not in said


def test_promptfoo_tests_csv_and_a_list_of_questions(tmp_path, capsys):
    tests = tmp_path / "tests.csv"
    tests.write_text(
        "question,__expected1,__expected2,__description\n"
        "Refund window?,contains: 30 days,grade: says 30 days,refunds\n"
        "Capital of France?,Paris,,\n"
        'Ports?,fn: output.includes("8200"),is-json,\n'
    )
    out = tmp_path / "golden.jsonl"
    code, said, _ = _import(tests, out, capsys)
    assert code == 0 and "as promptfoo" in said
    refund, capital, ports = load_golden(out)
    assert refund.must_include == ["/30\\ days/"]
    assert refund.reference_key_points == ["says 30 days"]
    assert capital.must_include == ["/\\AParis\\Z/"]  # a bare value is promptfoo's equals
    assert ports.json_schema == {} and "assert javascript (no equivalent)" in said
    # A list in the question var: promptfoo runs the test once for each value.
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(
        "tests:\n  - vars:\n      question: ['Reset password?', 'Change e-mail?']\n"
        "    assert:\n      - {type: llm-rubric, value: points to Settings}\n"
    )
    assert _import(config, tmp_path / "list.jsonl", capsys)[0] == 0
    items = load_golden(tmp_path / "list.jsonl")
    assert [(i.question, i.reference_key_points) for i in items] == [
        ("Reset password?", ["points to Settings"]),
        ("Change e-mail?", ["points to Settings"]),
    ]


def test_a_key_named_earlier_cannot_misplace_the_records(tmp_path, capsys):
    export = tmp_path / "dataset.json"
    export.write_text(json.dumps({
        "meta": {"goldens": "see [3"},  # the key, earlier, in another object
        "goldens": [{"input": "Port?", "expectedOutput": "8200"}, {"input": "Who?"}],
    }))  # fmt: skip
    code, said, _ = _import(export, tmp_path / "golden.jsonl", capsys)
    assert code == 0 and "element 2: nothing to judge" in said
    assert [i.question for i in load_golden(tmp_path / "golden.jsonl")] == ["Port?"]
