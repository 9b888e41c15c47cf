"""Tightening understands patterns: a `paths` or `ignore-paths` list counts as stricter only
when it provably selects a superset (subset) of what the base's selects, under the matcher the
scope itself uses (pathspec's GitIgnoreSpec, `!` take-backs and its priorities included)."""

from __future__ import annotations

import pathspec
from hypothesis import given, settings
from hypothesis import strategies as st

from golden_gate.action.scope import IGNORED
from golden_gate.core.path_lists import selects_at_least, selects_at_most

PATTERNS = [
    "a/", "a/*", "a/x", "a/x/", "a/**", "a/b/", "b/", "b/**", "*.md", "x", "**/x", "c/*.py",
    "a/b/x.md", "docs/", "kb/**", "src/**", "*",
]  # fmt: skip
PATTERNS += ["!" + p for p in PATTERNS]
FILES = [
    "a/x", "a/x/y", "a/b/x.md", "a/b/c", "a/y.md", "b/x", "b/a/x", "x", "x.md", "c/d.py",
    "c/e/f.py", "docs/a.md", "docs/x", "kb/a.md", "kb/b/c.txt", "src/a.py", "src/kb/x",
    "prompts/a.md", "y",
]  # fmt: skip

lists = st.lists(st.sampled_from(PATTERNS), max_size=6)


def selected(patterns: list[str], prefix: tuple[str, ...] = ()) -> set[str]:
    spec = pathspec.GitIgnoreSpec.from_lines([*prefix, *patterns])
    return {f for f in FILES if spec.match_file(f)}


@st.composite
def edited(draw, base_lists=lists):
    """A base and an edit of it: deletions, insertions, moves and appends (the shapes a pull
    request's list takes), or an unrelated list."""
    base = draw(base_lists)
    given = list(base)
    for _ in range(draw(st.integers(0, 3))):
        op = draw(st.sampled_from(["delete", "insert", "append", "move"]))
        if op == "delete" and given:
            given.pop(draw(st.integers(0, len(given) - 1)))
        elif op == "insert":
            given.insert(draw(st.integers(0, len(given))), draw(st.sampled_from(PATTERNS)))
        elif op == "append":
            given.append(draw(st.sampled_from(PATTERNS)))
        elif op == "move" and given:
            given.append(given.pop(draw(st.integers(0, len(given) - 1))))
    if draw(st.booleans()) and draw(st.booleans()):
        given = draw(lists)
    return base, given


@settings(max_examples=3000, deadline=None)
@given(edited())
def test_a_paths_list_proved_stricter_selects_every_file_the_base_selects(pair):
    base, given_list = pair
    if selects_at_least(base, given_list):
        assert selected(given_list) >= selected(base), (base, given_list)


@settings(max_examples=3000, deadline=None)
@given(edited())
def test_an_ignore_list_proved_stricter_ignores_no_file_the_base_keeps(pair):
    base, given_list = pair
    if selects_at_most(base, given_list):
        # The ignore list extends the built-in one, as the scope reads it.
        assert selected(given_list, IGNORED) <= selected(base, IGNORED), (base, given_list)
        assert selected(given_list) <= selected(base), (base, given_list)


@settings(max_examples=500, deadline=None)
@given(lists, st.lists(st.sampled_from([p for p in PATTERNS if not p.startswith("!")]), max_size=3))
def test_positive_patterns_added_at_the_end_are_always_proved(base, added):
    assert selects_at_least(base, [*base, *added])
    assert selects_at_most(base, [*base, *("!" + p for p in added)])


def test_the_issues_cases_are_refused():
    # An input `paths` that adds a take-back selects less.
    assert not selects_at_least(["src/**", "kb/**"], ["src/**", "kb/**", "!src/**"])
    # An ignore list that drops the base's take-back ignores more.
    assert not selects_at_most(["kb/**", "!kb/**"], ["kb/**"])
    # Not proved, so refused: a positive inserted before a take-back, or deleted before one.
    assert not selects_at_least(["a/x", "!a/"], ["a/x", "a/", "!a/"])
    assert not selects_at_most(["a/x", "a/", "!a/"], ["a/x", "!a/"])
    # An empty allow-list is no allow-list: tightens.py compares it apart, never here.
    assert not selects_at_least(["src/**"], [])


def test_the_usual_tightenings_are_proved():
    assert selects_at_least(["src/**"], ["src/**", "prompts/**"])
    assert selects_at_least(["src/**", "!src/vendor/**"], ["src/**"])
    assert selects_at_least(["src/**", "kb/**"], ["kb/**", "src/**"])  # the final run, reordered
    assert selects_at_most(["data/**", "notes/*.txt"], ["data/**"])
    assert selects_at_most(["kb/**"], ["kb/**", "!kb/policy/**"])
    assert selects_at_most(["kb/**", "!kb/a/**", "!kb/b/**"], ["kb/**", "!kb/b/**", "!kb/a/**"])
