"""Start-up and the gate at scale, for this tree or for a git ref, in fresh processes.

    .venv/bin/python bench/core_speed.py [--before REF ...] [--quick] [--runs N]

Three figures, each a median of fresh processes (`python -m golden_gate` with the tree's `src`
first on the path, so a ref checked out with `git worktree add` runs with this venv). With
several trees their runs alternate (one of each, then again), so a change in the machine's load
during the run weighs on every tree alike:

- start-up to first request: `golden-gate eval` with the LLM judge (the bench's stand-in
  OpenAI-compatible judge) against the bench's stand-in assistant, from the process's spawn
  to the first request arriving at the assistant;
- `gate` on a small pair: the demo's report against the bundled baseline (14 items), wall and
  CPU (user + system);
- `gate` on the 100k pair (bench/core_scale.py's reports, written once, then again compact and
  with every object's keys shuffled): gate, comment and job summary to files, wall, CPU and
  peak RSS (`os.wait4`'s rusage: the process and any child it waited for), and the sha256 of
  what it printed and wrote, so trees and shapes can be compared;
- the judge's fixed costs: `golden-gate eval` of `--judge-items` items (assistant 100 ms, the
  stand-in judge 200 ms) at concurrency 8, 32 and 128: from spawn to the first judge request,
  from the last verdict sent to the process's exit (the tail), and CPU per judged item.

A tree without `gate --comment-out` (before the slim view) runs the same work through its
library: load both reports, gate, print as `gate` prints, render the comment and summary.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PAIRS = ROOT / "tests" / "data" / "gate_pairs"
JUDGE_MODEL = "openai:gpt-4.1-mini"
DUMMY_KEY = "sk-bench-not-a-real-key"
ITEMS = 100_000
REGRESSIONS = 2_000

# The work `gate --comment-out --summary-out` does, through the library of a tree without it.
LIBRARY_GATE = """
import sys
from pathlib import Path
from golden_gate import cli
from golden_gate.gate import GateSettings, evaluate_gate
from golden_gate.render import render_comment, render_summary
from golden_gate.report import load_report
report, baseline = load_report(sys.argv[1]), load_report(sys.argv[2])
gate = evaluate_gate(report, baseline, GateSettings())
cli._print_gate(gate)
Path(sys.argv[3]).write_text(render_comment(report, gate, baseline=baseline), encoding="utf-8")
Path(sys.argv[4]).write_text(render_summary(report, gate, baseline=baseline), encoding="utf-8")
"""


@contextlib.contextmanager
def checkout(ref: str | None) -> Iterator[Path]:
    """This tree, or `ref` checked out in a temporary worktree (removed afterwards)."""
    if ref is None:
        yield ROOT
        return
    with tempfile.TemporaryDirectory(prefix="golden-gate-ref-") as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(tree), ref],
            check=True,
        )
        try:
            yield tree
        finally:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False
            )


def _env(tree: Path, **extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(tree / "src"), **extra}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _golden_gate(tree: Path) -> list[str]:
    return [sys.executable, "-m", "golden_gate"]


def _run(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, int, int, str]:
    """Wall seconds, exit code, peak RSS (KiB, the process and its waited children), stdout."""
    wall, code, peak, _, stdout = _run_cpu(argv, env, cwd)
    return wall, code, peak, stdout


def _run_cpu(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, int, int, float, str]:
    """`_run`, with the CPU seconds (user + system) of the process and its waited children."""
    with tempfile.TemporaryFile("w+") as out:
        started = time.perf_counter()
        proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        cpu = usage.ru_utime + usage.ru_stime
        return wall, proc.returncode, usage.ru_maxrss, cpu, out.read()


# -- start-up to first request --------------------------------------------------------------


class _Assistant(BaseHTTPRequestHandler):
    """Answers every question at once; notes when the first request arrived."""

    first: float | None = None
    lock = threading.Lock()

    def do_POST(self) -> None:
        with _Assistant.lock:
            if _Assistant.first is None:
                _Assistant.first = time.perf_counter()
        self.rfile.read(int(self.headers.get("content-length") or 0))
        body = json.dumps({"answer": "The handbook states fact 1.", "sources": []}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def first_request(trees: list[Path], runs: int) -> list[dict[str, Any]]:
    """Seconds from spawning `golden-gate eval` (LLM judge) to its first assistant request."""
    from tests.fakes.judge_server import JudgeServer

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Assistant)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    firsts: list[list[float]] = [[] for _ in trees]
    walls: list[list[float]] = [[] for _ in trees]
    try:
        with JudgeServer() as judge, tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            golden = work / "golden.jsonl"
            lines = [
                {"id": f"q{i}", "question": f"Q{i}?", "reference_key_points": ["fact 1"]}
                for i in range(20)
            ]
            golden.write_text("".join(json.dumps(line) + "\n" for line in lines))
            for _ in range(runs):
                for n, tree in enumerate(trees):
                    argv = [
                        *_golden_gate(tree), "eval", str(golden), "--url", url,
                        "--judge-model", JUDGE_MODEL, "--judge-base-url", judge.base_url,
                        "--no-cache", "--quiet", "-o", str(work / "report.json"),
                    ]  # fmt: skip
                    env = _env(tree, OPENAI_API_KEY=DUMMY_KEY)
                    _Assistant.first = None
                    started = time.perf_counter()
                    done = subprocess.run(argv, env=env, cwd=work, capture_output=True, check=False)
                    walls[n].append(time.perf_counter() - started)
                    if done.returncode != 0 or _Assistant.first is None:
                        raise RuntimeError(f"eval failed: {done.stderr.decode()[-500:]}")
                    firsts[n].append(_Assistant.first - started)
    finally:
        server.shutdown()
        server.server_close()
    return [
        {"first_request_s": statistics.median(f), "eval_s": statistics.median(w)}
        for f, w in zip(firsts, walls, strict=True)
    ]


# -- gate -------------------------------------------------------------------------------------


def _has_gate_files(tree: Path) -> bool:
    """`gate --comment-out --summary-out` came with the slim view (slim.py, since step 15 in
    golden_gate/core/)."""
    package = tree / "src" / "golden_gate"
    return (package / "slim.py").is_file() or (package / "core" / "slim.py").is_file()


def gate_small(trees: list[Path], runs: int) -> list[dict[str, Any]]:
    """`golden-gate gate` on the demo's report and the bundled baseline: wall and CPU seconds."""
    pair = [str(PAIRS / "demo" / "report.json"), str(PAIRS / "demo" / "baseline.json")]
    walls: list[list[float]] = [[] for _ in trees]
    cpus: list[list[float]] = [[] for _ in trees]
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(runs):
            for n, tree in enumerate(trees):
                argv = [*_golden_gate(tree), "gate", *pair]
                wall, _, _, cpu, _ = _run_cpu(argv, _env(tree), Path(tmp))
                walls[n].append(wall)
                cpus[n].append(cpu)
    return [
        {"small_s": statistics.median(w), "small_walls": w, "small_cpu_s": statistics.median(c)}
        for w, c in zip(walls, cpus, strict=True)
    ]


