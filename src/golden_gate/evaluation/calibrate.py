"""Judge calibration: does the configured judge agree with human labels?

A team labels answers by hand (`labels.jsonl`: `id`, `answer`, `label` pass/fail, optional
`note`); the judge judges the same answers (through the verdict cache, exactly as a gate run
does) and the two are compared with Cohen's kappa, which discounts the agreement two raters
would reach by chance given how often each says "pass".

The module has four layers, top to bottom: pure statistics (no I/O), the labels file, the
async run against a judge, and the report (JSON file, Markdown, the one-line summary).

**The decision.** Calibration passes when it is complete (at most `max_error_rate` of the
judge calls failed), kappa is defined, and the kappa *point estimate* is at least
`min_kappa` (default 0.6, the bottom of Landis and Koch's "substantial" band). Not the
interval's lower bound: that would mostly measure how many labels a team wrote (at kappa 0.8
with balanced labels, 60 labels give an interval about ±0.15 wide), so a good judge would fail
for want of labels. The interval is always shown beside the estimate, and a warning says when it
reaches below `min_kappa`.
"""

from __future__ import annotations

import asyncio
import difflib
import hashlib
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from statistics import NormalDist
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from golden_gate import __version__, jsontext
from golden_gate.core.golden import GoldenItem, fingerprint, load_golden
from golden_gate.core.report import Verdict
from golden_gate.errors import EXIT_FAILED, EXIT_INCOMPLETE, EXIT_PASSED, InputError
from golden_gate.evaluation.cache import VerdictCache
from golden_gate.evaluation.judge import Judge, JudgeError, JudgeSettings, make_judge
from golden_gate.files import read_text, write_result
from golden_gate.jsonl import Problems, records
from golden_gate.rendering.escape import code_span, cut, inline

CALIBRATION_FORMAT = "golden-gate-calibration/1"
DEFAULT_MIN_KAPPA = 0.6
DEFAULT_MAX_ERROR_RATE = 0.10
CONFIDENCE = 0.95
HumanLabel = Literal["pass", "fail"]

# -- pure statistics -------------------------------------------------------------------------


class Confusion(BaseModel):
    """Human labels (rows) against judge verdicts (columns), counted over judged answers."""

    human_pass_judge_pass: int = Field(default=0, ge=0)
    human_pass_judge_fail: int = Field(default=0, ge=0)
    human_fail_judge_pass: int = Field(default=0, ge=0)
    human_fail_judge_fail: int = Field(default=0, ge=0)

    @property
    def n(self) -> int:
        return (
            self.human_pass_judge_pass
            + self.human_pass_judge_fail
            + self.human_fail_judge_pass
            + self.human_fail_judge_fail
        )

    @property
    def agreeing(self) -> int:
        return self.human_pass_judge_pass + self.human_fail_judge_fail

    @property
    def table(self) -> tuple[tuple[int, int], tuple[int, int]]:
        """((pass/pass, pass/fail), (fail/pass, fail/fail)): rows human, columns judge."""
        return (
            (self.human_pass_judge_pass, self.human_pass_judge_fail),
            (self.human_fail_judge_pass, self.human_fail_judge_fail),
        )

    @classmethod
    def from_table(cls, table: Sequence[Sequence[int]]) -> Confusion:
        (pp, pf), (fp, ff) = table
        return cls(
            human_pass_judge_pass=pp,
            human_pass_judge_fail=pf,
            human_fail_judge_pass=fp,
            human_fail_judge_fail=ff,
        )

    @classmethod
    def tally(cls, pairs: Iterable[tuple[bool, bool]]) -> Confusion:
        """Count (human passed, judge passed) pairs."""
        counts = [[0, 0], [0, 0]]
        for human, judge in pairs:
            counts[0 if human else 1][0 if judge else 1] += 1
        return cls.from_table(counts)


class Kappa(BaseModel):
    """Cohen's kappa with its confidence interval; `value` is None when kappa is undefined."""

    value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    se: float | None = None
    confidence: float = CONFIDENCE
    reason: str | None = None  # why kappa is undefined
    note: str | None = None  # a caveat on a defined kappa (degenerate interval, few labels)


