"""Peak memory of `golden-gate import-junit` on a large JUnit file (issue 42, item 6).

    .venv/bin/python bench/junit_memory.py [DIR] [--tests 1500000] [--shape distinct|repeats]

Writes a Surefire-shaped file of `--tests` test cases (1.5 M make about 68 MB; `distinct`: each
its own test, 2 % failing with a message and a short trace; `repeats`: 500 tests run again and
again; `worst`: every case failing, with names and messages longer than are kept), runs the
real command on it in a process of its own and prints one JSON object: the file's size, the
exit code, the first line it said, and the child's peak resident memory (ru_maxrss). The
reader keeps one test case at a time and stops at MAX_JUNIT_CASES with an incomplete report,
so the peak does not grow with the file.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FAILURE = (
    '<failure message="expected the refund window" type="org.opentest4j.AssertionFailedError">'
    "org.opentest4j.AssertionFailedError: expected the refund window\n"
    "\tat com.example.docs.GoldenSetTest.answers(GoldenSetTest.java:57)</failure>"
)


def write(path: Path, tests: int, shape: str) -> None:
    with path.open("w", encoding="utf-8") as out:
        out.write('<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="Big" tests="')
        out.write(f'{tests}">\n')
        for i in range(tests):
            name = f"t{i}" if shape == "distinct" else f"t{i % 500}"
            inner = FAILURE if i % 50 == 7 else ""
            if shape == "worst":  # the longest names and messages kept, every case failing
                name = f"{i:08d}" + "n" * 600
                inner = f'<failure message="{"m" * 1200}" type="{"T" * 300}"/>'

            out.write(f'<testcase name="{name}" classname="c{i % 9}">{inner}</testcase>\n')
        out.write("</testsuite>\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", nargs="?", type=Path, default=None)
    parser.add_argument("--tests", type=int, default=1_500_000)
    parser.add_argument("--shape", choices=["distinct", "repeats", "worst"], default="distinct")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        where = args.dir or Path(scratch)
        where.mkdir(parents=True, exist_ok=True)
        xml = where / "big.xml"
        write(xml, args.tests, args.shape)
        done = subprocess.run(
            [sys.executable, "-m", "golden_gate", "import-junit", str(xml),
             "-o", str(where / "report.json")],
            capture_output=True, text=True, check=False, cwd=ROOT,
        )  # fmt: skip
        peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        said = done.stderr.strip().splitlines() or done.stdout.strip().splitlines() or [""]
        print(
            json.dumps(
                {
                    "tests": args.tests,
                    "shape": args.shape,
                    "file_mb": round(xml.stat().st_size / 1e6, 1),
                    "exit": done.returncode,
                    "said": said[-1],
                    "peak_mib": round(peak_kib / 1024, 1),
                }
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
