"""Several evaluators per item and a panel of judges, through `golden-gate` against the real
OpenAI-compatible fake judge (which derives each evaluator's verdict from its prompt)."""

import json

import pytest

from golden_gate.core.agreement import fleiss_kappa
from golden_gate.errors import InputError
from golden_gate.evaluation.evaluators import combine, parse_evaluators
from tests.fakes.assistant_server import AssistantServer
from tests.fakes.judge_server import JudgeServer
from tests.helpers import feature_answer as good
from tests.helpers import golden_gate
from tests.helpers import with_feature_context as with_context
from tests.helpers import write_feature_golden as write_golden


@pytest.fixture
def judge(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    with JudgeServer() as server:
        yield server


def test_evaluators_parse_with_thresholds_and_refuse_unknown_names():
    specs = parse_evaluators("correctness, groundedness:0.7,prompts/tone.txt", flag="--evaluators")
    assert [(s.name, s.threshold) for s in specs] == [
        ("correctness", None),
        ("groundedness", 0.7),
        ("tone", None),
    ]
    for bad, words in [
        ("correctnes", "unknown evaluator 'correctnes'"),
        ("groundedness:high", "not a number"),
        ("relevancy:1.5", "within 0 and 1"),
        ("relevancy,relevancy", "named twice"),
        (" , ", "at least one"),
    ]:
        with pytest.raises(InputError, match=words):
            parse_evaluators(bad, flag="--evaluators")


def test_votes_combine_and_an_error_decides_only_when_it_could_not_matter():
    assert combine([True, False], "all") is False
    assert combine([True, None], "all") is None  # the missing vote could fail it
    assert combine([False, None], "all") is False
    assert combine([True, None], "any") is True
    assert combine([True, False], "majority") is False  # a tie fails
    assert combine([True, True, None], "majority") is True
    assert combine([True, False, None], "majority") is None


def test_fleiss_kappa_matches_the_textbook_example():
    # Fleiss (1971) as worked on Wikipedia: 10 subjects, 14 raters, 5 categories; also
    # statsmodels.stats.inter_rater.fleiss_kappa on the same table: 0.20993...
    table = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    assert fleiss_kappa(table) == pytest.approx(0.2099307, abs=1e-6)
    assert fleiss_kappa([[2, 0], [2, 0]]) is None  # every rating alike: undefined
    assert fleiss_kappa([]) is None


def test_an_llm_evaluator_with_the_offline_judge_is_one_sentence_and_exit_2(tmp_path):
    golden = write_golden(tmp_path / "golden.jsonl")
    result = golden_gate(
        "eval",
        golden,
        "--assistant-url",
        "http://127.0.0.1:9",
        "--evaluators",
        "correctness,relevancy",
    )
    assert result.returncode == 2
    # Named as the setting, not a flag: the Action's users meet the same sentence.
    assert "evaluators: 'relevancy' needs a model judge" in result.stderr
    assert "--judge-model" not in result.stderr and "set judge-model to" in result.stderr
    assert "Traceback" not in result.stderr
    bad_rule = golden_gate(
        "eval", golden, "--assistant-url", "http://127.0.0.1:9", "--evaluator-rule", "most"
    )
    assert bad_rule.returncode == 2 and "--evaluator-rule" in bad_rule.stderr


def test_two_evaluators_and_a_two_judge_panel_name_the_failing_evaluator(tmp_path, judge):
    golden = write_golden(tmp_path / "golden.jsonl")
    candidate = {
        "How do I configure feature 0?": good(0),
        # drops a key point: the strict judge fails correctness, the lenient one passes it
        "How do I configure feature 1?": "Set option 1 in the config. Source: docs/config.md",
        # correct, but a claim the context does not hold: groundedness fails (strict judge)
        "How do I configure feature 2?": good(2) + " Also reboot the datacenter.",
        "How do I configure feature 3?": good(3),
        # says nothing: both judges fail correctness
        "How do I configure feature 4?": "Source: docs/config.md",
    }
    flags = [
        "--judge-model",
        "openai:judge-strict,openai:judge-lenient",
        "--judge-base-url",
        judge.base_url,
        "--evaluators",
        "correctness,groundedness",
        "--context-path",
        "retrieval.passages",
        "--sources-path",
        "sources",
        "--cache-dir",
        tmp_path / "cache",
        "--quiet",
        # the lenient judge would fail its canaries (it passes off-topic answers): this test
        # is about how a panel combines, test_canaries about the canaries
        "--judge-canaries",
        "0",
    ]
    baseline_answers = {f"How do I configure feature {i}?": good(i) for i in range(5)}
    with AssistantServer(answers=baseline_answers, shape=with_context) as assistant:
        made = golden_gate(
            "eval", golden, "--assistant-url", assistant.url, "-o", tmp_path / "base.json", *flags
        )
    assert made.returncode == 0, made.stderr
    with AssistantServer(answers=candidate, shape=with_context) as assistant:
        ran = golden_gate(
            "run", golden, "--assistant-url", assistant.url, "--baseline", tmp_path / "base.json",
            "--comment-file", tmp_path / "comment.md", "-o", tmp_path / "report.json", *flags,
            "--floor", "0.5",  # 5 items: 5 of 5 passing reach 0.566
        )  # fmt: skip
        calls = judge.calls
        again = golden_gate(
            "eval", golden, "--assistant-url", assistant.url, "-o", tmp_path / "again.json", *flags
        )
    assert ran.returncode == 1, ran.stderr
    comment = (tmp_path / "comment.md").read_text()
    # per-evaluator pass rates over the five runs
    assert (
        "| Evaluators | <code>correctness</code> 3/5 (60.0%) · <code>groundedness</code> 4/5"
        in (comment)
    )
    # each regressed item says which evaluator failed it (in the items' table; the before and
    # after table below it has three cells)
    rows = {
        line.split("|")[1].strip(): line
        for line in comment.splitlines()
        if "| <code>q" in line and line.count("|") == 6
    }
    assert "correctness failed" in rows["<code>q1</code>"]
    assert "groundedness failed" in rows["<code>q2</code>"]
    assert "correctness failed" in rows["<code>q4</code>"]
    assert "groundedness failed" not in rows["<code>q1</code>"]
    # agreement between the two judges over 10 verdicts: (0.8 - 0.66) / 0.34
    assert "Cohen's κ = 0.41 between <code>openai:judge-strict</code> and" in comment
    assert "judges disagree on 2 item(s): <code>q1</code>, <code>q2</code>" in comment
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["judge"] == "openai:judge-strict,openai:judge-lenient"
    assert report["run_settings"]["evaluators"] == "correctness,groundedness (all)"
    run = report["results"][1]["run_results"][0]
    correctness = run["evaluations"][0]
    assert correctness["status"] == "fail"
    assert [v["passed"] for v in correctness["votes"]] == [False, True]
    # each panel member's verdict for each evaluator is cached apart: the rerun asks nobody
    assert again.returncode == 0, again.stderr
    assert judge.calls == calls
    assert json.loads((tmp_path / "again.json").read_text())["stats"]["judge_calls"] == 0


def test_groundedness_without_context_fails_that_evaluator_and_asks_no_judge(tmp_path, judge):
    golden = write_golden(tmp_path / "golden.jsonl", n=2)
    answers = {f"How do I configure feature {i}?": good(i) for i in range(2)}

    def shape(answer, sources):  # only the second answer carries its passages
        said = {"answer": answer, "sources": sources}
        return {**said, "passages": [answer]} if answer == good(1) else said

    flags = (
        "--judge-model", "openai:judge-strict", "--judge-base-url", judge.base_url,
        "--evaluators", "correctness,groundedness:0.9", "--context-path", "passages",
        "--cache", "off", "--judge-canaries", "0", "-o", tmp_path / "r.json", "--quiet",
    )  # fmt: skip
    with AssistantServer(answers=answers, shape=shape) as assistant:
        result = golden_gate("eval", golden, "--assistant-url", assistant.url, *flags)
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert [r["passes"] for r in report["results"]] == [0, 1]
    outcome = report["results"][0]["run_results"][0]["evaluations"][1]
    assert outcome["status"] == "fail" and "no retrieved context" in outcome["comment"]
    assert judge.calls == 3  # the first answer's correctness only, the second's both
    assert report["run_settings"]["evaluators"] == "correctness,groundedness:0.9 (all)"
    # No answer with context at all: the setting is wrong, not every answer (issue 44).
    with AssistantServer(answers=answers) as assistant:
        result = golden_gate("eval", golden, "--assistant-url", assistant.url, *flags)
    assert result.returncode == 2, result.stderr
    assert "context-path 'passages' found nothing in any of the 2 answers" in result.stderr


def test_calibrating_a_panel_is_one_sentence_and_exit_2(tmp_path):
    golden = tmp_path / "golden.jsonl"
    golden.write_text(
        "".join(
            json.dumps({"id": i, "question": "q?", "reference_key_points": ["k"]}) + "\n"
            for i in ("a", "b")
        )
    )
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        json.dumps({"id": "a", "answer": "k", "label": "pass"})
        + "\n"
        + json.dumps({"id": "b", "answer": "x", "label": "fail"})
        + "\n"
    )
    done = golden_gate(
        "calibrate", golden, "--labels", labels, "--judge-model", "openai:a,openai:b",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "golden-gate: error: judge-model 'openai:a,openai:b' is a panel; calibrate one judge at "
        "a time (each member's agreement with the human labels is its own kappa)"
    )


