"""The assistant client against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import base64
import gzip
import json
import logging
import socket
import threading
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import aiohttp
import httpx
import pydantic
import pytest

from golden_gate.core.golden import GoldenItem
from golden_gate.errors import InputError
from golden_gate.evaluation.response import AssistantSettings
from golden_gate.evaluation.target import (
    MAX_RETRY_AFTER_S,
    Answer,
    AssistantClient,
    AssistantUnusable,
    _retry_after,
)
from tests.fakes.assistant_server import AssistantServer

SECRET = "sk-live-0123456789abcdef"
QUESTION = "What is the refund window?"


def make_item(question: str = QUESTION, id: str = "q1") -> GoldenItem:
    return GoldenItem(id=id, question=question)


def settings_for(server_or_url: AssistantServer | str, **overrides: Any) -> AssistantSettings:
    url = server_or_url if isinstance(server_or_url, str) else server_or_url.url
    values: dict[str, Any] = {"url": url, "backoff_s": 0.01, "timeout_s": 5.0, **overrides}
    return AssistantSettings(**values)


def ask_all(settings: AssistantSettings, items: Sequence[GoldenItem]) -> list[Answer]:
    async def main() -> list[Answer]:
        async with AssistantClient(settings) as client:
            return list(await asyncio.gather(*(client.ask(item) for item in items)))

    return asyncio.run(main())


def ask(settings: AssistantSettings, item: GoldenItem | None = None) -> Answer:
    return ask_all(settings, [item or make_item()])[0]


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# -- the happy path and the request/response shapes -------------------------------------------


def test_default_request_shape_and_answer() -> None:
    with AssistantServer(answers={QUESTION: "30 days."}, latency_s=0.02) as server:
        answer = ask(settings_for(server))
        (request,) = server.requests
    assert answer.ok
    assert answer.text == "30 days."
    assert answer.sources is None  # no sources_path configured
    assert (answer.http_status, answer.attempts, answer.error) == (200, 1, None)
    assert answer.latency_ms >= 20  # includes the server's latency
    assert request.path == "/ask"
    assert request.json == {"text": QUESTION}
    assert request.headers["content-type"] == "application/json"


def test_unknown_question_gets_default_answer_and_sources_as_strings() -> None:
    with AssistantServer(default_answer="No idea.", sources=["docs/a.md", "docs/b.md"]) as server:
        answer = ask(settings_for(server, sources_path="sources"))
    assert answer.text == "No idea."
    assert answer.sources == ["docs/a.md", "docs/b.md"]


def test_custom_template_escapes_question_and_fills_id() -> None:
    question = 'Say "hi"\nthen {id} \\ back\tslash: Zürich — 東京 🚀'
    template = json.dumps(
        {
            "messages": [{"role": "user", "content": "{question}"}],
            "meta": {"item": "{id}", "note": "item={id}", "n": 1, "stream": False},
        }
    )
    with AssistantServer(answers={question: "hello"}, question_path="messages.0.content") as server:
        answer = ask(
            settings_for(server, request_template=template), make_item(question, id="it-7")
        )
        (request,) = server.requests
    assert answer.text == "hello"
    assert request.json == {
        "messages": [{"role": "user", "content": question}],  # "{id}" inside it left alone
        "meta": {"item": "it-7", "note": "item=it-7", "n": 1, "stream": False},
    }


def test_nested_answer_path_and_sources_from_objects() -> None:
    def openai_style(answer: Any, sources: list[Any]) -> Any:
        return {"choices": [{"message": {"content": answer}}], "context": sources}

    sources = [
        {"url": "https://docs/a"},
        {"source": "b.md", "text": "..."},
        {"path": "c.md"},
        {"id": 7},
        {"page_content": "...", "metadata": {"source": "d.md"}},
        "e.md",
        {"title": "nothing to cite"},
    ]
    with AssistantServer(answers={QUESTION: "nested"}, sources=sources, shape=openai_style) as s:
        answer = ask(
            settings_for(s, answer_path="choices.0.message.content", sources_path="context")
        )
    assert answer.ok
    assert answer.text == "nested"
    assert answer.sources == ["https://docs/a", "b.md", "c.md", "7", "d.md", "e.md"]


def test_missing_answer_path_is_an_error_naming_it() -> None:
    with AssistantServer() as server:
        answer = ask(settings_for(server, answer_path="choices.0.message.content"))
    assert not answer.ok
    assert answer.error == "no answer at 'choices.0.message.content' (no key 'choices')"


def test_sources_that_are_not_a_list_are_an_error() -> None:
    with AssistantServer(shape=lambda a, s: {"answer": a, "sources": {"url": "x"}}) as server:
        answer = ask(settings_for(server, sources_path="sources"))
    assert answer.error == "sources at 'sources' is not a list (got object)"


def test_missing_sources_are_none_not_an_error() -> None:
    with AssistantServer(shape=lambda a, s: {"answer": a}) as server:
        answer = ask(settings_for(server, sources_path="sources"))
    assert answer.ok
    assert answer.sources is None


def test_empty_string_answer_is_a_valid_answer() -> None:
    with AssistantServer(default_answer="") as server:
        answer = ask(settings_for(server))
    assert answer.ok
    assert answer.text == ""


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ({"text": "hi"}, "object"),
        (42, "number"),
        (None, "null"),
        (["a"], "array"),
        (True, "boolean"),
    ],
)
def test_non_string_answer_is_an_error(value: Any, kind: str) -> None:
    with AssistantServer(default_answer=value) as server:
        answer = ask(settings_for(server))
    assert not answer.ok
    assert answer.text is None
    assert answer.error == f"answer at 'answer' is not a string (got {kind})"
    assert answer.attempts == 1


def test_requests_name_the_gate_and_a_configured_header_replaces_a_default() -> None:
    from golden_gate import __version__

    with AssistantServer() as server:
        ask(settings_for(server))
        ask(settings_for(server, headers={"user-agent": "ci-probe", "content-type": "text/json"}))
        first, second = server.requests
    assert first.headers["user-agent"] == f"golden-gate/{__version__}"
    assert first.headers["content-type"] == "application/json"
    assert second.all("user-agent") == ["ci-probe"]
    assert second.all("content-type") == ["text/json"]


def test_a_response_header_of_12_kib_is_read() -> None:
    with AssistantServer(set_cookie="session=" + "x" * 12_000) as server:
        answer = ask(settings_for(server, retries=0))
    assert answer.ok, answer.error


def test_headers_are_sent() -> None:
    headers = {"Authorization": f"Bearer {SECRET}", "X-Tenant": "docs"}
    with AssistantServer() as server:
        ask(settings_for(server, headers=headers))
        (request,) = server.requests
    assert request.headers["authorization"] == f"Bearer {SECRET}"
    assert request.headers["x-tenant"] == "docs"


def test_no_answers_cookie_reaches_the_next_question() -> None:
    """Items are independent: a session cookie from one answer must not carry state into the
    next question (whatever order the items run in)."""
    with AssistantServer(set_cookie="session=item-1; Path=/") as server:
        ask_all(
            settings_for(server, concurrency=1),
            [make_item(id=f"q{n}", question=f"Q{n}?") for n in range(3)],
        )
        sent = [request.headers.get("cookie") for request in server.requests]
    assert sent == [None, None, None]


# -- concurrency ------------------------------------------------------------------------------


@pytest.mark.parametrize("concurrency", [4, 64])
def test_concurrency_is_bounded_and_reached(concurrency: int) -> None:
    items = [make_item(f"question {n}", id=f"q{n}") for n in range(max(20, concurrency))]
    # The server holds requests until `concurrency` are in flight: reaching it needs no luck.
    with AssistantServer(latency_s=0.05, hold_until=concurrency) as server:
        answers = ask_all(settings_for(server, concurrency=concurrency), items)
        assert server.request_count == len(items)
        assert server.max_in_flight == concurrency
    assert all(answer.ok for answer in answers)


def test_backoff_sleep_does_not_hold_a_slot() -> None:
    # With one slot, the second item is asked while the first waits to retry.
    first, second = make_item("first", id="a"), make_item("second", id="b")
    with AssistantServer(fail_first=1, fail_status=429, retry_after="0.3") as server:
        answers = ask_all(settings_for(server, concurrency=1), [first, second])
        order = [request.json["text"] for request in server.requests]
    assert order == ["first", "second", "first", "second"]
    assert [answer.attempts for answer in answers] == [2, 2]


# -- retries ------------------------------------------------------------------------------------


def test_502_then_200_is_retried() -> None:
    with AssistantServer(answers={QUESTION: "ok now"}, flap=True) as server:
        answer = ask(settings_for(server))
        assert server.count(QUESTION) == 2
    assert answer.ok
    assert (answer.text, answer.attempts, answer.http_status) == ("ok now", 2, 200)


def test_429_honours_retry_after() -> None:
    # A backoff base of 5 s would make this test crawl if Retry-After: 0 were ignored.
    with AssistantServer(fail_first=1, fail_status=429, retry_after="0") as server:
        answer = ask(settings_for(server, backoff_s=5.0))
        assert server.count(QUESTION) == 2
    assert answer.ok
    assert answer.attempts == 2


def test_404_is_not_retried() -> None:
    with AssistantServer() as server:
        answer = ask(settings_for(server, path="/nope"))
        assert server.request_count == 1
    assert not answer.ok
    assert answer.http_status == 404
    assert answer.attempts == 1
    assert answer.error is not None
    assert answer.error.startswith("HTTP 404: ")
    assert "no route POST /nope" in answer.error  # the start of the body says what was wrong


def test_persistent_500_fails_after_all_attempts() -> None:
    with AssistantServer(status=500) as server:
        answer = ask(settings_for(server, retries=3))
        assert server.request_count == 4
    assert answer.error == "HTTP 500 after 4 attempts"
    assert (answer.attempts, answer.http_status, answer.text) == (4, 500, None)


def test_no_retries_configured_means_one_attempt() -> None:
    with AssistantServer(status=503) as server:
        answer = ask(settings_for(server, retries=0))
        assert server.request_count == 1
    assert answer.error == "HTTP 503"
    assert answer.attempts == 1


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (None, None),
        ("0", 0.0),
        ("2.5", 2.5),
        ("3600", MAX_RETRY_AFTER_S),
        ("-4", 0.0),
        ("soon", None),
        ("nan", None),
        (format_datetime(datetime.now(UTC) - timedelta(hours=1), usegmt=True), 0.0),
        (format_datetime(datetime.now(UTC) + timedelta(days=1), usegmt=True), MAX_RETRY_AFTER_S),
    ],
    # Fixed ids: dates made at collection differ between xdist workers.
    ids=["none", "zero", "fraction", "capped", "negative", "word", "nan", "past", "future"],
)
def test_retry_after_parsing(header: str | None, expected: float | None) -> None:
    assert _retry_after(header) == expected


def test_retry_after_http_date_in_the_near_future() -> None:
    header = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    delay = _retry_after(header)
    assert delay is not None
    assert 20 < delay <= 30


# -- bodies that are not answers ----------------------------------------------------------------


def test_html_body_is_an_error_without_retry() -> None:
    with AssistantServer(mode="html") as server:
        answer = ask(settings_for(server))
        assert server.request_count == 1
    assert answer.error is not None
    assert answer.error.startswith("response is not JSON (text/html, starts with '<!DOCTYPE html>")
    assert (answer.attempts, answer.http_status) == (1, 200)


def test_empty_body_is_an_error() -> None:
    with AssistantServer(mode="empty") as server:
        answer = ask(settings_for(server))
    assert answer.error == "response body is empty"
    assert answer.attempts == 1


@pytest.mark.parametrize("content_length", [False, True])
def test_huge_body_is_cut_off_at_the_cap(content_length: bool) -> None:
    with AssistantServer(mode="huge", huge_content_length=content_length) as server:
        answer = ask(settings_for(server))
        assert server.request_count == 1
        assert server.huge_completed == 0  # the client hung up long before 50 MB
    assert answer.error == "response body exceeds 5000000 bytes"
    assert answer.attempts == 1


def test_a_gzip_answer_is_read_decoded() -> None:
    body = gzip.compress(json.dumps({"answer": "zipped", "sources": []}).encode())
    with AssistantServer(encoded=("gzip", body)) as server:
        answer = ask(settings_for(server))
    assert answer.ok and answer.text == "zipped"


def test_a_gzip_bomb_is_cut_off_at_the_cap_counted_decoded() -> None:
    # 60 KB on the wire, 50 MB decoded: the cap counts what the body decodes to.
    bomb = gzip.compress(b'{"answer": "' + b"x" * 50_000_000 + b'"}', compresslevel=9)
    with AssistantServer(encoded=("gzip", bomb)) as server:
        answer = ask(settings_for(server, retries=2))
        assert server.request_count == 1
    assert answer.error == "response body exceeds 5000000 bytes"


def test_a_body_that_fails_to_decompress_is_an_error_not_retried() -> None:
    with AssistantServer(encoded=("gzip", b"this is not gzip at all")) as server:
        answer = ask(settings_for(server, retries=2))
        assert server.request_count == 1  # the same body again would fail the same way
    assert answer.error and answer.attempts == 1 and answer.http_status is None


@pytest.mark.parametrize("header", [False, True])
def test_credentials_in_the_url_are_sent_as_basic_auth(header: bool) -> None:
    # As httpx sent them: in place of an Authorization header, if one is set too.
    headers = {"Authorization": "Bearer other"} if header else {}
    with AssistantServer() as server:
        url = server.url.replace("http://", "http://gate:pa55@")
        answer = ask(settings_for(url, headers=headers))
        (request,) = server.requests
    assert answer.ok
    assert request.headers["authorization"] == "Basic " + base64.b64encode(b"gate:pa55").decode()


def test_the_assistant_is_asked_directly_whatever_http_proxy_says(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As before aiohttp: the assistant is often a service on the runner itself."""
    with AssistantServer() as proxy, AssistantServer() as server:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        monkeypatch.setenv("http_proxy", proxy.url)
        answer = ask(settings_for(server, retries=0))
        assert answer.ok and len(server.requests) == 1 and not proxy.requests


