"""The Action's world in tests: a repository on the fake GitHub, a checked-out workspace, and
the entrypoint run as the runner runs it (a subprocess with `INPUT_*` variables, hyphens kept,
every default from action.yml, real webhook payloads at GITHUB_EVENT_PATH, the file commands)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

from golden_gate.action.yardstick import env_name
from golden_gate.demo import baseline_path
from golden_gate.example_assistant import golden_path

ROOT = Path(__file__).resolve().parents[1]
PAYLOADS = Path(__file__).with_name("payloads")
REPO = "acme/docs-assistant"
FORK = "contributor/docs-assistant"
WRITE_TOKEN = "ghs_writeTOKENwriteTOKENwrite0001"
READ_TOKEN = "ghs_readonlyTOKENreadonlyTOKEN0002"
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
# Where the runner says this step is (GITHUB_WORKFLOW_REF, GITHUB_JOB, GITHUB_ACTION, ...).
WORKFLOW = ".github/workflows/golden-gate.yml"
JOB = "gate"
STEP_ID = "golden-gate"
ACTION_REPOSITORY = "acme/golden-gate-action"
# The rules every World starts with, in golden-gate.toml at main and in the checkout.
RULES: dict = {
    "golden": "evals/golden.jsonl",
    "subset-tags": ["smoke"],
    "baseline": "evals/baseline.json",
    "gate": {"floor": 0.7},
}


def toml_text(rules: dict) -> str:
    """A small TOML writer for tests: top-level keys, then one table a group."""
    import json as _json

    def value(v) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, dict):
            return "{" + ", ".join(f"{_json.dumps(k)} = {value(x)}" for k, x in v.items()) + "}"
        return _json.dumps(v)

    top = [
        f"{k} = {value(v)}" for k, v in rules.items() if not isinstance(v, dict) or k == "headers"
    ]
    tables = [
        f"\n[{k}]\n" + "\n".join(f"{key} = {value(x)}" for key, x in v.items())
        for k, v in rules.items()
        if isinstance(v, dict) and k != "headers"
    ]
    return "\n".join(top) + "\n" + "\n".join(tables) + "\n"


def parse_outputs(text: str) -> dict[str, str]:
    outputs, lines = {}, iter(text.splitlines())
    for line in lines:
        if "<<" in line and "=" not in line.split("<<")[0]:
            name, delimiter = line.split("<<", 1)
            value = []
            for part in lines:
                if part == delimiter:
                    break
                value.append(part)
            outputs[name] = "\n".join(value)
        elif "=" in line:
            name, value = line.split("=", 1)
            outputs[name] = value
    return outputs


def _git(where: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid",
         "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null", *args],
        cwd=where, check=True, capture_output=True,
    )  # fmt: skip


class World:
    """A repository on the fake GitHub, a checked-out workspace and the runner's files."""

    def __init__(self, github, tmp: Path) -> None:
        self.github = github
        self.tmp = tmp
        self.workspace = tmp / "workspace"
        (self.workspace / "evals").mkdir(parents=True)
        shutil.copy(golden_path(), self.workspace / "evals" / "golden.jsonl")
        github.add_actions_token(WRITE_TOKEN)
        github.add_actions_token(READ_TOKEN, read_only=True)
        rules = toml_text(RULES)
        (self.workspace / "golden-gate.toml").write_text(rules)
        github.add_repo(
            REPO,
            files={
                "evals/golden.jsonl": golden_path().read_text(),
                "evals/baseline.json": baseline_path().read_text(),
                "golden-gate.toml": rules,
            },
        )
        self.runs = 0
        self.legacy_inputs: dict[str, str] = {}
        self.same_workflow = False  # each run's inputs are the base's workflow's too

    def configure_options(self, **options: str) -> None:
        """golden-gate.toml at main and in the checkout setting these options (by name, as
        the input would), each in its table."""
        from golden_gate.options import BY_NAME

        rules: dict = {}
        for name, value in options.items():
            option = BY_NAME[name.replace("_", "-")]
            if option.group:
                rules.setdefault(option.group, {})[option.key] = value
            else:
                rules[option.name] = value
        self.configure(rules)

    def without_config(self, **inputs: str | None) -> None:
        """No golden-gate.toml anywhere: the rules as a workflow's inputs alone set them, the
        same inputs in the base branch's workflow (the base's rules) and in the pull request's
        (`inputs` by name, `_` for `-`, added to both; None leaves one out)."""
        (self.workspace / "golden-gate.toml").unlink(missing_ok=True)
        self.github.commit(REPO, "main", {"golden-gate.toml": None}, message="no rules file")
        given = {"golden": RULES["golden"], "subset-tags": "smoke", "baseline": RULES["baseline"]}
        given.update({k.replace("_", "-"): v for k, v in inputs.items()})
        given = {k: v for k, v in given.items() if v is not None}
        self.legacy_inputs = {env_name(k): v for k, v in given.items()}
        self.base_workflow(**given)

    def base_workflow(self, *, text: str | None = None, **inputs: str) -> None:
        """The workflow file at main (WORKFLOW, the one the runner names in GITHUB_WORKFLOW_REF)
        giving the gate's step `inputs` (by input name), or `text` as it is."""
        if text is None:
            step = {"id": STEP_ID, "uses": f"{ACTION_REPOSITORY}@v1", "with": dict(inputs)}
            workflow = {
                "on": "pull_request",
                "jobs": {JOB: {"runs-on": "ubuntu-latest", "steps": [step]}},
            }
            text = yaml.safe_dump(workflow, sort_keys=False)
        self.github.commit(REPO, "main", {WORKFLOW: text}, message="the gate's workflow")

    def configure(self, rules: dict, *, base: bool = True, workspace: bool = True) -> None:
        """golden-gate.toml: `RULES` updated with `rules` (a table merged key by key), at main
        (the base branch's rules) and in the checkout."""
        merged = {k: dict(v) if isinstance(v, dict) else v for k, v in RULES.items()}
        for key, value in rules.items():
            if isinstance(value, dict) and isinstance(merged.get(key), dict):
                merged[key].update(value)
            else:
                merged[key] = value
        text = toml_text({k: v for k, v in merged.items() if v is not None})
        if workspace:
            (self.workspace / "golden-gate.toml").write_text(text)
        if base:
            self.github.commit(REPO, "main", {"golden-gate.toml": text}, message="rules")

    def check_out(self, directory: Path | None = None) -> None:
        """Make the workspace (or `directory` in it) a git checkout of what it holds now, as
        actions/checkout leaves one (a detached HEAD, no local main): a file written after
        this is untracked, as one the job writes; `commit_files` commits more."""
        where = directory or self.workspace
        _git(where, "init", "-q", "-b", "checkout")
        self.commit_files(".", where=where)
        _git(where, "checkout", "-q", "--detach")

    def commit_files(self, *paths: str, where: Path | None = None, force: bool = False) -> None:
        """Commit `paths` (a pull request's files) in the checkout (`force`: even ignored)."""
        where = where or self.workspace
        _git(where, "add", *(["-f"] if force else []), "--", *paths)
        _git(where, "commit", "-q", "--allow-empty", "-m", "the pull request's files")

    def pull(self, files: list[str], *, fork: bool = False):
        self.github.add_user("contributor")
        head = f"change-{len(self.github.repo(REPO).pulls) + 1}"
        self.github.commit(REPO, head, {f"{head}.txt": head}, start="main")
        return self.github.add_pull(
            REPO,
            files=files,
            head=head,
            user="contributor" if fork else None,
            head_repo=FORK if fork else None,
        )

    def event(self, kind: str, pull=None, *, fork: bool = False) -> Path:
        payload = json.loads((PAYLOADS / f"{kind}.json").read_text())
        payload["repository"]["full_name"] = REPO
        payload["repository"]["name"] = REPO.split("/")[1]
        if pull is not None and kind.startswith("pull_request"):
            pr = payload["pull_request"]
            payload["number"] = pr["number"] = pull.number
            pr["base"]["ref"], pr["base"]["sha"] = pull.base_ref, pull.base_sha
            pr["head"]["ref"], pr["head"]["sha"] = pull.head_ref, pull.head_sha
            pr["base"]["repo"]["full_name"] = REPO
            pr["head"]["repo"]["full_name"] = FORK if fork else REPO
            pr["head"]["repo"]["fork"] = fork
        if pull is not None and kind.startswith("workflow_run"):
            # The run of the pull request's gate, as GitHub describes it to the poster.
            run = payload["workflow_run"]
            run["event"] = "pull_request"
            run["head_sha"], run["head_branch"] = pull.head_sha, pull.head_ref
            run["head_repository"]["full_name"] = pull.head_repo or REPO
            run["repository"]["full_name"] = REPO
            run["pull_requests"] = []  # as GitHub sends it for forks
        path = self.tmp / f"event-{kind}-{time.monotonic_ns()}.json"
        path.write_text(json.dumps(payload))
        return path

    def run(self, event_name: str, event_path: Path, **kwargs):
        """Run the entrypoint to its end: its exit code, output, step outputs and summary."""
        started = time.perf_counter()
        proc, files = self.start(event_name, event_path, **kwargs)
        try:
            stdout, stderr = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
        return self.finished(proc, stdout, stderr, files, time.perf_counter() - started)

    @staticmethod
    def finished(proc, stdout: str, stderr: str, files: Path, elapsed: float = 0.0):
        done = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
        done.elapsed = elapsed
        done.outputs = parse_outputs((files / "output").read_text())
        done.summary = (files / "summary").read_text()
        return done

    @staticmethod
    def ref_for(event_name: str, event_path: Path) -> str:
        """GITHUB_REF as the runner sets it: a pull request's merge ref, else main's."""
        if event_name.startswith("pull_request"):
            number = json.loads(event_path.read_text()).get("number", 1)
            return f"refs/pull/{number}/merge"
        return "refs/heads/main"

    def start(
        self,
        event_name: str,
        event_path: Path,
        token: str = WRITE_TOKEN,
        extra_env: dict[str, str] | None = None,
        args: tuple[str, ...] = (),
        **inputs: str,
    ) -> tuple[subprocess.Popen[str], Path]:
        """Start the entrypoint (to signal it mid-run); `finished` reads what it left."""
        self.runs += 1
        if self.same_workflow:
            # The pull request did not change the workflow: the base's gives the same inputs.
            given = {k[len("INPUT_") :].lower(): v for k, v in self.legacy_inputs.items()}
            given.update({k.replace("_", "-"): v for k, v in inputs.items()})
            self.base_workflow(**given)
        files = self.tmp / f"run{self.runs}"
        files.mkdir()
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(self.tmp),
            "GITHUB_ACTIONS": "true",
            "GITHUB_EVENT_NAME": event_name,
            "GITHUB_EVENT_PATH": str(event_path),
            "GITHUB_REPOSITORY": REPO,
            "GITHUB_API_URL": self.github.api_url,
            "GITHUB_WORKSPACE": str(self.workspace),
            "GITHUB_SHA": "0" * 40,
            "GITHUB_RUN_ID": str(1000 + self.runs),
            "GITHUB_OUTPUT": str(files / "output"),
            "GITHUB_STEP_SUMMARY": str(files / "summary"),
            "GITHUB_STATE": str(files / "state"),
            "RUNNER_TEMP": str(files),
            "GITHUB_REF": self.ref_for(event_name, event_path),
            "INPUT_GITHUB-TOKEN": token,
            "GITHUB_WORKFLOW_REF": f"{REPO}/{WORKFLOW}@refs/heads/main",
            "GITHUB_JOB": JOB,
            "GITHUB_ACTION": STEP_ID,
            "GITHUB_ACTION_REPOSITORY": ACTION_REPOSITORY,
            "INPUT_COMMENT-ID": "docs",
            **self.legacy_inputs,
            **{f"INPUT_{k.replace('_', '-').upper()}": v for k, v in inputs.items()},
            **(extra_env or {}),
        }
        # The runner passes every input, with action.yml's default where the workflow set none.
        defaults = {
            env_name(name): str(spec.get("default", ""))
            for name, spec in ACTION["inputs"].items()
            if "${{" not in str(spec.get("default", ""))
        }
        env = {**defaults, **env}
        for name in ("output", "summary", "state"):
            (files / name).touch()
        proc = subprocess.Popen(
            [sys.executable, *args, str(ROOT / "entrypoint.py")],
            env=env,
            cwd=self.workspace,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        return proc, files
