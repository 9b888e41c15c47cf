"""`golden-gate init`: a starter golden set, golden-gate.toml and the three workflows, written
into a repository; `init --example`: a runnable example in an empty folder.

The golden set is a few commented examples, or converted from a CSV or JSONL file the team
already has (a question column, and what a correct answer says); a golden set that exists is the
team's own and is never replaced, not even with `force` (which overwrites only what `init`
itself generates: the config and the workflows). The workflows are the pull request gate, the
poster of fork comments and the baseline proposer, with every action pinned to a full commit SHA
when the ref can be resolved (offline, the ref as given and a comment on how to pin it) and each
job given only the permissions it uses. The floor written is one the selected items can reach.
Converting a golden set is starter_golden.py, the workflows and their pins starter_workflows.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

from golden_gate import jsonl
from golden_gate.core.golden import GoldenItem, parse_golden, select
from golden_gate.core.stats import wilson_lower_bound
from golden_gate.errors import GateError, InputError
from golden_gate.files import read_text, write_result
from golden_gate.rendering.environment import init_environment
from golden_gate.starter_golden import STARTER_ITEMS, convert, golden_text
from golden_gate.starter_scope import (
    Folder,
    find_knowledge,
    given_folders,
    scope_lines,
    take_back,
)
from golden_gate.starter_service import Service, detect
from golden_gate.starter_workflows import find_compose, resolve_action, workflows

# Floors `init` may write, highest first.
FLOORS = (0.8, 0.75, 0.7, 0.6, 0.5)


def fitting_floor(n: int, *, confidence: float = 0.95) -> float:
    """The highest floor of FLOORS that `n` items clear with one of them failing, so one unlucky
    item does not fail the gate; for a set too small for that, with every one passing (the
    Wilson lower bound of n of n is n / (n + z²): 16 items reach 0.80); else 0, the floor off."""
    for passing in (n - 1, n):
        best = wilson_lower_bound(passing, n, confidence=confidence) if n and passing > 0 else 0.0
        if floor := next((f for f in FLOORS if best >= f), 0.0):
            return floor
    return 0.0


def items_needed(floor: float) -> int:
    """The fewest items that can clear `floor` when every one passes."""
    n = 1
    while wilson_lower_bound(n, n) < floor:
        n += 1
    return n


def floor_lines(n: int) -> str:
    """`floor = …` and the comment that says how it was chosen and how to choose it."""
    floor = fitting_floor(n)
    if not n:
        why = (
            "# No item carries the tag smoke yet, so no floor can be chosen for the pull-request\n"
            "# subset: tag the items every pull request runs, then choose one.\n"
        )
    else:
        why = (
            f"# The floor fits the {n} item(s) the pull-request subset selects now: {n} of {n} "
            f"passing give\n# a lower bound of {wilson_lower_bound(n, n):.2f}"
            + (f", {n - 1} of {n} {wilson_lower_bound(n - 1, n):.2f}. " if n > 1 else ". ")
        )
        if floor < 0.8:
            why += (
                f"0.80 needs at least\n# {items_needed(0.8)} items all passing; raise the floor "
                "as the set grows.\n"
            )
        else:
            why += "Each failing item lowers the bound: see `golden-gate plan`.\n"
    if floor == 0:
        why += (
            "# floor = 0 switches it off: until the set grows, only the test against the "
            "baseline gates.\n"
        )
    return (
        f"{why}# Choosing n and floor together: docs/statistics.md in golden-gate's repository.\n"
        f"floor = {floor}"
    )


def config_text(
    *,
    golden: str,
    baseline: str,
    judge_model: str,
    compose_file: str | None,
    smoke_items: int = 0,
    knowledge: list[Folder] | None = None,
) -> str:
    """The commented golden-gate.toml; checked by our own reader before it is written."""
    from golden_gate import config_file

    if compose_file:
        assistant = "# url: the compose service's address (set by the Action)"
        compose = (
            "\n[compose]\n"
            "# The compose file that starts the assistant (golden-gate starts it, waits for it to\n"
            "# be healthy and always tears it down).\n"
            f"file = {_toml(compose_file)}\n"
            '# service = "assistant"                   # the assistant\'s service in the file\n'
        )
    else:
        assistant = (
            "# url: where it runs (the workflows pass it as the assistant-url input: see "
            "their comment)"
        )
        compose = ""
    text = (
        init_environment()
        .get_template("golden-gate.toml.j2")
        .render(
            golden=_toml(golden),
            baseline=_toml(baseline),
            baseline_path=baseline,
            judge_model=_toml(judge_model),
            scope_lines=scope_lines(knowledge or []),
            assistant_lines=assistant,
            compose_lines=compose,
            floor_lines=floor_lines(smoke_items),
        )
    )
    config_file.parse(text, source="the starter golden-gate.toml")
    return text


def _toml(value: str) -> str:
    return json.dumps(value)  # a JSON string is a TOML basic string


GITIGNORE = (
    "# golden-gate: what its runs leave behind",
    ".judge-cache/",
    "/report.json",
    "/comment.md",
    "/golden-gate/",
)


def gitignore_text(root: Path, extra: tuple[str, ...] = ()) -> str | None:
    """.gitignore with golden-gate's lines appended (those it lacks), or None when it has them."""
    path = root / ".gitignore"
    text = read_text(path, what=".gitignore") if path.is_file() else ""
    have = {line.strip() for line in text.splitlines()}
    missing = [line for line in (*GITIGNORE[1:], *extra) if line not in have]
    if not missing:
        return None
    lines = ([] if GITIGNORE[0] in have else [GITIGNORE[0]]) + missing
    gap = "\n" if text and not text.endswith("\n") else ""
    return text + gap + ("\n" if text.strip() else "") + "\n".join(lines) + "\n"


