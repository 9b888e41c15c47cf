"""The report page at scale: a 100,000-item report's page written, opened and filtered.

    .venv/bin/python bench/report_page.py [--items 100000] [--regressions 2000] [--dir DIR]

Makes bench/core_scale.py's baseline and candidate (same shape: answers of about 300
characters, checks, a judge comment, 2 % regressed), then times `golden-gate view` (a process
of its own, as a user runs it), and in Debian's headless Chromium (over its DevTools protocol,
tests/browser.py): opening the page until its table is drawn, filtering to the regressed items,
until every item's search text is made (in slices, after the first page is drawn), a free-text
search over every item, opening one item (its word diff), and the next page. Prints
one JSON object. Nothing in the test suite asserts these timings.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.core_scale import write  # noqa: E402
from tests.browser import browser  # noqa: E402

# Each expression returns the milliseconds the page took, measured inside it.
STATUS = """(() => { const t = performance.now(); const s = document.getElementById('f-status');
  s.value = 'regressed'; s.dispatchEvent(new Event('change')); return performance.now() - t; })()"""
SEARCH = """new Promise(done => { const s = document.getElementById('f-search');
  const count = document.getElementById('count'); const before = count.textContent;
  s.value = QUERY; const t = performance.now(); s.dispatchEvent(new Event('input'));
  const poll = () => count.textContent !== before ? done(performance.now() - t - 150)
    : setTimeout(poll, 5); poll(); })"""
OPEN = """(() => { const t = performance.now();
  document.querySelector('#items tr.row button').click(); return performance.now() - t; })()"""
NEXT = """(() => { const t = performance.now(); document.getElementById('next').click();
  return performance.now() - t; })()"""


def _cpu(after: resource.struct_rusage, before: resource.struct_rusage) -> float:
    return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--regressions", type=int, default=2_000)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    directory = args.dir or Path(tempfile.mkdtemp(prefix="gg-page-bench-"))
    directory.mkdir(parents=True, exist_ok=True)
    if not (directory / "report.json").is_file():
        write(directory, args.items, args.regressions)
    page = directory / "report.html"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "golden_gate", "view", str(directory / "report.json"),
         "--baseline", str(directory / "baseline.json"), "-o", str(page)],
        check=True, capture_output=True,
    )  # fmt: skip
    result: dict[str, object] = {
        "items": args.items,
        "view_s": round(time.perf_counter() - start, 2),
        # CPU seconds (user + system) of the view process: what a busy machine does not inflate
        "view_cpu_s": round(_cpu(resource.getrusage(resource.RUSAGE_CHILDREN), before), 2),
        "view_max_rss_mib": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024),
        "page_mib": round(page.stat().st_size / 2**20, 1),
        "report_mib": round((directory / "report.json").stat().st_size / 2**20, 1),
    }
    with browser() as tab:
        start = time.perf_counter()
        tab.open(page.as_uri())
        tab.wait("document.body.dataset.ready === '1'", timeout=300)
        result["open_s"] = round(time.perf_counter() - start, 2)
        result["filter_regressed_ms"] = round(tab.eval(STATUS))
        tab.wait("document.body.dataset.searchReady === '1'", timeout=300)
        result["search_ready_s"] = round(time.perf_counter() - start, 2)
        result["shown_after_filter"] = tab.eval("document.getElementById('count').textContent")
        tab.eval("(() => { const s = document.getElementById('f-status'); s.value = '';"
                 " s.dispatchEvent(new Event('change')); })()")  # fmt: skip
        result["first_search_ms"] = round(tab.eval(SEARCH.replace("QUERY", "'refund window'")))
        result["second_search_ms"] = round(tab.eval(SEARCH.replace("QUERY", "'approves them'")))
        result["open_item_ms"] = round(tab.eval(OPEN))
        result["next_page_ms"] = round(tab.eval(NEXT))
        heap = tab.send("Runtime.getHeapUsage")
        result["js_heap_mib"] = round(heap["usedSize"] / 2**20)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
