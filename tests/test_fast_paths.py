"""The fast paths of the pure core give exactly what the plain versions they replaced gave.

`inline` escapes with a learnt translation table and one regex pass instead of a Python loop a
character; the gate tallies each report once; `render` escapes a row once, only when a
template lists it, and renders each distinct row count once. Each is checked here against a
straightforward reference.
"""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from golden_gate.core.comparison import compare
from golden_gate.core.gate import MISSING_SHARE, evaluate_gate
from golden_gate.core.item_result import ItemResult, RunResult, Verdict
from golden_gate.core.report import Report
from golden_gate.core.verdict import GateSettings
from golden_gate.errors import InputError
from golden_gate.rendering.environment import environment, templates_dir
from golden_gate.rendering.escape import ZWSP, inline
from golden_gate.rendering.render import _Context, render

# -- inline -----------------------------------------------------------------------------------

_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb]"
)
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;", "|": "&#124;"}
_MARKDOWN = set("\\`*_[]()!~{}^$")


def reference_inline(text: str | None, *, limit: int = 300) -> str:
    """`inline` as it was first written: one character at a time."""
    if text is None:
        return ""
    text = _INVISIBLE.sub("", text[: limit * 4 if limit > 0 else None])
    text = "".join(
        ch for ch in text if ch in "\t\n\r" or unicodedata.category(ch) not in ("Cc", "Cf", "Co")
    )
    text = re.sub(r"\s+", " ", text).strip()
    if limit > 0 and len(text) > limit:
        text = text[: max(limit - 1, 0)].rstrip() + "…"
    out = []
    for i, ch in enumerate(text):
        if ch in _HTML:
            out.append(_HTML[ch])
        elif ch in _MARKDOWN:
            out.append("\\" + ch)
        elif ch in "@#":
            out.append(("\\#" if ch == "#" else "@") + ZWSP)
        elif ch == ":" and text[i + 1 : i + 2] == "/":
            out.append(":" + ZWSP)
        else:
            out.append(ch)
    escaped = re.sub(r"(?i)(w)(w)(w)", r"\1" + ZWSP + r"\2\3", "".join(out))
    # References GitHub links: GH-123, and hex words long enough to name a commit.
    escaped = re.sub(r"(?i)\b(gh-)(?=\d)", r"\1" + ZWSP, escaped)
    return re.sub(
        r"(?i)(?<![0-9a-z])[0-9a-f]{7,}(?![0-9a-z])",
        lambda m: ZWSP.join(re.findall(".{1,6}", m.group())),
        escaped,
    )


TRICKY = [
    *"&<>\"'|\\`*_[]()!~{}^$@#:/wW \t\n\r\x00\x1c\x7f\x85\xa0\xad",
    "\u200b",
    "\u202e",
    "\u2028",
    "\u3000",
    "\ue000",
    "\ufeff",
    "\U000e0001",
    "\ud800",
    "é",
    "😀",
    "://",
    "www",
]
texts = st.one_of(
    st.text(alphabet=st.sampled_from(TRICKY[:-2]) | st.characters(), max_size=80),
    st.lists(st.sampled_from(TRICKY), max_size=60).map("".join),
)


@settings(max_examples=400, deadline=None)
@given(texts, st.sampled_from([0, 1, 2, 3, 10, 80, 300]))
def test_inline_matches_the_character_loop(text, limit):
    assert inline(text, limit=limit) == reference_inline(text, limit=limit)


def test_inline_on_every_plane_sample():
    sample = "".join(chr(c) for c in range(0, 0x110000, 97)) + "".join(map(chr, range(0x3000)))
    for start in range(0, len(sample), 250):
        chunk = sample[start : start + 250]
        assert inline(chunk, limit=0) == reference_inline(chunk, limit=0)


# -- the gate -----------------------------------------------------------------------------------


MOVED = "shared item(s) changed question or reference since the baseline"