class Written(NamedTuple):
    """What `init` did: the files written, the files kept, and warnings to print."""

    written: list[Path]
    kept: list[str]
    warnings: list[str]
    compose_file: str | None
    # A CODEOWNERS stanza to add by hand (no --owners given), printed, not written.
    codeowners: str | None = None
    # Without a compose file: how the workflows start the assistant on the runner, if found.
    service: Service | None = None
    # What init kept or added of files that existed (golden-gate.toml merged, workflows kept).
    notes: tuple[str, ...] = ()
    knowledge: tuple[Folder, ...] = ()  # the folders taken back from the ignore list


OWNER_PLACEHOLDER = "@OWNER"


def owned_paths(golden: str, baseline: str) -> list[str]:
    """The gate's rules as CODEOWNERS patterns: the golden set's folder (the baseline, judge
    prompts, labels and calibration usually live beside it), the config, the workflows."""
    paths: list[str] = []
    for name in (golden, baseline):
        parent = Path(name).parent
        paths.append(f"/{parent.as_posix()}/" if parent != Path(".") else f"/{name}")
    return [
        *dict.fromkeys(paths),
        "/golden-gate.toml",
        "/golden-gate/calibration.json",
        "/.github/workflows/golden-gate*.yml",
    ]


def codeowners_text(
    root: Path, *, golden: str, baseline: str, owners: list[str]
) -> tuple[str, str | None, str | None]:
    """(where CODEOWNERS is or goes, its new text or None to leave it, a stanza to print)."""
    from golden_gate.core import codeowners

    for owner in owners:
        if not owner.startswith("@") and "@" not in owner.strip("@"):
            raise InputError(
                f"--owners: '{owner}' is not a code owner (@user, @org/team or an email)"
            )
    existing = next((n for n in codeowners.LOCATIONS if (root / n).is_file()), None)
    name = existing or codeowners.LOCATIONS[0]
    text = read_text(root / name, what="CODEOWNERS") if existing else ""
    if codeowners.MARKER in text:
        return name, None, None  # init ran before: the team's lines stay as they are
    stanza = codeowners.stanza(owned_paths(golden, baseline), owners or [OWNER_PLACEHOLDER])
    if not owners:
        return name, None, stanza
    gap = "\n" if text and not text.endswith("\n") else ""
    return name, text + gap + ("\n" if text.strip() else "") + stanza, None