def write_pair(directory: Path, items: int = ITEMS, regressions: int = REGRESSIONS) -> Path:
    """bench/core_scale.py's baseline and candidate, written once into `directory`."""
    if not (directory / "report.json").is_file():
        subprocess.run(
            [sys.executable, str(ROOT / "bench" / "core_scale.py"), "write", str(directory),
             "--items", str(items), "--regressions", str(regressions)],
            check=True,
        )  # fmt: skip
    return directory


SHAPES = {"indented": "", "compact": ".compact", "shuffled keys": ".shuffled"}


def write_shapes(pair: Path) -> None:
    """The pair again, compact (as `json.dump` without indent writes it) and with every
    object's keys shuffled (indented by one, as golden-gate writes). In a process of its own:
    a child's peak RSS (os.wait4) counts this process's size when it was forked."""
    if not all((pair / f"{n}.shuffled.json").is_file() for n in ("report", "baseline")):
        subprocess.run([sys.executable, __file__, "--write-shapes", str(pair)], check=True)


def _write_shapes(pair: Path) -> None:
    rng = random.Random(35)

    def shuffled(value: Any) -> Any:
        if isinstance(value, dict):
            keys = list(value)
            rng.shuffle(keys)
            return {key: shuffled(value[key]) for key in keys}
        if isinstance(value, list):
            return [shuffled(child) for child in value]
        return value

    for name in ("report", "baseline"):
        data = json.loads((pair / f"{name}.json").read_text(encoding="utf-8"))
        compact = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
        (pair / f"{name}.compact.json").write_text(compact, encoding="utf-8")
        del compact
        text = json.dumps(shuffled(data), indent=1, ensure_ascii=False)
        (pair / f"{name}.shuffled.json").write_text(text, encoding="utf-8")