@pytest.mark.parametrize(
    ("claimed", "shown"),
    [
        ("openai:gpt-4.1-mini,anthropic:claude-x", "openai:gpt-4.1-mini,anthropic:claude-x"),
        ("openai:a, @everyone", "(not a judge name)"),
        ("openai:a,<b>", "(not a judge name)"),
    ],
)
def test_a_forks_panel_keeps_its_name_and_nothing_else_passes(claimed, shown):
    from golden_gate.action.modes.post_comment import as_claim
    from golden_gate.core.report import Report

    report = Report.model_validate({"judge": claimed, "results": []})
    assert as_claim(report).judge == shown


def _panel_report(vote_lists):
    from golden_gate.core.item_result import (
        EvaluatorOutcome,
        ItemResult,
        JudgeVote,
        RunResult,
        Verdict,
    )
    from golden_gate.core.report import Report

    def run(votes):
        outcome = EvaluatorOutcome(
            evaluator="correctness",
            status="pass",
            votes=[JudgeVote(judge=f"j{i}", passed=v) for i, v in enumerate(votes)],
        )
        return RunResult(
            status="pass", answer="a", verdict=Verdict(passed=True), evaluations=[outcome]
        )

    items = [
        ItemResult(id=f"q{n}", tags=[], passes=1, runs=1, question="q", run_results=[run(votes)])
        for n, votes in enumerate(vote_lists)
    ]
    return Report(judge="openai:j0,openai:j1", results=items)