def _count_selected(path: Path, tags: list[str]) -> tuple[int, str]:
    """How many items of a golden set the subset selects; with a warning when it cannot say."""
    try:
        items = parse_golden(jsonl.lines(read_text(path, what="golden set")), source=str(path))
    except GateError as exc:
        return 0, f"{path} was kept as it is, but it does not parse ({exc}); fix it before a run"
    return len(select(items, tags)), ""


def init(
    root: Path,
    *,
    source: Path | None,
    action: str,
    golden: str,
    baseline: str,
    judge_model: str,
    compose_file: str | None,
    force: bool,
    owners: list[str] | None = None,
    knowledge: list[str] | None = None,
) -> Written:
    """Write the starter files into the repository at `root`.

    A golden set already at `golden` is kept whatever `force` says (a team's items are never
    replaced). A golden-gate.toml that exists is merged, never replaced: every value and comment
    the team wrote stays and what the starter would set that it lacks is added (a compose file
    found since, baseline-runs, ...). Workflows that exist are kept unless `force`, which
    rewrites them. With `owners`, a CODEOWNERS stanza makes them the owners of the gate's rules
    (appended to an existing CODEOWNERS, never replacing a line of it); without, the stanza is
    printed. `knowledge`: the folders the assistant answers from (else found, see
    starter_scope.py), taken back from the ignore list so a change to them is gated.
    """
    if not (root / ".git").exists():
        raise InputError(f"{root}: not a git repository (run `git init` first, or pass --dir)")
    for name in (golden, baseline, compose_file or ""):
        if name and (Path(name).is_absolute() or ".." in Path(name).parts):
            raise InputError(f"{name}: give a path inside the repository, relative to its root")
    warnings: list[str] = []
    notes: list[str] = []
    found = False
    if compose_file is None and (compose_file := find_compose(root)) is not None:
        found = True
    service = detect(root) if compose_file is None else None
    golden_exists = (root / golden).exists()
    if golden_exists and source is not None:
        raise InputError(
            f"{golden} exists: the converted items were not written, and nothing else was (a "
            "golden set is never replaced, not even with --force); pass --golden another path"
        )
    folders = given_folders(root, knowledge) if knowledge else find_knowledge(root, compose_file)
    files: dict[str, str] = {}
    if golden_exists:
        smoke, warning = _count_selected(root / golden, ["smoke"])
        warnings += [warning] if warning else []
    else:
        items = STARTER_ITEMS
        if source is not None:
            items, converted = convert(source)
            warnings += converted
        for item in items:
            GoldenItem.model_validate(item)
        files[golden] = golden_text(items)
        smoke = sum(isinstance(t := item.get("tags"), list) and "smoke" in t for item in items)
    pin = resolve_action(action)
    if pin.unpinned:
        warnings.append(
            f"the workflows use {pin.uses} unpinned: {pin.unpinned}; each says how to pin it"
        )
    fresh = config_text(
        golden=golden,
        baseline=baseline,
        judge_model=judge_model,
        compose_file=compose_file,
        smoke_items=smoke,
        knowledge=folders,
    )
    config_path = root / CONFIG
    merged_into = config_path.is_file()
    if merged_into:
        text, added, said = _merged_config(config_path, fresh, smoke=smoke, folders=folders)
        notes += said
        if added:
            files[CONFIG] = text
            notes.append(f"{CONFIG}: kept every setting you wrote; added {', '.join(added)}")
        else:
            notes.append(f"{CONFIG}: kept as it is (it has every setting init writes)")
    else:
        files[CONFIG] = fresh
    folders = _taken_back(folders, files.get(CONFIG) or read_text(config_path, what=CONFIG), notes)
    generated = workflows(
        action=pin,
        golden=golden,
        baseline=baseline,
        judge_model=judge_model,
        compose_file=compose_file,
        compose_found=found,
        service=service,
    )
    kept_workflows = []
    for name, text in generated.items():
        path = root / name
        if not path.exists() or force:
            files[name] = text
        elif read_text(path, what=name) != text:
            kept_workflows.append(name)
    if kept_workflows:
        notes.append(
            f"kept {', '.join(kept_workflows)} as they are: they differ from what init writes "
            "now (--force rewrites them; golden-gate.toml is merged either way)"
        )
    if (ignore := gitignore_text(root)) is not None:
        files[".gitignore"] = ignore
    owners_file, owners_text, to_print = codeowners_text(
        root, golden=golden, baseline=baseline, owners=list(owners or [])
    )
    if owners_text is not None:
        files[owners_file] = owners_text
    written = []
    for name, text in files.items():
        write_result(root / name, text, what=name)
        written.append(root / name)
    kept = [golden] if golden_exists else []
    return Written(
        written,
        kept,
        warnings,
        compose_file,
        to_print,
        service=service,
        notes=tuple(notes),
        knowledge=tuple(folders),
    )


