"""Judge calibration: the kappa statistics, the labels file, runs against judges whose true
agreement is known, one run with the real LLM judge against the fake server, and rendering."""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import random
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from golden_gate.core.agreement import Confusion, Kappa, cohens_kappa, decide, landis_koch
from golden_gate.core.calibration import (
    CALIBRATION_FORMAT,
    CalibrationReport,
    Label,
    Outcome,
    build_report,
    calibration_exit_code,
    load_calibration,
    load_labels,
    save_calibration,
)
from golden_gate.core.golden import GoldenItem, load_golden
from golden_gate.core.item_result import TokenUsage, Verdict
from golden_gate.errors import EXIT_FAILED, EXIT_INCOMPLETE, EXIT_PASSED, InputError
from golden_gate.evaluation.cache import VerdictCache
from golden_gate.evaluation.calibrate import calibrate, run_calibration
from golden_gate.evaluation.judge import (
    Judge,
    JudgeError,
    JudgeSettings,
    KeypointsJudge,
    make_judge,
)
from golden_gate.rendering.calibration import calibration_line, render_calibration
from tests.fakes.judge_server import JudgeServer

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_GOLDEN = ROOT / "src" / "golden_gate" / "example_assistant" / "golden.jsonl"
EXAMPLE_LABELS = ROOT / "examples" / "calibration" / "labels.jsonl"


def table(pp: int, pf: int, fp: int, ff: int) -> Confusion:
    return Confusion.from_table(((pp, pf), (fp, ff)))


# -- statistics ------------------------------------------------------------------------------


def statsmodels_kappa(confusion: Confusion) -> Any:
    from statsmodels.stats.inter_rater import cohens_kappa as sm_kappa

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # degenerate tables divide by zero in the null variance
        return sm_kappa(confusion.table)


def test_textbook_example() -> None:
    # Wikipedia's worked example: 50 proposals, p_o = 0.70, p_e = 0.50, kappa = 0.40. The SE
    # by hand (Fleiss, Cohen and Everitt 1969): term_a = 0.10972, term_b = 0.10188,
    # term_c = 0.01, var = 0.2016 / (0.25 * 50) = 0.016128.
    kappa = cohens_kappa(table(20, 5, 10, 15))
    assert kappa.value == pytest.approx(0.4)
    assert kappa.se == pytest.approx(math.sqrt(0.016128))
    assert kappa.ci_low == pytest.approx(0.4 - 1.959964 * 0.1269961, abs=1e-6)
    assert kappa.ci_high == pytest.approx(0.4 + 1.959964 * 0.1269961, abs=1e-6)
    assert (round(kappa.ci_low, 3), round(kappa.ci_high, 3)) == (0.151, 0.649)
    sm = statsmodels_kappa(table(20, 5, 10, 15))
    assert (kappa.ci_low, kappa.ci_high) == pytest.approx((sm.kappa_low, sm.kappa_upp))


@pytest.mark.parametrize(
    ("cells", "expected"),
    [
        # Wikipedia: same observed agreement (0.60), different margins, different kappa.
        ((45, 15, 25, 15), 0.1304),
        ((25, 35, 5, 35), 0.2593),
    ],
)
def test_textbook_same_agreement_different_kappa(
    cells: tuple[int, int, int, int], expected: float
) -> None:
    assert cohens_kappa(table(*cells)).value == pytest.approx(expected, abs=1e-4)


@settings(max_examples=400, deadline=None)
@given(st.tuples(*(st.integers(0, 400) for _ in range(4))))
@example((0, 1, 0, 2))  # a judge with one verdict: statsmodels' variance rounds below zero
@example((0, 1, 0, 33))  # variance rounding noise ~1e-14 becomes ~1e-7 after the square root
def test_matches_statsmodels(cells: tuple[int, int, int, int]) -> None:
    confusion = table(*cells)
    kappa = cohens_kappa(confusion)
    human_pass, human_fail = cells[0] + cells[1], cells[2] + cells[3]
    if human_pass == 0 or human_fail == 0:
        assert kappa.value is None and kappa.ci_low is None and kappa.reason
        return
    sm = statsmodels_kappa(confusion)
    se = math.sqrt(max(float(sm.var_kappa), 0.0))
    assert kappa.value == pytest.approx(float(sm.kappa), abs=1e-9)
    assert kappa.se == pytest.approx(se, rel=1e-7, abs=1e-7)  # SE 0 cases: rounding noise
    low, high = float(sm.kappa_low), float(sm.kappa_upp)
    if math.isnan(low):  # statsmodels' variance rounds to just below 0: a point interval
        low = high = float(sm.kappa)
    # 1.96·sqrt(rounding noise in the variance) is up to ~1e-6 for a point interval
    assert kappa.ci_low == pytest.approx(max(-1.0, low), abs=1e-6)
    assert kappa.ci_high == pytest.approx(min(1.0, high), abs=1e-6)
    assert -1.0 <= kappa.ci_low <= kappa.value <= kappa.ci_high <= 1.0


