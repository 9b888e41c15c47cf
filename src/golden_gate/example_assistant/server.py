"""A small, deterministic documentation Q&A service: the assistant `golden-gate demo` gates.

It answers questions about a fictional product ("Acme Vault") from the Markdown pages bundled
next to this module: it splits the pages into `##` sections, scores every section against the
question with BM25 (section titles weigh more) and answers with the best section, citing its
page as `docs/<page>.md`. Questions that match nothing well enough are refused.

Its `sources` are every page, ranked by its best section (the retriever's order). Variants
play "main" and "a pull request":

- `baseline` answers as described above;
- `candidate` simulates a prompt change ("answer more concisely") that regressed: on some pages
  it keeps only the first sentence of the section, on others it drops the citation (and its
  sources); and a re-built index that ranks the install page last among the sources (the
  answers do not change). The rest of its answers are those of the baseline, and all are
  deterministic;
- `retriever` is that index change alone: every answer as the baseline's, the sources not.

HTTP: `POST /ask` with `{"text": question}` -> `{"answer": str, "sources": [str], "usage"}`;
`GET /health` -> `{"status": "ok"}` (plus `index_snapshot` when one is set). Standard library
only, so it runs anywhere the package does, including a bare container.

One file of about 480 lines on purpose: it is the example a user reads and copies, and it
runs with the standard library alone.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import signal
import sys
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, Final, Self
from urllib.parse import urlsplit

VARIANTS: Final = ("baseline", "candidate", "retriever")
REFUSAL: Final = "I can't answer that from the Acme Vault documentation."
GOLDEN_FILE: Final = "golden.jsonl"
MAX_BODY_BYTES: Final = 64 * 1024

# What the candidate's "answer more concisely" prompt does, by page. Keyed by page rather than
# drawn at random so the regression is stable and a reader can predict which items it breaks.
_FIRST_SENTENCE_ONLY: Final = frozenset({"backups", "upgrades"})
_NO_CITATION: Final = frozenset({"troubleshooting"})
# The retriever change both `candidate` and `retriever` carry: a re-built index that ranks this
# page last among the sources it returns (rank 1 → 6, out of the top 5), answers unchanged.
_DEMOTED: Final = frozenset({"install"})

# BM25 parameters (the usual defaults) and the weights of title words over body words.
_K1: Final = 1.2
_B: Final = 0.75
_SECTION_TITLE_WEIGHT: Final = 3
_PAGE_TITLE_WEIGHT: Final = 1
# Below this score the best section is a coincidental word or two (e.g. "write" in a poem
# request): refusing is better than answering with an unrelated section.
_MIN_SCORE: Final = 3.5

_STOP_TEXT: Final = """
    a an the and or but if of to in on at by for from with into as is are was were be been
    it its this that these those there their them they you your i me my we our do does did
    can could should would will may might must not no so than then too very just also only
    any all each some such which who what when where how why about after before get got use
    used using want need"""
_STOP_WORDS: Final = frozenset(_STOP_TEXT.split())
_WORD: Final = re.compile(r"[a-z0-9]+")
# A sentence ends at . ! or ? followed by whitespace; "3.4" or "vault.toml" do not end one.
_SENTENCE_END: Final = re.compile(r"(?<=[.!?])\s+")


def _stem(word: str) -> str:
    """Crude suffix stripping so "backups"/"backup" and "restoring"/"restore" meet."""
    for suffix in ("ing", "ed", "es", "s", "e"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith("ss"):
                continue
            return word[: -len(suffix)]
    return word


def terms(text: str) -> list[str]:
    """Retrieval terms: lowercase words without stop words, stemmed."""
    # Single letters are mostly the "s" of "token's": noise that matches unrelated sections.
    words = _WORD.findall(text.lower())
    return [_stem(w) for w in words if w not in _STOP_WORDS and (len(w) > 1 or w.isdigit())]


@dataclass(frozen=True)
class Section:
    """One `##` section of one page, ready to score."""

    page: str
    title: str
    sentences: tuple[str, ...]
    weights: dict[str, int]
    length: int

    @property
    def source(self) -> str:
        """The page as it sits in the product's repository."""
        return f"docs/{self.page}.md"

    @property
    def text(self) -> str:
        return " ".join(self.sentences)


def _split_sentences(text: str) -> tuple[str, ...]:
    normalised = " ".join(text.split())
    return tuple(s for s in _SENTENCE_END.split(normalised) if s)