CONFIG = "golden-gate.toml"


def _taken_back(folders: list[Folder], text: str, notes: list[str]) -> list[Folder]:
    """The knowledge-base folders the config now really takes back (the team's own scope
    may not); an allow-list that does not name one is said."""
    import tomllib

    import pathspec

    scope = tomllib.loads(text).get("scope", {})
    if scope.get("paths"):
        try:
            spec = pathspec.GitIgnoreSpec.from_lines(scope["paths"])
        except Exception:  # a bad pattern: the first run names it
            return []
        covered = [f for f in folders if spec.match_file(f"{f.path}/x.md")]
        missing = [f.path for f in folders if f not in covered]
        if missing:
            notes.append(
                f"{CONFIG}: [scope] paths is an allow-list and names none of "
                f"{', '.join(m + '/' for m in missing)}: add them, or a pull request changing "
                "only that knowledge base is skipped"
            )
        return covered
    ignore = scope.get("ignore-paths", [])
    return [f for f in folders if take_back(f.path) in ignore]


def _merged_config(
    path: Path, fresh: str, *, smoke: int, folders: list[Folder]
) -> tuple[str, list[str], list[str]]:
    """The team's golden-gate.toml with what the starter adds; and what init says of it."""
    import tomllib

    from golden_gate import config_file
    from golden_gate.starter_merge import MergeError, merge

    text = read_text(path, what=CONFIG)
    # Their file must be one golden-gate reads: a merge into a broken file would hide where.
    mine = config_file.parse(text, source=str(path))
    # With an allow-list (`paths`) the ignore list is not used: no take-back to add.
    skip = frozenset({"[scope] ignore-paths"} if mine.values.get("paths") else ())
    try:
        merged = merge(text, fresh, skip=skip)
    except (tomllib.TOMLDecodeError, MergeError) as exc:
        raise InputError(
            f"{path}: init could not add its new settings to this file ({exc}); nothing was "
            "written: move it aside, run init, and copy your settings back"
        ) from None
    config_file.parse(merged.text, source=str(path))
    said = []
    values = mine.values
    if (
        values.get("assistant-url")
        and values.get("compose-file") is None
        and ("[compose]" in merged.added or "[compose] file" in merged.added)
    ):
        said.append(
            f"{path}: [assistant] url is set and init added [compose] file: the gate starts "
            "the compose file but asks url; remove url to reach the compose service by its name"
        )
    ignore = values.get("ignore-paths")
    if ignore is not None and not values.get("paths"):
        missing = [take_back(f.path) for f in folders if take_back(f.path) not in ignore]
        if missing:
            said.append(
                f"{path}: kept [scope] ignore-paths as you wrote it; add "
                f"{', '.join(json.dumps(m) for m in missing)} to it, or a pull request changing "
                "only that knowledge base is skipped as documentation"
            )
    floor, could = values.get("floor"), fitting_floor(smoke)
    if floor is not None and could > floor:
        said.append(
            f"{path}: kept floor = {floor}; the {smoke} items the pull-request subset selects "
            f"could hold {could} (see `golden-gate plan`)"
        )
    return merged.text, merged.added, said