def test_degenerate_tables() -> None:
    empty = cohens_kappa(Confusion())
    assert empty.value is None and "no labelled answer" in (empty.reason or "")

    humans_all_pass = cohens_kappa(table(40, 10, 0, 0))
    assert humans_all_pass.value is None
    assert "every human label is 'pass'" in (humans_all_pass.reason or "")
    assert cohens_kappa(table(0, 0, 7, 3)).reason is not None  # every human label is 'fail'

    rubber_stamp = cohens_kappa(table(30, 0, 20, 0))  # the judge passes everything
    assert rubber_stamp.value == 0.0
    assert (rubber_stamp.ci_low, rubber_stamp.ci_high) == (0.0, 0.0)
    assert "said 'pass' to every answer" in (rubber_stamp.note or "")

    perfect = cohens_kappa(table(30, 0, 0, 20))
    assert perfect.value == 1.0 and (perfect.ci_low, perfect.ci_high) == (1.0, 1.0)
    assert "rule of three" in (perfect.note or "") and "6.0%" in (perfect.note or "")

    inverted = cohens_kappa(table(0, 25, 25, 0))
    assert inverted.value == -1.0 and inverted.ci_low == -1.0

    assert "only 12 labels" in (cohens_kappa(table(5, 1, 2, 4)).note or "")


def test_interval_is_clamped() -> None:
    kappa = cohens_kappa(table(9, 1, 0, 2))  # kappa ≈ 0.75 with a wide interval
    raw_high = (kappa.value or 0) + 1.96 * (kappa.se or 0)
    assert raw_high > 1 and kappa.ci_high == 1.0


@pytest.mark.parametrize(("accuracy", "truth"), [(0.5, 0.0), (0.8, 0.6)])
def test_interval_covers_the_true_kappa_about_95_percent_of_the_time(
    accuracy: float, truth: float
) -> None:
    # Balanced human labels and a judge right with probability `accuracy` whatever the label:
    # p_o = accuracy and p_e = 0.5, so the population kappa is 2 * accuracy - 1.
    rng = random.Random(20261130)
    trials, covered = 600, 0
    for _ in range(trials):
        pairs = []
        for i in range(200):
            human = i % 2 == 0
            pairs.append((human, human if rng.random() < accuracy else not human))
        kappa = cohens_kappa(Confusion.tally(pairs))
        assert kappa.ci_low is not None and kappa.ci_high is not None
        covered += kappa.ci_low <= truth <= kappa.ci_high
    assert 0.92 <= covered / trials <= 0.98  # ±3 binomial SDs around 0.95


def test_landis_koch_bands() -> None:
    assert landis_koch(None) == "undefined"
    assert landis_koch(-0.1) == "poor (worse than chance)"
    assert [landis_koch(k) for k in (0.0, 0.2, 0.21, 0.4, 0.5, 0.6, 0.61, 0.8, 0.81, 1.0)] == [
        "slight",
        "slight",
        "fair",
        "fair",
        "moderate",
        "moderate",
        "substantial",
        "substantial",
        "almost perfect",
        "almost perfect",
    ]


# -- the min-kappa decision ------------------------------------------------------------------


def test_decision_uses_the_point_estimate() -> None:
    at = Kappa(value=0.6, ci_low=0.45, ci_high=0.75, se=0.08)
    assert decide(at, min_kappa=0.6, complete=True)  # at the threshold passes
    assert not decide(at.model_copy(update={"value": 0.599}), min_kappa=0.6, complete=True)
    assert not decide(at, min_kappa=0.6, complete=False)  # incomplete never passes
    assert not decide(Kappa(reason="undefined"), min_kappa=-1.0, complete=True)