def observed_agreement(confusion: Confusion) -> float | None:
    """The fraction of judged answers where judge and human agree; None with no answers."""
    return confusion.agreeing / confusion.n if confusion.n else None


def cohens_kappa(confusion: Confusion, *, confidence: float = CONFIDENCE) -> Kappa:
    """Cohen's kappa for a 2x2 table, with a large-sample (Wald) confidence interval.

    kappa = (p_o - p_e) / (1 - p_e), with p_o the observed agreement and p_e the agreement
    expected by chance from the margins (p_e = sum_i p_i. * p_.i).

    Standard error: the large-sample variance of Fleiss, Cohen and Everitt (1969), not the
    null variance (which only serves to test kappa = 0):

        var = [ sum_i p_ii * (1 - (p_i. + p_.i)(1 - k))^2
              + (1 - k)^2 * sum_{i != j} p_ij * (p_.i + p_j.)^2
              - (k - p_e(1 - k))^2 ] / (n (1 - p_e)^2)

    The interval is kappa ± z·SE, clamped to [-1, 1]. This is what
    `statsmodels.stats.inter_rater.cohens_kappa` computes (kappa_low/kappa_upp).

    Degenerate tables:
    - no answers, or the humans used one label only: kappa is undefined (value None and a
      reason). With one human label p_e equals the agreement itself, so kappa is 0/0 or 0
      whatever the judge does: it says nothing about the judge.
    - the judge gave one verdict only: kappa is exactly 0 with SE 0 (a judge that does not
      discriminate agrees no better than chance); the note says so.
    - perfect agreement: kappa is 1 with SE 0, so the interval is a point; the note gives the
      rule-of-three bound on the disagreement rate instead.
    """
    if not 0 < confidence < 1:
        raise ValueError("confidence must be in (0, 1)")
    n = confusion.n
    if n == 0:
        return Kappa(confidence=confidence, reason="no labelled answer got a verdict")
    table = confusion.table
    p = [[cell / n for cell in row] for row in table]
    rows = [p[0][0] + p[0][1], p[1][0] + p[1][1]]  # human margins
    cols = [p[0][0] + p[1][0], p[0][1] + p[1][1]]  # judge margins
    if 0.0 in rows:
        only = "pass" if rows[0] else "fail"
        return Kappa(
            confidence=confidence,
            reason=(
                f"every human label is '{only}', so kappa is undefined: it needs answers "
                "humans passed and answers they failed"
            ),
        )
    p_o = p[0][0] + p[1][1]
    p_e = rows[0] * cols[0] + rows[1] * cols[1]  # < 1: both human margins are in (0, 1)
    kappa = (p_o - p_e) / (1 - p_e)
    q = 1 - kappa
    term_a = sum(p[i][i] * (1 - (rows[i] + cols[i]) * q) ** 2 for i in (0, 1))
    term_b = q**2 * (p[0][1] * (cols[0] + rows[1]) ** 2 + p[1][0] * (cols[1] + rows[0]) ** 2)
    term_c = (kappa - p_e * q) ** 2
    variance = (term_a + term_b - term_c) / ((1 - p_e) ** 2 * n)
    se = math.sqrt(max(variance, 0.0))
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    note = None
    if p_o == 1.0 or 0.0 in cols:
        se = 0.0  # exactly 0 here; the formula leaves rounding noise of ~1e-9
    if p_o == 1.0:
        note = (
            f"perfect agreement on {n} labels: the large-sample interval collapses to a point; "
            f"by the rule of three the disagreement rate is still up to {3 / n:.1%} "
            f"({confidence:.0%})"
        )
    elif 0.0 in cols:
        only = "pass" if cols[0] else "fail"
        note = (
            f"the judge said '{only}' to every answer: it does not tell answers apart, so it "
            "agrees no better than chance"
        )
    elif n < 30:
        note = f"only {n} labels: the large-sample interval is a rough guide"
    return Kappa(
        value=kappa,
        ci_low=max(-1.0, kappa - z * se),
        ci_high=min(1.0, kappa + z * se),
        se=se,
        confidence=confidence,
        note=note,
    )


