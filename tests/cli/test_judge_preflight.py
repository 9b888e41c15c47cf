"""The judge preflight: one call per configured judge before any item, through the real
command and the Action's entrypoint, the requests counted at the stand-in judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import AnthropicServer
from tests.fakes.assistant_server import AssistantServer
from tests.fakes.gemini_server import GeminiServer
from tests.fakes.judge_server import Behaviour, JudgeServer
from tests.helpers import golden_gate

KEY = "sk-test-right-key-0123456789"


def golden(tmp_path: Path, count: int = 17) -> tuple[Path, dict[str, str]]:
    answers = {f"Which port does service {n} use?": f"port {8000 + n}" for n in range(count)}
    path = tmp_path / "g.jsonl"
    path.write_text(
        "".join(
            json.dumps({"id": f"q{n:02d}", "question": q, "reference_key_points": [a]}) + "\n"
            for n, (q, a) in enumerate(answers.items())
        )
    )
    return path, answers


def run(command: str, tmp_path: Path, assistant: str, judge: str, base_url: str, *extra):
    path = golden(tmp_path)[0]
    return golden_gate(
        command, path, "--assistant-url", assistant, "--quiet", "--cache", "off",
        "--judge-model", judge, "--judge-base-url", base_url, "--judge-retries", "1",
        "-o", tmp_path / "r.json", *extra, cwd=tmp_path, timeout=90,
    )  # fmt: skip


def errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "error:" in line]


@pytest.mark.parametrize("command", ["eval", "run"])
def test_a_wrong_judge_model_name_stops_the_run_after_one_request(tmp_path, monkeypatch, command):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    _, answers = golden(tmp_path)
    with (
        AssistantServer(answers) as assistant,
        JudgeServer(models={"gpt-4.1-mini"}, key=KEY) as judge,
    ):
        done = run(command, tmp_path, assistant.url, "openai:gpt-nope", judge.base_url)
        asked, seen = assistant.request_count, list(judge.seen)
    assert done.returncode == 2, done.stdout + done.stderr
    said = errors(done.stderr)
    assert len(said) == 1, done.stderr
    assert "The model `gpt-nope` does not exist or you do not have access to it." in said[0]
    assert "HTTP 404" in said[0] and "check judge-model" in said[0]
    assert "no item was judged" in said[0]
    assert seen == ["POST /v1/chat/completions"]  # one request, the preflight's
    assert judge.preflights == 1 and judge.calls == 0
    assert asked == 0
    # The report is written and says why; no item has a verdict.
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["complete"] is False
    assert "does not exist" in report["incomplete_reason"]
    assert report["results"] == [] and len(report["not_asked"]) == 17


def test_a_refused_key_is_named_and_never_shown(tmp_path, monkeypatch):
    wrong = "sk-test-wrong-key-abcdefghijklmnop"
    monkeypatch.setenv("OPENAI_API_KEY", wrong)
    _, answers = golden(tmp_path)
    with AssistantServer(answers) as assistant, JudgeServer(key=KEY) as judge:
        done = run("eval", tmp_path, assistant.url, "openai:gpt-4.1-mini", judge.base_url)
    assert done.returncode == 2, done.stderr
    said = errors(done.stderr)
    assert len(said) == 1 and "HTTP 401" in said[0], done.stderr
    assert "check the API key in OPENAI_API_KEY" in said[0]
    assert wrong not in done.stderr + done.stdout + (tmp_path / "r.json").read_text()
    assert len(judge.seen) == 1


def test_each_judge_of_a_panel_is_asked_once_and_the_wrong_one_named(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    _, answers = golden(tmp_path)
    with AssistantServer(answers) as assistant, JudgeServer(models={"gpt-a", "gpt-b"}) as judge:
        done = run(
            "eval", tmp_path, assistant.url, "openai:gpt-a,openai:gpt-b,openai:gpt-c",
            judge.base_url,
        )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "The model `gpt-c` does not exist" in errors(done.stderr)[0]
    assert judge.preflights == 3 and judge.calls == 0  # at most one request per judge


def test_an_outage_at_the_preflight_is_exit_3_with_the_report(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    _, answers = golden(tmp_path)
    with (
        AssistantServer(answers) as assistant,
        JudgeServer(preflight=Behaviour.server_error(503)) as judge,
    ):
        done = run("eval", tmp_path, assistant.url, "openai:gpt-4.1-mini", judge.base_url)
        asked = assistant.request_count
    assert done.returncode == 3, done.stderr
    assert "the judge preflight got no verdict" in done.stderr and "HTTP 503" in done.stderr
    assert judge.preflights == 2 and judge.calls == 0  # the first try and judge-retries 1
    assert asked == 0
    report = json.loads((tmp_path / "r.json").read_text())
    assert "HTTP 503" in report["incomplete_reason"]
    # Every request it sent is counted; none is a judge call (a verdict).
    assert report["stats"]["judge_attempts"] == 2 and report["stats"]["judge_calls"] == 0


def test_a_rerun_of_unchanged_answers_asks_the_judge_nothing_not_even_the_preflight(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    path, answers = golden(tmp_path, 5)
    calls, reports = [], []

    def run(model: str) -> None:
        done = golden_gate(
            "eval", path, "--assistant-url", assistant.url, "--quiet",
            "--cache-dir", tmp_path / "cache", "--judge-model", model,
            "--judge-base-url", judge.base_url, "-o", tmp_path / "r.json",
            cwd=tmp_path, timeout=90,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        calls.append((judge.preflights, judge.calls))
        reports.append(json.loads((tmp_path / "r.json").read_text()))

    with AssistantServer(answers) as assistant, JudgeServer(key=KEY) as judge:
        run("openai:gpt-4.1-mini")
        run("openai:gpt-4.1-mini")
        run("openai:gpt-4.1")  # another judge: proved again, and every answer judged again
    assert calls[0][0] == 1 and calls[0][1] >= 5
    # The same judge answered this very request before (its verdict is in the cache, keyed on
    # the judge's identity): a re-run of unchanged answers makes no request at all.
    assert calls[1] == calls[0]
    assert reports[1]["stats"]["judge_calls"] == 0 and reports[1]["stats"]["judge_attempts"] == 0
    assert calls[2][0] == 2 and calls[2][1] >= 2 * calls[0][1]
    # The preflight is never a verdict of an item, but its request and tokens are counted.
    assert reports[0]["stats"]["judge_attempts"] == reports[0]["stats"]["judge_calls"] + 1
    assert reports[2]["stats"]["input_tokens"] > 0


@pytest.mark.parametrize(
    ("server", "model", "key_env", "words", "fix"),
    [
        (AnthropicServer, "claude-nope", "ANTHROPIC_API_KEY", "model: claude-nope", "judge-model"),
        (GeminiServer, "gemini-nope", "GOOGLE_API_KEY", "models/gemini-nope is not found",
         "judge-model"),
    ],
)  # fmt: skip
def test_other_providers_unknown_model_in_their_own_words(
    tmp_path, monkeypatch, server, model, key_env, words, fix
):
    monkeypatch.setenv(key_env, KEY)
    _, answers = golden(tmp_path)
    provider = "anthropic" if server is AnthropicServer else "google_genai"
    with AssistantServer(answers) as assistant, server(models={"known"}) as judge:
        done = run("eval", tmp_path, assistant.url, f"{provider}:{model}", judge.base_url)
    assert done.returncode == 2, done.stderr
    said = errors(done.stderr)
    assert len(said) == 1 and words in said[0] and f"check {fix}" in said[0], done.stderr
    assert len(judge.seen) == 1 and judge.calls == 0


def test_gemini_refusing_the_key_names_the_key(tmp_path, monkeypatch):
    monkeypatch.setenv("GOOGLE_API_KEY", "wrong-key-0123456789")
    _, answers = golden(tmp_path)
    with AssistantServer(answers) as assistant, GeminiServer(key=KEY) as judge:
        done = run("eval", tmp_path, assistant.url, "google_genai:gemini-2.5-flash", judge.base_url)
    assert done.returncode == 2, done.stderr
    assert "API key not valid" in done.stderr
    assert "check the API key in GOOGLE_API_KEY or GEMINI_API_KEY" in done.stderr
    assert len(judge.seen) == 1


def test_the_action_stops_on_a_wrong_judge_model_after_one_request(world):
    from tests.action.test_adversary import JUDGE_KEY, ten_items

    questions = ten_items(world)
    with (
        AssistantServer(dict.fromkeys(questions.values(), "x")) as assistant,
        JudgeServer(models={"gpt-4.1-mini"}) as judge,
    ):
        done = world.run(
            "workflow_dispatch",
            world.event("workflow_dispatch"),
            extra_env={"OPENAI_API_KEY": JUDGE_KEY},
            judge_model="openai:gpt-nope",
            judge_base_url=judge.base_url,
            assistant_url=assistant.url,
        )
        asked = assistant.request_count
    assert done.returncode == 2, done.stdout + done.stderr
    assert "The model `gpt-nope` does not exist" in done.stdout + done.stderr
    assert "check judge-model" in done.stdout + done.stderr
    assert judge.seen == ["POST /v1/chat/completions"] and judge.calls == 0
    assert asked == 0
    report = json.loads((world.workspace / "golden-gate" / "report.json").read_text())
    assert "does not exist" in report["incomplete_reason"]


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_an_openai_compatible_judge_on_loopback_needs_no_key(tmp_path, monkeypatch, host):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    _, answers = golden(tmp_path)
    with AssistantServer(answers) as assistant, JudgeServer() as judge:
        base_url = judge.base_url.replace("127.0.0.1", host)
        done = run("eval", tmp_path, assistant.url, "openai:my-local-model", base_url)
        sent = {h.get("authorization") for h in judge.headers}
    assert done.returncode == 0, done.stderr
    assert judge.preflights == 1 and judge.calls >= 17
    assert sent == {"Bearer none"}  # the SDK's insistence met; the server takes any key


def test_an_openai_judge_elsewhere_still_needs_its_key(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    _, answers = golden(tmp_path)
    with AssistantServer(answers) as assistant:
        done = run("eval", tmp_path, assistant.url, "openai:gpt-4.1-mini", "http://judge.test/v1")
    assert done.returncode == 2, done.stderr
    assert "no API key (set OPENAI_API_KEY)" in done.stderr


def test_a_server_without_structured_output_fails_the_preflight(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    _, answers = golden(tmp_path)
    with (
        AssistantServer(answers) as assistant,
        JudgeServer(preflight=Behaviour.plain_text("Yes, the answer is correct.")) as judge,
    ):
        done = run("eval", tmp_path, assistant.url, "openai:local", judge.base_url)
    assert done.returncode == 2, done.stderr
    said = errors(done.stderr)
    assert len(said) == 1 and "the judge must answer with the JSON verdict" in said[0], said
    assert judge.preflights == 1 and judge.calls == 0  # a reply is never asked again


def test_a_key_the_provider_echoes_back_is_scrubbed(tmp_path, monkeypatch):
    secret = "sk-test-echoed-key-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    _, answers = golden(tmp_path)
    with (
        AssistantServer(answers) as assistant,
        JudgeServer(preflight=Behaviour.unauthorized()) as judge,
    ):
        done = run("eval", tmp_path, assistant.url, "openai:gpt-4.1-mini", judge.base_url)
    assert done.returncode == 2, done.stderr
    assert "Incorrect API key provided" in done.stderr and "check the API key" in done.stderr
    assert secret not in done.stderr + done.stdout + (tmp_path / "r.json").read_text()


def test_an_endpoint_with_no_api_names_judge_base_url(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    _, answers = golden(tmp_path)
    with AssistantServer(answers) as assistant, JudgeServer() as judge:
        wrong = judge.base_url.removesuffix("/v1") + "/api"
        done = run("eval", tmp_path, assistant.url, "openai:gpt-4.1-mini", wrong)
    assert done.returncode == 2, done.stderr
    said = errors(done.stderr)
    assert len(said) == 1 and "HTTP 404" in said[0] and "check judge-base-url" in said[0], said
    assert judge.seen == ["POST /api/chat/completions"]