def outcomes_for(confusion: Confusion, *, errors: int = 0) -> list[Outcome]:
    out: list[Outcome] = []
    (pp, pf), (fp, ff) = confusion.table
    for human, judge, count in (
        ("pass", True, pp),
        ("pass", False, pf),
        ("fail", True, fp),
        ("fail", False, ff),
    ):
        for _ in range(count):
            label = Label(id=f"i{len(out)}", answer=f"answer {len(out)}", label=human)
            out.append(Outcome(label, verdict=Verdict(passed=judge, comment="c")))
    for _ in range(errors):
        label = Label(id=f"i{len(out)}", answer="x", label="pass")
        out.append(Outcome(label, error="judge x failed: HTTP 500"))
    return out


def report_for(confusion: Confusion, *, min_kappa: float = 0.6, errors: int = 0) -> Any:
    return build_report(
        outcomes_for(confusion, errors=errors),
        judge_name="openai:gpt-4.1-mini",
        judge_prompt_hash="ab" * 32,
        judge_identity_hash="cd" * 32,
        min_kappa=min_kappa,
        created_at="2026-11-30T12:00:00Z",
    )


def test_min_kappa_decision_and_exit_codes() -> None:
    good = report_for(table(28, 2, 2, 28))  # kappa 0.867
    assert good.passed and good.verdict == "passed"
    assert calibration_exit_code(good) == EXIT_PASSED
    assert good.warnings == []

    strict = report_for(table(28, 2, 2, 28), min_kappa=0.9)
    assert not strict.passed and calibration_exit_code(strict) == EXIT_FAILED

    # Clears the bar on the estimate, but the interval reaches below it: passes, with a warning.
    borderline = report_for(table(20, 4, 4, 12), min_kappa=0.55)  # kappa 0.583
    assert borderline.passed
    assert any("more labels would settle it" in w for w in borderline.warnings)

    one_sided = report_for(table(30, 0, 0, 0))
    assert one_sided.kappa.value is None and not one_sided.passed
    assert calibration_exit_code(one_sided) == EXIT_FAILED

    with pytest.raises(InputError, match=r"^min-kappa must be between -1 and 1"):
        asyncio.run(
            calibrate(
                [],
                [],
                judge=KeypointsJudge(),
                cache=VerdictCache(None),
                concurrency=1,
                min_kappa=1.5,
            )
        )


def test_judge_errors_are_counted_apart() -> None:
    few = report_for(table(45, 0, 0, 45), errors=10)  # 10 of 100: at the limit, complete
    assert few.complete and few.passed and few.n == 90 and few.labels == 100
    assert len(few.errors) == 10 and few.errors[0].error.startswith("judge x failed")
    assert any("failed on 10 labelled answers" in w for w in few.warnings)

    many = report_for(table(45, 0, 0, 44), errors=11)  # 11 of 100: above 10%
    assert not many.complete and not many.passed
    assert "11 of 100" in (many.incomplete_reason or "")
    assert calibration_exit_code(many) == EXIT_INCOMPLETE
    assert calibration_line(many).startswith("judge calibration incomplete")


# -- the labels file -------------------------------------------------------------------------


GOLDEN = [
    GoldenItem(id="ports", question="Which ports?", reference_key_points=["port 8200"]),
    GoldenItem(id="config", question="Where is the config?", reference_key_points=["/etc/x"]),
    GoldenItem(id="refuse", question="Capital of France?", must_refuse=True),
]


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_labels_load(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "labels.jsonl",
        [
            '{"id": "ports", "answer": "Port 8200.", "label": "pass", "labeller": "ann"}',
            "",
            '{"id": "config", "answer": "No idea.", "label": "fail", "note": "no path"}',
        ],
    )
    labels = load_labels(path, GOLDEN)
    assert [(x.id, x.label, x.note) for x in labels] == [
        ("ports", "pass", None),
        ("config", "fail", "no path"),
    ]