def parse_page(page: str, markdown: str) -> list[Section]:
    """The `##` sections of one page; text before the first `##` is an intro, not an answer."""
    page_title = ""
    sections: list[Section] = []
    title: str | None = None
    body: list[str] = []

    def flush() -> None:
        if title is None:
            return
        sentences = _split_sentences("\n".join(body))
        if not sentences:
            return
        weights: Counter[str] = Counter(terms(" ".join(sentences)))
        for term in terms(title):
            weights[term] += _SECTION_TITLE_WEIGHT
        for term in terms(page_title):
            weights[term] += _PAGE_TITLE_WEIGHT
        sections.append(
            Section(page, title, sentences, dict(weights), length=sum(weights.values()))
        )

    for line in markdown.splitlines():
        if line.startswith("## "):
            flush()
            title, body = line[3:].strip(), []
        elif line.startswith("# "):
            page_title = line[2:].strip()
        elif title is not None:
            body.append(line)
    flush()
    return sections


class Index:
    """BM25 over sections; built once, read-only afterwards (safe to share between threads)."""

    def __init__(self, sections: Sequence[Section]) -> None:
        if not sections:
            raise ValueError("no sections to index")
        self.sections = tuple(sections)
        self._average_length = sum(s.length for s in sections) / len(sections)
        document_frequency: Counter[str] = Counter()
        for section in sections:
            document_frequency.update(section.weights.keys())
        n = len(sections)
        self._idf = {
            term: math.log(1 + (n - df + 0.5) / (df + 0.5))
            for term, df in document_frequency.items()
        }

    def score(self, question: str, section: Section) -> float:
        total = 0.0
        norm = _K1 * (1 - _B + _B * section.length / self._average_length)
        for term in set(terms(question)):
            tf = section.weights.get(term, 0)
            if tf:
                total += self._idf[term] * tf * (_K1 + 1) / (tf + norm)
        return total

    def ranked_pages(self, question: str, demoted: frozenset[str] = frozenset()) -> list[str]:
        """Every page, best first by its best section (ties: the earlier section), as the
        retriever returns its sources; `demoted` pages last."""
        best: dict[str, tuple[float, int]] = {}
        for i, section in enumerate(self.sections):
            key = (-self.score(question, section), i)
            best[section.source] = min(best.get(section.source, key), key)
        order = sorted(best, key=lambda source: best[source])
        return [s for s in order if _page(s) not in demoted] + [
            s for s in order if _page(s) in demoted
        ]

    def best(self, question: str) -> tuple[Section, float]:
        """The best section and its score; ties go to the earlier section (stable)."""
        scored = [(self.score(question, s), i) for i, s in enumerate(self.sections)]
        score, position = max(scored, key=lambda pair: (pair[0], -pair[1]))
        return self.sections[position], score


def _package_files() -> Any:
    return resources.files(__package__ or "golden_gate.example_assistant")


@cache
def default_index() -> Index:
    """The index over the bundled pages (built on first use, then shared)."""
    pages = _package_files().joinpath("pages")
    sections: list[Section] = []
    for entry in sorted(pages.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".md"):
            sections += parse_page(entry.name[: -len(".md")], entry.read_text(encoding="utf-8"))
    return Index(sections)


def golden_path() -> Path:
    """The bundled golden set (24 items; `smoke` marks the pull-request subset)."""
    return Path(str(_package_files().joinpath(GOLDEN_FILE)))


def _check_variant(variant: str) -> str:
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; expected one of {', '.join(VARIANTS)}")
    return variant


def _page(source: str) -> str:
    return source.removeprefix("docs/").removesuffix(".md")


def answer(question: str, variant: str = "baseline", index: Index | None = None) -> dict[str, Any]:
    """The response body for one question: `{"answer": str, "sources": [str]}`, the sources
    being every page, ranked as the retriever ranked them (the answer's page first)."""
    _check_variant(variant)
    index = index or default_index()
    section, score = index.best(question)
    if score < _MIN_SCORE:
        return {"answer": REFUSAL, "sources": []}
    sentences = section.sentences
    cite = True
    if variant == "candidate":
        if section.page in _FIRST_SENTENCE_ONLY:
            sentences = sentences[:1]
        if section.page in _NO_CITATION:
            cite = False
    text = " ".join(sentences)
    if not cite:
        return {"answer": text, "sources": []}
    demoted = _DEMOTED if variant in ("candidate", "retriever") else frozenset()
    sources = index.ranked_pages(question, demoted)
    return {"answer": f"{text}\n\nSource: {section.source}", "sources": sources}


