"""Per-slice floors: floor-by-tag, critical tags, min-slice-items and Holm across slices,
through `golden-gate gate` as a user runs it, and Holm's arithmetic against statsmodels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from statsmodels.stats.multitest import multipletests

from golden_gate.core.gate import evaluate_gate
from golden_gate.core.report import Report
from golden_gate.core.slices import holm
from golden_gate.core.verdict import GateSettings
from tests.helpers import golden_gate, item


def _report(outcomes: dict[str, tuple[bool, list[str]]]) -> Report:
    return Report(
        judge="openai:gpt-4.1-mini",
        results=[item(i, passed, tags=tags) for i, (passed, tags) in outcomes.items()],
    )


def _write(path: Path, report: Report) -> Path:
    path.write_text(report.model_dump_json(exclude_none=True))
    return path


def _pair(tmp_path: Path, base: Report, cand: Report) -> tuple[Path, Path]:
    return _write(tmp_path / "cand.json", cand), _write(tmp_path / "base.json", base)


def test_holm_matches_statsmodels() -> None:
    for p_values in ([0.01, 0.04, 0.03], [0.2, 0.001, 0.049, 0.5], [0.05], [0.03, 0.03, 0.03]):
        expected = multipletests(p_values, method="holm")[1]
        assert holm(p_values) == pytest.approx(list(expected))


def test_a_critical_tag_with_one_regressed_item_fails_an_otherwise_passing_gate(
    tmp_path: Path,
) -> None:
    # 60 items; one billing item regresses: far from significant, and the floor is cleared.
    base = {f"q{i:02d}": (True, ["billing"] if i < 5 else ["docs"]) for i in range(60)}
    cand = dict(base) | {"q03": (False, ["billing"])}
    cand_path, base_path = _pair(tmp_path, _report(base), _report(cand))
    plain = golden_gate("gate", cand_path, base_path, "--floor", "0.8")
    assert plain.returncode == 0, plain.stdout + plain.stderr
    critical = golden_gate(
        "gate", cand_path, base_path, "--floor", "0.8", "--critical-tags", "billing",
        "--comment-file", tmp_path / "comment.md",
    )  # fmt: skip
    assert critical.returncode == 1, critical.stdout + critical.stderr
    assert "critical tag 'billing': 1 item(s) regressed (q03)" in critical.stdout
    comment = (tmp_path / "comment.md").read_text()
    assert "| tag | passed | items | rate | regressed | floor | lower bound | verdict |" in comment
    row = "| <code>billing</code> | 4 | 5 | 80.0% | 1 | critical | — | ❌ failed: a critical item"
    assert row + " regressed |" in comment
    # A critical tag with fewer items than min-slice-items still fails on its regressed item.
    small = golden_gate("gate", cand_path, base_path, "--critical-tags", "billing",
                        "--min-slice-items", "50")  # fmt: skip
    assert small.returncode == 1


def test_a_slice_with_too_few_items_says_so_and_never_passed(tmp_path: Path) -> None:
    base = {f"q{i:02d}": (True, ["refusal"] if i < 4 else ["docs"]) for i in range(40)}
    cand_path, base_path = _pair(tmp_path, _report(base), _report(base))
    done = golden_gate(
        "gate", cand_path, base_path, "--floor-by-tag", "refusal = 0.5", "--floor", "0.8",
        "--comment-file", tmp_path / "comment.md",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    comment = (tmp_path / "comment.md").read_text()
    row = next(line for line in comment.splitlines() if line.startswith("| <code>refusal</code> |"))
    assert "not enough items: 4 items, fewer than min-slice-items 10" in row
    assert "passed" not in row.split("|")[-2]
    assert "tag 'refusal': not enough items for a verdict of its own" in done.stdout
    # A sliced tag no item carries is in the table too, with nothing passed.
    done = golden_gate("gate", cand_path, base_path, "--floor-by-tag", "billing = 0.9",
                       "--comment-file", tmp_path / "c2.md")  # fmt: skip
    row = next(line for line in (tmp_path / "c2.md").read_text().splitlines()
               if line.startswith("| <code>billing</code> |"))  # fmt: skip
    assert "not enough items: 0 items" in row


def test_a_tag_below_its_own_floor_fails(tmp_path: Path) -> None:
    # 100 items pass 90 %: the global floor 0.8 holds, the refusals' 0.95 does not.
    outcomes = {f"q{i:03d}": (i % 10 != 0, ["refusal"] if i < 30 else ["docs"]) for i in range(100)}
    cand_path, base_path = _pair(tmp_path, _report(outcomes), _report(outcomes))
    floors = ("--floor-by-tag", "refusal=0.95", "--floor-by-tag", "docs = 0.5")
    done = golden_gate("gate", cand_path, base_path, "--floor", "0.8", *floors)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "tag 'refusal' below its floor: lower bound 0.744 < 0.95 (27/30 passed)" in done.stdout
    assert "docs" not in done.stdout.split("below its floor")[0]


def test_holm_with_three_slices_keeps_a_regression_one_slice_alone_would_call(
    tmp_path: Path,
) -> None:
    # Three slices of 30; slice a loses 5 items (p = 1/32 = 0.03125 alone), b and c lose 3
    # (p = 0.125). Alone a fails at alpha 0.05; Holm over three multiplies it by 3: 0.094.
    base = {f"{t}{i:02d}": (True, [t]) for t in "abc" for i in range(30)}
    cand = dict(base)
    for t, lost in (("a", 5), ("b", 3), ("c", 3)):
        for i in range(lost):
            cand[f"{t}{i:02d}"] = (False, [t])
    settings = GateSettings(floor=0, min_drop=0.01, floor_by_tag={"a": 0.0})
    alone = evaluate_gate(_report(cand), _report(base), settings)
    (only,) = alone.slices
    assert only.p_value == pytest.approx(1 / 32)
    assert only.p_holm == pytest.approx(1 / 32)
    assert only.verdict == "failed"
    assert "significant regression in tag 'a': p = 0.0312 (adjusted 0.0312) < 0.05" in (
        alone.headline
    )
    three = evaluate_gate(
        _report(cand),
        _report(base),
        settings.model_copy(update={"floor_by_tag": {"a": 0.0, "b": 0.0, "c": 0.0}}),
    )
    by_tag = {s.tag: s for s in three.slices}
    assert by_tag["a"].p_holm == pytest.approx(3 / 32)
    assert by_tag["b"].p_holm == pytest.approx(min(1, max(3 / 32, 2 * 0.125)))
    assert [s.verdict for s in three.slices] == ["passed", "passed", "passed"]
    assert not any(r.code == "slice-regression" for r in three.reasons)
    # The whole gate's own test (11 of 90 lost) still stands beside the slices.
    assert any(r.code == "significant-regression" for r in three.reasons)


def test_the_gate_json_is_unchanged_without_slices() -> None:
    settings = GateSettings()
    assert set(json.loads(settings.model_dump_json())) == {
        "floor", "alpha", "min_drop", "confidence", "require_comparable",
    }  # fmt: skip
    result = evaluate_gate(_report({"a": (True, ["x"])}), None, settings)
    assert "slices" not in json.loads(result.model_dump_json())


def test_a_pull_request_may_not_loosen_its_own_slice_floors(tmp_path: Path) -> None:
    from golden_gate.option_values import tightens
    from golden_gate.options import BY_NAME

    option = BY_NAME["floor-by-tag"]
    base = {"refusal": 0.95, "billing": 0.9}
    assert tightens(option, base, {"refusal": 0.97, "billing": 0.9, "new": 0.5})
    assert not tightens(option, base, {"refusal": 0.9, "billing": 0.9})  # lowered
    assert not tightens(option, base, {"refusal": 0.95})  # a tag's floor removed
    assert tightens(BY_NAME["critical-tags"], ["billing"], ["billing", "refusal"])
    assert not tightens(BY_NAME["critical-tags"], ["billing"], [])
    assert tightens(BY_NAME["min-slice-items"], 10, 5)
    assert not tightens(BY_NAME["min-slice-items"], 10, 50)


def test_slice_settings_in_the_config_file_and_their_mistakes(tmp_path: Path) -> None:
    outcomes = {f"q{i:03d}": (i % 10 != 0, ["refusal"] if i < 30 else ["docs"]) for i in range(100)}
    cand_path, base_path = _pair(tmp_path, _report(outcomes), _report(outcomes))
    config = tmp_path / "golden-gate.toml"
    config.write_text("[gate]\nfloor = 0.8\n\n[gate.floor-by-tag]\nrefusal = 0.95\n")
    done = golden_gate("gate", cand_path, base_path, cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "tag 'refusal' below its floor" in done.stdout
    config.write_text("[gate]\nfloor-by-tag = { refusal = 1.5 }\n")
    done = golden_gate("gate", cand_path, base_path, cwd=tmp_path)
    assert done.returncode == 2
    assert "golden-gate.toml:2: [gate] floor-by-tag: the floor of tag 'refusal' must be in" in (
        done.stderr
    )
    config.write_text("[gate]\nfloor = 0.5\n\n[gate.floor-by-tag]\nrefusal = 1.5\n")
    done = golden_gate("gate", cand_path, base_path, cwd=tmp_path)
    assert done.returncode == 2
    assert "golden-gate.toml:4: [gate] floor-by-tag: the floor of tag 'refusal'" in done.stderr
    config.write_text("[gate]\nfloor-by-tag = { refusal = 'high' }\n")
    done = golden_gate("gate", cand_path, base_path, cwd=tmp_path)
    assert done.returncode == 2
    assert "the value of 'refusal' must be a number, got 'high'" in done.stderr
    config.write_text("[gate]\ncritical-tag = ['billing']\n")
    done = golden_gate("gate", cand_path, base_path, cwd=tmp_path)
    assert done.returncode == 2
    assert "golden-gate.toml:2: unknown setting '[gate] critical-tag' (did you mean" in done.stderr


def test_a_pull_requests_own_items_cannot_carry_a_slice_over_its_floor() -> None:
    # The base's 20 refusal items pass 16; the pull request adds 40 easy ones of its own.
    base = {f"r{i:02d}": (i >= 4, ["refusal"]) for i in range(20)}
    own = {f"easy{i:02d}": (True, ["refusal"]) for i in range(40)}
    report = _report({**base, **own})
    for result in report.results:
        result.origin = "pull-request" if result.id.startswith("easy") else "base"
    settings = GateSettings(floor=0.5, floor_by_tag={"refusal": 0.6})
    result = evaluate_gate(report, None, settings)
    (refusal,) = result.slices
    assert refusal.lower_bound is not None and refusal.lower_bound > 0.6  # carried, all items
    assert refusal.verdict == "failed"
    said = "tag 'refusal' below its floor: lower bound 0.584 < 0.60 (on the base branch's 20 items)"
    assert said in result.headline