def test_every_bad_line_is_named(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "labels.jsonl",
        [
            '{"id": "ports", "answer": "Port 8200.", "label": "pass"}',
            '{"id": "ports", "answer": "again", "label": "fail"}',
            "{not json",
            '["a list"]',
            '{"id": "config", "label": "fail"}',
            '{"id": "config", "answer": 42, "label": "fail"}',
            '{"id": "config", "answer": "x", "label": "PASS"}',
            '{"id": "port", "answer": "x", "label": "fail"}',
            '{"id": "refuse", "answer": "Paris.", "label": "fail"}',
            '{"id": "config", "answer": "x", "label": "fail", "note": 3}',
        ],
    )
    with pytest.raises(InputError) as raised:
        load_labels(path, GOLDEN)
    message = str(raised.value)
    expected = [
        f"{path}:2: duplicate id 'ports' (first on line 1)",
        f"{path}:3: invalid JSON",
        f"{path}:4: expected a JSON object, got list",
        f"{path}:5: missing field 'answer'",
        f"{path}:6: field 'answer': Input should be a valid string",
        f'{path}:7: field \'label\' must be "pass" or "fail", got "PASS"',
        f"{path}:8: id 'port' is not in the golden set (did you mean 'ports'?)",
        f"{path}:9: item 'refuse' has no reference_key_points",
        f"{path}:10: field 'note': Input should be a valid string",
    ]
    for part in expected:
        assert part in message
    assert f"{path}:1:" not in message


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "the labels file is empty"),
        ("\n  \n", "the labels file is empty"),
        ('{"id": "ports", "answer": "a", "label": "pass"}\n', "every label is 'pass'"),
    ],
)
def test_labels_file_level_errors(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=problem) as raised:
        load_labels(path, GOLDEN)
    assert str(raised.value).startswith(str(path))


def test_missing_labels_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="labels file not found"):
        load_labels(tmp_path / "nope.jsonl", GOLDEN)


# -- runs against judges whose agreement is known --------------------------------------------