# -- transport faults ---------------------------------------------------------------------------


def test_timeout_is_retried_then_reported() -> None:
    with AssistantServer(mode="slow", slow_s=10) as server:
        answer = ask(settings_for(server, timeout_s=0.2, retries=1))
        assert server.request_count == 2
    assert answer.error == "timed out after 0.2 s (after 2 attempts)"
    assert answer.attempts == 2
    assert answer.http_status is None


def test_connection_refused() -> None:
    answer = ask(settings_for(f"http://127.0.0.1:{closed_port()}", retries=2))
    assert answer.error == "connection refused (after 3 attempts)"
    assert answer.attempts == 3
    assert answer.http_status is None


def test_connection_closed_without_response() -> None:
    with AssistantServer(mode="close") as server:
        answer = ask(settings_for(server, retries=1))
        assert server.request_count == 2
    assert answer.error is not None
    assert answer.error.startswith("the assistant closed the connection")
    assert answer.attempts == 2


def test_recovers_after_connection_closed() -> None:
    with AssistantServer(answers={QUESTION: "back"}, mode="close") as server:

        async def main() -> Answer:
            async with AssistantClient(settings_for(server, retries=5)) as client:
                task = asyncio.create_task(client.ask(make_item()))
                while server.request_count == 0:
                    await asyncio.sleep(0.005)
                server.mode = "answer"
                return await task

        answer = asyncio.run(main())
    assert answer.ok
    assert answer.text == "back"


