"""Check the links MkDocs does not: the relative links of the Markdown files outside docs/
(README.md first) and every `docs/architecture.md#anchor` the code cites. Offline: a link to
another site is not followed. `mkdocs build --strict` checks the links between the docs pages.

    python scripts/check_links.py   # exit 1 naming each broken link, file and line
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
CODE_FENCE = re.compile(r"^\s*(```|~~~)")
CITATION = re.compile(r"docs/architecture\.md#([a-z0-9-]+)")


def slug(heading: str) -> str:
    """The anchor GitHub and MkDocs give a heading: lower case, punctuation dropped, spaces to
    hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found, fenced = set(), False
    for line in path.read_text(encoding="utf-8").splitlines():
        if CODE_FENCE.match(line):
            fenced = not fenced
        elif not fenced and (m := re.match(r"#{1,6} (.+)", line)):
            found.add(slug(m.group(1)))
    return found


def links(path: Path) -> list[tuple[int, str]]:
    """(line, target) of each link; a link's text may run over a line break. Code blocks and
    inline code hold no links."""
    lines, fenced = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if CODE_FENCE.match(line):
            fenced = not fenced
            lines.append("")
        else:
            lines.append("" if fenced else re.sub(r"`[^`]*`", "", line))
    text = "\n".join(lines)
    return [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in LINK.finditer(text)]


def check_file(path: Path) -> list[str]:
    problems = []
    for number, target in links(path):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:: not followed offline
            continue
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        where = f"{path.relative_to(ROOT)}:{number}"
        if not linked.exists():
            problems.append(f"{where}: {target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            problems.append(f"{where}: {target}: no heading with that anchor")
    return problems


def tracked(*patterns: str) -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", *patterns],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    return [ROOT / name for name in listed if (ROOT / name).is_file()]


def check_citations() -> list[str]:
    """Every `docs/architecture.md#…` in the repository names a heading there, and nothing
    cites the design brief by section number (it is not in the repository)."""
    known = anchors(ROOT / "docs" / "architecture.md")
    problems = []
    for path in tracked("src", "tests", "scripts", "docs", "*.md", "Makefile", "Dockerfile"):
        if path.suffix not in (".py", ".md", ".sh", ".toml", ".yml", ".j2", "") or path.name in (
            "check_links.py",
        ):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            where = f"{path.relative_to(ROOT)}:{number}"
            problems += [
                f"{where}: docs/architecture.md#{a}: no such heading"
                for a in CITATION.findall(line)
                if a not in known
            ]
            if "DESIGN §" in line:
                problems.append(f"{where}: cites DESIGN §…, which is not in the repository")
    return problems


def main() -> int:
    outside_docs = [p for p in tracked("*.md") if p.parent.name != "docs"]
    problems = [problem for path in outside_docs for problem in check_file(path)]
    problems += check_citations()
    for problem in problems:
        print(problem, file=sys.stderr)
    checked = len(outside_docs)
    print(f"check_links: {checked} Markdown files outside docs/ and the code's citations: "
          f"{len(problems)} broken")  # fmt: skip
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
