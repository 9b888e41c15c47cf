"""`golden-gate view` shows the gate's own decision: the same verdict as `golden-gate gate` on
the same reports and settings, with the floor on the human basis too (through the real CLI)."""

import json
import re

import pytest

from tests.helpers import golden_gate, report

JUDGE = "openai:judge-lenient"


def _calibration(path, *, judge=JUDGE):
    """A calibration of a lenient judge: it passed 8 of the 12 answers people failed."""
    path.write_text(
        json.dumps(
            {
                "format": "golden-gate-calibration/1",
                "created_at": "2026-01-01T00:00:00Z",
                "judge": judge,
                "judge_identity_hash": "sha256:" + "0" * 64,
                "labels": 20,
                "n": 20,
                "kappa": {"value": 0.2},
                "confusion": {
                    "human_pass_judge_pass": 8,
                    "human_pass_judge_fail": 0,
                    "human_fail_judge_pass": 8,
                    "human_fail_judge_fail": 4,
                },
                "min_kappa": 0.0,
                "passed": True,
            }
        )
    )
    return path


def _page_verdict(page) -> str:
    html = page.read_text(encoding="utf-8")
    block = re.search(r'<script type="application/json" id="gg-data">(.*?)</script>', html, re.S)
    assert block is not None
    return json.loads(block.group(1))["verdict"]


VERDICT_OF_EXIT = {0: "passed", 1: "failed", 3: "incomplete"}


def _both(tmp_path, *flags, cwd=None):
    """(gate's verdict, view's verdict) on the same report and settings."""
    page = tmp_path / "page.html"
    page.unlink(missing_ok=True)
    gated = golden_gate("gate", tmp_path / "report.json", *flags, cwd=cwd)
    assert gated.returncode in VERDICT_OF_EXIT, gated.stderr
    viewed = golden_gate("view", tmp_path / "report.json", *flags, "-o", page, cwd=cwd)
    assert viewed.returncode == 0, viewed.stderr
    return VERDICT_OF_EXIT[gated.returncode], _page_verdict(page), gated


@pytest.fixture
def passing(tmp_path):
    # The judge passes all 20: its Wilson bound 0.839 clears the floor 0.80.
    ran = report({f"q{i}": True for i in range(20)}, judge=JUDGE)
    (tmp_path / "report.json").write_text(ran.model_dump_json())
    return tmp_path


def test_view_and_gate_agree_on_the_human_basis_given_as_flags(passing):
    calibration = _calibration(passing / "calibration.json")
    judge = _both(passing, "--calibration", calibration)
    assert judge[:2] == ("passed", "passed")
    # people would pass fewer: the floor on what they would say fails, in both
    gate, view, gated = _both(passing, "--calibration", calibration, "--floor-basis", "human")
    assert (gate, view) == ("failed", "failed")
    assert "below the floor on the human basis" in gated.stdout


def test_view_and_gate_agree_on_the_human_basis_from_the_config_file(passing):
    _calibration(passing / "calibration.json")
    (passing / "golden-gate.toml").write_text(
        '[gate]\nfloor-basis = "human"\n\n[comment]\ncalibration = "calibration.json"\n'
    )
    assert _both(passing, cwd=passing)[:2] == ("failed", "failed")


@pytest.mark.parametrize("calibrated", [False, True])
def test_without_a_calibration_of_this_judge_neither_has_a_result(passing, calibrated):
    flags = ["--floor-basis", "human"]
    if calibrated:  # a calibration of another judge says nothing of this one
        other = _calibration(passing / "other.json", judge="openai:another-judge")
        flags += ["--calibration", other]
    gate, view, gated = _both(passing, *flags)
    assert (gate, view) == ("incomplete", "incomplete")
    assert "floor-basis human: " in gated.stderr


def test_view_with_a_calibration_that_is_not_one_is_bad_input(passing):
    bad = passing / "calibration.json"
    bad.write_text("{", encoding="utf-8")
    viewed = golden_gate(
        "view", passing / "report.json", "--calibration", bad, "-o", passing / "page.html"
    )
    assert viewed.returncode == 2, viewed.stderr
    assert str(bad) in viewed.stderr and not (passing / "page.html").exists()
