"""Issue 44, item 9: golden-gate installs like a Python tool. The wheel and the sdist are built
(hatchling, the build backend), the wheel is installed by pip into a fresh virtual environment
from an offline wheelhouse (tests/wheelhouse.py), and the README's quickstart runs with that
install's `golden-gate`. The judge SDKs the command does not need are extras: without them a
judge that needs one stops before any item, in one sentence naming the extra."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest

from tests.cli.test_quickstart import README, _stop_leftovers, commands, run_page, section
from tests.wheelhouse import wheelhouse

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _build(source: Path, out: Path, *targets: str) -> None:
    flags = [arg for target in targets for arg in ("-t", target)]
    done = subprocess.run(
        [str(BIN / "hatchling"), "build", *flags, "-d", str(out)],
        cwd=source, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    """(the wheel, the sdist), built from this checkout."""
    out = tmp_path_factory.mktemp("dist")
    _build(ROOT, out)
    (wheel,) = out.glob("golden_gate-*.whl")
    (sdist,) = out.glob("golden_gate-*.tar.gz")
    return wheel, sdist


def _requirements(wheel: Path) -> dict[str, list[str]]:
    """Requires-Dist of the wheel by extra ("" for the ones every install gets)."""
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        text = archive.read(name).decode()
    found: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line.startswith("Requires-Dist:"):
            requirement, _, marker = line.split(":", 1)[1].strip().partition(";")
            extra = re.search(r"extra == '([^']+)'", marker)
            found.setdefault(extra.group(1) if extra else "", []).append(requirement.strip())
    return found


def test_the_wheel_holds_the_package_its_templates_and_extras(built):
    wheel, _ = built
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert "golden_gate/templates/init/golden-gate.toml.j2" in names
    assert "golden_gate/templates/page/page.html" in names
    assert "golden_gate/example_assistant/golden.jsonl" in names
    assert not any(n.startswith(("tests/", "bench/", "docs/")) for n in names)
    requires = _requirements(wheel)
    core = " ".join(requires[""])
    assert "langchain-openai" in core
    assert "langchain-anthropic" not in core and "langchain-google-genai" not in core
    assert requires["anthropic"] == ["langchain-anthropic==1.7.10"]
    assert requires["google-genai"] == ["langchain-google-genai==4.4.3"]


def test_the_sdist_builds_the_same_wheel(built, tmp_path):
    wheel, sdist = built
    with tarfile.open(sdist) as archive:
        names = archive.getnames()
        archive.extractall(tmp_path, filter="data")
    assert not any("/.import_linter_cache/" in n or "/.tools/" in n for n in names)
    (source,) = tmp_path.iterdir()
    _build(source, tmp_path / "again", "wheel")
    (again,) = (tmp_path / "again").glob("*.whl")
    with zipfile.ZipFile(wheel) as first, zipfile.ZipFile(again) as second:
        assert sorted(first.namelist()) == sorted(second.namelist())


@pytest.fixture(scope="module")
def installed(built, tmp_path_factory):
    """A fresh virtual environment with the built wheel installed by pip, offline: the
    wheelhouse holds its runtime requirements (no extra), packed from this environment."""
    wheel, _ = built
    where = tmp_path_factory.mktemp("install")
    house = where / "wheelhouse"
    wheelhouse(_requirements(wheel)[""], house)
    env_dir = where / "venv"
    venv.create(env_dir, with_pip=False)
    done = subprocess.run(
        [
            sys.executable, "-m", "pip", "--isolated", "--python", str(env_dir / "bin" / "python"),
            "install", "--quiet", "--no-compile", "--no-index", "--find-links", str(house),
            str(wheel),
        ],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    shutil.rmtree(house)
    assert done.returncode == 0, done.stdout + done.stderr
    yield env_dir / "bin"
    shutil.rmtree(env_dir, ignore_errors=True)


def test_the_installed_wheel_runs_the_readmes_quickstart(installed, tmp_path):
    assert (installed / "golden-gate").is_file()
    version = subprocess.run(
        [str(installed / "golden-gate"), "--version"], capture_output=True, text=True, check=False
    )
    assert version.returncode == 0 and version.stdout.startswith("golden-gate "), version
    typed = commands(section(README, "Quickstart"))
    try:
        ran = run_page(typed, tmp_path, bin_dir=installed)
    finally:
        _stop_leftovers(tmp_path)
    gates = [(rc, out) for c, rc, out in ran if c.split("#")[0].strip() == "golden-gate run"]
    first_gate = next(i for i, (c, _, _) in enumerate(ran) if c.startswith("golden-gate run"))
    for command, rc, out in ran[:first_gate]:
        assert rc == 0, (command, out)
    (red_rc, red), (green_rc, green) = gates
    assert red_rc == 1 and red.startswith("golden-gate: failed:"), red
    assert green_rc == 0 and green.startswith("golden-gate: passed:"), green
    assert ran[-1][1] == 0 and "stopped" in ran[-1][2]
    # It was this install that ran: the package imported from the fresh environment.
    where = subprocess.run(
        [str(installed / "python"), "-c", "import golden_gate; print(golden_gate.__file__)"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert where.stdout.startswith(str(installed.parent)), where


@pytest.mark.parametrize(
    ("model", "extra", "key"),
    [
        ("anthropic:claude-haiku-4-5-20251001", "anthropic", "ANTHROPIC_API_KEY"),
        ("google_genai:gemini-2.5-flash", "google-genai", "GOOGLE_API_KEY"),
    ],
)
def test_a_judge_whose_extra_is_missing_stops_before_any_item(
    installed, tmp_path, model, extra, key
):
    from golden_gate.example_assistant import golden_path, start

    golden = tmp_path / "golden.jsonl"
    golden.write_text(golden_path().read_text())
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))},
        key: "sk-test-not-a-real-key",
    }
    with start("baseline") as assistant:
        done = subprocess.run(
            [
                str(installed / "golden-gate"), "eval", str(golden), "--assistant-url",
                assistant.url, "--judge-model", model, "-o", str(tmp_path / "r.json"),
            ],
            capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path, env=env,
        )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"pip install 'golden-gate[{extra}]'" in done.stderr
    error = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(error) == 1 and "Traceback" not in done.stderr, done.stderr
    assert "items passed" not in done.stdout and not (tmp_path / "r.json").exists()
    # Writing a workflow for that judge needs no SDK: only judging does.
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    pin = "someorg/golden-gate-action@" + "0" * 40
    init = subprocess.run(
        [str(installed / "golden-gate"), "init", "--dir", str(repo), "--action", pin,
         "--judge-model", model],
        capture_output=True, text=True, timeout=120, check=False, env=env,
    )  # fmt: skip
    assert init.returncode == 0, init.stdout + init.stderr
    assert key in (repo / ".github" / "workflows" / "golden-gate.yml").read_text()