def fleiss_kappa(counts: Sequence[Sequence[int]]) -> float | None:
    """Fleiss' kappa: `counts[i][j]` raters put subject i in category j, the same number of
    raters for every subject (Fleiss 1971). None when undefined (no subjects, fewer than two
    raters, or every rating in one category, where chance agreement is already perfect).

    P_i = (sum_j n_ij^2 - n) / (n (n - 1)), P = mean P_i, p_j = sum_i n_ij / (N n),
    P_e = sum_j p_j^2, kappa = (P - P_e) / (1 - P_e). With two raters and two categories it
    differs from Cohen's kappa only in pooling the raters' margins (Scott's pi).
    """
    rows = [list(row) for row in counts]
    if not rows:
        return None
    n = sum(rows[0])
    if n < 2 or any(sum(row) != n for row in rows):
        return None
    subjects = len(rows)
    p_bar = sum((sum(c * c for c in row) - n) / (n * (n - 1)) for row in rows) / subjects
    totals = [sum(col) for col in zip(*rows, strict=True)]
    p_e = sum((t / (subjects * n)) ** 2 for t in totals)
    if p_e >= 1:
        return None
    return (p_bar - p_e) / (1 - p_e)


# Landis & Koch (1977), "The measurement of observer agreement for categorical data".
_LANDIS_KOCH = ((0.20, "slight"), (0.40, "fair"), (0.60, "moderate"), (0.80, "substantial"))


def landis_koch(kappa: float | None) -> str:
    """Landis and Koch's name for a kappa value ("substantial", ...)."""
    if kappa is None:
        return "undefined"
    if kappa < 0:
        return "poor (worse than chance)"
    for upper, name in _LANDIS_KOCH:
        if kappa <= upper:
            return name
    return "almost perfect"


def decide(kappa: Kappa, *, min_kappa: float, complete: bool) -> bool:
    """Pass when complete and the kappa point estimate is at least `min_kappa` (see module)."""
    return complete and kappa.value is not None and kappa.value >= min_kappa


def error_share_too_high(errors: int, total: int, max_error_rate: float) -> bool:
    return total > 0 and errors / total > max_error_rate


# -- the labels file -------------------------------------------------------------------------


class Label(BaseModel):
    """One answer a human judged; unknown fields (a labeller's name, a date) are kept."""

    model_config = ConfigDict(extra="allow", strict=True, frozen=True)

    id: str = Field(min_length=1)
    answer: str
    label: HumanLabel
    note: str | None = None

    @property
    def passed(self) -> bool:
        return self.label == "pass"


