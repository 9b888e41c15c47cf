"""The retrieval layer: where the assistant ranked each item's expected source, no model call.

From the ordered sources an answer returns (`sources-path`) and the item's `reference_urls`:
per run the rank of each expected source among the distinct pages returned (1 = first),
per item hit@k (the share of runs with an expected source in the top k), reciprocal rank and
recall@k, and for the gate a floor on hit@k and the paired sign-flip test on per-item hit@k
against the baseline (core/sign_flip.py, as for pass rates). Pure: records in, records out.

URLs are compared after `normalise_url` (docs/golden-sets.md#how-sources-are-matched).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from urllib.parse import urlsplit

from pydantic import BaseModel, Field

from golden_gate.core.report import RetrievalFigures, RetrievalItem, RetrievalRecord
from golden_gate.core.sign_flip import paired_sign_flip_test
from golden_gate.core.stats import floor_bound

DEFAULT_K = 5
# A page's file and its rendered URL are one page: `docs/x.md` is `/docs/x/` is `docs/x.html`.
PAGE_SUFFIXES = (".md", ".mdx", ".markdown", ".html", ".htm", ".rst")
INDEX_PAGES = frozenset({"index", "readme", "_index"})  # `docs/index.md` is `docs/`
_DEFAULT_PORTS = {"http": 80, "https": 443}
_UNRESERVED = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


# -- URL normalisation -------------------------------------------------------------------------


def _percent(match: re.Match[str]) -> str:
    """RFC 3986: an escaped unreserved character is that character; other escapes upper-case."""
    char = chr(int(match.group(1), 16))
    return char if char in _UNRESERVED_CHARS else "%" + match.group(1).upper()


def _tidy(segments: list[str]) -> list[str]:
    """Path segments without `.`/`..`, page suffixes or a closing index page."""
    out: list[str] = []
    for segment in (s.strip() for s in segments):
        if segment in ("", "."):
            continue
        if segment == "..":
            if out:
                out.pop()
            continue
        out.append(segment)
    while out:
        last = out[-1]
        lowered = last.lower()
        suffix = next((s for s in PAGE_SUFFIXES if lowered.endswith(s) and len(last) > len(s)), "")
        if suffix:
            out[-1] = last[: -len(suffix)]
        elif lowered in INDEX_PAGES:
            out.pop()
        else:
            break
    return out


def source_key(text: str) -> tuple[str | None, str]:
    """(host or None, path): what two spellings of one page have in common.

    The fragment and query string are dropped (`#anchor` is a place on the page; a query
    string is almost always tracking); scheme and host are lower-case, a default port is
    dropped; the path keeps its case, loses `./`, `..`, repeated and closing slashes, a page
    suffix (.md, .html, …) and a closing index page (index, README); escapes of unreserved
    characters are decoded. A source without a host matches the same path on any host.
    """
    text = text.split("#", 1)[0].split("?", 1)[0].strip()
    text = text.replace("\\", "/").replace(" ", "%20")
    text = _UNRESERVED.sub(_percent, text)
    host: str | None = None
    path = text
    if text.startswith("//") or re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", text):
        parts = urlsplit(text)
        scheme = parts.scheme.lower()
        host = (parts.hostname or "").rstrip(".")
        try:
            port = parts.port
        except ValueError:
            port = None
        if port is not None and port != _DEFAULT_PORTS.get(scheme):
            host += f":{port}"
        if scheme not in ("", "http", "https"):
            host = f"{scheme}://{host}"
        path = parts.path
    return host, "/".join(_tidy(path.split("/")))


def normalise_url(text: str) -> str:
    """One spelling of a page: `path`, or `//host/path` when it names a host."""
    host, path = source_key(text)
    if host is None:
        return path
    return f"//{host}/{path}" if "://" not in host else f"{host}/{path}"


def same_source(a: tuple[str | None, str], b: tuple[str | None, str]) -> bool:
    """One page: the same path, and the same host where both name one."""
    return a[1] == b[1] and (a[0] is None or b[0] is None or a[0] == b[0])


def ranks(expected: Sequence[str], sources: Sequence[str]) -> list[int | None]:
    """Each expected source's rank among the distinct pages returned (1 = first), None if
    absent. Several chunks of one page are one page: its first place counts."""
    pages: list[tuple[str | None, str]] = []
    for source in sources:
        key = source_key(source)
        if not any(same_source(key, seen) for seen in pages):
            pages.append(key)
    found: list[int | None] = []
    for url in expected:
        want = source_key(url)
        found.append(next((i + 1 for i, page in enumerate(pages) if same_source(want, page)), None))
    return found


# -- per item ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ItemScore:
    """One item's retrieval over its runs that returned sources."""

    hit: Fraction  # share of runs with an expected source in the top k
    reciprocal_rank: float  # mean over runs of 1 / the best rank (0 when none was returned)
    recall: float  # mean over runs of the share of expected sources in the top k
    rank: int | None  # the best rank of an expected source, median run (None: not returned)
    runs: int