# -- secrets ----------------------------------------------------------------------------------


def test_header_values_never_appear_in_errors_or_logs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="golden_gate")
    headers = {"Authorization": f"Bearer {SECRET}", "X-Api-Key": "key-abcdef123456"}
    echo = json.dumps({"detail": f"bad token Bearer {SECRET} and key-abcdef123456"}).encode()
    errors: list[str] = []
    for server_options, overrides in [
        ({"status": 500}, {}),
        ({"status": 401, "error_body": echo}, {}),
        ({"mode": "html"}, {}),
        ({"mode": "slow", "slow_s": 10}, {"timeout_s": 0.1}),
        ({"mode": "close"}, {}),
        ({"default_answer": {"not": "a string"}}, {}),
    ]:
        with AssistantServer(**server_options) as server:
            answer = ask(settings_for(server, headers=headers, retries=1, **overrides))
            assert server.requests[0].headers["authorization"] == f"Bearer {SECRET}"
        assert answer.error
        errors.append(answer.error)
    refused = ask(settings_for(f"http://127.0.0.1:{closed_port()}", headers=headers, retries=1))
    assert refused.error
    errors.append(refused.error)
    assert any("***" in error for error in errors)  # the echoed 401 body was scrubbed
    for text in [*errors, caplog.text]:
        assert SECRET not in text
        assert "key-abcdef123456" not in text
    assert "retrying" in caplog.text  # the retries were logged, so the log was really checked


