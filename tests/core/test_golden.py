import json

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from golden_gate.core.golden import (
    Decides,
    GoldenItem,
    fingerprint,
    item_hash,
    load_golden,
    parse_golden,
    select,
    write_golden,
)
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


# --- the item hash: the fields marked `Decides`, and nothing else ----------------------------

ABSENT = object()  # the field not written on the item's line
KINDS = ("question", "turns", "simulated_user")  # an item has exactly one
PER_TURN = ("reference_key_points", "reference_urls", "must_refuse", "expected_tools")
# Values each field can take on a line; every field of the model is here, so a new field is
# weighed by the property below (a test fails until it has values).
VALUES = {
    "id": ["q1", "q2"],
    "question": ["How do I reset?", "How do I restart?"],
    "reference_key_points": [["press reset"], ["hold power"], [], ABSENT],
    "reference_urls": [["https://docs/a"], ["https://docs/b"], [], ABSENT],
    "tags": [["smoke"], ["slow"], [], ABSENT],
    "must_refuse": [True, False, ABSENT],
    "min_chars": [0, 5, None, ABSENT],
    "max_chars": [10, 100, None, ABSENT],
    "cluster": ["c1", "c2", None, ABSENT],
    "must_include": [["ok"], ["/o+k/"], [], ABSENT],
    "must_not_include": [["bad"], ["/err(or)?/"], [], ABSENT],
    "json_schema": [{}, {"type": "object"}, None, ABSENT],
    "citations_in_sources": [True, False, None, ABSENT],
    "expected_tools": [[{"name": "book"}], [{"name": "book", "args": {"day": "mon"}}], None],
    "tools_match": ["strict", "subset", ABSENT],
    "forbidden_tools": [["rm"], [], ABSENT],
    "max_steps": [0, 3, None, ABSENT],
    "turns": [
        [{"question": "hi"}],
        [{"question": "hi", "max_chars": 5}],
        [{"question": "hi"}, {"question": "bye", "reference_key_points": ["bye"]}],
    ],
    "simulated_user": [
        {"persona": "a hurried user", "first_message": "reset?"},
        {"persona": "a hurried user", "first_message": "reset?", "max_turns": 2},
    ],
}


def test_every_field_of_an_item_has_values_for_the_property():
    assert set(VALUES) == set(GoldenItem.model_fields)


def test_a_field_not_marked_is_one_that_never_decides_a_verdict():
    # Which item (id), how it is selected and shown (tags), how the paired test weighs it
    # (cluster): nothing an answer is judged against. A new field is marked, or added here.
    unmarked = {
        name
        for name, info in GoldenItem.model_fields.items()
        if not any(isinstance(m, Decides) for m in info.metadata)
    }
    assert unmarked == {"id", "tags", "cluster"}


def _item(fields: dict) -> GoldenItem:
    line = {name: value for name, value in fields.items() if value is not ABSENT}
    return GoldenItem.model_validate_json(json.dumps(line))


@st.composite
def _pair(draw):
    """Two valid items that differ only in one field's value: (field, item, item)."""
    field = draw(st.sampled_from(sorted(VALUES)))
    kinds = [k for k in KINDS if not (k == "turns" and field in PER_TURN)]
    kind = field if field in KINDS else draw(st.sampled_from(kinds))
    others = [
        name
        for name in VALUES
        if name not in (*KINDS, "id", field) and not (kind == "turns" and name in PER_TURN)
    ]
    chosen = draw(st.lists(st.sampled_from(others), unique=True, max_size=6))
    base = {"id": "q1", **{name: draw(st.sampled_from(VALUES[name])) for name in chosen}}
    if kind != field:
        base[kind] = draw(st.sampled_from(VALUES[kind]))
    a, b = draw(st.lists(st.sampled_from(VALUES[field]), min_size=2, max_size=2, unique_by=id))
    return field, _item({**base, field: a}), _item({**base, field: b})


@hsettings(max_examples=400, deadline=None)
@given(_pair())
def test_items_differing_in_a_verdict_field_hash_differently_and_only_then(pair):
    field, one, other = pair
    marked = any(isinstance(m, Decides) for m in GoldenItem.model_fields[field].metadata)
    if not marked:
        assert item_hash(one) == item_hash(other), field
    elif getattr(one, field) != getattr(other, field):
        assert item_hash(one) != item_hash(other), field


def test_an_unknown_field_on_the_line_does_not_move_the_hash():
    plain = _item({"id": "q1", "question": "Q?"})
    assert item_hash(_item({"id": "q1", "question": "Q?", "owner": "docs"})) == item_hash(plain)


def test_only_a_length_bound_apart_is_a_changed_item():
    # Before the marks, max_chars was left out: a PR changing only it was not a reworded item.
    bounded = _item({"id": "q1", "question": "Q?", "max_chars": 80})
    assert item_hash(bounded) != item_hash(_item({"id": "q1", "question": "Q?", "max_chars": 90}))


# Hashes and a fingerprint computed before the marks replaced the hand-kept field lists: an item
# whose hash inputs are unchanged keeps its hash, and a golden set its fingerprint.
PINNED_ITEMS = [
    {"id": "plain", "question": "How do I reset?", "reference_key_points": ["press reset"],
     "tags": ["a"]},
    {"id": "urls", "question": "Where?", "reference_urls": ["https://x/y"], "must_refuse": True,
     "cluster": "c1"},
    {"id": "checks", "question": "JSON?", "must_include": ["ok"], "must_not_include": ["/bad/"],
     "json_schema": {}, "citations_in_sources": False},
    {"id": "empty-checks", "question": "Q", "must_include": [], "json_schema": None},
    {"id": "agent", "question": "Book", "expected_tools": [{"name": "book", "args": {"d": "x"}}],
     "tools_match": "strict", "max_steps": 3},
    {"id": "turns", "turns": [{"question": "hi", "reference_key_points": ["hello"],
                               "max_chars": 40}, {"question": "bye"}]},
    {"id": "sim", "simulated_user": {"persona": "p", "first_message": "m"},
     "forbidden_tools": ["rm"]},
    {"id": "extra", "question": "Q", "notes": "kept", "reference_key_points": ["k"]},
]  # fmt: skip
PINNED_HASHES = {
    "plain": "8b3569eeeca810d0",
    "urls": "b815567e6d0752e6",
    "checks": "188af68312980e25",
    "empty-checks": "1083d9996ebe2ca4",
    "agent": "139d8f031f20824c",
    "turns": "83e5fa70fed3ca68",
    "sim": "12e5a533f2486b2f",
    "extra": "2fba5bfb81404663",
}


def test_hashes_and_fingerprints_of_items_without_the_new_marks_stay():
    items = [_item(fields) for fields in PINNED_ITEMS]
    assert {i.id: item_hash(i) for i in items} == PINNED_HASHES
    assert fingerprint(items) == (
        "sha256:fb2f78c1fbdfd16dbd8b743919d9e144bb8c61857a2b7f0d9556b21183e54eb7"
    )