def unit(seed: str, text: str) -> float:
    """A deterministic uniform number in [0, 1) from a seeded hash."""
    digest = hashlib.sha256(f"{seed}\0{text}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


class SyntheticJudge(Judge):
    """Knows the human label of every answer (`truth`) and decides from it by a rule."""

    prompt_hash = None

    def __init__(self, truth: dict[str, bool], seed: str = "calibration") -> None:
        self.truth = truth
        self.seed = seed
        self.name = type(self).__name__
        self.calls = 0

    def identity(self) -> str:
        return json.dumps({"judge": self.name, "seed": self.seed})

    def decide(self, human: bool, answer: str) -> bool:
        raise NotImplementedError

    async def judge(self, *, question: str, answer: str, reference: str) -> Verdict:
        self.calls += 1
        passed = self.decide(self.truth[answer], answer)
        return Verdict(passed=passed, comment=f"{self.name} says {passed}", tokens=TokenUsage())


class PerfectJudge(SyntheticJudge):
    def decide(self, human: bool, answer: str) -> bool:
        return human


class CoinFlipJudge(SyntheticJudge):
    def decide(self, human: bool, answer: str) -> bool:
        return unit(self.seed, answer) < 0.5


class InvertedJudge(SyntheticJudge):
    def decide(self, human: bool, answer: str) -> bool:
        return not human


class NoisyJudge(SyntheticJudge):
    """Right with probability `accuracy`, whatever the label."""

    accuracy = 0.9

    def decide(self, human: bool, answer: str) -> bool:
        return human if unit(self.seed, answer) < self.accuracy else not human


class MostlyInvertedJudge(NoisyJudge):
    accuracy = 0.2


class FlakyJudge(PerfectJudge):
    """Fails on every answer whose number is a multiple of `every`."""

    every = 20

    async def judge(self, *, question: str, answer: str, reference: str) -> Verdict:
        if int(answer.split()[1].rstrip(":")) % self.every == 0:
            self.calls += 1
            raise JudgeError("judge FlakyJudge failed: HTTP 503 after 2 retries")
        return await super().judge(question=question, answer=answer, reference=reference)


def labelled_set(n: int = 200) -> tuple[list[GoldenItem], list[Label], dict[str, bool]]:
    """n items, human labels alternating pass/fail (balanced margins)."""
    items = [
        GoldenItem(
            id=f"q{i:03d}",
            question=f"How do I configure feature {i}?",
            reference_key_points=[f"set option {i}"],
        )
        for i in range(n)
    ]
    labels = [
        Label(
            id=f"q{i:03d}", answer=f"answer {i}: set option {i}", label="pass" if i % 2 else "fail"
        )
        for i in range(n)
    ]
    return items, labels, {x.answer: x.passed for x in labels}


def run(
    labels: list[Label],
    items: list[GoldenItem],
    judge: Judge,
    cache_dir: Path | None,
    **kwargs: Any,
) -> CalibrationReport:
    async def go() -> CalibrationReport:
        try:
            return await calibrate(
                labels, items, judge=judge, cache=VerdictCache(cache_dir), concurrency=8, **kwargs
            )
        finally:
            await judge.aclose()

    return asyncio.run(go())


# Balanced labels and errors independent of the label: the population kappa is 2 * accuracy - 1.
@pytest.mark.parametrize(
    ("judge_type", "truth"),
    [
        (PerfectJudge, 1.0),
        (CoinFlipJudge, 0.0),
        (InvertedJudge, -1.0),
        (NoisyJudge, 0.8),
        (MostlyInvertedJudge, -0.6),
    ],
)
def test_known_agreement(judge_type: type[SyntheticJudge], truth: float) -> None:
    items, labels, answers = labelled_set(200)
    report = run(labels, items, judge_type(answers), None)
    kappa = report.kappa
    assert report.n == report.labels == 200 and report.complete
    assert kappa.value is not None and kappa.ci_low is not None and kappa.ci_high is not None
    assert kappa.ci_low <= truth <= kappa.ci_high
    assert len(report.disagreements) == 200 - report.confusion.agreeing
    assert report.passed == (kappa.value >= 0.6)
    if judge_type is PerfectJudge:
        assert kappa.value == 1.0 and report.passed and report.disagreements == []
    if judge_type is CoinFlipJudge:
        assert abs(kappa.value) < 0.15 and kappa.ci_low < 0 < kappa.ci_high
        assert report.agreement == pytest.approx(0.5, abs=0.08)
    if judge_type in (InvertedJudge, MostlyInvertedJudge):
        assert kappa.value < 0 and kappa.ci_high < 0 and not report.passed
        assert landis_koch(kappa.value) == "poor (worse than chance)"


def test_judge_errors_are_excluded_and_never_cached(tmp_path: Path) -> None:
    items, labels, answers = labelled_set(200)
    judge = FlakyJudge(answers)
    first = run(labels, items, judge, tmp_path / "cache")
    assert (first.labels, first.n, len(first.errors)) == (200, 190, 10)
    assert first.complete and first.passed and first.kappa.value == 1.0
    assert first.errors[0].id == "q000" and "HTTP 503" in first.errors[0].error
    assert (first.judge_calls, first.cache_misses, first.cache_hits) == (200, 200, 0)

    second = run(labels, items, judge, tmp_path / "cache")  # only the errors are asked again
    assert (second.judge_calls, second.cache_hits, second.cache_misses) == (10, 190, 10)

    FlakyJudge.every = 8  # 25 of 200 fail: above 10%
    try:
        many = run(labels, items, FlakyJudge(answers), None)
    finally:
        FlakyJudge.every = 20
    assert not many.complete and not many.passed
    reason = "the judge failed on 25 of 200 labelled answers (12%, above 10%)"
    assert many.incomplete_reason == reason


def test_concurrency_is_bounded() -> None:
    items, labels, answers = labelled_set(40)

    class Slow(PerfectJudge):
        in_flight = peak = 0

        async def judge(self, *, question: str, answer: str, reference: str) -> Verdict:
            Slow.in_flight += 1
            Slow.peak = max(Slow.peak, Slow.in_flight)
            await asyncio.sleep(0.001)
            Slow.in_flight -= 1
            return await super().judge(question=question, answer=answer, reference=reference)

    async def go() -> CalibrationReport:
        return await calibrate(
            labels, items, judge=Slow(answers), cache=VerdictCache(None), concurrency=3
        )

    assert asyncio.run(go()).n == 40
    assert Slow.peak == 3


# -- the real LLM judge against the fake OpenAI-compatible server ----------------------------


def test_llm_judge_end_to_end_then_all_cache_hits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdefDUMMY")
    for name in ("OPENAI_BASE_URL", "OPENAI_API_BASE", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    items = [
        GoldenItem(
            id=f"q{i}",
            question=f"How do I enable feature {i}?",
            reference_key_points=[f"set option {i}", "restart the server"],
        )
        for i in range(10)
    ]
    # The fake passes an answer when every word of every key point is in it.
    answers = {
        f"q{i}": (
            f"Set option {i} in vault.toml, then restart the server."
            if i % 2 == 0
            else f"Set option {i} in vault.toml."
        )
        for i in range(10)
    }
    human = {f"q{i}": "pass" if i % 2 == 0 else "fail" for i in range(10)}
    answers["q9"] = "Set option 9, then reload the service (a restart is not needed)."
    human["q9"] = "pass"  # a human accepts it; the fake judge does not: one disagreement
    labels_path = tmp_path / "labels.jsonl"
    write_lines(
        labels_path,
        [json.dumps({"id": i, "answer": answers[i], "label": human[i]}) for i in answers],
    )
    golden_path = tmp_path / "golden.jsonl"
    write_lines(golden_path, [x.model_dump_json() for x in items])

    with JudgeServer() as server:
        settings_ = JudgeSettings(
            model="openai:gpt-4.1-mini", base_url=server.base_url, timeout_s=5, max_retries=1
        )
        out = tmp_path / "calibration.json"
        first = run_calibration(
            labels_path, golden_path, settings_, cache_dir=tmp_path / "cache", output=out
        )
        assert server.calls == 10
        assert (first.judge_calls, first.cache_misses, first.cache_hits) == (10, 10, 0)
        assert first.confusion == table(5, 1, 0, 4)
        assert [(d.id, d.human, d.judge) for d in first.disagreements] == [("q9", "pass", "fail")]
        assert "Missing: restart the server" in first.disagreements[0].comment
        assert first.judge == "openai:gpt-4.1-mini" and first.judge_prompt_hash
        assert load_calibration(out) == first

        second = run_calibration(
            labels_path, golden_path, settings_, cache_dir=tmp_path / "cache", output=None
        )
        assert server.calls == 10  # zero calls at the fake
        assert (second.judge_calls, second.cache_hits, second.cache_misses) == (0, 10, 0)
        assert second.confusion == first.confusion and second.kappa == first.kappa

        # The verdicts sit under the keys a gate run computes: evaluate.py shares them.
        judge = make_judge(settings_)
        cache = VerdictCache(tmp_path / "cache")
        for item in items:
            key = cache.key(
                judge_identity=judge.identity(),
                question=item.question,
                answer=answers[item.id],
                reference=item.reference,
            )
            assert cache.path(key).is_file()


# -- the example, files and rendering --------------------------------------------------------


def test_bundled_example_runs_with_the_offline_judge(tmp_path: Path) -> None:
    report = run_calibration(
        EXAMPLE_LABELS, EXAMPLE_GOLDEN, JudgeSettings(), cache_dir=None, output=None
    )
    assert report.labels == len(load_labels(EXAMPLE_LABELS, load_golden(EXAMPLE_GOLDEN)))
    assert report.judge == "keypoints" and report.kappa.value is not None
    assert {d.id for d in report.disagreements} == {"auth-token-expiry", "trouble-sealed-503"}


def test_calibration_file_round_trip_and_bad_files(tmp_path: Path) -> None:
    report = report_for(table(28, 2, 2, 28))
    path = tmp_path / "calibration.json"
    save_calibration(report, path)
    assert load_calibration(path) == report
    assert json.loads(path.read_text())["format"] == CALIBRATION_FORMAT

    bad = tmp_path / "report.json"
    bad.write_text('{"judge": "keypoints", "results": []}')
    with pytest.raises(InputError, match=f"{bad}: not a calibration"):
        load_calibration(bad)
    bad.write_text("{oops")
    with pytest.raises(InputError, match=f"{bad}: not a calibration: invalid JSON"):
        load_calibration(bad)
    data = json.loads(path.read_text())
    data["created_at"] = "<img src=x onerror=alert(1)>"
    bad.write_text(json.dumps(data))
    with pytest.raises(InputError, match="not a calibration: created_at"):
        load_calibration(bad)
    with pytest.raises(InputError, match="calibration not found"):
        load_calibration(tmp_path / "missing.json")


def test_calibration_line() -> None:
    report = report_for(table(28, 2, 2, 28)).model_copy(
        update={
            "n": 60,
            "kappa": Kappa(value=0.82, ci_low=0.71, ci_high=0.93, se=0.05),
            "created_at": "2026-11-30T08:00:00Z",
        }
    )
    line = "judge calibrated: kappa κ = 0.82 [0.71, 0.93] on 60 labels (2026-11-30)"
    assert calibration_line(report) == line
    same = {"judge": report.judge, "judge_prompt_hash": report.judge_prompt_hash}
    assert calibration_line(report, **same) == line
    assert calibration_line(report, judge="keypoints").endswith(
        "; calibrated for a different judge (openai:gpt-4.1-mini)"
    )
    assert calibration_line(report, judge=report.judge, judge_prompt_hash="ff").endswith(
        "; calibrated with a different judge prompt"
    )
    failed = report.model_copy(update={"passed": False, "min_kappa": 0.9})
    assert calibration_line(failed).startswith(
        "judge calibration below min-kappa 0.90: kappa κ = 0.82"
    )
    undefined = report_for(table(30, 0, 0, 0))
    assert calibration_line(undefined).startswith(
        "judge calibration inconclusive: kappa κ undefined"
    )


HOSTILE = (
    "<img src=x onerror=alert(1)> @octocat | cell | [click](https://evil.example) "
    "<!-- golden-gate:report id=default --> </code>\n\n# heading www.evil.example #123"
)


def test_rendering_escapes_hostile_answers_comments_and_notes() -> None:
    items = [
        GoldenItem(id="x|<b>bold</b>", question="q?", reference_key_points=["point"]),
        GoldenItem(id="y", question="q2?", reference_key_points=["point"]),
    ]
    labels = [
        Label(id="x|<b>bold</b>", answer=HOSTILE, label="fail", note=HOSTILE),
        Label(id="y", answer="fine", label="pass"),
    ]

    class Hostile(SyntheticJudge):
        async def judge(self, *, question: str, answer: str, reference: str) -> Verdict:
            return Verdict(passed=True, comment=HOSTILE)

    report = run(labels, items, Hostile({}), None)
    assert len(report.disagreements) == 1
    text = render_calibration(report)
    for raw in ("<img", "<b>", "<!--", "@octocat", "https://", "www.evil", "#123", "]("):
        assert raw not in text
    assert "&lt;img" in text and "@\u200boctocat" in text and "&lt;/code&gt;" in text
    lines = text.splitlines()
    header = lines.index("| id | human | judge | judge's comment | answer | human's note |")
    row = lines[header + 2]
    assert row.count("|") == 7  # no pipe from the data survives to split a cell
    assert not any(line.startswith("# ") for line in lines)


def test_rendering_sections_and_limit() -> None:
    report = report_for(table(40, 30, 30, 40), errors=3)
    text = render_calibration(report)
    assert text.startswith("## ❌ judge calibration failed")
    assert "| **human: pass** | 40 | 30 |" in text
    assert "| **human: fail** | 30 | 40 |" in text
    assert "### Disagreements (60)" in text and "…and 10 more not shown" in text
    assert "### Judge errors" in text and "3 judge errors (left out)" in text
    assert "slight (Landis–Koch)" in text
    short = render_calibration(report, limit=6000)
    assert len(short) <= 6000 and "### Disagreements (60)" in short
    assert "more not shown" in short

    undefined = render_calibration(report_for(table(30, 0, 0, 0)))
    assert "κ is undefined (every human label is &#39;pass&#39;" in undefined

    passed = render_calibration(report_for(table(28, 2, 2, 28)))
    assert passed.startswith("## ✅ judge calibration passed")
    assert "### Disagreements (4)" in passed and "Judge errors" not in passed


def test_calibrate_checks_labels_built_in_code() -> None:
    judge = KeypointsJudge()

    def go(label: Label) -> Any:
        return asyncio.run(
            calibrate([label], GOLDEN, judge=judge, cache=VerdictCache(None), concurrency=1)
        )

    with pytest.raises(InputError, match="label id 'nope' is not in the golden set"):
        go(Label(id="nope", answer="a", label="pass"))
    with pytest.raises(InputError, match="item 'refuse' has no reference_key_points"):
        go(Label(id="refuse", answer="a", label="pass"))
