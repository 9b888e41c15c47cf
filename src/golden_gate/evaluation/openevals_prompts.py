"""openevals' prompt texts, read without importing openevals.

`import openevals.prompts` runs openevals' package, which imports LangChain and LangSmith (about
a second of CPU) for what is a string constant in a module of its own. The module that defines
the prompt is run alone instead, when it imports nothing; otherwise openevals is imported.
"""

from __future__ import annotations

import ast
import importlib.util
from functools import cache
from pathlib import Path


@cache
def prompt(name: str) -> str:
    """openevals' `openevals.prompts.<name>` (e.g. CORRECTNESS_PROMPT)."""
    spec = importlib.util.find_spec("openevals")
    for folder in spec.submodule_search_locations or () if spec else ():
        for path in sorted((Path(folder) / "prompts").rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            if f"{name} =" not in text:
                continue
            tree = ast.parse(text)
            if any(isinstance(node, ast.Import | ast.ImportFrom) for node in ast.walk(tree)):
                break
            found: dict[str, object] = {}
            exec(compile(tree, str(path), "exec"), found)  # openevals' own module, alone
            value = found.get(name)
            if isinstance(value, str):
                return value
    import openevals.prompts

    return str(getattr(openevals.prompts, name))
