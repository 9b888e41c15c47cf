"""The bundled example assistant: real HTTP on 127.0.0.1, and its golden set's designed outcome.

The golden set is only useful to the demo if the baseline passes every item and the candidate
regresses a handful, so the gate has something to catch; the rules below mirror the gate's
deterministic checks and its offline key-point judge, independently of their code.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.client import HTTPConnection
from pathlib import Path
from typing import Any

import pytest

from golden_gate.core.golden import parse_golden
from golden_gate.example_assistant import REFUSAL, RunningAssistant, answer, golden_path, start

# -- a mirror of the scoring rules ------------------------------------------------------------

STOP_TEXT = """
    a an the and or but if of to in on at by for from with without into onto as is are was
    were be been being it its this that these those there their them they you your we our
    do does did can could should would will shall may might must not no so than then too very
    just also only any all each some such which who whom what when where how why"""
STOP_WORDS = frozenset(STOP_TEXT.split())
WORD = re.compile(r"\w+")
THRESHOLD = 0.6


def words(text: str) -> set[str]:
    return set(WORD.findall(text.lower()))


def key_point_covered(point: str, answer_text: str) -> bool:
    wanted = {w for w in words(point) if w not in STOP_WORDS} or words(point)
    return len(wanted & words(answer_text)) >= THRESHOLD * len(wanted)


def failures(item: dict[str, Any], body: dict[str, Any]) -> list[str]:
    """Why this answer fails the item (empty: it passes)."""
    text, sources = body["answer"], body["sources"]
    if item.get("must_refuse"):
        return [] if "can't answer" in text.lower() else ["not refused"]
    reasons = [
        f"missing citation {url}"
        for url in item["reference_urls"]
        if url not in text and url not in sources
    ]
    reasons += [
        f"missing key point {point!r}"
        for point in item["reference_key_points"]
        if not key_point_covered(point, text)
    ]
    return reasons


# -- fixtures and helpers ---------------------------------------------------------------------


def load_golden() -> list[dict[str, Any]]:
    lines = golden_path().read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


GOLDEN = load_golden()


@pytest.fixture(scope="module")
def baseline() -> Iterator[RunningAssistant]:
    with start("baseline") as assistant:
        yield assistant


@pytest.fixture(scope="module")
def candidate() -> Iterator[RunningAssistant]:
    with start("candidate") as assistant:
        yield assistant


def request(
    url: str, path: str, body: bytes | None = None, method: str | None = None
) -> tuple[int, dict[str, Any]]:
    req = urllib.request.Request(
        url + path, data=body, method=method, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, json.loads(exc.read())


def ask(assistant: RunningAssistant, question: str) -> dict[str, Any]:
    status, body = request(assistant.url, "/ask", json.dumps({"text": question}).encode())
    assert status == 200, body
    assert set(body) == {"answer", "sources", "usage"}
    # The tokens a model would have billed, as OpenAI's API says them (usage-path: usage).
    usage = body.pop("usage")
    assert set(usage) == {"prompt_tokens", "completion_tokens"}
    assert usage["prompt_tokens"] > 420 and usage["completion_tokens"] > 0
    return body


# -- the HTTP contract ------------------------------------------------------------------------


def test_health(baseline: RunningAssistant) -> None:
    assert baseline.url.startswith("http://127.0.0.1:")
    assert request(baseline.url, "/health") == (200, {"status": "ok"})


def test_health_echoes_the_index_snapshot() -> None:
    with start(index_snapshot="idx-2024-06-01") as assistant:
        status, body = request(assistant.url, "/health")
    assert (status, body) == (200, {"status": "ok", "index_snapshot": "idx-2024-06-01"})


def test_in_scope_question_is_answered_from_the_docs_with_a_citation(
    baseline: RunningAssistant,
) -> None:
    body = ask(baseline, "Which port does the API listen on?")
    assert "TCP port 8200" in body["answer"]
    assert body["answer"].endswith("\n\nSource: docs/install.md")
    # Every page, ranked: the answer's own first.
    assert body["sources"][0] == "docs/install.md"
    pages = Path(str(golden_path())).parent / "pages"
    assert sorted(body["sources"]) == sorted(f"docs/{p.stem}.md" for p in pages.glob("*.md"))


@pytest.mark.parametrize(
    "question", ["What is the capital of France?", "Write me a poem about cats", "Tell me a joke"]
)
def test_out_of_scope_question_is_refused(baseline: RunningAssistant, question: str) -> None:
    assert ask(baseline, question) == {"answer": REFUSAL, "sources": []}


@pytest.mark.parametrize(
    "body",
    [b"not json", b"[1, 2]", b"{}", b'{"text": 3}', b'{"text": "   "}', b'{"question": "hi"}'],
)
def test_bad_request_is_400(baseline: RunningAssistant, body: bytes) -> None:
    status, reply = request(baseline.url, "/ask", body)
    assert status == 400
    assert "error" in reply


def test_unknown_path_is_404_and_wrong_method_405(baseline: RunningAssistant) -> None:
    assert request(baseline.url, "/nope")[0] == 404
    assert request(baseline.url, "/ask/extra", b"{}")[0] == 404
    assert request(baseline.url, "/ask")[0] == 405
    assert request(baseline.url, "/health", b"{}")[0] == 405


def test_missing_content_length_is_refused(baseline: RunningAssistant) -> None:
    connection = HTTPConnection("127.0.0.1", baseline.port, timeout=5)
    try:
        connection.putrequest("POST", "/ask")
        connection.endheaders()
        response = connection.getresponse()
        assert response.status == 411
    finally:
        connection.close()


def test_answers_are_deterministic(baseline: RunningAssistant, candidate: RunningAssistant) -> None:
    questions = [item["question"] for item in GOLDEN]
    for assistant in (baseline, candidate):
        first = [ask(assistant, q) for q in questions]
        assert [ask(assistant, q) for q in questions] == first
        with start(assistant.variant) as fresh:  # a restart does not change answers either
            assert [ask(fresh, q) for q in questions] == first


def test_unknown_variant_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown variant"):
        start("nightly")
    with pytest.raises(ValueError, match="unknown variant"):
        answer("Where is the configuration file?", "nightly")


def test_stop_is_idempotent_and_frees_the_port() -> None:
    assistant = start()
    url = assistant.url
    assistant.stop()
    assistant.stop()
    with pytest.raises(OSError):
        urllib.request.urlopen(url + "/health", timeout=1)


# -- the golden set and the designed regression -----------------------------------------------


def test_golden_set_shape() -> None:
    items = parse_golden(
        golden_path().read_text(encoding="utf-8").splitlines(), source=str(golden_path())
    )
    assert len(items) == 24
    assert sum("smoke" in item.tags for item in items) == 14
    refusals = [item for item in items if item.must_refuse]
    assert len(refusals) == 2
    assert all(not i.reference_key_points and not i.reference_urls for i in refusals)
    pages = Path(str(golden_path())).parent / "pages"
    for item in items:
        assert "full" in item.tags
        for url in item.reference_urls:
            assert (pages / Path(url).name).is_file(), url


def test_baseline_passes_every_golden_item(baseline: RunningAssistant) -> None:
    failed = {}
    for item in GOLDEN:
        body = ask(baseline, item["question"])
        if reasons := failures(item, body):
            failed[item["id"]] = reasons
        # Stricter than the rule: every word of every key point is in the answer, so the
        # baseline also passes a judge that wants each word (like the fake judge server).
        for point in item["reference_key_points"]:
            missing = set(re.findall(r"[a-z0-9]+", point.lower())) - words(body["answer"])
            assert not missing, (item["id"], point, missing)
    assert failed == {}


EXPECTED_CANDIDATE_FAILURES = {
    # First sentence only: the key fact was in a later sentence.
    "backups-schedule",
    "backups-restore",
    "backups-offsite-encryption",
    "upgrade-versions",
    "upgrade-rollback",
    # Citation dropped.
    "trouble-sealed-503",
    "trouble-address-in-use",
}


def test_candidate_regresses_a_handful_of_items(candidate: RunningAssistant) -> None:
    failed = {}
    for item in GOLDEN:
        if reasons := failures(item, ask(candidate, item["question"])):
            failed[item["id"]] = reasons
    assert set(failed) == EXPECTED_CANDIDATE_FAILURES, failed
    assert 6 <= len(failed) <= 8
    smoke = {item["id"] for item in GOLDEN if "smoke" in item["tags"]}
    assert len(set(failed) & smoke) >= 5
    assert all(r.startswith("missing citation") for r in failed["trouble-sealed-503"])
    assert all(r.startswith("missing key point") for r in failed["backups-schedule"])


def test_candidate_keeps_most_answers(
    baseline: RunningAssistant, candidate: RunningAssistant
) -> None:
    same = [
        item["id"]
        for item in GOLDEN
        if ask(baseline, item["question"])["answer"] == ask(candidate, item["question"])["answer"]
    ]
    assert len(same) >= len(GOLDEN) // 2


def test_the_retriever_variant_ranks_the_install_page_last_and_answers_as_the_baseline(
    baseline: RunningAssistant,
) -> None:
    with start("retriever") as retriever:
        for item in GOLDEN:
            before, after = ask(baseline, item["question"]), ask(retriever, item["question"])
            assert after["answer"] == before["answer"]
            assert sorted(after["sources"]) == sorted(before["sources"])
            if after["sources"]:
                assert after["sources"][-1] == "docs/install.md"
                assert after["sources"][:-1] == [
                    s for s in before["sources"] if s != "docs/install.md"
                ]


# -- the command ------------------------------------------------------------------------------


def test_module_command_serves_until_sigterm() -> None:
    env = {**os.environ, "ASSISTANT_VARIANT": "candidate", "INDEX_SNAPSHOT": "snap-7"}
    process = subprocess.Popen(
        [sys.executable, "-m", "golden_gate.example_assistant", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        match = re.search(r"\(candidate\) listening on (http://\S+)", line)
        assert match, line
        url = match.group(1)
        assert request(url, "/health") == (200, {"status": "ok", "index_snapshot": "snap-7"})
        status, body = request(url, "/ask", b'{"text": "Why does the server return 503?"}')
        assert status == 200
        assert body["sources"] == []  # the candidate drops troubleshooting citations
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=5) == 0
        assert process.stderr is not None
        assert process.stderr.read() == ""  # quiet: no request log
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_a_settings_file_is_read_again_on_every_request(tmp_path: Path) -> None:
    # `init --example`'s assistant.toml: editing `variant` is the example's pull request, with
    # no restart; a half-written file keeps the last good style.
    settings = tmp_path / "assistant.toml"
    settings.write_text('variant = "baseline"\n')
    process = subprocess.Popen(
        [sys.executable, "-m", "golden_gate.example_assistant", "--port", "0",
         "--settings", str(settings)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        match = re.search(r"\(baseline\) listening on (http://\S+)", line)
        assert match, line
        url, question = match.group(1), b'{"text": "Why does the server return 503?"}'
        assert request(url, "/ask", question)[1]["sources"][0] == "docs/troubleshooting.md"
        settings.write_text('variant = "candidate"\n')
        assert request(url, "/ask", question)[1]["sources"] == []
        settings.write_text('variant = "cand')  # not TOML: the candidate stays
        assert request(url, "/ask", question)[1]["sources"] == []
    finally:
        process.kill()
        process.wait()
    bad = tmp_path / "bad.toml"
    bad.write_text('variant = "nightly"\n')
    refused = subprocess.run(
        [sys.executable, "-m", "golden_gate.example_assistant", "--settings", str(bad)],
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert refused.returncode == 2 and "variant must be one of" in refused.stderr