# -- settings -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "template",
    [
        '{"text": "{question}"',  # not JSON
        '{"text": "{id}"}',  # no question
        '{"{question}": "x"}',  # only in a key
        "{question}",  # not JSON either: the slot must sit inside a JSON string
    ],
)
def test_bad_request_template_is_an_input_error(template: str) -> None:
    with pytest.raises(InputError, match="request-template"):
        AssistantSettings(url="http://127.0.0.1:1", request_template=template)


def test_template_may_be_a_bare_json_string() -> None:
    with AssistantServer(answers={QUESTION: "bare"}, question_path="") as server:
        answer = ask(settings_for(server, request_template='"{question}"'))
        (request,) = server.requests
    assert request.json == QUESTION
    assert answer.text == "bare"


@pytest.mark.parametrize(
    "overrides",
    [{"url": "127.0.0.1:8000"}, {"concurrency": 0}, {"timeout_s": 0}, {"retries": -1}],
)
def test_bad_settings_are_rejected(overrides: dict[str, Any]) -> None:
    with pytest.raises(pydantic.ValidationError):
        AssistantSettings(**{"url": "http://127.0.0.1:1", **overrides})


@pytest.mark.parametrize(
    "url", ["http://a..b/ask", "http://" + "x" * 64 + ".example/ask", "https://.example/"]
)
def test_a_host_no_client_can_encode_is_refused_as_a_setting(url: str) -> None:
    with pytest.raises(pydantic.ValidationError, match="empty or over-long label"):
        AssistantSettings(url=url)