def make_item(item_id: str, passes: int, runs: int, item_hash: str | None) -> ItemResult:
    return ItemResult(
        id=item_id, passes=passes, runs=runs, errors=int(runs == 0), item_hash=item_hash
    )


items = st.builds(
    lambda i, counts, h: make_item(f"q{i}", min(counts), max(counts), h),
    st.integers(0, 30),
    st.tuples(st.integers(0, 3), st.integers(0, 3)),
    st.sampled_from([None, "", "h1", "h2"]),
)


def as_report(results: list[ItemResult]) -> Report:
    unique = list({r.id: r for r in results}.values())
    return Report(judge="keypoints", results=unique)


@settings(max_examples=200, deadline=None)
@given(st.lists(items, max_size=30), st.lists(items, max_size=30))
def test_gate_matches_a_lookup_per_question(cand_items, base_items):
    candidate, baseline = as_report(cand_items), as_report(base_items)
    cand = {r.id: r for r in candidate.results if not r.errored}
    base = {r.id: r for r in baseline.results if not r.errored}
    shared = cand.keys() & base.keys()
    result = compare(candidate, baseline, GateSettings())
    # Per-item scores: a regression is a lower pass fraction, an improvement a higher one.
    assert result.regressions == sorted(i for i in shared if cand[i].score < base[i].score)
    assert result.improvements == sorted(i for i in shared if cand[i].score > base[i].score)
    assert result.only_in_candidate == sorted(cand.keys() - base.keys())
    assert result.only_in_baseline == sorted(base.keys() - cand.keys())
    gate = evaluate_gate(candidate, baseline)
    counted = [r for r in candidate.results if not r.errored]
    # Baseline items the candidate leaves out count as failed runs above MISSING_SHARE.
    present = {r.id for r in candidate.results}
    missing = [i for i in base if i not in present] if candidate.results else []
    extra = len(missing) if base and len(missing) / len(base) > MISSING_SHARE else 0
    assert gate.n == len(counted) + extra
    assert gate.k == sum(r.passed for r in counted)
    assert gate.errored == sorted(r.id for r in candidate.results if r.has_errors)
    assert gate.unstable == sorted(r.id for r in counted if r.unstable)
    base_by_id = baseline.by_id()
    changed = sum(
        1
        for r in candidate.results
        if r.id in base_by_id
        and r.item_hash
        and base_by_id[r.id].item_hash
        and r.item_hash != base_by_id[r.id].item_hash
    )
    moved = [w for w in gate.warnings if "shared item(s) changed" in w]
    # Without a counted item there is no result, and nothing is compared (nor warned about).
    expected = [f"the yardstick moved: {changed} {MOVED}"] if changed and gate.n else []
    assert moved == expected


# -- rendering ----------------------------------------------------------------------------------

ALL_SECTIONS = """\
{% for name, s in [("regressed", regressed), ("improved", improved), ("failed", failed),
                   ("unstable", unstable), ("errors", errors)] %}
{{ name }} {{ s.total }} {{ s.omitted }} {{ s.rows | length }}:
{%- for r in s.rows %} {{ r.id }}={{ r.runs }}{% endfor %}

{% endfor %}
{% for t in tags %}{{ t.tag }} {{ t.passed }}/{{ t.items }} {{ t.rate }} {{ t.regressions }}
{% endfor %}
"""


def varied(n: int, flip: set[int], *, tags: tuple[str, ...] = ("a", "b")) -> Report:
    results = []
    for i in range(n):
        passed = (i % 3 != 0) != (i in flip)
        runs = 0 if i % 11 == 5 else 3 if i % 7 == 0 else 1
        passes = 0 if runs == 0 else 2 if runs == 3 and passed else int(passed) * runs
        run = RunResult(
            status="pass" if passed else "fail",
            answer=f"answer {i} " * 5,
            verdict=Verdict(passed=passed, comment="" if passed else f"missed {i}"),
        )
        results.append(
            ItemResult(
                id=f"q{i:03d}",
                tags=list(tags[: i % 3]),
                passes=passes,
                runs=runs,
                errors=int(runs == 0),
                question=f"What about {i}?",
                run_results=[run],
            )
        )
    return Report(judge="keypoints", results=results)


