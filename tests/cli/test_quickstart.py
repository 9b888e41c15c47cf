"""The README's quickstart, followed as a new user follows it: its commands, parsed out of the
page (so the page and this test cannot drift), run in a fresh folder by bash with nothing but
what the page shows. The install is the one exception: the venv's golden-gate is on PATH.

Also: the README stays a front page, the docs build with no warning and no broken link, and
every citation of the design resolves inside the repository."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
GETTING_STARTED = ROOT / "docs" / "getting-started.md"
MARK = "@@ golden-gate quickstart: exit {rc} @@"


def section(path: Path, heading: str) -> str:
    """The text under the `## heading…` of a page, up to the next `## `."""
    text = path.read_text(encoding="utf-8")
    start = re.search(rf"^## {re.escape(heading)}.*$", text, re.M)
    assert start, f"{path.name} has no '## {heading}' section"
    end = re.search(r"^## ", text[start.end() :], re.M)
    return text[start.end() : start.end() + end.start() if end else len(text)]


def blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```$", text, re.M | re.S)


def commands(text: str) -> list[str]:
    """Each command line of the section's shell blocks, in order."""
    return [
        line
        for block in blocks(text, "sh")
        for line in block.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]


def run_page(
    commands: list[str], folder: Path, *, bin_dir: Path | None = None
) -> list[tuple[str, int, str]]:
    """Run the commands in one bash, as typed; (command, exit code, output) for each.
    `bin_dir`: where `golden-gate` is (this venv's by default)."""
    mark = MARK.format(rc="$?")
    script = "".join(f'{command}\necho "{mark}"\n' for command in commands)
    bin_dir = str(bin_dir or Path(sys.executable).parent)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))},
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(folder),
        "NO_COLOR": "1",
    }
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=folder, env=env, capture_output=True, text=True, timeout=300, check=False,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    # Each command's output on stdout, cut at the marks; stderr (progress) only for failures.
    parts = re.split(r"^@@ golden-gate quickstart: exit (\d+) @@$\n?", done.stdout, flags=re.M)
    outputs, codes = parts[0::2], [int(c) for c in parts[1::2]]
    assert len(codes) == len(commands), (done.stdout, done.stderr)
    return [(c, rc, out) for c, rc, out in zip(commands, codes, outputs, strict=False)]


def _stop_leftovers(folder: Path) -> None:
    for pid_file in folder.rglob(".example-assistant.pid"):
        with contextlib.suppress(ValueError, ProcessLookupError):
            os.kill(int(pid_file.read_text().strip()), signal.SIGTERM)


def test_the_readmes_quickstart_goes_from_nothing_to_a_red_and_a_green_gate(tmp_path):
    quickstart = section(README, "Quickstart")
    typed = commands(quickstart)
    assert not any("pip install" in c for c in typed)  # the install is its own section
    assert not any(re.search(r"golden-gate \w+.* --(?!example)", c) for c in typed), typed
    try:
        ran = run_page(typed, tmp_path)
    finally:
        _stop_leftovers(tmp_path)
    gates = [(c, rc, out) for c, rc, out in ran if c.split("#")[0].strip() == "golden-gate run"]
    assert len(gates) == 2, typed
    before_red = ran[: [c for c, _, _ in ran].index(gates[0][0])]
    for command, rc, out in before_red:
        assert rc == 0, (command, out)

    (_red_command, red_rc, red), (_, green_rc, green) = gates
    assert red_rc == 1, red
    assert red.startswith("golden-gate: failed:"), red
    regressed = re.findall(r"^  regressed: (\S+)$", red, re.M)
    assert regressed, red
    # The page shows the same regressed items the gate names.
    (shown,) = blocks(quickstart, "text")
    assert re.findall(r"^  regressed: (\S+)$", shown, re.M) == regressed
    # …and they are the items on the pages the pull request's prompt change broke (the example
    # assistant cuts answers on backups and upgrades and drops citations on troubleshooting),
    # found from the golden set, not from the gate.
    folder = next(p.parent for p in tmp_path.rglob("golden-gate.toml"))
    items = [
        json.loads(line)
        for line in (folder / "evals" / "golden.jsonl").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    broken_pages = {"docs/backups.md", "docs/upgrades.md", "docs/troubleshooting.md"}
    on_broken_pages = {i["id"] for i in items if set(i.get("reference_urls", [])) & broken_pages}
    assert set(regressed) <= on_broken_pages
    assert len(regressed) >= 5

    assert green_rc == 0, green
    assert green.startswith("golden-gate: passed:"), green
    assert "regressed:" not in green
    last_command, last_rc, last = ran[-1]
    assert "example-assistant stop" in last_command and last_rc == 0
    assert "stopped" in last
    assert not (folder / ".example-assistant.pid").exists()


def test_getting_started_shows_the_same_quickstart_and_install():
    readme, page = section(README, "Quickstart"), section(GETTING_STARTED, "Quickstart")
    assert blocks(page, "sh") == blocks(readme, "sh")
    assert blocks(page, "text") == blocks(readme, "text")
    install = blocks(section(README, "Install"), "sh")
    assert install == blocks(section(GETTING_STARTED, "Install"), "sh")
    # A real install command for the command line, from the repository itself.
    assert any(line.strip() == "pip install ." for line in install[0].splitlines())
    assert (ROOT / "pyproject.toml").is_file()


def test_the_readme_is_a_front_page():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150
    headings = [line for line in lines if line.startswith("## ")]
    assert headings[:2] == [
        "## Install",
        "## Quickstart: a red and a green pull request in two minutes",
    ]
    # Implementation details live on the architecture page, not in the user's path.
    text = "\n".join(lines)
    for detail in ("OPENBLAS_NUM_THREADS", "LazyLoader", "slim", "forked"):
        assert detail not in text, detail


def test_links_and_the_designs_citations_resolve_inside_the_repository():
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "check_links.py")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "0 broken" in done.stdout


def test_the_docs_build_strictly(tmp_path):
    mkdocs = Path(sys.executable).parent / "mkdocs"
    if not mkdocs.is_file():
        pytest.fail("mkdocs is missing: `make install` installs the docs extra")
    done = subprocess.run(
        [str(mkdocs), "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, check=False,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr
    assert (tmp_path / "site" / "architecture" / "index.html").is_file()