def test_a_request_the_http_client_refuses_fails_the_item_not_the_run() -> None:
    # Settings the validation let through (built unvalidated here) and the HTTP client refuses
    # with a plain ValueError: one attempt, the item's error, and the preflight stops the run.
    settings = AssistantSettings.model_construct(
        **{**settings_for("http://127.0.0.1:1").model_dump(), "url": "http://a..b"}
    )
    answer = ask(settings)
    assert answer.error is not None
    assert answer.error.startswith("the request cannot be sent (")
    assert answer.attempts == 1

    async def preflight() -> None:
        async with AssistantClient(settings) as client:
            await client.preflight(make_item())

    with pytest.raises(AssistantUnusable, match=r"the request cannot be sent.*assistant-url"):
        asyncio.run(preflight())


def test_base_url_and_path_are_joined_with_one_slash() -> None:
    with AssistantServer() as server:
        answer = ask(settings_for(server.url + "/", path="ask"))
        assert server.requests[0].path == "/ask"
    assert answer.ok


# -- client ownership and the fake itself ----------------------------------------------------


def test_injected_client_is_used_and_left_open() -> None:
    with AssistantServer() as server:

        async def main() -> tuple[Answer, bool]:
            async with aiohttp.ClientSession() as http:
                async with AssistantClient(settings_for(server), client=http) as client:
                    answer = await client.ask(make_item())
                return answer, http.closed

        answer, closed_after_client = asyncio.run(main())
    assert answer.ok
    assert closed_after_client is False


def test_fake_server_health_and_clean_shutdown() -> None:
    before = set(threading.enumerate())
    with AssistantServer(latency_s=5) as server:
        assert httpx.get(f"{server.url}/health").json() == {"status": "ok"}
        assert server.health_checks == 1

        async def hang_up() -> None:  # leaves a request sleeping in the server
            async with httpx.AsyncClient() as http:
                with pytest.raises(httpx.TimeoutException):
                    await http.post(f"{server.url}/ask", json={"text": "x"}, timeout=0.1)

        asyncio.run(hang_up())
    assert set(threading.enumerate()) <= before