def parse_labels(
    lines: Iterable[str], *, source: str, golden_items: Sequence[GoldenItem]
) -> list[Label]:
    """Parse labels JSONL against a golden set; one InputError names every bad line.

    Besides malformed lines, an id that is not in the golden set, an item with no key points
    (the judge never sees it) and a duplicate id are errors, and so is a file without both
    labels (kappa would be undefined, after paying for every judge call).
    """
    items = {item.id: item for item in golden_items}
    labels: list[Label] = []
    problems = Problems()
    for where, _, label in records(lines, source=source, model=Label, problems=problems):
        item = items.get(label.id)
        if item is None:
            close = difflib.get_close_matches(label.id, list(items), n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            problems.append(f"{where}: id '{label.id}' is not in the golden set{hint}")
            continue
        if not item.reference_key_points:
            problems.append(
                f"{where}: item '{label.id}' has no reference_key_points, so the judge has "
                "nothing to compare the answer against"
            )
            continue
        labels.append(label)
    problems.raise_if_any()
    if not labels:
        raise InputError(f"{source}: the labels file is empty (no labels)")
    kinds = {label.label for label in labels}
    if len(kinds) == 1:
        (only,) = kinds
        other = "fail" if only == "pass" else "pass"
        raise InputError(
            f"{source}: every label is '{only}'; calibration needs answers labelled '{other}' "
            "too (Cohen's kappa is undefined otherwise)"
        )
    return labels


def load_labels(path: str | Path, golden_items: Sequence[GoldenItem]) -> list[Label]:
    """Load and check a labels file against the golden set."""
    text = read_text(path, what="labels file")
    return parse_labels(text.splitlines(), source=str(path), golden_items=golden_items)


def labels_fingerprint(labels: Sequence[Label]) -> str:
    """sha256 of what was measured (id, answer, label in order); notes do not count."""
    digest = hashlib.sha256()
    for label in labels:
        line = json.dumps([label.id, label.answer, label.label], ensure_ascii=False)
        digest.update(line.encode("utf-8") + b"\n")
    return "sha256:" + digest.hexdigest()


# -- the report ------------------------------------------------------------------------------


class Disagreement(BaseModel):
    """An answer where the judge and the human differ."""

    id: str
    human: HumanLabel
    judge: HumanLabel
    comment: str = ""  # the judge's, cut
    answer: str = ""  # an excerpt
    note: str | None = None  # the human's


class LabelError(BaseModel):
    """A labelled answer the judge could not judge; excluded from the agreement."""

    id: str
    error: str


class CalibrationReport(BaseModel):
    """One calibration run: who judged, how well it agreed, and where it did not."""

    model_config = ConfigDict(extra="allow")

    format: Literal["golden-gate-calibration/1"] = CALIBRATION_FORMAT
    tool_version: str | None = None
    created_at: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
    judge: str
    judge_prompt_hash: str | None = None
    judge_identity_hash: str
    golden_fingerprint: str | None = None
    labels_fingerprint: str | None = None
    labels: int = Field(ge=0)  # labelled answers, judged or not
    n: int = Field(ge=0)  # answers with a verdict: what kappa is computed on
    agreement: float | None = None
    kappa: Kappa
    confusion: Confusion
    disagreements: list[Disagreement] = Field(default_factory=list)
    errors: list[LabelError] = Field(default_factory=list)
    judge_calls: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    min_kappa: float
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE
    passed: bool
    complete: bool = True
    incomplete_reason: str | None = None
    warnings: list[str] = Field(default_factory=list)

    @property
    def verdict(self) -> Literal["passed", "failed", "incomplete"]:
        if not self.complete:
            return "incomplete"
        return "passed" if self.passed else "failed"

    @property
    def date(self) -> str:
        return self.created_at[:10]


@dataclass
class Outcome:
    """The judge's verdict on one labelled answer, or why there is none."""

    label: Label
    verdict: Verdict | None = None
    error: str | None = None


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def build_report(
    outcomes: Sequence[Outcome],
    *,
    judge_name: str,
    judge_prompt_hash: str | None,
    judge_identity_hash: str,
    min_kappa: float,
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE,
    judge_calls: int = 0,
    cache_hits: int = 0,
    cache_misses: int = 0,
    golden_fingerprint: str | None = None,
    labels_fingerprint: str | None = None,
    answer_excerpt_chars: int = 500,
    created_at: str | None = None,
) -> CalibrationReport:
    """Turn per-answer outcomes into the report (no I/O; the clock unless `created_at`)."""
    judged = [o for o in outcomes if o.verdict is not None]
    confusion = Confusion.tally(
        (o.label.passed, o.verdict.passed) for o in judged if o.verdict is not None
    )
    kappa = cohens_kappa(confusion)
    errors = [
        LabelError(id=o.label.id, error=o.error or "no verdict")
        for o in outcomes
        if o.verdict is None
    ]
    complete = not error_share_too_high(len(errors), len(outcomes), max_error_rate)
    incomplete_reason = None
    if not complete:
        incomplete_reason = (
            f"the judge failed on {len(errors)} of {len(outcomes)} labelled answers "
            f"({len(errors) / len(outcomes):.0%}, above {max_error_rate:.0%})"
        )
    disagreements = [
        Disagreement(
            id=o.label.id,
            human=o.label.label,
            judge="pass" if o.verdict.passed else "fail",
            comment=cut(o.verdict.comment, 1000),
            answer=cut(o.label.answer, answer_excerpt_chars),
            note=o.label.note,
        )
        for o in judged
        if o.verdict is not None and o.verdict.passed != o.label.passed
    ]
    warnings = []
    if errors and complete:
        warnings.append(
            f"the judge failed on {len(errors)} labelled answers; they are left out of the "
            "agreement"
        )
    if (
        kappa.value is not None
        and kappa.ci_low is not None
        and kappa.ci_low < min_kappa <= kappa.value
    ):
        warnings.append(
            f"kappa clears min-kappa {min_kappa:.2f}, but its {kappa.confidence:.0%} interval "
            f"reaches down to {kappa.ci_low:.2f}: more labels would settle it"
        )
    return CalibrationReport(
        tool_version=__version__,
        created_at=created_at or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        judge=judge_name,
        judge_prompt_hash=judge_prompt_hash,
        judge_identity_hash=judge_identity_hash,
        golden_fingerprint=golden_fingerprint,
        labels_fingerprint=labels_fingerprint,
        labels=len(outcomes),
        n=confusion.n,
        agreement=observed_agreement(confusion),
        kappa=kappa,
        confusion=confusion,
        disagreements=disagreements,
        errors=errors,
        judge_calls=judge_calls,
        cache_hits=cache_hits,
        cache_misses=cache_misses,
        min_kappa=min_kappa,
        max_error_rate=max_error_rate,
        passed=decide(kappa, min_kappa=min_kappa, complete=complete),
        complete=complete,
        incomplete_reason=incomplete_reason,
        warnings=warnings,
    )


def _check_min_kappa(min_kappa: float) -> None:
    if not -1 <= min_kappa <= 1 or math.isnan(min_kappa):
        raise InputError(f"--min-kappa must be between -1 and 1, got {min_kappa}")


# -- running the judge -----------------------------------------------------------------------


@dataclass
class _Counts:
    judge_calls: int = 0
    cache_hits: int = 0
    cache_misses: int = 0


async def _judge_label(
    label: Label,
    item: GoldenItem,
    *,
    judge: Judge,
    cache: VerdictCache,
    slots: asyncio.Semaphore,
    counts: _Counts,
) -> Outcome:
    # The same key evaluate.py uses: a verdict from a gate run is reused here and back.
    key = cache.key(
        judge_identity=judge.identity(),
        question=item.question,
        answer=label.answer,
        reference=item.reference,
    )
    cached = cache.get(key)
    if cached is not None:
        counts.cache_hits += 1
        return Outcome(label, verdict=cached)
    counts.cache_misses += 1
    async with slots:
        counts.judge_calls += 1
        try:
            verdict = await judge.judge(
                question=item.question, answer=label.answer, reference=item.reference
            )
        except JudgeError as exc:
            return Outcome(label, error=str(exc))  # an error, never a "fail", never cached
    cache.put(key, verdict)
    return Outcome(label, verdict=verdict)


async def calibrate(
    labels: Sequence[Label],
    golden_items: Sequence[GoldenItem],
    *,
    judge: Judge,
    cache: VerdictCache,
    concurrency: int,
    min_kappa: float = DEFAULT_MIN_KAPPA,
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE,
) -> CalibrationReport:
    """Judge every labelled answer (cache first, at most `concurrency` calls at once) and
    compare with the human labels. The caller closes the judge (`await judge.aclose()`)."""
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    _check_min_kappa(min_kappa)
    items = {item.id: item for item in golden_items}
    # load_labels reports these per line; a caller building labels in code gets one sentence.
    unknown = sorted({label.id for label in labels} - items.keys())
    if unknown:
        raise InputError(f"label id '{unknown[0]}' is not in the golden set")
    bare = sorted(x.id for x in labels if not items[x.id].reference_key_points)
    if bare:
        raise InputError(f"item '{bare[0]}' has no reference_key_points to judge against")
    slots = asyncio.Semaphore(concurrency)
    counts = _Counts()
    outcomes = await asyncio.gather(
        *(
            _judge_label(
                label, items[label.id], judge=judge, cache=cache, slots=slots, counts=counts
            )
            for label in labels
        )
    )
    return build_report(
        outcomes,
        judge_name=judge.name,
        judge_prompt_hash=judge.prompt_hash,
        judge_identity_hash=_sha256(judge.identity()),
        min_kappa=min_kappa,
        max_error_rate=max_error_rate,
        judge_calls=counts.judge_calls,
        cache_hits=counts.cache_hits,
        cache_misses=counts.cache_misses,
        golden_fingerprint=fingerprint(golden_items),
        labels_fingerprint=labels_fingerprint(labels),
    )


def run_calibration(
    labels_path: str | Path,
    golden_path: str | Path,
    judge_settings: JudgeSettings,
    *,
    cache_dir: Path | None,
    min_kappa: float = DEFAULT_MIN_KAPPA,
    output: str | Path | None = None,
    cache: VerdictCache | None = None,
    judge: Judge | None = None,
) -> CalibrationReport:
    """The `calibrate` command: load and check everything, judge, save `output`, return.

    Inputs are checked before the judge is built, so bad input costs nothing. `cache` is the
    Action's cache carried between runs; by default one on `cache_dir`. `judge`: one the caller
    already built from `judge_settings`, else one is built here.
    """
    _check_min_kappa(min_kappa)
    golden_items = load_golden(golden_path)
    labels = load_labels(labels_path, golden_items)
    judge = judge if judge is not None else make_judge(judge_settings)
    cache = cache if cache is not None else VerdictCache(cache_dir)

    async def go() -> CalibrationReport:
        try:
            return await calibrate(
                labels,
                golden_items,
                judge=judge,
                cache=cache,
                concurrency=judge_settings.concurrency,
                min_kappa=min_kappa,
            )
        finally:
            await judge.aclose()  # its HTTP client belongs to this event loop

    report = asyncio.run(go())
    if output is not None:
        save_calibration(report, output)
    return report


def calibration_exit_code(report: CalibrationReport) -> int:
    """0 passed, 1 below min-kappa (or kappa undefined), 3 too many judge errors."""
    if not report.complete:
        return EXIT_INCOMPLETE
    return EXIT_PASSED if report.passed else EXIT_FAILED


# -- files -----------------------------------------------------------------------------------


def calibration_json(report: CalibrationReport) -> str:
    return report.model_dump_json(indent=1) + "\n"


def save_calibration(report: CalibrationReport, path: str | Path) -> None:
    write_result(path, calibration_json(report), what="calibration")


def parse_calibration(text: str, *, source: str) -> CalibrationReport:
    """Parse `calibration.json`; anything else is an InputError naming `source`."""
    try:
        data = jsontext.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{source}: not a calibration: invalid JSON at line {exc.lineno} ({exc.msg})"
        ) from None
    if not isinstance(data, dict) or data.get("format") != CALIBRATION_FORMAT:
        raise InputError(
            f"{source}: not a calibration: expected an object with "
            f'"format": "{CALIBRATION_FORMAT}" (written by golden-gate calibrate)'
        )
    try:
        return CalibrationReport.model_validate(data)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(p) for p in problem["loc"])
        raise InputError(f"{source}: not a calibration: {where}: {problem['msg']}") from None