def _best(run: Sequence[int | None]) -> int | None:
    found = [r for r in run if r is not None]
    return min(found) if found else None


def item_score(item: RetrievalItem, k: int) -> ItemScore | None:
    """None for an item no run of which returned sources."""
    runs = [run for run in item.ranks if run]
    if not runs:
        return None
    best = [_best(run) for run in runs]
    hits = sum(1 for b in best if b is not None and b <= k)
    rr = sum(1 / b for b in best if b is not None) / len(runs)
    recall = sum(sum(1 for r in run if r is not None and r <= k) / len(run) for run in runs)
    # The median run's best rank; never returned sorts last (a median of None is None).
    ordered = sorted(best, key=lambda b: (b is None, b or 0))
    return ItemScore(
        hit=Fraction(hits, len(runs)),
        reciprocal_rank=rr,
        recall=recall / len(runs),
        rank=ordered[(len(ordered) - 1) // 2],
        runs=len(runs),
    )


def scores(record: RetrievalRecord, k: int) -> dict[str, ItemScore]:
    """Each measured item's score, in the record's order."""
    found = {item_id: item_score(item, k) for item_id, item in record.items.items()}
    return {item_id: s for item_id, s in found.items() if s is not None}


def figures(item_scores: Iterable[ItemScore]) -> RetrievalFigures | None:
    """Mean hit@k, MRR and recall@k over items; None for no items."""
    listed = list(item_scores)
    if not listed:
        return None
    n = len(listed)
    return RetrievalFigures(
        items=n,
        hit_rate=float(sum((s.hit for s in listed), Fraction(0)) / n),
        mrr=sum(s.reciprocal_rank for s in listed) / n,
        recall=sum(s.recall for s in listed) / n,
    )


def by_tag(
    item_scores: Mapping[str, ItemScore], tags: Mapping[str, Sequence[str]]
) -> dict[str, RetrievalFigures]:
    grouped: dict[str, list[ItemScore]] = {}
    for item_id, score in item_scores.items():
        for tag in tags.get(item_id, ()):
            grouped.setdefault(tag, []).append(score)
    return {tag: f for tag, group in sorted(grouped.items()) if (f := figures(group)) is not None}


def record(
    observed: Iterable[tuple[str, Sequence[str], Sequence[str], Sequence[Sequence[str] | None]]],
    k: int,
) -> RetrievalRecord:
    """The report's record from (id, tags, reference_urls, each run's sources or None)."""
    items: dict[str, RetrievalItem] = {}
    tags: dict[str, Sequence[str]] = {}
    without: list[str] = []
    for item_id, item_tags, expected, runs in observed:
        if not expected:
            continue  # nothing to rank: the layer does not judge this item
        returned = [ranks(expected, run) for run in runs if run is not None]
        if not returned:
            without.append(item_id)
        items[item_id] = RetrievalItem(expected=list(expected), ranks=returned)
        tags[item_id] = item_tags
    result = RetrievalRecord(k=k, items=items, without_sources=without)
    summarise(result, tags)
    return result


def summarise(result: RetrievalRecord, tags: Mapping[str, Sequence[str]]) -> None:
    """Fill the record's overall and per-tag figures at its k."""
    measured = scores(result, result.k)
    result.overall = figures(measured.values())
    result.by_tag = by_tag(measured, tags)


# -- the gate ----------------------------------------------------------------------------------


class RankChange(BaseModel):
    """An item whose hit@k changed: its best rank before and after (None: not returned)."""

    id: str
    expected: list[str] = Field(default_factory=list)  # the item's reference_urls
    before: int | None
    after: int | None
    hit_before: float
    hit_after: float


class RetrievalComparison(BaseModel):
    """The paired sign-flip test on per-item hit@k over items measured in both reports."""

    shared: int
    p_value: float = 1.0
    method: str = "sign test"
    units: int = 0
    net_drop: float = 0.0
    significant: bool = False
    fell: list[RankChange] = Field(default_factory=list)  # hit@k lower than the baseline's
    rose: list[RankChange] = Field(default_factory=list)


class RetrievalGate(BaseModel):
    """What the retrieval layer found and decided; `measured` False: it did not gate."""

    k: int
    measured: bool
    notes: list[str] = Field(default_factory=list)
    overall: RetrievalFigures | None = None
    baseline: RetrievalFigures | None = None
    by_tag: dict[str, RetrievalFigures] = Field(default_factory=dict)
    lower_bound: float | None = None  # of hit@k, for the floor
    floor: float = 0.0
    below_floor: bool = False
    comparison: RetrievalComparison | None = None
    without_sources: list[str] = Field(default_factory=list)


NO_SOURCES = (
    "this run recorded no sources (set `sources-path` to where the response lists them): "
    "retrieval is not measured and does not gate"
)
NO_BASE_DATA = (
    "the baseline has no retrieval data (made without `sources-path`, or by an older "
    "golden-gate): retrieval is not compared with it"
)


def gate(
    candidate: RetrievalRecord | None,
    baseline: RetrievalRecord | None,
    *,
    tags: Mapping[str, Sequence[str]],
    clusters: Mapping[str, str],
    own: Iterable[str] = (),
    k: int = DEFAULT_K,
    floor: float = 0.0,
    alpha: float = 0.05,
    min_drop: float = 0.02,
    confidence: float = 0.95,
) -> RetrievalGate | None:
    """The retrieval layer's part of the gate; None when neither report has retrieval data and
    no retrieval floor is set (then nothing is said: the layer is not in use)."""
    if candidate is None and baseline is None and floor <= 0:
        return None
    result = RetrievalGate(k=k, measured=False, floor=floor)
    base_scores = scores(baseline, k) if baseline is not None else {}
    result.baseline = figures(base_scores.values())  # over the items this run measured, below
    if candidate is None:
        result.notes.append(NO_SOURCES)
        return result
    result.without_sources = list(candidate.without_sources)
    cand_scores = scores(candidate, k)
    if not cand_scores:
        result.notes.append(
            "no selected item has `reference_urls`: retrieval is not measured and does not gate"
            if not candidate.items
            else "no item's answer returned sources at `sources-path`: retrieval is not "
            "measured and does not gate"
        )
        return result
    result.measured = True
    result.overall = figures(cand_scores.values())
    # The baseline's figures on this run's items, so the two columns speak of the same items.
    result.baseline = figures(s for i, s in base_scores.items() if i in cand_scores)
    result.by_tag = by_tag(cand_scores, tags)
    ids = list(cand_scores)
    bound = floor_bound(
        [float(cand_scores[i].hit) for i in ids],
        [clusters.get(i) for i in ids],
        confidence=confidence,
    )
    result.lower_bound = bound.lower
    result.below_floor = floor > 0 and bound.lower < floor
    if baseline is None:
        result.notes.append(NO_BASE_DATA)
        return result
    result.comparison = compare(
        cand_scores,
        base_scores,
        expected={i: item.expected for i, item in candidate.items.items()},
        clusters=clusters,
        own=set(own),
        alpha=alpha,
        min_drop=min_drop,
    )
    units = result.comparison.units
    if alpha > 0 and units > 0 and 0.5**units >= alpha:
        result.notes.append(
            f"hit@{k} changed for only {units} item(s) or cluster(s): with so few the paired "
            f"test can never reach significance at alpha {alpha:g}, so 'no retrieval "
            "regression' is not evidence of none"
        )
    return result


def compare(
    cand: Mapping[str, ItemScore],
    base: Mapping[str, ItemScore],
    *,
    expected: Mapping[str, Sequence[str]] | None = None,
    clusters: Mapping[str, str],
    own: set[str],
    alpha: float,
    min_drop: float,
) -> RetrievalComparison:
    """d = hit_cand − hit_base per shared item (a cluster's summed), tested one-sided."""
    shared = [i for i in cand if i in base and i not in own]
    totals: dict[str, Fraction] = {}
    fell: list[RankChange] = []
    rose: list[RankChange] = []
    for item_id in shared:
        after, before = cand[item_id], base[item_id]
        d = after.hit - before.hit
        if d == 0:
            continue
        change = RankChange(
            id=item_id,
            expected=list((expected or {}).get(item_id, ())),
            before=before.rank,
            after=after.rank,
            hit_before=float(before.hit),
            hit_after=float(after.hit),
        )
        (fell if d < 0 else rose).append(change)
        cluster = clusters.get(item_id)
        unit = item_id if cluster is None else "\0cluster:" + cluster
        totals[unit] = totals.get(unit, Fraction(0)) + d
    if not shared:
        return RetrievalComparison(shared=0)
    test = paired_sign_flip_test(list(totals.values()))
    net = float(-sum(totals.values(), Fraction(0)) / len(shared))
    return RetrievalComparison(
        shared=len(shared),
        p_value=test.p_value,
        method=test.method,
        units=test.units,
        net_drop=net,
        significant=alpha > 0 and test.p_value < alpha and net > min_drop,
        fell=sorted(fell, key=lambda c: c.id),
        rose=sorted(rose, key=lambda c: c.id),
    )


def rank_text(rank: int | None) -> str:
    """`3`, or `not returned`."""
    return "not returned" if rank is None else str(rank)
