import json

import pytest

from golden_gate.core.golden import fingerprint, load_golden, parse_golden, select, write_golden
from golden_gate.errors import InputError

GOOD = {
    "id": "install-ports",
    "question": "Which port does the server use?",
    "reference_key_points": ["port 8200"],
    "reference_urls": ["docs/install.md"],
    "tags": ["smoke", "install"],
}


def lines(*objs):
    return [json.dumps(o) if not isinstance(o, str) else o for o in objs]


def test_loads_items_and_keeps_unknown_fields(tmp_path):
    path = tmp_path / "golden.jsonl"
    path.write_text(json.dumps({**GOOD, "owner": "docs-team"}) + "\n\n", encoding="utf-8")
    (item,) = load_golden(path)
    assert item.id == "install-ports"
    assert item.model_extra == {"owner": "docs-team"}
    assert item.reference == "- port 8200"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("{not json", "golden.jsonl:2: invalid JSON"),
        ("[1, 2]", "golden.jsonl:2: expected a JSON object, got list"),
        (json.dumps({"id": "x"}), "golden.jsonl:2: missing field 'question'"),
        (
            json.dumps({**GOOD, "id": "y", "question": "   "}),
            "golden.jsonl:2: field 'question': the question is empty",
        ),
        (json.dumps({**GOOD, "id": "y", "tags": "smoke"}), "golden.jsonl:2: field 'tags'"),
        (json.dumps({**GOOD, "id": "y", "max_chars": "10"}), "golden.jsonl:2: field 'max_chars'"),
        (json.dumps({**GOOD, "id": 7}), "golden.jsonl:2: field 'id'"),
        (json.dumps(GOOD), "golden.jsonl:2: duplicate id 'install-ports' (first on line 1)"),
    ],
)
def test_each_problem_names_file_and_line(line, expected):
    with pytest.raises(InputError) as exc:
        parse_golden(lines(GOOD, line), source="golden.jsonl")
    assert str(exc.value).startswith(expected)


def test_every_bad_line_is_reported_at_once():
    with pytest.raises(InputError) as exc:
        parse_golden(lines(GOOD, "{", "nope", GOOD), source="g.jsonl")
    message = str(exc.value)
    assert "g.jsonl:2:" in message and "g.jsonl:3:" in message and "g.jsonl:4:" in message


