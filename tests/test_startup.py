"""Start-up: each command imports what it needs when it needs it (timings are in bench/).

Each check runs in a fresh interpreter and reads `sys.modules` (or the import hook below) at the
end, so what other tests imported cannot hide an import. The judge stack (openevals, LangChain,
the provider SDKs) is built on a thread while `eval`'s first requests go out; what can be
checked without it (the model's name, the prompt file, the API key) is refused before anything
runs, as before.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.fakes.assistant_server import AssistantServer
from tests.fakes.judge_server import JudgeServer
from tests.gate_pairs import PAIRS

JUDGE_STACK = {"openevals", "langchain", "langchain_core", "langchain_openai", "openai"}
JUDGE_STACK |= {"anthropic", "langchain_anthropic", "google.genai", "langchain_google_genai"}
DEMO = [str(PAIRS / "demo" / "report.json"), str(PAIRS / "demo" / "baseline.json")]
MODEL = "openai:gpt-4.1-mini"

# Records, for each module imported after it is installed, the thread that imported it.
WATCH = """
import json, sys, threading
THREADS = {}
class _Watch:
    def find_spec(self, name, path=None, target=None):
        THREADS.setdefault(name, threading.current_thread().name)
        return None
sys.meta_path.insert(0, _Watch())
"""
REPORT = """
with open(sys.argv[1], "w") as out:
    json.dump({"modules": sorted(sys.modules), "threads": THREADS, "code": code}, out)
