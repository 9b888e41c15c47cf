"""Which model judged: served models and endpoints compared with the baseline's, floating
aliases, the seed, and a judge that is the assistant's own model; through `golden-gate`
against the real OpenAI-compatible fake judge."""

import html
import json

import pytest

from golden_gate.core.judges import floating_alias, moved
from golden_gate.core.report import JudgeIdentity
from golden_gate.evaluation.providers import JUDGE_SEED
from tests.fakes.assistant_server import AssistantServer
from tests.fakes.judge_server import JudgeServer
from tests.helpers import golden_gate, write_feature_golden

ANSWERS = {
    f"How do I configure feature {i}?": f"Set option {i}. Restart the server." for i in (0, 1)
}


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")


def cli(command, tmp_path, judge, *flags, model="openai:judge"):
    golden = tmp_path / "golden.jsonl"
    if not golden.exists():
        write_feature_golden(golden, n=2, sources=False)
    with AssistantServer(answers=ANSWERS) as assistant:
        return golden_gate(
            command, golden, "--assistant-url", assistant.url, "--judge-model", model,
            "--judge-base-url", judge.base_url, "--quiet", *flags,
            *(("--floor", "0") if command == "run" else ()),
        )  # fmt: skip


def test_a_baseline_judged_by_another_snapshot_is_flagged_with_both_names(tmp_path, key):
    with JudgeServer(served_model="judge-2024-05-13") as judge:
        made = cli("eval", tmp_path, judge, "-o", tmp_path / "base.json", "--cache", "off")
        judge.served_model = "judge-2024-08-06"  # the same name, the same server, new weights
        ran = cli(
            "run", tmp_path, judge, "--baseline", tmp_path / "base.json", "--cache", "off",
            "-o", tmp_path / "report.json", "--comment-file", tmp_path / "comment.md",
            "--require-comparable",
        )  # fmt: skip
        assert all(body["seed"] == JUDGE_SEED for body in judge.requests)
        url = judge.base_url
    assert made.returncode == 0, made.stderr
    moved_line = (
        "the yardstick moved: judge 'openai:judge' was answered by judge-2024-05-13 for the "
        "baseline and by judge-2024-08-06 for this run"
    )
    assert moved_line in ran.stdout
    assert moved_line in html.unescape((tmp_path / "comment.md").read_text())
    assert ran.returncode == 1  # require-comparable: a moved yardstick fails the gate
    report = json.loads((tmp_path / "report.json").read_text())
    identity = report["judges"][0]
    assert identity["served_models"] == ["judge-2024-08-06"]
    assert identity["seed"] == JUDGE_SEED and identity["endpoint"] == url
    # asked for `judge`, answered by a dated `judge-...`: the name floats
    assert any(
        w.startswith("judge 'openai:judge' is a floating alias: its server answered as ")
        for w in report["warnings"]
    )


def test_a_judge_moved_to_another_server_is_flagged(tmp_path, key):
    with JudgeServer() as first:
        cli("eval", tmp_path, first, "-o", tmp_path / "base.json", "--cache", "off")
        before = first.base_url
    with JudgeServer() as second:
        ran = cli(
            "run", tmp_path, second, "--baseline", tmp_path / "base.json", "--cache", "off",
            "--comment-file", tmp_path / "comment.md", "-o", tmp_path / "r.json",
        )  # fmt: skip
        now = second.base_url
    assert ran.returncode == 0, ran.stderr
    assert (
        f"the yardstick moved: judge 'openai:judge' was asked at {before} for the "
        f"baseline and at {now} for this run"
    ) in ran.stdout


