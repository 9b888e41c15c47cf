"""`init`'s scope: the folders of Markdown (or other text the default ignore list skips) the
assistant answers from, found where the service reads them, so a pull request that changes only
its knowledge base is gated and not skipped as documentation.

Where a folder is found: a bind mount of the compose file, a `COPY`/`ADD` of the Dockerfile
(the compose file's, or the one at the root), or a common name at the root (kb/, knowledge/,
knowledge-base/, data/, corpus/). `docs/` only counts when the service mounts or copies it: it
is usually the project's own documentation. A folder counts when it holds a file the default
ignore list skips; each becomes a `!folder/**` take-back in `ignore-paths`.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from pathlib import Path
from typing import NamedTuple

from golden_gate.errors import InputError

# The default ignore list's text formats (action/scope.py IGNORED): Markdown, reStructuredText,
# AsciiDoc, and everything under docs/ or doc/.
TEXT_SUFFIXES = (".md", ".markdown", ".rst", ".adoc")
IGNORED_FOLDERS = ("docs", "doc")
COMMON_NAMES = ("kb", "knowledge", "knowledge-base", "knowledge_base", "data", "corpus")
FILES_LOOKED_AT = 2000  # per folder: a large data/ is not walked to its end


class Folder(NamedTuple):
    """A knowledge-base folder (repo path, no trailing slash) and where it was found."""

    path: str
    why: str


def _ignored_text(root: Path, folder: str) -> bool:
    """Whether the folder holds a file the default ignore list would skip."""
    top = folder.split("/", 1)[0]
    for looked, file in enumerate((root / folder).rglob("*")):
        if looked >= FILES_LOOKED_AT:
            return False
        if file.is_file() and (file.suffix.lower() in TEXT_SUFFIXES or top in IGNORED_FOLDERS):
            return True
    return False


def _inside(root: Path, base: Path, written: str) -> str | None:
    """`written` (relative to `base`) as a repo path of a folder, or None when it is the
    repository itself, outside it, or not a folder."""
    if not written or "${" in written or "://" in written:
        return None
    target = Path(posixpath.normpath((base / written).absolute().as_posix()))
    try:
        relative = target.relative_to(root.absolute()).as_posix()
    except ValueError:
        return None
    if relative in ("", ".") or not target.is_dir():
        return None
    return relative


def _copy_sources(dockerfile: Path) -> list[str]:
    """The sources of the Dockerfile's COPY and ADD lines (not `--from` copies of a stage)."""
    try:
        text = dockerfile.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    text = re.sub(r"\\\r?\n", " ", text)  # continuation lines
    sources: list[str] = []
    for line in text.splitlines():
        match = re.match(r"\s*(COPY|ADD)\s+(.*)", line, re.IGNORECASE)
        if not match:
            continue
        rest = match.group(2).strip()
        if rest.startswith("["):  # the JSON form
            import json

            try:
                words = [str(w) for w in json.loads(rest)]
            except ValueError:
                continue
        else:
            try:
                words = shlex.split(rest)
            except ValueError:
                continue
        if any(w.startswith("--from") for w in words):
            continue
        words = [w for w in words if not w.startswith("--")]
        sources += words[:-1]  # the last word is the destination
    return sources


def _compose_folders(root: Path, compose_file: str) -> list[Folder]:
    import yaml

    path = root / compose_file
    try:
        config = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return []
    if not isinstance(config, dict) or not isinstance(config.get("services"), dict):
        return []
    base = path.parent
    found: list[Folder] = []
    for service in config["services"].values():
        if not isinstance(service, dict):
            continue
        for volume in service.get("volumes") or []:
            source = volume.get("source") if isinstance(volume, dict) else None
            if isinstance(volume, str) and ":" in volume:
                source = volume.split(":", 1)[0]
            folder = (
                _inside(root, base, source)
                if isinstance(source, str) and source.startswith((".", "/"))
                else None
            )
            if folder is not None:
                found.append(Folder(folder, f"bind-mounted by {compose_file}"))
        build = service.get("build")
        context, dockerfile = (build, "Dockerfile") if isinstance(build, str) else (".", "")
        if isinstance(build, dict):
            context = build.get("context") or "."
            dockerfile = build.get("dockerfile") or "Dockerfile"
        if isinstance(build, str | dict) and isinstance(context, str):
            where = base / context
            named = f"{posixpath.normpath(posixpath.join(context, str(dockerfile)))}"
            found += _dockerfile_folders(root, where, where / str(dockerfile), named)
    return found


def _dockerfile_folders(root: Path, context: Path, dockerfile: Path, name: str) -> list[Folder]:
    found = []
    for source in _copy_sources(dockerfile):
        if (folder := _inside(root, context, source.rstrip("/") or ".")) is not None:
            found.append(Folder(folder, f"copied into the image by {name}"))
    return found


def find_knowledge(root: Path, compose_file: str | None) -> list[Folder]:
    """The folders of ignored text the assistant reads, each once, in the order found."""
    found: list[Folder] = []
    if compose_file is not None:
        found += _compose_folders(root, compose_file)
    if (root / "Dockerfile").is_file():
        found += _dockerfile_folders(root, root, root / "Dockerfile", "Dockerfile")
    found += [
        Folder(name, "a common name for a knowledge base")
        for name in COMMON_NAMES
        if (root / name).is_dir()
    ]
    chosen: dict[str, Folder] = {}
    for folder in found:
        if folder.path not in chosen and _ignored_text(root, folder.path):
            chosen[folder.path] = folder
    # A folder inside another one found already is covered by its take-back.
    paths = list(chosen)
    return [f for f in chosen.values() if not any(f.path.startswith(p + "/") for p in paths)]


def given_folders(root: Path, values: list[str]) -> list[Folder]:
    """--knowledge-base DIR (each one a folder inside the repository)."""
    folders = []
    for value in values:
        written = value.strip().strip("/")
        clean = posixpath.normpath(written) if written else ""
        if not clean or clean == "." or Path(value).is_absolute() or clean.startswith(".."):
            raise InputError(
                f"--knowledge-base: '{value}' is not a folder inside the repository (give a "
                "path relative to its root, e.g. kb)"
            )
        if any(ch in clean for ch in "\n\r\"'\\") or "${{" in clean:
            raise InputError(f"--knowledge-base: '{value}' holds a character a pattern cannot")
        if not (root / clean).is_dir():
            raise InputError(f"--knowledge-base: {clean} is not a folder of the repository")
        folders.append(Folder(clean, "given with --knowledge-base"))
    return list({f.path: f for f in folders}.values())


def take_back(folder: str) -> str:
    """The `ignore-paths` pattern that takes every file under `folder` back (its characters
    that gitignore reads as a pattern escaped)."""
    escaped = re.sub(r"([*?\[\]!#])", r"\\\1", folder)
    return f"!{escaped}/**"


def scope_lines(folders: list[Folder]) -> str:
    """The `[scope]` lines of the starter config."""
    if not folders:
        return (
            "# If the assistant answers from Markdown in this repository (say kb/), take it\n"
            "# back, so a pull request changing only it is gated (`golden-gate init\n"
            "# --knowledge-base kb` writes this):\n"
            '# ignore-paths = ["!kb/**"]'
        )
    import json

    said = "".join(f"#   {f.path}/: {f.why}\n" for f in folders)
    patterns = ", ".join(json.dumps(take_back(f.path)) for f in folders)
    return (
        "# The assistant answers from these folders (found by golden-gate init), so a pull\n"
        "# request changing only them is gated:\n"
        f"{said}ignore-paths = [{patterns}]"
    )
