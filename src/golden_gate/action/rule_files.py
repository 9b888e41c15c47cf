"""The files that define the yardstick, read at the base ref on a pull request.

On `pull_request` the runner runs the workflow of the pull request's merge commit, so every
file the gate reads from the checkout is the pull request's own: a judge prompt edited to
"grade leniently" would grade its own change. So, like the golden set, the judge prompt
(`judge-prompt`), each custom evaluator's prompt (an `evaluators` entry that is a
file), the comment template (`comment-template`), the calibration report (`calibration`), the
answers' JSON Schema (`json-schema`), each custom check (`custom-checks`) and, for `mode:
calibrate`, the human labels (`labels`) and the golden set they label are read at the
pull request's base branch (`common.rules_ref`: not `baseline-ref`, which the pull request's
workflow sets), and the verdict uses the base's text:

- the same text in the checkout: the checkout's file is used (it is the base's);
- another text: the base's is written under RUNNER_TEMP (outside the checkout) and the
  settings point there; the pull request's version is recorded as a proposed rule change,
  not used;
- not at the base ref while a baseline is (the base branch already gates): refused, exit 2 — a
  rule file lands in a pull request of its own first; with no baseline there either (first
  adoption), the pull request's own file is used and the comment says so;
- not readable at the base ref (the API failing, a shallow checkout): exit 3, never the pull
  request's version.

Nothing below `action/` knows about events: the engine gets settings whose paths point at the
base's text.
"""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from golden_gate import runner
from golden_gate.action.common import github_client, rules_ref, workspace_relative
from golden_gate.action.context import Context
from golden_gate.action.inputs import ActionSettings
from golden_gate.action.scope import repo_path
from golden_gate.core.report import RuleFile
from golden_gate.errors import InputError
from golden_gate.files import write_result

if TYPE_CHECKING:
    from golden_gate.evaluation.evaluators import EvaluatorSpec


class RuleFiles(BaseModel):
    """Where this run's rule files came from, for the report and the comment."""

    ref: str | None = None
    not_used: list[RuleFile] = Field(default_factory=list)  # the PR's versions, not used
    pending: list[RuleFile] = Field(default_factory=list)  # the PR's only: decided by baseline
    pending_paths: list[Path] = Field(default_factory=list)  # where the settings name them
    own: list[RuleFile] = Field(default_factory=list)  # the PR's only, used (first adoption)


def _rule_files(settings: ActionSettings) -> list[tuple[str, Path]]:
    """(input name, path) of every rule file this run reads."""
    run = settings.run
    files: list[tuple[str, Path]] = []
    if run.judge.prompt_file is not None:
        files.append(("judge-prompt", run.judge.prompt_file))
    files += [("evaluators", s.prompt_file) for s in run.evaluators.evaluators if s.prompt_file]
    if run.comment_template is not None:
        files.append(("comment-template", run.comment_template))
    if run.calibration is not None:
        files.append(("calibration", run.calibration))
    if run.checks.json_schema_file is not None:
        files.append(("json-schema", run.checks.json_schema_file))
    files += [("custom-checks", c.path) for c in run.checks.custom_checks]
    if settings.mode == "calibrate" and settings.labels is not None:
        # Calibration's yardstick: the human labels and the items they label (the gate reads
        # its golden set at the base itself, pairing by the baseline's record).
        files += [("labels", settings.labels), ("golden", run.golden)]
    return files