def test_empty_and_missing_files(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n  \n")
    with pytest.raises(InputError, match=r"empty\.jsonl: the golden set is empty"):
        load_golden(empty)
    with pytest.raises(InputError, match=r"nothere\.jsonl: golden set not found"):
        load_golden(tmp_path / "nothere.jsonl")


def test_select_by_any_tag_in_file_order():
    items = parse_golden(
        lines(
            {**GOOD, "id": "a", "tags": ["full"]},
            {**GOOD, "id": "b", "tags": ["smoke"]},
            {**GOOD, "id": "c", "tags": ["nightly", "full"]},
            {**GOOD, "id": "d", "tags": ["nightly"]},
        ),
        source="g",
    )
    assert [i.id for i in select(items, ["nightly", "smoke"])] == ["b", "c", "d"]
    assert [i.id for i in select(items, [])] == ["a", "b", "c", "d"]
    assert select(items, ["none"]) == []


def test_fingerprint_is_stable_and_sensitive():
    a = parse_golden(lines(GOOD), source="g")
    b = parse_golden([json.dumps(dict(reversed(list(GOOD.items()))))], source="g")
    assert fingerprint(a) == fingerprint(b)  # key order does not matter
    changed = parse_golden(lines({**GOOD, "question": "Which port?"}), source="g")
    assert fingerprint(a) != fingerprint(changed)
    assert fingerprint(a).startswith("sha256:")


def test_subset_round_trip_keeps_schema(tmp_path):
    items = parse_golden(lines({**GOOD, "owner": "x"}, {**GOOD, "id": "b", "tags": []}), source="g")
    out = tmp_path / "subset.jsonl"
    write_golden(select(items, ["smoke"]), out)
    (line,) = out.read_text().splitlines()
    assert json.loads(line) == {**GOOD, "owner": "x"}
    assert fingerprint(load_golden(out)) == fingerprint(select(items, ["smoke"]))


def test_a_line_separator_inside_a_string_is_not_a_line_break(tmp_path):
    # JSON may hold U+2028, U+2029 and U+0085 raw; JSON Lines breaks lines at "\n" only.
    item = {"id": "a", "question": "x\u2028y\u0085z", "reference_key_points": ["k"]}
    line = json.dumps(item, ensure_ascii=False)
    path = tmp_path / "golden.jsonl"
    path.write_text(line + "\r\n", encoding="utf-8")
    assert [i.question for i in load_golden(path)] == ["x\u2028y\u0085z"]


# -- issue 30: a typo or an empty item must never silently turn a check off ------------------


def _eval(golden, *flags, cwd):
    from tests.fakes.assistant_server import AssistantServer
    from tests.helpers import golden_gate

    with AssistantServer(default_answer="Restore with the restore command.") as assistant:
        done = golden_gate(
            "eval", golden, "--assistant-url", assistant.url, "--judge-model", "keypoints",
            "--quiet", "-o", cwd / "r.json", *flags, cwd=cwd,
        )  # fmt: skip
        return done, assistant.request_count


def _lines(path, *items):
    path.write_text("".join(json.dumps(item) + "\n" for item in items))
    return path


ANSWERED = {"id": "ok", "question": "How to restore?", "reference_key_points": ["restore command"]}


@pytest.mark.parametrize(
    ("field", "value", "meant"),
    [
        ("reference_keypoints", ["never said"], "reference_key_points"),
        ("tag", ["smoke"], "tags"),
        ("must_refuses", True, "must_refuse"),
        ("Reference_URLs", ["docs/x.md"], "reference_urls"),
        ("keypoints", ["never said"], "reference_key_points"),
    ],
)
def test_a_near_miss_of_a_known_field_is_an_error_with_did_you_mean(tmp_path, field, value, meant):
    # Before: accepted as metadata, so the check it meant was off and a wrong answer passed.
    item = {"id": "typo", "question": "What port?", field: value}
    golden = _lines(tmp_path / "g.jsonl", ANSWERED, item)
    done, asked = _eval(golden, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip() == (
        f"golden-gate: error: {golden}:2: unknown field '{field}': did you mean '{meant}'?"
    )
    assert asked == 0


def test_a_misspelt_copy_beside_the_real_field_is_an_error_too(tmp_path):
    item = {**ANSWERED, "tags": ["smoke"], "tag": ["nightly"]}
    with pytest.raises(InputError, match=r"g:1: unknown field 'tag' beside 'tags'"):
        parse_golden([json.dumps(item)], source="g")


@pytest.mark.parametrize("points", [None, [], [""], ["  "]])
def test_an_item_nothing_can_judge_is_an_error_naming_it(tmp_path, points):
    # Before: "2/2 items passed" whatever the answers.
    empty = {"id": "vacuous", "question": "Anything?", "tags": ["smoke"]}
    if points is not None:
        empty["reference_key_points"] = points
    golden = _lines(tmp_path / "g.jsonl", ANSWERED, empty)
    done, asked = _eval(golden, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"golden-gate: error: {golden}:2: item 'vacuous' has nothing to judge" in done.stderr
    assert asked == 0
    # A URL or a refusal is something to judge by.
    for judged in ({"reference_urls": ["docs/a.md"]}, {"must_refuse": True}):
        golden = _lines(tmp_path / "g.jsonl", ANSWERED, {**empty, **judged})
        assert _eval(golden, cwd=tmp_path)[0].returncode in (0, 1)


def test_an_evaluator_without_a_reference_judges_an_item_without_one(tmp_path):
    from golden_gate.core.golden import check_judgeable
    from golden_gate.evaluation.evaluators import (
        EvaluatorSettings,
        parse_evaluators,
        reference_free,
    )

    def free(text):
        return reference_free(EvaluatorSettings(evaluators=parse_evaluators(text, flag="x")))

    rubric = tmp_path / "tone.txt"
    rubric.write_text("Is {outputs} polite?")
    graded = tmp_path / "graded.txt"
    graded.write_text("Does {outputs} match {reference_outputs}?")
    assert not free("correctness") and free("correctness,relevancy") and free("conciseness")
    assert free(str(rubric)) and not free(str(graded))
    item = parse_golden([json.dumps({"id": "a", "question": "Hi?"})], source="g")
    check_judgeable(item, reference_free=True)
    with pytest.raises(InputError, match="g:1: item 'a' has nothing to judge"):
        check_judgeable(item, reference_free=False)


def test_other_unknown_fields_are_a_teams_metadata_unless_golden_strict(tmp_path):
    golden = _lines(tmp_path / "g.jsonl", {**ANSWERED, "owner": "docs-team", "difficulty": 2})
    done, _ = _eval(golden, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    strict, asked = _eval(golden, "--golden-strict", cwd=tmp_path)
    assert strict.returncode == 2
    assert f"{golden}:1: unknown field 'owner', 'difficulty' (golden-strict is on" in strict.stderr
    assert asked == 0
