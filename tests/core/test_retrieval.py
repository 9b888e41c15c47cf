"""The retrieval layer's figures (core/retrieval.py): URL normalisation, ranks, hit@k, MRR,
recall@k, and its part of the gate (floor, paired test), on records built by hand."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from golden_gate.core import retrieval
from golden_gate.core.gate import evaluate_gate
from golden_gate.core.item_result import ItemResult
from golden_gate.core.report import Report, RetrievalItem, RetrievalRecord
from golden_gate.core.retrieval import normalise_url, ranks, same_source, source_key
from golden_gate.core.verdict import GateSettings

# -- normalisation -----------------------------------------------------------------------------

SEGMENT = st.text(
    alphabet=st.characters(
        codec="utf-8",
        exclude_characters="/\\#?%.",
        exclude_categories=("Cs", "Cc", "Zs", "Zl", "Zp"),
    ),
    min_size=1,
    max_size=8,
)
PATHS = st.lists(SEGMENT, min_size=1, max_size=4).map("/".join)
HOSTS = st.from_regex(r"[a-z][a-z0-9-]{0,10}\.(com|dev|org)", fullmatch=True)
ANY_TEXT = st.text(max_size=40)


@given(ANY_TEXT)
def test_normalising_twice_changes_nothing(text):
    once = normalise_url(text)
    assert normalise_url(once) == once


@given(PATHS, st.sampled_from(["", "/", "//"]), st.sampled_from(["", "#intro", "#a?b"]))
def test_slashes_and_anchors_do_not_make_another_page(path, slash, anchor):
    assert normalise_url(path + slash + anchor) == normalise_url(path)
    assert normalise_url("/" + path) == normalise_url(path)
    assert normalise_url("./" + path) == normalise_url(path)


@given(PATHS, st.sampled_from(["", "?utm_source=x", "?a=1&b=2"]))
def test_query_strings_are_dropped(path, query):
    assert normalise_url(path + query) == normalise_url(path)


@given(PATHS, st.sampled_from([".md", ".html", ".htm", ".mdx", ".MD"]))
def test_a_page_file_is_its_rendered_page(path, suffix):
    assert normalise_url(path + suffix) == normalise_url(path)
    assert normalise_url(path + "/index" + suffix) == normalise_url(path)
    assert normalise_url(path + "/README.md") == normalise_url(path)


@given(HOSTS, PATHS, st.sampled_from(["http", "https", "HTTPS", "Http"]))
def test_scheme_and_host_case_do_not_matter_and_a_bare_path_matches_any_host(host, path, scheme):
    url = f"{scheme}://{host.upper()}/{path}/"
    assert normalise_url(url) == normalise_url(f"https://{host}/{path}")
    assert same_source(source_key(url), source_key(path + ".md"))
    assert not same_source(source_key(url), source_key(f"https://other-{host}/{path}"))


@given(PATHS)
def test_path_case_is_kept(path):
    if path.lower() != path:
        assert normalise_url(path.lower()) != normalise_url(path)


def test_the_documented_examples():
    same = [
        "docs/install.md",
        "/docs/install",
        "docs/install/",
        "./docs/install.html",
        "docs/install/index.md",
        "https://Docs.Example.COM:443/docs/install/#ports",
        "docs/install?ref=nav",
        "docs/%69nstall.md",
    ]
    keys = [source_key(u) for u in same]
    assert all(same_source(keys[0], k) for k in keys)
    assert normalise_url("HTTPS://Example.com/docs/x/") == "//example.com/docs/x"
    assert normalise_url("docs/a/../b.md") == "docs/b"
    assert normalise_url("docs/my page.md") == normalise_url("docs/my%20page.md")
    assert normalise_url("docs/a%2Fb") != normalise_url("docs/a/b")  # an escaped slash stays one
    assert normalise_url("s3://bucket/docs/x.md") == "s3://bucket/docs/x"


def test_ranks_count_distinct_pages_and_missing_sources():
    sources = ["docs/a.md#one", "docs/a.md#two", "https://h.dev/docs/b/", "docs/c.md"]
    assert ranks(["docs/b.md", "docs/c", "docs/zzz"], sources) == [2, 3, None]
    assert ranks(["docs/a.md"], []) == [None]


# -- per item ----------------------------------------------------------------------------------


def test_item_score_over_several_runs():
    item = RetrievalItem(expected=["a", "b"], ranks=[[1, 7], [6, None], [2, 3]])
    score = retrieval.item_score(item, k=5)
    assert score is not None
    assert score.hit == Fraction(2, 3)  # runs 1 and 3 hit the top 5
    assert score.reciprocal_rank == pytest.approx((1 + 1 / 6 + 1 / 2) / 3)
    assert score.recall == pytest.approx((0.5 + 0 + 1) / 3)
    assert score.rank == 2  # the median run's best rank (1, 2, 6)
    assert retrieval.item_score(RetrievalItem(expected=["a"], ranks=[]), k=5) is None


def test_record_leaves_out_items_without_references_and_lists_those_without_sources():
    found = retrieval.record(
        [
            ("hit", ["smoke"], ["docs/a.md"], [["docs/a.md", "docs/b.md"]]),
            ("miss", ["smoke", "x"], ["docs/a.md"], [["docs/b.md"]]),
            ("no-refs", ["smoke"], [], [["docs/a.md"]]),
            ("silent", ["smoke"], ["docs/a.md"], [None, None]),
        ],
        k=1,
    )
    assert list(found.items) == ["hit", "miss", "silent"]
    assert found.without_sources == ["silent"]
    assert found.overall is not None and found.overall.items == 2
    assert found.overall.hit_rate == 0.5 and found.overall.mrr == 0.5
    assert found.by_tag["x"].hit_rate == 0.0 and found.by_tag["smoke"].items == 2


# -- the gate ----------------------------------------------------------------------------------


def _report(ranks_by_item: dict[str, list[list[int | None]]] | None, *, k: int = 5) -> Report:
    results = [ItemResult(id=i, tags=["t"], passes=1, runs=1) for i in ranks_by_item or {"x": []}]
    record = None
    if ranks_by_item is not None:
        items = {
            i: RetrievalItem(expected=[f"docs/{i}.md"], ranks=r) for i, r in ranks_by_item.items()
        }
        record = RetrievalRecord(k=k, items=items)
    return Report(judge="keypoints", results=results, retrieval=record)


def test_retrieval_that_got_worse_fails_a_gate_every_answer_passes():
    base = _report({f"q{i}": [[1]] for i in range(12)})
    cand = _report({f"q{i}": [[1]] if i >= 6 else [[9]] for i in range(12)})
    gate = evaluate_gate(cand, base, GateSettings(floor=0.5))
    assert gate.k == gate.n == 12  # every answer passed
    assert gate.verdict == "failed"
    assert [r.code for r in gate.reasons] == ["retrieval-regression"]
    found = gate.retrieval
    assert found is not None and found.comparison is not None
    assert [(c.id, c.before, c.after) for c in found.comparison.fell][:2] == [
        ("q0", 1, 9),
        ("q1", 1, 9),
    ]
    assert found.comparison.p_value == pytest.approx(0.5**6)
    assert not found.notes  # six changed: enough to reach significance
    pair = _report({"q0": [[1]], "q1": [[1]]})
    few = evaluate_gate(_report({"q0": [[9]], "q1": [[1]]}), pair, GateSettings(floor=0))
    assert few.passed and few.retrieval is not None
    assert "changed for only 1 item(s)" in few.retrieval.notes[-1]


def test_several_runs_use_the_share_of_runs_that_hit_in_the_paired_test():
    base = _report({f"q{i}": [[1], [1]] for i in range(10)})
    cand = _report({f"q{i}": [[1], [None]] for i in range(10)})  # half the runs miss
    gate = evaluate_gate(cand, base, GateSettings(floor=0.5))
    assert gate.retrieval is not None and gate.retrieval.comparison is not None
    assert gate.retrieval.comparison.net_drop == pytest.approx(0.5)
    assert gate.retrieval.overall is not None and gate.retrieval.overall.hit_rate == 0.5
    assert "retrieval-regression" in [r.code for r in gate.reasons]


def test_the_retrieval_floor_is_on_the_lower_bound_of_hit_at_k():
    cand = _report({f"q{i}": [[1]] if i < 15 else [[6]] for i in range(20)})  # hit@5 = 0.75
    passing = evaluate_gate(cand, None, GateSettings(floor=0.5, retrieval_floor=0.5))
    assert passing.passed and passing.retrieval is not None
    assert passing.retrieval.lower_bound == pytest.approx(0.5313, abs=1e-3)
    failing = evaluate_gate(cand, None, GateSettings(floor=0.5, retrieval_floor=0.6))
    assert [r.code for r in failing.reasons] == ["retrieval-below-floor"]
    # k moves what a hit is: with k = 6 every item hits.
    wide = evaluate_gate(cand, None, GateSettings(floor=0.5, retrieval_floor=0.8, retrieval_k=6))
    assert wide.passed


def test_without_sources_the_layer_says_so_and_never_gates():
    silent = _report(None)
    gate = evaluate_gate(silent, None, GateSettings(floor=0, retrieval_floor=0.9))
    assert gate.passed and gate.retrieval is not None and not gate.retrieval.measured
    assert gate.retrieval.notes == [retrieval.NO_SOURCES]
    assert not gate.warnings  # no baseline that measured it
    base = _report({"x": [[1]]})
    gate = evaluate_gate(silent, base, GateSettings(floor=0))
    assert (
        gate.passed
        and "the baseline measured retrieval and this run did not" in (gate.warnings[-1])
    )
    # No retrieval data on either side, no retrieval floor: nothing said at all.
    assert evaluate_gate(silent, None, GateSettings(floor=0)).retrieval is None
    # Sources recorded, but no item has reference_urls (or no answer returned sources).
    empty = _report({})
    empty.results = [ItemResult(id="x", passes=1, runs=1)]
    gate = evaluate_gate(empty, None, GateSettings(floor=0, retrieval_floor=0.9))
    assert gate.passed and "reference_urls" in gate.retrieval.notes[0]
    unmeasured = _report({"x": []})
    gate = evaluate_gate(unmeasured, None, GateSettings(floor=0, retrieval_floor=0.9))
    assert gate.passed and "returned sources" in gate.retrieval.notes[0]


def test_a_baseline_without_retrieval_data_is_not_comparable_for_retrieval():
    cand = _report({f"q{i}": [[9]] for i in range(12)})
    base = _report(None)
    base.results = [ItemResult(id=f"q{i}", tags=["t"], passes=1, runs=1) for i in range(12)]
    gate = evaluate_gate(cand, base, GateSettings(floor=0.5))
    assert gate.passed
    assert gate.retrieval is not None and gate.retrieval.comparison is None
    assert retrieval.NO_BASE_DATA in gate.retrieval.notes


def test_gate_json_is_unchanged_without_retrieval_data():
    report = Report(judge="keypoints", results=[ItemResult(id="a", passes=1, runs=1)])
    data = evaluate_gate(report, None, GateSettings(floor=0.5)).model_dump(mode="json")
    assert "retrieval" not in data
    assert "retrieval_k" not in data["settings"] and "retrieval_floor" not in data["settings"]


def test_shards_merge_their_retrieval_records():
    from golden_gate.core.merge import merge_reports
    from golden_gate.core.report import DatasetInfo

    shards = []
    for index, ranks_by_item in enumerate(({"a": [[1]], "b": [[9]]}, {"c": [[2]]}), start=1):
        report = _report(ranks_by_item)
        report.dataset = DatasetInfo(shard=f"{index}/2")
        shards.append((f"shard{index}.json", report))
    merged = merge_reports(shards)
    assert merged.retrieval is not None
    assert list(merged.retrieval.items) == ["a", "b", "c"]
    assert merged.retrieval.overall is not None
    assert merged.retrieval.overall.hit_rate == pytest.approx(2 / 3)
    assert merged.retrieval.by_tag["t"].items == 3
