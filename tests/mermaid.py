"""What a Mermaid block we emit may contain: the statements we write, names only in quotes."""

from __future__ import annotations

import re

BLOCK = re.compile(r"```mermaid\n(.*?)\n```", re.S)
LABEL = r'"[^"\n%#<>`;&@]*"'
STATEMENT = re.compile(
    r'%%\{init: \{"themeVariables": \{"xyChart": \{"plotColorPalette": "[#0-9a-f, ]+"\}\}\}\}%%'
    r"|xychart-beta( horizontal)?"
    rf"|    title {LABEL}"
    rf"|    x-axis \[{LABEL}(, {LABEL})*\]"
    r'|    y-axis "(%|pass rate \(%\))" 0 --> 100'
    r"|    (bar|line) \[[0-9.]+(, [0-9.]+)*\]"
)


def without_charts(body: str) -> tuple[str, list[str]]:
    """`body` with its Mermaid blocks removed, and the blocks, each checked statement by
    statement: no fence, directive, tag, entity, click or link came from a name."""
    blocks = BLOCK.findall(body)
    for block in blocks:
        for line in block.splitlines():
            assert STATEMENT.fullmatch(line), line
        assert block.count("%%") == 2 and "<" not in block and "@" not in block
    return BLOCK.sub("", body), blocks