def test_every_section_lists_the_same_rows_whether_shown_or_not(tmp_path):
    baseline, candidate = varied(60, set()), varied(60, {1, 2, 4, 8, 9, 30})
    gate = evaluate_gate(candidate, baseline, GateSettings(floor=0.1))
    template = tmp_path / "all.md.j2"
    template.write_text(ALL_SECTIONS)
    body = render(candidate, gate, baseline=baseline, user_template=template, limit=10_000)
    lines = dict(line.split(" ", 1) for line in body.splitlines() if line[:1].isalpha())
    failed = sorted(r.id for r in candidate.results if not r.errored and not r.passed)
    assert lines["failed"].startswith(f"{len(failed)} 0 {len(failed)}:")
    assert lines["failed"].split(":", 1)[1].split() == [
        f"<code>{i}</code>={r.passes}/{r.runs}" for i in failed for r in [candidate.by_id()[i]]
    ]
    assert lines["regressed"].split(":")[0] == f"{gate.comparison.b} 0 {gate.comparison.b}"
    assert lines["errors"].split(":")[0] == f"{len(gate.errored)} 0 {len(gate.errored)}"
    # With too little room, rows are dropped from every section alike and counted as omitted.
    for limit in range(400, len(body), 40):
        short = render(candidate, gate, baseline=baseline, user_template=template, limit=limit)
        counts = [
            [int(n) for n in line.split(":")[0].split()[1:]]
            for line in short.splitlines()
            if ":" in line
        ]
        most = max(rows for total, omitted, rows in counts)
        assert all(rows == min(total, most) == total - omitted for total, omitted, rows in counts)


def reference_render(report, gate, *, baseline, template, limit, user_template=None):
    """The search `render` does, without remembering any attempt."""
    env = environment(templates_dir(), user_template)
    tmpl = env.get_template(user_template.name if user_template else template)

    def attempt(max_rows: int) -> str:
        context = _Context(report, gate, baseline=baseline, comment_id="default", extra_notes=[])
        return tmpl.render(**context(max_rows))

    most = max(len(report.results), 1)
    body = attempt(most)
    if len(body) <= limit:
        return body
    low, high, best = 0, most, attempt(0)
    if len(best) > limit:
        raise InputError("too long")
    while high - low > 1:
        mid = (low + high) // 2
        text = attempt(mid)
        if len(text) <= limit:
            low, best = mid, text
        else:
            high = mid
    return best


@pytest.mark.parametrize("template", ["comment.md.j2", "summary.md.j2", "all"])
@pytest.mark.parametrize("with_baseline", [True, False])
def test_remembered_attempts_choose_what_a_fresh_search_chooses(tmp_path, template, with_baseline):
    baseline, candidate = varied(120, set()), varied(120, set(range(0, 120, 4)))
    base = baseline if with_baseline else None
    gate = evaluate_gate(candidate, base, GateSettings(floor=0.1))
    user_template = None
    if template == "all":
        user_template = tmp_path / "all.md.j2"
        user_template.write_text(ALL_SECTIONS)
    full = render(candidate, gate, baseline=base, template=template, user_template=user_template)
    for limit in range(len(full) // 3, len(full) + 200, max(len(full) // 25, 1)):
        kwargs = {"baseline": base, "template": template, "limit": limit}
        try:
            expected = reference_render(candidate, gate, user_template=user_template, **kwargs)
        except InputError:
            with pytest.raises(InputError):
                render(candidate, gate, user_template=user_template, **kwargs)
            continue
        assert render(candidate, gate, user_template=user_template, **kwargs) == expected