def test_a_report_with_uneven_votes_renders_without_crashing():
    # A fork's report is untrusted: a unit with a third vote must not break the trusted render.
    from golden_gate.action.modes.post_comment import as_claim
    from golden_gate.core.agreement import agreement
    from golden_gate.core.gate import evaluate_gate
    from golden_gate.core.verdict import GateSettings
    from golden_gate.rendering.render import render_comment

    report = _panel_report([[True, True], [True, False, True], [False, False]])
    found = agreement(report)
    assert found is not None and found.judges == ["j0", "j1"] and found.verdicts == 2
    claim = as_claim(report)
    assert "Judge agreement" in render_comment(claim, evaluate_gate(claim, None, GateSettings()))


def test_panel_kappa_is_the_same_whichever_judge_is_named_first():
    from golden_gate.core.agreement import agreement

    votes = [[True, True]] * 9 + [[True, False]]
    forward = agreement(_panel_report(votes)).kappa
    backward = agreement(_panel_report([list(reversed(v)) for v in votes])).kappa
    assert forward == backward == pytest.approx(0.0)
    assert agreement(_panel_report([[True, True]] * 4)).kappa is None  # chance agreement is 1


@pytest.mark.parametrize(
    "panel", ["openai:gpt-4o,gpt-4o", "openai:gpt-4o,OPENAI:gpt-4o", "keypoints,KEYPOINTS"]
)
def test_one_judge_spelled_twice_is_not_a_panel(panel):
    from golden_gate.evaluation.evaluators import make_panel
    from golden_gate.evaluation.judge import JudgeSettings

    with pytest.raises(InputError, match="named twice"):
        make_panel(JudgeSettings(model=panel))


