"""The folders are the layers (pyproject's [tool.importlinter]; docs/architecture.md, "How it is
built"):
`make lint` runs the contracts on the tree; here they are shown to hold, and to fail, naming
the import, when a copy of the tree gains an import that points up a layer or closes a circle."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    """The contracts of pyproject.toml over the package at `tree/src`, in a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo", str(ROOT / "pyproject.toml")],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "src", tmp_path / "src", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def add_import(path: Path, line: str) -> None:
    text = path.read_text()
    head, _, rest = text.partition("from __future__ import annotations\n")
    path.write_text(head + "from __future__ import annotations\n\n" + line + "\n" + rest)


def test_the_tree_keeps_every_contract(tree: Path) -> None:
    done = lint_imports(tree)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Contracts: 5 kept, 0 broken." in done.stdout


def test_an_import_up_a_layer_breaks_the_layers(tree: Path) -> None:
    add_import(tree / "src/golden_gate/core/stats.py", "from golden_gate.evaluation import judge")
    done = lint_imports(tree)
    assert done.returncode == 1
    assert "golden_gate.core is not allowed to import golden_gate.evaluation" in done.stdout
    assert "golden_gate.core.stats -> golden_gate.evaluation.judge" in done.stdout


def test_a_lazy_import_up_a_layer_counts_too(tree: Path) -> None:
    path = tree / "src/golden_gate/rendering/charts.py"
    path.write_text(path.read_text() + "\n\ndef _late():\n    from golden_gate import cli\n")
    done = lint_imports(tree)
    assert done.returncode == 1
    assert "golden_gate.rendering is not allowed to import golden_gate.cli" in done.stdout


def test_siblings_on_one_layer_are_independent(tree: Path) -> None:
    add_import(
        tree / "src/golden_gate/rendering/render.py", "from golden_gate.evaluation import cache"
    )
    done = lint_imports(tree)
    assert done.returncode == 1
    assert "golden_gate.rendering is not allowed to import golden_gate.evaluation" in done.stdout


def test_a_mode_importing_the_dispatcher_breaks_the_action_layers(tree: Path) -> None:
    add_import(
        tree / "src/golden_gate/action/modes/merge.py", "from golden_gate.action import main"
    )
    done = lint_imports(tree)
    assert done.returncode == 1
    assert (
        "golden_gate.action.modes is not allowed to import golden_gate.action.main" in done.stdout
    )


@pytest.mark.parametrize(
    "line",
    ["import gc", "import multiprocessing", "from concurrent import futures", "import threading"],
)
def test_process_or_collector_machinery_in_core_breaks_the_calm_core(tree: Path, line: str) -> None:
    # A forked copy, a pool, a collector pause: reading and gating stay plain code in core/.
    add_import(tree / "src/golden_gate/core/slim.py", line)
    done = lint_imports(tree)
    assert done.returncode == 1
    module = line.split()[1]
    assert f"golden_gate.core is not allowed to import {module}" in done.stdout
    assert f"golden_gate.core.slim -> {module}" in done.stdout


def test_a_helper_that_forks_breaks_the_calm_core_through_it(tree: Path) -> None:
    # Indirect imports count: a ground-floor module that forks, imported by core/, is refused.
    (tree / "src/golden_gate/process.py").write_text(
        (tree / "src/golden_gate/process.py").read_text() + "\nimport multiprocessing\n"
    )
    add_import(tree / "src/golden_gate/core/stats.py", "from golden_gate import process")
    done = lint_imports(tree)
    assert done.returncode == 1
    assert "golden_gate.core is not allowed to import golden_gate.process" in done.stdout


def test_a_circle_between_siblings_is_refused(tree: Path) -> None:
    # judge_client and tracing share a layer and a package: nothing else forbids the pair.
    add_import(
        tree / "src/golden_gate/evaluation/tracing.py", "from golden_gate.evaluation import judge"
    )
    done = lint_imports(tree)
    assert done.returncode == 1
    assert "No cycles are allowed in golden_gate.evaluation" in done.stdout


def test_a_new_top_level_module_must_be_given_a_layer(tree: Path) -> None:
    (tree / "src/golden_gate/stray.py").write_text('"""Nobody placed me."""\n')
    done = lint_imports(tree)
    assert done.returncode == 1
    assert "golden_gate.stray" in done.stdout


def test_every_mode_the_inputs_accept_has_a_module_to_run_it() -> None:
    from golden_gate.action.inputs import MODES
    from golden_gate.action.main import DISPATCH

    assert set(DISPATCH) == set(MODES)
    for mode, run in DISPATCH.items():
        assert run.__module__ == "golden_gate.action.modes." + mode.replace("-", "_")
    import yaml

    described = yaml.safe_load((ROOT / "action.yml").read_text())["inputs"]["mode"]
    for mode in MODES:  # action.yml tells users what each mode does
        assert re.search(rf"(^|[ ,]){re.escape(mode)} \(", described["description"]), mode


def test_the_core_reads_no_environment() -> None:
    """The import contracts keep the network, subprocesses and templates out of core/; what
    they cannot see, a read of the environment, is kept out here."""
    for path in sorted((ROOT / "src/golden_gate/core").glob("*.py")):
        text = path.read_text()
        for word in ("environ", "getenv", "putenv"):
            assert word not in text, f"{path.name} reads the environment ({word})"
