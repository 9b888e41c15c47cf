"""Write (or with --check, compare) what is derived from the settings table
(src/golden_gate/options.py): action.yml's inputs and golden-gate.schema.json.

    python scripts/generate.py          # rewrite both
    python scripts/generate.py --check  # exit 1 naming what is out of date
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import yaml

from golden_gate.options import action_inputs, schema_text

ROOT = Path(__file__).resolve().parents[1]
ACTION = ROOT / "action.yml"
SCHEMA = ROOT / "golden-gate.schema.json"


def _inputs_block() -> str:
    lines = ["inputs:"]
    for name, spec in action_inputs().items():
        lines.append(f"  {name}:")
        lines.append("    description: >-")
        lines += textwrap.wrap(
            spec["description"],
            width=96,
            initial_indent="      ",
            subsequent_indent="      ",
            break_on_hyphens=False,
            break_long_words=False,
        )
        lines.append(f"    default: {json.dumps(spec['default'])}")
    text = "\n".join(lines) + "\n"
    parsed = yaml.safe_load(text)["inputs"]  # what the runner will read is what was meant
    assert {k: v["description"] for k, v in parsed.items()} == {
        k: v["description"] for k, v in action_inputs().items()
    }
    return text


def action_yml() -> str:
    text = ACTION.read_text(encoding="utf-8")
    start = text.index("\ninputs:\n") + 1
    end = text.index("\noutputs:\n") + 1
    return text[:start] + _inputs_block() + "\n" + text[end:]


def main(argv: list[str]) -> int:
    wanted = {ACTION: action_yml(), SCHEMA: schema_text()}
    stale = [p for p, t in wanted.items() if not p.is_file() or p.read_text("utf-8") != t]
    if "--check" in argv:
        for path in stale:
            print(f"{path.name} is out of date: run python scripts/generate.py", file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.write_text(wanted[path], encoding="utf-8")
        print(f"wrote {path.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
