"""What the Action image is made of: its size by component, and the largest packages of its venv.

    .venv/bin/python bench/image_size.py IMAGE [IMAGE ...] [--base BASE_IMAGE]

prints Markdown tables, one column per image (e.g. before and after a change to the Dockerfile).
Sizes are in MB (10^6 bytes) and counted as the engine counts a layer: the bytes of every file
and link, directories not counted, a file linked several times once. "Debian packages" is what
is left of the image once the base and the other rows are taken away: git, CA certificates,
Python when the base has none, and their libraries. Needs a Docker engine; runs each image once
with `--entrypoint bash`.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from collections import defaultdict

MB = 1e6
MEASURE = r"""
set -e
size() {
    find "$@" -not -type d -printf '%i %s\n' 2>/dev/null | sort -u |
        awk '{s += $2} END {print s + 0}'
}
site=$(ls -d /opt/venv/lib/python3*/site-packages)
echo "docker $(size /usr/bin/docker)"
echo "compose $(size /usr/libexec/docker/cli-plugins/docker-compose)"
echo "venv $(size /opt/venv)"
echo "action $(size /action)"
for entry in "$site"/*; do echo "site:$(basename "$entry") $(size "$entry")"; done
"""
# Site-packages entries that belong to one package, under its name.
SAME = {
    "scipy.libs": "scipy",
    "numpy.libs": "numpy",
    "pydantic_core": "pydantic",
    "_cffi_backend": "cffi",
}


def image_size(image: str) -> float:
    """`docker images`' size of `image`, in MB."""
    inspect = ["docker", "image", "inspect", "--format", "{{json .Size}}", image]
    return (
        json.loads(subprocess.run(inspect, capture_output=True, text=True, check=True).stdout) / MB
    )


def measure(image: str) -> dict[str, float]:
    out = subprocess.run(
        ["docker", "run", "--rm", "--entrypoint", "bash", image, "-c", MEASURE],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    sizes: dict[str, float] = defaultdict(float)
    for line in out.splitlines():
        name, value = line.rsplit(" ", 1)
        if name.startswith("site:"):
            entry = name.removeprefix("site:")
            if entry.endswith((".dist-info", ".pth")) or entry == "__pycache__":
                entry = "(metadata)"
            entry = entry.split(".")[0] if entry.endswith(".py") else entry
            sizes["site:" + SAME.get(entry, entry)] += int(value) / MB
        else:
            sizes[name] = int(value) / MB
    sizes["total"] = image_size(image)
    return sizes


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("images", nargs="+")
    parser.add_argument("--base", default="golden-gate-base:bookworm")
    parser.add_argument("--top", type=int, default=12, help="venv packages listed by name")
    args = parser.parse_args()
    base = image_size(args.base)
    found = {image: measure(image) for image in args.images}

    def mb(value: float) -> str:
        return f"{value:.1f}"

    rows = []
    for label, key in (
        ("Docker CLI", "docker"),
        ("compose v2 plugin", "compose"),
        ("venv (/opt/venv, golden-gate included)", "venv"),
        ("/action (entrypoint, sources, templates)", "action"),
    ):
        rows.append([label, *(mb(found[i][key]) for i in args.images)])
    rest = [
        found[i]["total"] - base - sum(found[i][k] for k in ("docker", "compose", "venv", "action"))
        for i in args.images
    ]
    rows.insert(0, ["Debian packages (git, CA certificates, Python, libraries)", *map(mb, rest)])
    rows.insert(0, [f"base image ({args.base})", *(mb(base) for _ in args.images)])
    rows.append(["**image**", *(f"**{mb(found[i]['total'])}**" for i in args.images)])
    print(table(["component (MB)", *args.images], rows))
    print()

    last = found[args.images[-1]]
    packages = sorted(
        (k for k in set().union(*found.values()) if k.startswith("site:")),
        key=lambda k: -last.get(k, 0),
    )
    shown, other = packages[: args.top], packages[args.top :]
    rows = [
        [k.removeprefix("site:"), *(mb(found[i].get(k, 0)) for i in args.images)] for k in shown
    ]
    rows.append(
        [f"{len(other)} others", *(mb(sum(found[i].get(k, 0) for k in other)) for i in args.images)]
    )
    print(table(["site-packages entry (MB)", *args.images], rows))


if __name__ == "__main__":
    main()