def usage(question: str, text: str) -> dict[str, int]:
    """The tokens a model would have billed, as OpenAI's API says them (`usage-path: usage`):
    a fixed prompt with the retrieved page, the question, and the answer (about 4/3 a word)."""
    return {
        "prompt_tokens": 420 + len(question.split()) * 4 // 3,
        "completion_tokens": len(text.split()) * 4 // 3,
    }


# -- HTTP ------------------------------------------------------------------------------------


class _BadRequest(Exception):
    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status


def read_variant(path: Path) -> str:
    """The `variant` a settings file names (`golden-gate init --example`'s assistant.toml)."""
    import tomllib  # only here: the server alone needs no TOML

    try:
        value = tomllib.loads(path.read_text(encoding="utf-8")).get("variant", "baseline")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{path}: cannot read the example assistant's settings ({exc})") from None
    if value not in VARIANTS:
        raise ValueError(f"{path}: variant must be one of {', '.join(VARIANTS)}, not {value!r}")
    return str(value)


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a hung client must not keep the process (or a test) alive

    def __init__(
        self,
        address: tuple[str, int],
        variant: str,
        index_snapshot: str | None,
        settings: Path | None = None,
    ):
        self._variant = variant
        self.settings = settings
        self.index_snapshot = index_snapshot
        self.index = default_index()  # built before serving: the first request is not slow
        from golden_gate.example_assistant.agent import Conversations

        self.conversations = Conversations()  # the stateful chat's (agent.py)
        super().__init__(address, _Handler)

    @property
    def variant(self) -> str:
        """Read again on every request when a settings file names it: editing the file is the
        example's pull request, with no restart."""
        if self.settings is not None:
            # A half-written file: the last good answer style.
            with contextlib.suppress(ValueError):
                self._variant = read_variant(self.settings)
        return self._variant


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    server_version = "AcmeVaultAssistant/1.0"
    # Headers and body go out in separate writes: without TCP_NODELAY the client's delayed
    # ACK adds ~40 ms to every response.
    disable_nagle_algorithm = True
    timeout = 30  # drop clients that connect and never send a request

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: a demo prints its own progress, and stderr is not a request log

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if path == "/health":
            body: dict[str, Any] = {"status": "ok"}
            if self.server.index_snapshot:
                body["index_snapshot"] = self.server.index_snapshot
            self._send(HTTPStatus.OK, body)
        elif path == "/ask":
            self._send(HTTPStatus.METHOD_NOT_ALLOWED, {"error": "use POST"}, allow="POST")
        else:
            self._send(HTTPStatus.NOT_FOUND, {"error": f"no such path: {path}"})

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        if path == "/health":
            self._send(HTTPStatus.METHOD_NOT_ALLOWED, {"error": "use GET"}, allow="GET")
            return
        if path not in ("/ask", "/agent", "/chat"):
            self._send(HTTPStatus.NOT_FOUND, {"error": f"no such path: {path}"})
            return
        try:
            question = self._question()
        except _BadRequest as exc:
            self._send(exc.status, {"error": str(exc)})
            return
        if path != "/ask":  # the agent and chat modes (agent.py)
            self._send(HTTPStatus.OK, self._agent_or_chat(path, question))
            return
        body = answer(question, self.server.variant, self.server.index)
        self._send(HTTPStatus.OK, {**body, "usage": usage(question, body["answer"])})

    def _agent_or_chat(self, path: str, question: str) -> dict[str, Any]:
        from golden_gate.example_assistant import agent

        variant, index = self.server.variant, self.server.index

        def respond(text: str, style: str) -> dict[str, Any]:
            return answer(text, style, index)

        if path == "/agent":
            return agent.agent_answer(question, variant, index, respond, _MIN_SCORE)
        conversation = self._document.get("conversation_id")
        if isinstance(conversation, str) and conversation:
            history = self.server.conversations.history(conversation)
        else:
            conversation, history = None, agent.read_history(self._document)
        body = agent.chat_answer(question, history, variant, index, respond, _MIN_SCORE)
        if conversation is not None:
            said = [
                {"role": "user", "content": question},
                {"role": "assistant", "content": body["answer"]},
            ]
            self.server.conversations.add(conversation, said)
            body["conversation_id"] = conversation
        return body

    def _question(self) -> str:
        length_header = self.headers.get("Content-Length")
        if length_header is None:
            raise _BadRequest(HTTPStatus.LENGTH_REQUIRED, "Content-Length is required")
        try:
            length = int(length_header)
        except ValueError:
            raise _BadRequest(HTTPStatus.BAD_REQUEST, "Content-Length is not a number") from None
        if length < 0:
            raise _BadRequest(HTTPStatus.BAD_REQUEST, "Content-Length is negative")
        if length > MAX_BODY_BYTES:
            raise _BadRequest(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"body over {MAX_BODY_BYTES} bytes"
            )
        raw = self.rfile.read(length)
        try:
            document = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise _BadRequest(HTTPStatus.BAD_REQUEST, f"body is not JSON: {exc}") from None
        self._document = document if isinstance(document, dict) else {}
        text = document.get("text") if isinstance(document, dict) else None
        if not isinstance(text, str) or not text.strip():
            raise _BadRequest(
                HTTPStatus.BAD_REQUEST, 'expected a JSON object with a non-empty string "text"'
            )
        return text

    def _send(self, status: HTTPStatus, body: dict[str, Any], allow: str | None = None) -> None:
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        if allow:
            self.send_header("Allow", allow)
        self.end_headers()
        self.wfile.write(data)


