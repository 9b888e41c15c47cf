"""An offline wheelhouse for the packaging tests: golden-gate's runtime dependencies, each
packed back into a wheel from what this virtual environment has installed (its RECORD lists
the files), so `pip install --no-index --find-links` can resolve the built wheel's requirements
without a package index. pip's cache holds no wheels here to build one from."""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import re
import zipfile
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

SKIPPED_METADATA = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def closure(requirements: list[str], extras: tuple[str, ...] = ()) -> list[metadata.Distribution]:
    """The installed distributions `requirements` need, transitively (markers as here)."""
    found: dict[str, metadata.Distribution] = {}
    stack = [(r, extras) for r in requirements]
    while stack:
        text, wanted = stack.pop()
        req = Requirement(text)
        if req.marker and not any(req.marker.evaluate({"extra": extra}) for extra in (*wanted, "")):
            continue
        name = _norm(req.name)
        if name in found:
            continue
        dist = metadata.distribution(req.name)
        found[name] = dist
        stack += [(r, tuple(req.extras)) for r in dist.requires or []]
    return list(found.values())


def _tag(dist: metadata.Distribution) -> str:
    wheel = dist.read_text("WHEEL") or ""
    tags = [line.split(":", 1)[1].strip() for line in wheel.splitlines() if line.startswith("Tag:")]
    if not tags:
        return "py3-none-any"
    parts = [sorted({tag.split("-")[i] for tag in tags}) for i in range(3)]
    return "-".join(".".join(part) for part in parts)


def repack(dist: metadata.Distribution, into: Path) -> Path:
    """`dist` as a wheel in `into` (stored, not compressed: it is read once, nearby)."""
    name = re.sub(r"[-_.]+", "_", dist.metadata["Name"])
    version = dist.version
    target = into / f"{name}-{version}-{_tag(dist)}.whl"
    root = Path(str(dist.locate_file("")))
    info = f"{name}-{version}.dist-info"
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    with zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as wheel:
        for file in dist.files or []:
            path = file.as_posix()
            if path.startswith("..") or "__pycache__" in path or path.endswith(".pyc"):
                continue  # scripts (pip makes them again) and bytecode
            where = path
            if ".dist-info/" in path:
                base = path.split("/", 1)[1]
                if base in SKIPPED_METADATA:
                    continue
                where = f"{info}/{base}"
            source = root / path
            if not source.is_file():
                continue
            data = source.read_bytes()
            wheel.writestr(where, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            writer.writerow([where, f"sha256={digest.decode()}", len(data)])
        writer.writerow([f"{info}/RECORD", "", ""])
        wheel.writestr(f"{info}/RECORD", record.getvalue())
    return target


def wheelhouse(requirements: list[str], into: Path, extras: tuple[str, ...] = ()) -> list[Path]:
    into.mkdir(parents=True, exist_ok=True)
    return [repack(dist, into) for dist in closure(requirements, extras)]