def gate_large(trees: list[Path], pair: Path, runs: int, shape: str = "") -> list[dict[str, Any]]:
    """Gate, comment and summary on a large pair: wall, peak RSS and what came out."""
    walls: list[list[float]] = [[] for _ in trees]
    cpus: list[list[float]] = [[] for _ in trees]
    peaks: list[list[float]] = [[] for _ in trees]
    outputs: list[set[tuple[str, ...]]] = [set() for _ in trees]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        comment, summary = work / "comment.md", work / "summary.md"
        report, baseline = str(pair / f"report{shape}.json"), str(pair / f"baseline{shape}.json")
        for _ in range(runs):
            for n, tree in enumerate(trees):
                if _has_gate_files(tree):
                    argv = [*_golden_gate(tree), "gate", report, baseline]
                    argv += ["--comment-file", str(comment), "--summary-file", str(summary)]
                else:
                    files = [report, baseline, str(comment), str(summary)]
                    argv = [sys.executable, "-c", LIBRARY_GATE, *files]
                wall, code, peak, cpu, stdout = _run_cpu(argv, _env(tree), work)
                if code not in (0, 1) or not stdout:  # a crash exits 1 too, and prints nothing
                    raise RuntimeError(f"gate exited {code}")
                walls[n].append(wall)
                cpus[n].append(cpu)
                peaks[n].append(peak / 1024)
                texts = (stdout, comment.read_text(), summary.read_text())
                outputs[n].add(tuple(hashlib.sha256(t.encode()).hexdigest() for t in texts))
    return [
        {
            "large_s": statistics.median(w),
            "large_walls": w,
            "large_cpu_s": statistics.median(c),
            "large_peak_mib": max(p),
            "outputs": sorted(o),
        }
        for w, c, p, o in zip(walls, cpus, peaks, outputs, strict=True)
    ]


def measure(
    trees: list[Path],
    pair: Path,
    *,
    runs: int,
    judge_items: int,
    gate_only: int = 0,
    judge_only: bool = False,
) -> list[dict[str, Any]]:
    """Every figure for each tree, their runs alternating; the first `gate_only` trees (the
    seed, whose commands differ) run the large gate only."""
    results: list[dict[str, Any]] = [{} for _ in trees]
    full = trees[gate_only:]
    if judge_only:
        _judge_figures(full, results, judge_items, runs)
        return results
    for parts in (first_request(full, runs), gate_small(full, runs)):
        for result, part in zip(results[gate_only:], parts, strict=True):
            result.update(part)
    for label, shape in SHAPES.items():
        for result, part in zip(results, gate_large(trees, pair, runs, shape), strict=True):
            result["shapes"] = {**result.get("shapes", {}), label: part}
    if judge_items:
        _judge_figures(full, results[gate_only:], judge_items, runs)
    return results