def test_moving_a_panel_to_another_server_does_not_change_what_it_asks(monkeypatch):
    from golden_gate.evaluation.evaluators import EvaluatorSettings, make_panel, parse_evaluators
    from golden_gate.evaluation.judge import JudgeSettings

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdef")
    specs = EvaluatorSettings(
        evaluators=parse_evaluators("correctness,relevancy", flag="--evaluators")
    )
    hashes = {
        make_panel(
            JudgeSettings(model="openai:a,openai:b", base_url=f"http://127.0.0.1:{port}/v1"),
            specs,
        ).prompt_hash
        for port in (8080, 9090)
    }
    assert len(hashes) == 1


@pytest.mark.parametrize("evaluators", ["correctness,relevancy", "correctness"])
@pytest.mark.parametrize("panel", ["openai:judge-strict", "openai:judge-strict,openai:lenient"])
def test_a_changed_served_model_is_warned_for_evaluators_and_panels(
    tmp_path, evaluators, panel, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdef")
    golden = tmp_path / "g.jsonl"
    golden.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"q{i}",
                    "question": f"How do I configure feature {i}?",
                    "reference_key_points": [f"set option {i}"],
                }
            )
            + "\n"
            for i in range(2)
        )
    )
    report = tmp_path / "r.json"
    with JudgeServer() as judge:
        for served, n in (("model-A", 1), ("model-B", 2)):
            judge.served_model = served
            answers = {f"How do I configure feature {i}?": f"Set option {i} now." for i in range(n)}
            with AssistantServer(answers=answers) as assistant:
                done = golden_gate(
                    "eval", golden, "--assistant-url", assistant.url, "--judge-model", panel,
                    "--judge-base-url", judge.base_url, "--evaluators", evaluators,
                    "--cache-dir", tmp_path / "cache", "-o", report, "--quiet",
                    "--judge-canaries", "0",  # the stand-in's relevancy is word overlap
                )  # fmt: skip
    assert done.returncode == 0, done.stderr
    warnings = json.loads(report.read_text())["warnings"]
    assert any("(model-A, model-B)" in w for w in warnings), warnings


def test_the_evaluators_help_names_every_preset_where_a_user_reads_it():
    # Generated from the preset table: the help, action.yml's input and the docs cannot go stale.
    from pathlib import Path

    import yaml

    from golden_gate.evaluation.presets import PRESETS
    from golden_gate.options import BY_NAME

    root = Path(__file__).resolve().parents[2]
    described = yaml.safe_load((root / "action.yml").read_text())["inputs"]["evaluators"]
    for name in PRESETS:
        assert name in BY_NAME["evaluators"].help
        assert name in " ".join(described["description"].split())
        assert name in (root / "docs" / "inputs.md").read_text()
