"""The example assistant's answers: the bundled pages split into `##` sections, every section
scored against the question with BM25 (section titles weigh more), the best one answered with
and its page cited; and what each variant changes (server.py serves them over HTTP).
Standard library only."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Final

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
MIN_SCORE: Final = 3.5

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


def check_variant(variant: str) -> str:
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; expected one of {', '.join(VARIANTS)}")
    return variant


def _page(source: str) -> str:
    return source.removeprefix("docs/").removesuffix(".md")


def answer(question: str, variant: str = "baseline", index: Index | None = None) -> dict[str, Any]:
    """The response body for one question: `{"answer": str, "sources": [str]}`, the sources
    being every page, ranked as the retriever ranked them (the answer's page first)."""
    check_variant(variant)
    index = index or default_index()
    section, score = index.best(question)
    if score < MIN_SCORE:
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