def load_calibration(path: str | Path) -> CalibrationReport:
    text = read_text(path, what="calibration")
    return parse_calibration(text, source=str(path))


# -- rendering -------------------------------------------------------------------------------


def _num(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def kappa_text(kappa: Kappa) -> str:
    """`0.82 [0.71, 0.93]`, or `undefined`."""
    if kappa.value is None:
        return "undefined"
    return f"{_num(kappa.value)} [{_num(kappa.ci_low)}, {_num(kappa.ci_high)}]"


def calibration_line(
    report: CalibrationReport,
    *,
    judge: str | None = None,
    judge_prompt_hash: str | None = None,
) -> str:
    """The one line a gate's comment shows, as plain text (the caller escapes it: render's
    `extra_notes` do). Pass the gate report's `judge` and `judge_prompt_hash` to flag a
    calibration of a different judge or prompt."""
    labels = f"on {report.n} labels"
    if not report.complete:
        head = f"judge calibration incomplete: kappa κ = {kappa_text(report.kappa)} {labels}"
    elif report.kappa.value is None:
        head = f"judge calibration inconclusive: kappa κ undefined {labels}"
    elif report.passed:
        head = f"judge calibrated: kappa κ = {kappa_text(report.kappa)} {labels}"
    else:
        head = (
            f"judge calibration below min-kappa {report.min_kappa:.2f}: "
            f"kappa κ = {kappa_text(report.kappa)} {labels}"
        )
    line = f"{head} ({report.date})"
    if judge is not None and judge != report.judge:
        line += f"; calibrated for a different judge ({report.judge})"
    elif judge_prompt_hash is not None and judge_prompt_hash != report.judge_prompt_hash:
        line += "; calibrated with a different judge prompt"
    return line


class _Row(BaseModel):
    """A disagreement as a table row; every field is already escaped."""

    id: str
    human: str
    judge: str
    comment: str
    answer: str
    note: str


def _context(report: CalibrationReport, max_rows: int) -> dict[str, object]:
    kappa = report.kappa
    rows = [
        _Row(
            id=code_span(d.id, limit=80),
            human=d.human,
            judge=d.judge,
            comment=inline(d.comment, limit=200),
            answer=inline(d.answer, limit=200),
            note=inline(d.note, limit=120),
        )
        for d in report.disagreements[:max_rows]
    ]
    errors = [
        (code_span(e.id, limit=80), inline(e.error, limit=200)) for e in report.errors[:max_rows]
    ]
    c = report.confusion
    return {
        "verdict": report.verdict,
        "judge": code_span(report.judge, limit=80),
        "prompt_hash": code_span(report.judge_prompt_hash[:12]) if report.judge_prompt_hash else "",
        "offline_judge": report.judge == "keypoints",
        "labels": report.labels,
        "n": report.n,
        "agreeing": c.agreeing,
        "agreement": "n/a" if report.agreement is None else f"{report.agreement:.1%}",
        "kappa": kappa_text(kappa),
        "kappa_defined": kappa.value is not None,
        "confidence": f"{kappa.confidence:.0%}",
        "reading": landis_koch(kappa.value),
        "reason": inline(kappa.reason, limit=300),
        "note": inline(kappa.note, limit=300),
        "min_kappa": f"{report.min_kappa:.2f}",
        "confusion": c,
        "rows": rows,
        "omitted": len(report.disagreements) - len(rows),
        "disagreement_count": len(report.disagreements),
        "error_count": len(report.errors),
        "errors": errors,
        "errors_omitted": len(report.errors) - len(errors),
        "complete": report.complete,
        "incomplete_reason": inline(report.incomplete_reason, limit=300),
        "warnings": [inline(w, limit=300) for w in report.warnings],
        "judge_calls": report.judge_calls,
        "cache_hits": report.cache_hits,
        "created_at": inline(report.created_at, limit=40),
    }


def render_calibration(
    report: CalibrationReport, *, max_rows: int = 50, limit: int | None = None
) -> str:
    """The calibration as Markdown (`templates/calibration.md.j2`), within `limit` characters
    (default: a PR comment's), listing fewer rows rather than cutting a table."""
    import jinja2

    from golden_gate.rendering.render import COMMENT_LIMIT, templates_dir

    limit = COMMENT_LIMIT if limit is None else limit
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        autoescape=False,  # Markdown, not HTML: the data is escaped in `_context`
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    template = env.get_template("calibration.md.j2")
    rows = max(max_rows, 0)
    text = template.render(**_context(report, rows))
    while len(text) > limit and rows > 0:
        rows //= 2
        text = template.render(**_context(report, rows))
    return text