def test_a_judge_that_is_the_assistants_own_model_is_warned_of(tmp_path, key):
    with JudgeServer() as judge:
        done = cli(
            "eval", tmp_path, judge, "-o", tmp_path / "r.json", "--cache", "off",
            "--assistant-model", "OpenAI:Judge",
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    warnings = json.loads((tmp_path / "r.json").read_text())["warnings"]
    assert (
        "judge 'openai:judge' is the assistant's own model (judge): a model grading its own "
        "answers is lenient with them; judge with a different model"
    ) in warnings


def test_a_judge_that_is_the_model_the_responses_name_is_warned_of(tmp_path, key):
    # model-path: the assistant says which model answered; the judge is that model.
    def with_model(answer, sources):
        return {"answer": answer, "sources": sources, "meta": {"model": "Judge"}}

    golden = write_feature_golden(tmp_path / "golden.jsonl", n=2, sources=False)
    with JudgeServer() as judge, AssistantServer(answers=ANSWERS, shape=with_model) as assistant:
        done = golden_gate(
            "eval", golden, "--assistant-url", assistant.url, "--judge-model", "openai:judge",
            "--judge-base-url", judge.base_url, "--quiet", "--cache", "off",
            "--model-path", "meta.model", "-o", tmp_path / "r.json",
        )  # fmt: skip
        nowhere = golden_gate(
            "eval", golden, "--assistant-url", assistant.url, "--judge-model", "openai:judge",
            "--judge-base-url", judge.base_url, "--quiet", "--cache", "off",
            "--model-path", "meta.missing", "-o", tmp_path / "r2.json",
        )  # fmt: skip
    first = next(iter(ANSWERS.values()))

    def sometimes(answer, sources):  # only the first answer says which model answered
        said = {"answer": answer, "sources": sources}
        return {**said, "meta": {"model": "other-model"}} if answer == first else said

    with JudgeServer() as judge, AssistantServer(answers=ANSWERS, shape=sometimes) as assistant:
        other = golden_gate(
            "eval", golden, "--assistant-url", assistant.url, "--judge-model", "openai:judge",
            "--judge-base-url", judge.base_url, "--quiet", "--cache", "off",
            "--model-path", "meta.model", "-o", tmp_path / "r3.json",
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    warnings = json.loads((tmp_path / "r.json").read_text())["warnings"]
    assert any("judge 'openai:judge' is the assistant's own model (judge)" in w for w in warnings)
    # A model-path no answer has is a setting to fix (issue 44), not a silent nothing.
    assert nowhere.returncode == 2, nowhere.stderr
    assert "model-path 'meta.missing' found nothing in any of the 2 answers" in nowhere.stderr
    # A response that does not say is still an answer, and nothing is claimed of it.
    assert other.returncode == 0, other.stderr
    said = json.loads((tmp_path / "r3.json").read_text()).get("warnings") or []
    assert not any("assistant's own model" in w for w in said)


@pytest.mark.parametrize(
    ("name", "endpoint", "floats"),
    [
        ("openai:gpt-4o", "https://api.openai.com/v1", True),
        ("openai:gpt-4o-2024-08-06", "https://api.openai.com/v1", False),
        ("anthropic:claude-3-5-sonnet-latest", "https://api.anthropic.com", True),
        ("anthropic:claude-sonnet-4-5-20250929", "https://api.anthropic.com", False),
        ("google_genai:gemini-1.5-pro-002", None, False),
        ("google_genai:gemini-2.5-flash", None, True),
        # a team's own server: its names are its own
        ("openai:llama-3.1-8b", "http://127.0.0.1:8080/v1", False),
    ],
)
def test_floating_aliases_by_name_where_the_provider_publishes_snapshots(name, endpoint, floats):
    judge = JudgeIdentity(judge=name, endpoint=endpoint)
    assert (floating_alias(judge) is not None) is floats


def test_the_same_served_model_and_endpoint_move_nothing():
    one = JudgeIdentity(judge="openai:j", endpoint="http://a/v1", served_models=["j-1"])
    assert moved([one], [one]) == []
    assert moved([one], None) == []
    # another judge name altogether is the judge comparison's to say, not this one's
    assert moved([one], [one.model_copy(update={"judge": "openai:k"})]) == []