def _make_server(
    host: str, port: int, variant: str, index_snapshot: str | None, settings: Path | None = None
) -> _Server:
    _check_variant(variant)
    if index_snapshot is None:
        index_snapshot = os.environ.get("INDEX_SNAPSHOT") or None
    return _Server((host, port), variant, index_snapshot, settings)


class RunningAssistant:
    """A server running in a daemon thread; `stop()` (or leaving the `with`) shuts it down."""

    def __init__(self, server: _Server) -> None:
        self._server = server
        # A short poll keeps stop() quick: shutdown() waits for the loop's next poll.
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.02},
            name="example-assistant",
            daemon=True,
        )
        self._thread.start()
        self._stopped = False

    @property
    def variant(self) -> str:
        return self._server.variant

    @property
    def conversations(self) -> dict[str, list[dict[str, str]]]:
        """The stateful chat's conversations by id (agent.py)."""
        return self._server.conversations.messages

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def host(self) -> str:
        host = str(self._server.server_address[0])
        # A wildcard bind is reachable on loopback; the wildcard itself is not an address.
        return "127.0.0.1" if host in ("0.0.0.0", "") else host

    @property
    def url(self) -> str:
        """The base URL, without a trailing slash: POST `{url}/ask`, GET `{url}/health`."""
        return f"http://{self.host}:{self.port}"

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def start(
    variant: str = "baseline",
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    index_snapshot: str | None = None,
) -> RunningAssistant:
    """Start the assistant in this process (port 0: any free port; see `.url`).

    `index_snapshot` defaults to the `INDEX_SNAPSHOT` environment variable; when set, `/health`
    echoes it so a run can record which index it was served from.
    """
    return RunningAssistant(_make_server(host, port, variant, index_snapshot))


def _terminate(signum: int, frame: FrameType | None) -> None:
    # As PID 1 in a container, SIGTERM is ignored unless handled: `docker stop` would then
    # wait its full grace period and SIGKILL. Treat it like Ctrl-C.
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m golden_gate.example_assistant [--host H] [--port P] [--variant V]`."""
    parser = argparse.ArgumentParser(
        prog="python -m golden_gate.example_assistant",
        description="Serve the Acme Vault documentation assistant (the golden-gate demo target).",
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default: %(default)s)"
    )
    parser.add_argument("--port", type=int, default=8080, help="port (default: %(default)s)")
    parser.add_argument(
        "--variant",
        choices=VARIANTS,
        default=os.environ.get("ASSISTANT_VARIANT") or "baseline",
        help="baseline, or candidate (a simulated regression); default: $ASSISTANT_VARIANT "
        "or baseline",
    )
    parser.add_argument(
        "--settings",
        type=Path,
        default=None,
        help="a TOML file whose `variant` is read again on every request (it overrides --variant)",
    )
    args = parser.parse_args(argv)
    if args.variant not in VARIANTS:  # argparse does not check a default from the environment
        parser.error(f"ASSISTANT_VARIANT must be one of {', '.join(VARIANTS)}")
    if args.settings is not None:
        try:
            args.variant = read_variant(args.settings)
        except ValueError as exc:
            parser.error(str(exc))
    try:
        server = _make_server(args.host, args.port, args.variant, None, args.settings)
    except OSError as exc:
        print(f"error: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    if threading.current_thread() is threading.main_thread():  # signal() works only there
        signal.signal(signal.SIGTERM, _terminate)
    host, port = server.server_address[:2]
    print(f"example assistant ({args.variant}) listening on http://{host}:{port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