EXAMPLE_CONFIG = """\
# golden-gate's settings for the example (written by `golden-gate init --example`).
# See every effective setting and where it came from: golden-gate config --show-origin

golden = "evals/golden.jsonl"
# Every item: the 14 `smoke` items alone could not clear a floor of 0.80 even all passing
# (lower bound 0.785); 24 of 24 give 0.862. See docs/statistics.md on choosing n and floor.
subset-tags = ["*"]
baseline = "evals/baseline.json"

[assistant]
# The example assistant (`golden-gate example-assistant start`), on the port in assistant.toml.
url = "{url}"

[judge]
# The offline judge: no key, no network. In CI, a dated model: "openai:gpt-4.1-mini-2025-04-14".
model = "keypoints"

[gate]
floor = 0.8
"""

EXAMPLE_ASSISTANT = """\
# The example assistant's settings (written by `golden-gate init --example`). It answers questions
# about a fictional product, Acme Vault, from a few Markdown pages, and reads `variant` again on
# every request. Changing it is this example's pull request:
#   baseline   answers with the whole section and cites its page (main)
#   candidate  a prompt change, "answer more concisely", that cut some answers to one sentence
#              and dropped some citations (the pull request that regressed)
variant = "baseline"
host = "127.0.0.1"
port = {port}
"""


def free_port() -> int:
    """A port free on 127.0.0.1 now, for the example (so two examples do not collide)."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def example(root: Path, *, force: bool) -> Written:
    """A runnable example in `root`: golden-gate.toml, a golden set and the example assistant's
    settings. Offline: the assistant is bundled and the judge is the offline key-point judge."""
    from golden_gate.example_assistant import golden_path

    root.mkdir(parents=True, exist_ok=True)
    port = free_port()
    golden = "evals/golden.jsonl"
    files = {
        "golden-gate.toml": EXAMPLE_CONFIG.format(url=f"http://127.0.0.1:{port}"),
        "assistant.toml": EXAMPLE_ASSISTANT.format(port=port),
    }
    kept = [golden] if (root / golden).exists() else []
    if not kept:
        files[golden] = read_text(golden_path(), what="the example golden set")
    existing = [name for name in files if (root / name).exists()]
    if existing and not force:
        raise InputError(
            f"{', '.join(existing)} already exist{'s' if len(existing) == 1 else ''}; "
            "nothing was written (init --example is for an empty folder; --force overwrites)"
        )
    from golden_gate import config_file

    config_file.parse(files["golden-gate.toml"], source="the example golden-gate.toml")
    if (ignore := gitignore_text(root, (".example-assistant.*",))) is not None:
        files[".gitignore"] = ignore
    written = []
    for name, text in files.items():
        write_result(root / name, text, what=name)
        written.append(root / name)
    return Written(written, kept, [], None)


def example_steps() -> list[str]:
    return [
        "golden-gate example-assistant start    # the assistant, in the background",
        "golden-gate eval -o evals/baseline.json  # main's answers become the baseline",
        'then make the pull request: variant = "candidate" in assistant.toml, and '
        'golden-gate run (red), variant = "baseline" again and golden-gate run (green)',
    ]


def next_steps(
    *, golden: str, baseline: str, compose_file: str | None, service: Service | None = None
) -> list[str]:
    """The three things to do after `init`."""
    port = service.port if service is not None else 8000
    where = "" if compose_file else f" --assistant-url http://runner-host:{port}"
    assistant = (
        ""
        if compose_file or service is not None
        else " and the repository variable ASSISTANT_URL (where it runs)"
    )
    return [
        f"Write questions your users ask into {golden} (key points a correct answer states), "
        f"then try them: golden-gate eval{where} (golden-gate.toml says the rest; "
        "golden-gate config --show-origin shows every setting)",
        f"Add the repository secret JUDGE_API_KEY (the judge's API key){assistant}.",
        "Commit, then run the 'golden-gate baseline' workflow from the Actions tab and merge "
        f"the pull request it opens ({baseline}): from then on every pull request is gated.",
    ]