"""


def run_python(tmp_path: Path, body: str, env: dict[str, str] | None = None) -> dict:
    """Run `body` (it sets `code`) in a fresh interpreter; its modules and importing threads."""
    out = tmp_path / "modules.json"
    script = WATCH + textwrap.dedent(body) + REPORT
    done = subprocess.run(
        [sys.executable, "-c", script, str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(out.read_text())
    found["stdout"], found["stderr"] = done.stdout, done.stderr
    found["modules"] = set(found["modules"])
    return found


def cli(*args: str) -> str:
    return f"from golden_gate import cli\ncode = cli.main({list(args)!r})\n"


def heavy(modules: set[str], names: set[str]) -> set[str]:
    """Which of `names` (packages, with their submodules) are among `modules`."""
    return {m for m in modules if m in names or m.split(".")[0] in names}


def test_gate_on_a_small_pair_imports_neither_the_judge_stack_nor_scipy_stats(tmp_path):
    found = run_python(tmp_path, cli("gate", *DEMO))
    assert found["code"] == 1  # the demo's candidate regressed
    assert not heavy(found["modules"], JUDGE_STACK | {"jinja2", "httpx", "aiohttp"})
    # Nor numpy and scipy: with one run per item the sign test is integer arithmetic, and the
    # power statement for a baseline that passed every shared item is a formula.
    assert not heavy(found["modules"], {"scipy", "numpy"})


def test_a_gate_with_nothing_to_test_imports_no_scipy_at_all(tmp_path):
    same = DEMO[1]
    found = run_python(tmp_path, cli("gate", same, same))
    assert found["code"] == 0
    assert not heavy(found["modules"], {"scipy", "numpy"} | JUDGE_STACK)


def test_the_comment_brings_the_templates_and_nothing_of_the_judge(tmp_path):
    comment = str(tmp_path / "comment.md")
    found = run_python(tmp_path, cli("gate", *DEMO, "--comment-file", comment))
    assert "jinja2" in found["modules"]
    assert not heavy(found["modules"], JUDGE_STACK | {"httpx", "aiohttp"})
    assert "scipy.stats" not in found["modules"]


def test_the_statistics_import_scipy_special_only_for_several_runs_per_item(tmp_path):
    body = """
    from fractions import Fraction
    from golden_gate.core import gate
    from golden_gate.core import sign_flip, stats
    before = set(sys.modules)
    stats.wilson_lower_bound(19, 20)
    sign_flip.sign_test_p(0, 4)
    sign_flip.sign_test_p(5, 1)
    sign_flip.sign_test_p(50_400, 49_600)
    sign_flip.paired_sign_flip_test([Fraction(-1), Fraction(1), Fraction(-1)])
    assert not {"scipy", "numpy"} & set(sys.modules), "the sign test is integer arithmetic"
    sign_flip.paired_sign_flip_test([Fraction(-1), Fraction(1, 2), Fraction(-1)])
    code = sorted(before)
    """
    found = run_python(tmp_path, body)
    assert not heavy(set(found["code"]), {"scipy", "numpy"} | JUDGE_STACK)
    assert "scipy.special" in found["modules"]
    assert "scipy.stats" not in found["modules"]


def test_a_one_run_gate_failing_on_the_paired_test_imports_no_scipy(tmp_path):
    # 300 items, the baseline passed them all, the candidate fails 12: the floor holds and the
    # sign test (12 regressed vs 0 improved) fails the gate.
    for name, failing in (("baseline.json", set()), ("report.json", set(range(3, 300, 25)))):
        results = [
            {"id": f"q{i:03d}", "passes": int(i not in failing), "runs": 1} for i in range(300)
        ]
        (tmp_path / name).write_text(json.dumps({"judge": "j", "results": results}))
    found = run_python(tmp_path, cli("gate", "report.json", "baseline.json"))
    assert found["code"] == 1
    assert found["stdout"].startswith("golden-gate: failed: significant regression: 12 regressed")
    assert "below the floor" not in found["stdout"]
    assert not heavy(found["modules"], {"scipy", "numpy"} | JUDGE_STACK)


def golden(tmp_path: Path, n: int = 40) -> str:
    path = tmp_path / "golden.jsonl"
    lines = [
        {"id": f"q{i}", "question": f"What is fact {i}?", "reference_key_points": [f"fact {i}"]}
        for i in range(n)
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return str(path)


def answers(n: int = 40) -> dict[str, str]:
    return {f"What is fact {i}?": f"The handbook says fact {i}." for i in range(n)}


def test_eval_with_the_offline_judge_never_imports_the_judge_stack(tmp_path):
    with AssistantServer(answers=answers()) as assistant:
        body = cli(
            "eval", golden(tmp_path), "--assistant-url", assistant.url, "--quiet", "--cache", "off"
        )
        found = run_python(tmp_path, body)
    assert found["code"] == 0
    assert not heavy(found["modules"], JUDGE_STACK | {"jinja2", "scipy"})


@pytest.mark.parametrize("path", ["direct", "langchain"])
def test_eval_builds_the_model_judge_on_a_thread_while_the_assistant_is_asked(tmp_path, path):
    env = {"OPENAI_API_KEY": "sk-test-key-for-the-fake"}
    if path == "langchain":
        env["GOLDEN_GATE_JUDGE_LANGCHAIN"] = "1"
    with AssistantServer(answers=answers()) as assistant, JudgeServer() as judge:
        body = cli(
            "eval", golden(tmp_path), "--assistant-url", assistant.url, "--judge-model", MODEL,
            "--judge-base-url", judge.base_url, "--quiet", "--cache", "off",
        )  # fmt: skip
        found = run_python(tmp_path, body, env=env)
        calls = judge.calls
        assert assistant.request_count == 40
    assert found["code"] == 0
    threads = found["threads"]
    if path == "direct":  # an OpenAI judge: no SDK, LangChain, LangSmith nor openevals at all
        # Nor httpx: the assistant and the judge are asked over aiohttp.
        assert not heavy(found["modules"], JUDGE_STACK | {"langsmith", "httpx2", "httpx"})
    else:
        stack = {name: thread for name, thread in threads.items() if name in JUDGE_STACK}
        assert stack and set(stack.values()) == {f"build judge {MODEL}"}
    assert "scipy" not in found["modules"]
    report = json.loads((tmp_path / "report.json").read_text())
    assert calls == 40 + len(report["canaries"]["probes"])  # the answers, and the canaries
    assert report["judge"] == MODEL and len(report["judge_prompt_hash"]) == 64


@pytest.mark.parametrize(
    ("flags", "env", "sentence"),
    [
        (
            [],
            {"OPENAI_API_KEY": ""},
            f"judge model '{MODEL}' could not be set up: no API key (set OPENAI_API_KEY)",
        ),
        (
            ["--judge-prompt", "missing.txt"],
            {"OPENAI_API_KEY": "sk-test-key-for-the-fake"},
            "missing.txt: cannot read the judge prompt file (No such file or directory)",
        ),
        (
            ["--judge-model", "mistral:large"],
            {"OPENAI_API_KEY": "sk-test-key-for-the-fake"},
            "--judge-model: judge provider 'mistral' is not supported",
        ),
    ],
)
def test_what_needs_no_judge_stack_is_refused_before_any_request(tmp_path, flags, env, sentence):
    with AssistantServer(answers=answers()) as assistant:
        argv = [
            sys.executable, "-m", "golden_gate", "eval", golden(tmp_path),
            "--assistant-url", assistant.url,
            "--judge-model", MODEL, *flags, "--quiet", "--cache", "off",
        ]  # fmt: skip
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=120, cwd=tmp_path,
            env={**os.environ, **env},
        )  # fmt: skip
        assert assistant.request_count == 0
    assert done.returncode == 2
    assert done.stderr.startswith(f"golden-gate: error: {sentence}")
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "report.json").exists()


def test_a_judge_the_thread_cannot_build_stops_the_run_with_its_sentence(tmp_path):
    # Azure OpenAI with a key but no endpoint: only building the model finds that out.
    env = {k: v for k, v in os.environ.items() if k != "AZURE_OPENAI_ENDPOINT"}
    env["AZURE_OPENAI_API_KEY"] = "az-test-key-for-the-fake"
    with AssistantServer(answers=answers()) as assistant:
        argv = [
            sys.executable, "-m", "golden_gate", "eval", golden(tmp_path),
            "--assistant-url", assistant.url,
            "--judge-model", "azure_openai:my-deployment", "--quiet", "--cache", "off",
        ]  # fmt: skip
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env
        )
    assert done.returncode == 2
    assert done.stderr.startswith(
        "golden-gate: error: judge model 'azure_openai:my-deployment' could not be set up: "
    )
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "report.json").exists()


def test_a_preset_says_whether_it_reads_the_context_as_its_prompt_does():
    # The evaluators' thread reads openevals' prompts; whether one needs the retrieved context
    # is known before, from the preset.
    import string

    import openevals.prompts

    from golden_gate.evaluation.evaluators import PRESETS

    for preset in PRESETS.values():
        prompt = getattr(openevals.prompts, preset.prompt)
        fields = {f for _, f, _, _ in string.Formatter().parse(prompt) if f}
        assert preset.needs_context == ("context" in fields)
