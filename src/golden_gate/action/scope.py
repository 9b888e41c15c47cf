"""Scope: can this change alter answers? Decided from the event and the pull request's files.

"Always run, decide inside": the step always runs (so a required check stays satisfiable) and
reports success without spending anything only when the change cannot alter answers. Failing
safe: by default a pull request runs unless *every* changed file matches `IGNORED` (docs,
Markdown, images, licences, issue templates, ...) or `ignore-paths`, which extends it; a file
nobody listed runs the gate. `paths`, when set, is an explicit allow-list instead: a pull request
runs when a changed file matches it.

The gate's own inputs (the golden set, judge prompt, calibration, comment template, labels,
baseline) and the workflows (which hold its thresholds) are always in scope, whatever `paths`
says: otherwise a pull request could change the rules and never be gated under them.
"""

from __future__ import annotations

import posixpath
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from golden_gate.errors import InputError
from golden_gate.git import git
from golden_gate.secret_env import PULL_REQUEST_EVENTS

FILE_CAP = 3000  # GitHub lists at most 3,000 files of a pull request
# Files that cannot change an answer, gitignore-style (`ignore-paths` extends the list; a
# `!pattern` there takes a file back). Markdown can be a prompt: a file or directory named
# for prompts never counts as ignored, and a Markdown corpus belongs in `ignore-paths` as `!`.
IGNORED: tuple[str, ...] = (
    "*.md", "*.markdown", "*.rst", "*.adoc",
    "docs/", "doc/",
    "LICENSE*", "LICENCE*", "COPYING*", "NOTICE*", "AUTHORS*", "CODEOWNERS",
    "*.png", "*.jpg", "*.jpeg", "*.gif", "*.svg", "*.ico", "*.webp",
    ".github/ISSUE_TEMPLATE/", ".github/PULL_REQUEST_TEMPLATE/",
    ".github/pull_request_template.md", ".github/FUNDING.yml", ".github/dependabot.yml",
    ".gitignore", ".gitattributes", ".mailmap", ".editorconfig",
    ".vscode/", ".idea/",
    "!*[Pp][Rr][Oo][Mm][Pp][Tt]*", "!**/[Pp]rompts/**",
)  # fmt: skip
WORKFLOWS = ".github/workflows/"
WORKFLOW_RULE = "a workflow, where the gate's settings live"
CONFIG_FILE = "golden-gate.toml"  # the gate's config file: its rules, always in scope


class Scope(BaseModel):
    run: bool
    reason: str
    changed: int | None = None
    matched: list[str] = Field(default_factory=list)
    # one per matched file: "file (the rule that matched it)", for the log
    triggers: list[str] = Field(default_factory=list)
    # when skipped: each changed file and the rule that skipped it
    skipped: dict[str, str] = Field(default_factory=dict)
    # changed files the gate itself reads (golden set, prompt, workflows, ...): the comment
    # says at the top that the pull request changes the gate's own rules
    own_inputs_changed: list[str] = Field(default_factory=list)
    source: str | None = None  # "api" or "git": where the changed files came from


def repo_path(path: str) -> str:
    """A path as the pull request's file list spells it: no `./`, no `..` left inside."""
    return posixpath.normpath(path)


def own_input_rule(file: str, own_inputs: Mapping[str, str]) -> str | None:
    """Which of the gate's own inputs `file` is (`own_inputs`: repo path -> input name; a
    path ending in `/` is a directory, e.g. a build context, and covers what is under it)."""
    if file in own_inputs:
        return f"input '{own_inputs[file]}', the gate's own input"
    if file.startswith(WORKFLOWS):
        return WORKFLOW_RULE
    for path, name in own_inputs.items():
        if path.endswith("/") and (file.startswith(path) or path == "./"):
            return f"input '{name}', the gate's own input"
    return None


