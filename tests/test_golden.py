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