def _read_checkout(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None  # missing or unreadable: not the base's text, whatever it is


def _same(mine: str, base: str) -> bool:
    """The same text, whatever line ends the checkout gave it (core.autocrlf)."""
    return mine == base or mine.replace("\r\n", "\n") == base.replace("\r\n", "\n")


def _replaced(settings: ActionSettings, old: Path, new: Path | None) -> ActionSettings:
    """The settings with every use of rule file `old` pointing at `new` (None: not read)."""
    run = settings.run
    update: dict[str, object] = {}
    if run.judge.prompt_file == old:
        update["judge"] = run.judge.model_copy(update={"prompt_file": new})
    specs: list[EvaluatorSpec] = [
        s.model_copy(update={"prompt_file": new}) if s.prompt_file == old else s
        for s in run.evaluators.evaluators
    ]
    if specs != run.evaluators.evaluators:
        update["evaluators"] = run.evaluators.model_copy(update={"evaluators": specs})
    if run.comment_template == old:
        update["comment_template"] = new
    if run.golden == old and new is not None:
        update["golden"] = new
    if run.calibration == old:
        update["calibration"] = new
    checks = run.checks
    if checks.json_schema_file == old:
        checks = checks.model_copy(update={"json_schema_file": new})
    if any(c.path == old for c in checks.custom_checks):
        kept = [
            c if c.path != old else c.model_copy(update={"path": new})
            for c in checks.custom_checks
            if c.path != old or new is not None
        ]
        checks = checks.model_copy(update={"custom_checks": kept})
    if checks is not run.checks:
        update["checks"] = checks
    labels = new if settings.labels == old else settings.labels
    return settings.model_copy(update={"run": run.model_copy(update=update), "labels": labels})


def _base_copy(ctx: Context, ref: str, path: str) -> Path:
    """Where the base's text of `path` is written: under RUNNER_TEMP, outside the checkout,
    keeping the file's name (a custom evaluator is named by its file's stem)."""
    temp = ctx.env.get("RUNNER_TEMP") or tempfile.gettempdir()
    tag = hashlib.sha256(f"{ref}\0{path}".encode()).hexdigest()[:12]
    return Path(temp) / "golden-gate-base-rules" / tag / Path(path).name


def rule_files_at_base(settings: ActionSettings, ctx: Context) -> tuple[ActionSettings, RuleFiles]:
    """On a pull request, the settings with every rule file the base's, and what the pull
    request changed; elsewhere the settings as they are. A file only the pull request has is
    left `pending` for `decide_pending` (it needs to know whether the base already gates)."""
    from golden_gate.action.baseline import read_at_ref

    ref = rules_ref(settings, ctx)
    if not ref:
        return settings, RuleFiles()
    files = _rule_files(settings)
    if not files:
        return settings, RuleFiles(ref=ref)
    found = RuleFiles(ref=ref)
    github = github_client(settings, ctx)
    seen: set[Path] = set()
    with runner.group("Rule files at the base branch"):
        for name, local in files:
            if local in seen:
                continue
            seen.add(local)
            path = repo_path(workspace_relative(local, settings))
            if Path(path).is_absolute() or path == ".." or path.startswith("../"):
                # A file a step wrote outside the checkout would be the pull request's own.
                raise InputError(
                    f"input '{name}': {local} is outside the checkout, so it cannot be read at "
                    f"the base branch {ref}: name a file in the repository"
                )
            text, source = read_at_ref(
                path, ref, github=github, workspace=ctx.workspace, what=f"{name} file"
            )
            rule = RuleFile(input=name, path=path)
            mine = _read_checkout(local)
            if text is None:
                if mine is None:  # in neither: the file's own reader says it is missing
                    continue
                found.pending.append(rule)
                found.pending_paths.append(local)
                print(f"golden-gate: {name} {path}: not at {ref}, only in this pull request")
                continue
            if mine is not None and _same(mine, text):
                print(f"golden-gate: {name} {path}: as at {ref}")
                continue
            copy = _base_copy(ctx, ref, path)
            write_result(copy, text, what=f"{name} file from {source}")
            settings = _replaced(settings, local, copy)
            found.not_used.append(rule)
            print(f"golden-gate: {name} {path}: changed in this pull request, not used; {source}")
    return settings, found


def decide_pending(
    settings: ActionSettings, found: RuleFiles, *, base_gates: bool
) -> tuple[ActionSettings, RuleFiles]:
    """Rule files only the pull request has: refused when the base already gates (`base_gates`:
    a baseline exists there), used and said otherwise (the first adoption of the gate)."""
    if not found.pending:
        return settings, found
    if base_gates:
        first = found.pending[0]
        raise InputError(
            f"input '{first.input}': {first.path} does not exist at {found.ref}, which already "
            "has a gate (a baseline): a pull request cannot bring its own rule file to its own "
            f"gate; land {first.path} in a pull request of its own first"
        )
    return settings, found.model_copy(
        update={"own": found.pending, "pending": [], "pending_paths": []}
    )


def without_pending(settings: ActionSettings, found: RuleFiles) -> ActionSettings:
    """The settings without the files only the pull request has (for a run that ends before
    they are decided: its comment must not be the pull request's own template)."""
    for local in found.pending_paths:
        settings = _replaced(settings, local, None)
    return settings