def _judge_figures(trees: list[Path], results: list[dict[str, Any]], items: int, runs: int) -> None:
    for concurrency in CONCURRENCIES:
        parts = judge_costs(trees, items, concurrency, max(1, runs // 2))
        for result, part in zip(results, parts, strict=True):
            result["judge"] = {**result.get("judge", {}), concurrency: part}
    # A pull request's subset: PR_ITEMS questions at once, start to exit.
    for result, part in zip(results, judge_costs(trees, PR_ITEMS, PR_ITEMS, runs), strict=True):
        result["pr_subset_s"] = part["wall_s"]


# -- the judge's fixed costs ------------------------------------------------------------------

CONCURRENCIES = (8, 32, 128)
ASSISTANT_S, JUDGE_S = 0.1, 0.2
PR_ITEMS = 30


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # the listen backlog: read when the server binds, not after


class _SlowAssistant(_Assistant):
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers and tests/fakes keep it

    def do_POST(self) -> None:
        time.sleep(ASSISTANT_S)
        super().do_POST()


def judge_costs(trees: list[Path], items: int, concurrency: int, runs: int) -> list[dict[str, Any]]:
    """`eval` of `items` items with the LLM judge: spawn to first judge request, last verdict
    to exit, CPU per judged item (medians)."""
    from tests.fakes.judge_server import JudgeServer

    class Timed(JudgeServer):
        def reply(self, body: dict[str, Any], behaviour: Any) -> dict[str, Any]:
            now = time.perf_counter()
            with self._lock:
                self.times = [*getattr(self, "times", []), now]
            return super().reply(body, behaviour)

    server = _Server(("127.0.0.1", 0), _SlowAssistant)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    rows: list[dict[str, list[float]]] = [
        {"first": [], "tail": [], "cpu": [], "wall": []} for _ in trees
    ]
    try:
        with Timed(latency_s=JUDGE_S) as judge, tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            golden = work / "golden.jsonl"
            lines = [
                {"id": f"q{i}", "question": f"Q{i}?", "reference_key_points": ["fact 1"]}
                for i in range(items)
            ]
            golden.write_text("".join(json.dumps(line) + "\n" for line in lines))
            for _ in range(runs):
                for n, tree in enumerate(trees):
                    argv = [
                        *_golden_gate(tree), "eval", str(golden), "--url", url,
                        "--judge-model", JUDGE_MODEL, "--judge-base-url", judge.base_url,
                        "--no-cache", "--quiet", "-o", str(work / "report.json"),
                        "--concurrency", str(concurrency),
                        "--judge-concurrency", str(concurrency),
                    ]  # fmt: skip
                    judge.times = []
                    calls = judge.calls
                    started = time.perf_counter()
                    proc = subprocess.Popen(
                        argv, env=_env(tree, OPENAI_API_KEY=DUMMY_KEY), cwd=work,
                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                    )  # fmt: skip
                    _, status, usage = os.wait4(proc.pid, 0)
                    ended = time.perf_counter()
                    judged = judge.calls - calls
                    if os.waitstatus_to_exitcode(status) not in (0, 1) or not judged:
                        raise RuntimeError(f"eval failed: {proc.stderr.read().decode()[-500:]}")
                    proc.stderr.close()
                    times = judge.times
                    # A verdict leaves the judge JUDGE_S after its request arrived.
                    rows[n]["first"].append(min(times) - JUDGE_S - started)
                    rows[n]["tail"].append(ended - max(times))
                    rows[n]["cpu"].append((usage.ru_utime + usage.ru_stime) / judged * 1000)
                    rows[n]["wall"].append(ended - started)
    finally:
        server.shutdown()
        server.server_close()
    return [
        {
            "first_judge_s": statistics.median(r["first"]),
            "tail_s": statistics.median(r["tail"]),
            "cpu_ms_per_item": statistics.median(r["cpu"]),
            "wall_s": statistics.median(r["wall"]),
        }
        for r in rows
    ]


def table(rows: list[tuple[str, dict[str, Any]]]) -> str:
    """Markdown: one column a tree."""
    head = "| | " + " | ".join(name for name, _ in rows) + " |"
    lines = [head, "|---" + "|---:" * len(rows) + "|"]

    def line(label: str, cell: Any) -> None:
        def shown(r: dict[str, Any]) -> str:
            try:
                return cell(r)
            except KeyError:  # a figure this tree was not measured for (the seed's commands)
                return "—"

        lines.append(f"| {label} | " + " | ".join(shown(r) for _, r in rows) + " |")

    line("start-up to first request (eval, LLM judge)", lambda r: f"{r['first_request_s']:.2f} s")
    line("`gate` on a small pair (14 items), wall", lambda r: f"{r['small_s']:.2f} s")
    line("the same, CPU (user + system)", lambda r: f"{r['small_cpu_s']:.2f} s")
    for shape in SHAPES:
        line(
            f"`gate` on the 100k pair ({shape}) + comment + summary, wall",
            lambda r, s=shape: f"**{r['shapes'][s]['large_s']:.2f} s**",
        )
        line(
            "the same, CPU (user + system)",
            lambda r, s=shape: f"{r['shapes'][s]['large_cpu_s']:.2f} s",
        )
        line(
            "the same, peak RSS", lambda r, s=shape: f"{r['shapes'][s]['large_peak_mib']:,.0f} MiB"
        )
    for concurrency in CONCURRENCIES if any("judge" in r for _, r in rows) else ():
        c = concurrency
        line(f"eval, concurrency {c}: spawn to first judge request",
             lambda r, c=c: f"{r['judge'][c]['first_judge_s']:.2f} s")  # fmt: skip
        line(f"eval, concurrency {c}: last verdict to exit (tail)",
             lambda r, c=c: f"{r['judge'][c]['tail_s']:.2f} s")  # fmt: skip
        line(f"eval, concurrency {c}: CPU per judged item",
             lambda r, c=c: f"{r['judge'][c]['cpu_ms_per_item']:.1f} ms")  # fmt: skip
    if any("pr_subset_s" in r for _, r in rows):
        line(f"eval of a {PR_ITEMS}-item subset at once (judge {JUDGE_S:g} s): start to exit",
             lambda r: f"{r['pr_subset_s']:.2f} s")  # fmt: skip
    return "\n".join(lines)


def main() -> None:
    if sys.argv[1:2] == ["--write-shapes"]:
        _write_shapes(Path(sys.argv[2]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--before", action="append", default=[], help="a git ref measured beside this tree"
    )
    parser.add_argument(
        "--seed", default=None, help="a git ref whose library gate is measured on the large pair"
    )
    parser.add_argument("--judge-items", type=int, default=300, help="0: no judge figures")
    parser.add_argument(
        "--judge-only", action="store_true", help="the judge's fixed costs only (no gate figures)"
    )
    parser.add_argument("--pair", type=Path, default=None, help="a directory to keep the pair in")
    parser.add_argument("--quick", action="store_true", help="10,000 items, 3 runs each")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument(
        "--assistant-closes",
        action="store_true",
        help="the judge figures' assistant closes every connection (as until 2026-12-02)",
    )
    args = parser.parse_args()
    if args.assistant_closes:
        _SlowAssistant.protocol_version = "HTTP/1.0"
    runs = 3 if args.quick else args.runs
    load_at_start = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="golden-gate-pair-") as tmp:
        items = 10_000 if args.quick else ITEMS
        pair = Path(tmp)
        if not args.judge_only:
            pair = write_pair(args.pair or Path(tmp), items, items // 50)
            write_shapes(pair)
        with contextlib.ExitStack() as stack:
            trees = [(f"before ({ref})", stack.enter_context(checkout(ref))) for ref in args.before]
            trees.append(("this tree", ROOT))
            if args.seed:
                trees.insert(0, (f"seed ({args.seed})", stack.enter_context(checkout(args.seed))))
            results = measure(
                [tree for _, tree in trees],
                pair,
                runs=runs,
                judge_items=args.judge_items,
                gate_only=1 if args.seed else 0,
                judge_only=args.judge_only,
            )
        rows = [(label, result) for (label, _), result in zip(trees, results, strict=True)]
    print(table(rows))
    if args.judge_only:
        print(
            f"\nLoad average (1 min): {load_at_start:.2f} at the start, {os.getloadavg()[0]:.2f}."
        )
        return
    load_at_end = os.getloadavg()[0]
    print(
        f"\nLoad average (1 min): {load_at_start:.2f} at the start, {load_at_end:.2f} at the end."
    )
    outputs = [shape["outputs"] for _, r in rows for shape in r["shapes"].values()]
    for shape in SHAPES:  # within 1.5x the seed's wall time?
        walls = [r["shapes"][shape]["large_s"] for _, r in rows]
        print(f"\n{shape}: this tree's wall time is {walls[-1] / walls[0]:.2f}x the first tree's.")
    if len({tuple(o) for o in outputs}) == 1 and all(len(o) == 1 for o in outputs):
        print(
            "\nThe large pair's output (stdout, comment, summary) is byte-identical throughout:"
            " every tree, every shape, every run."
        )
    else:
        print("\n**The large pair's output differs**:")
        for label, r in rows:
            print(f"- {label}: " + json.dumps({k: v["outputs"] for k, v in r["shapes"].items()}))


if __name__ == "__main__":
    main()