def compose_references(compose_file: Path, workspace: Path) -> list[str]:
    """What a compose file makes part of the system under test, as repo paths: build
    contexts (directories, ending in `/`), Dockerfiles, env files, bind-mounted sources,
    config and secret files, included and extended compose files. A file that cannot be read
    or parsed names nothing (starting the assistant says what is wrong with it)."""
    import yaml

    try:
        config = yaml.safe_load(compose_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return []
    if not isinstance(config, dict):
        return []
    base = compose_file.parent
    found: list[tuple[str, bool]] = []  # (path as written, is a directory)

    def add(value: object, *, directory: bool = False) -> None:
        if isinstance(value, str) and value and "://" not in value and "${" not in value:
            found.append((value, directory))

    for service in (config.get("services") or {}).values():
        if not isinstance(service, dict):
            continue
        build = service.get("build")
        if isinstance(build, str):
            add(build, directory=True)
            add(posixpath.join(build, "Dockerfile"))
        elif isinstance(build, dict):
            context = build.get("context") or "."
            add(context, directory=True)
            dockerfile = build.get("dockerfile") or "Dockerfile"
            if isinstance(context, str) and isinstance(dockerfile, str):
                add(posixpath.join(context, dockerfile))
        env_files = service.get("env_file")
        for entry in env_files if isinstance(env_files, list) else [env_files]:
            add(entry.get("path") if isinstance(entry, dict) else entry)
        for volume in service.get("volumes") or []:
            source = volume.get("source") if isinstance(volume, dict) else None
            if isinstance(volume, str) and ":" in volume:
                source = volume.split(":", 1)[0]
            if isinstance(source, str) and source.startswith((".", "/")):  # a path, not a volume
                add(source, directory=True)
                add(source)
        extends = service.get("extends")
        if isinstance(extends, dict):
            add(extends.get("file"))
    for section in ("configs", "secrets"):
        for entry in (config.get(section) or {}).values():
            if isinstance(entry, dict):
                add(entry.get("file"))
    for entry in config.get("include") or []:
        paths = entry.get("path") if isinstance(entry, dict) else entry
        for path in paths if isinstance(paths, list) else [paths]:
            add(path)
    root = workspace.resolve()
    references = []
    for written, directory in found:
        target = Path(posixpath.normpath((base / written).absolute().as_posix()))
        try:
            where = target.relative_to(root) if target.is_absolute() else target
        except ValueError:
            try:
                where = target.relative_to(workspace.absolute())
            except ValueError:
                continue  # outside the checkout: no pull request changes it
        path = where.as_posix()
        references.append(path.rstrip("/") + "/" if directory else path)
    return list(dict.fromkeys(references))


def matching(files: Sequence[str], patterns: Sequence[str]) -> list[str]:
    """Files matched by gitignore-style patterns (negations with `!` work as in .gitignore)."""
    return list(matching_rules(files, patterns))


def check_patterns(patterns: Sequence[str], *, name: str = "input 'paths'") -> None:
    """Each pattern compiles (`src/[a-Z]*`, a lone `!` do not): InputError naming it."""
    import pathspec

    for pattern in patterns:
        if not pattern.strip():
            continue
        try:
            pathspec.GitIgnoreSpec.from_lines([pattern])
        except Exception as exc:  # re.error, GitWildMatchPatternError, ...: all one answer
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise InputError(
                f"{name}: {pattern!r} is not a gitignore-style pattern ({reason[:200]})"
            ) from None


def matching_rules(
    files: Sequence[str], patterns: Sequence[str], *, name: str = "input 'paths'"
) -> dict[str, str]:
    """Each matched file and the pattern that decided it."""
    import pathspec

    kept = [p for p in patterns if p.strip()]
    check_patterns(kept, name=name)
    spec = pathspec.GitIgnoreSpec.from_lines(kept)
    found = {}
    for file in files:
        result = spec.check_file(file)
        if result.include and result.index is not None:
            found[file] = kept[result.index]
    return found


def git_changed_files(base: str, head: str, *, cwd: Path) -> list[str]:
    """`git diff --name-only base...head`; needs both commits fetched (fetch-depth: 0)."""
    try:
        done = git("diff", "--name-only", "--no-renames", f"{base}...{head}", cwd=cwd)
    except subprocess.TimeoutExpired:  # the caller runs the gate on a RuntimeError
        raise RuntimeError("git diff timed out") from None
    if done.returncode != 0:
        raise RuntimeError(
            done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed"
        )
    return [line for line in done.stdout.splitlines() if line]


def decide(
    event_name: str,
    *,
    force: bool,
    patterns: Sequence[str],
    changed: Sequence[str] | None = None,
    capped: bool = False,
    source: str | None = None,
    own_inputs: Mapping[str, str] | None = None,
    ignore: Sequence[str] = (),
) -> Scope:
    """Only pull requests can be skipped; every other event runs. `patterns` is the `paths`
    allow-list (empty: none, so every file not ignored can change answers); `ignore` extends
    `IGNORED`. `own_inputs` maps the repo paths of the gate's own input files to their input
    names: a change to one always runs."""
    # What the gate itself reads, changed: said at the top of the comment however it runs.
    own = {f: r for f in changed or () if (r := own_input_rule(f, own_inputs or {}))}
    if force:
        return Scope(run=True, reason="force is set", own_inputs_changed=list(own))
    if event_name not in PULL_REQUEST_EVENTS:
        return Scope(run=True, reason=f"{event_name or 'a local run'} always runs")
    if changed is None:
        return Scope(run=True, reason="the changed files could not be listed, so the gate runs")
    if capped:
        return Scope(
            run=True,
            reason=f"the pull request has at least {FILE_CAP} changed files (GitHub's cap)",
            changed=len(changed),
            source=source,
            own_inputs_changed=list(own),
        )
    if patterns:
        by_paths = matching_rules(changed, patterns)
        answers = {f: f"paths: {pattern}" for f, pattern in by_paths.items()}
        skipped = {f: "not in `paths`" for f in changed if f not in by_paths}
        none = "none matches `paths`"
    else:
        ignored = matching_rules(changed, [*IGNORED, *ignore], name="input 'ignore-paths'")
        answers = {f: "not on the ignore list" for f in changed if f not in ignored}
        skipped = {f: f"ignored: {pattern}" for f, pattern in ignored.items()}
        none = "each is on the ignore list (`ignore-paths` extends it)"
    rules = {**answers, **own}
    matched = [f for f in changed if f in rules]
    triggers = [f"{f} ({rules[f]})" for f in matched]
    if own:
        # Rule names only: file names come from the pull request (see `triggers`).
        named = "; ".join(dict.fromkeys(own.values()))
        return Scope(
            run=True,
            reason=f"the pull request changes what the gate itself reads ({named})",
            changed=len(changed),
            matched=matched,
            triggers=triggers,
            own_inputs_changed=list(own),
            source=source,
        )
    if matched:
        return Scope(
            run=True,
            reason=f"{len(matched)} of {len(changed)} changed files can change answers",
            changed=len(changed),
            matched=matched,
            triggers=triggers,
            source=source,
        )
    return Scope(
        run=False,
        reason=f"{len(changed)} files changed and {none}: answers cannot change",
        changed=len(changed),
        skipped={f: skipped[f] for f in changed},
        source=source,
    )
