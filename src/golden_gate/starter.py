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
from golden_gate.starter_workflows import find_compose, resolve_action, workflows

# Floors `init` may write, highest first.
FLOORS = (0.8, 0.75, 0.7, 0.6, 0.5)


def fitting_floor(n: int) -> float:
    """The highest floor of FLOORS that `n` items clear with one of them failing, so one unlucky
    item does not fail the gate; for a set too small for that, with every one passing (the
    Wilson lower bound of n of n is n / (n + z²): 16 items reach 0.80); else 0, the floor off."""
    for passing in (n - 1, n):
        best = wilson_lower_bound(passing, n) if n and passing > 0 else 0.0
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
) -> str:
    """The commented golden-gate.toml; checked by our own reader before it is written."""
    from golden_gate import config_file

    if compose_file:
        assistant = (
            "# url: the compose service's address (set by the Action)\n\n"
            f"[compose]\nfile = {_toml(compose_file)}\n"
            '# service = "assistant"                   # the assistant\'s service in the file'
        )
    else:
        assistant = (
            "# url: where it runs (in the workflow: the repository variable ASSISTANT_URL, "
            "passed as the assistant-url input)"
        )
    text = (
        init_environment()
        .get_template("golden-gate.toml.j2")
        .render(
            golden=_toml(golden),
            baseline=_toml(baseline),
            judge_model=_toml(judge_model),
            assistant_lines=assistant,
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
) -> Written:
    """Write the starter files into the repository at `root`.

    A golden set already at `golden` is kept whatever `force` says (a team's items are never
    replaced); `force` overwrites what `init` generates, golden-gate.toml and the workflows.
    With `owners`, a CODEOWNERS stanza makes them the owners of the gate's rules (appended to
    an existing CODEOWNERS, never replacing a line of it); without, the stanza is printed.
    """
    if not (root / ".git").exists():
        raise InputError(f"{root}: not a git repository (run `git init` first, or pass --dir)")
    for name in (golden, baseline, compose_file or ""):
        if name and (Path(name).is_absolute() or ".." in Path(name).parts):
            raise InputError(f"{name}: give a path inside the repository, relative to its root")
    warnings: list[str] = []
    found = False
    if compose_file is None and (compose_file := find_compose(root)) is not None:
        found = True
    golden_exists = (root / golden).exists()
    if golden_exists and source is not None:
        raise InputError(
            f"{golden} exists: the converted items were not written, and nothing else was (a "
            "golden set is never replaced, not even with --force); pass --golden another path"
        )
    files: dict[str, str] = {}
    if golden_exists:
        smoke, warning = _count_selected(root / golden, ["smoke"])
        warnings += [warning] if warning else []
    else:
        items = convert(source) if source is not None else STARTER_ITEMS
        for item in items:
            GoldenItem.model_validate(item)
        files[golden] = golden_text(items)
        smoke = sum(isinstance(t := item.get("tags"), list) and "smoke" in t for item in items)
    pin = resolve_action(action)
    if pin.unpinned:
        warnings.append(
            f"the workflows use {pin.uses} unpinned: {pin.unpinned}; each says how to pin it"
        )
    files["golden-gate.toml"] = config_text(
        golden=golden,
        baseline=baseline,
        judge_model=judge_model,
        compose_file=compose_file,
        smoke_items=smoke,
    )
    files.update(
        workflows(
            action=pin,
            golden=golden,
            baseline=baseline,
            judge_model=judge_model,
            compose_file=compose_file,
            compose_found=found,
        )
    )
    existing = [name for name in files if (root / name).exists()]
    if existing and not force:
        raise InputError(
            f"{', '.join(existing)} already exist{'s' if len(existing) == 1 else ''}; "
            "nothing was written (--force overwrites them; a golden set is never overwritten)"
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
    return Written(written, kept, warnings, compose_file, to_print)


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


def next_steps(*, golden: str, baseline: str, compose_file: str | None) -> list[str]:
    """The three things to do after `init`."""
    where = "" if compose_file else " --assistant-url http://127.0.0.1:8000"
    assistant = "" if compose_file else " and the repository variable ASSISTANT_URL (where it runs)"
    return [
        f"Write questions your users ask into {golden} (key points a correct answer states), "
        f"then try them: golden-gate eval{where} (golden-gate.toml says the rest; "
        "golden-gate config --show-origin shows every setting)",
        f"Add the repository secret JUDGE_API_KEY (the judge's API key){assistant}.",
        "Commit, then run the 'golden-gate baseline' workflow from the Actions tab and merge "
        f"the pull request it opens ({baseline}): from then on every pull request is gated.",
    ]
