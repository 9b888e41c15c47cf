"""Every setting of golden-gate, declared once.

Each `Option` is one setting under one name at every door: the flag `--NAME`, the Action
input `NAME`, and in `golden-gate.toml` the key `NAME` (inside the option's `[group]` table
the group's prefix is dropped: `[judge] model` is `judge-model`). Its default and bounds are
the engine field's it fills (`field`), so they too are written once. `rule` marks a setting
that defines the yardstick (read at the base branch on a pull request; an input may only
tighten it, in the stated direction); `verdict` marks one that can change a judge's verdict
(part of the verdict cache's identity; the judge model and the evaluators are in each
judge's and evaluator's own identity, so a panel's judges keep their verdicts apart). The
CLI's flags, the Action's input reader, `action.yml`, the config file's JSON Schema and the
cache identity are derived from `OPTIONS`.

This module is the table (one entry a setting) and what each entry says of itself; cleaning
and resolving values is option_values.py, the schema and action.yml's inputs option_schema.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any, Literal

from golden_gate.evaluation.presets import PRESETS

Kind = Literal[
    "str", "path", "int", "float", "bool", "tags", "lines", "headers", "choice", "floats"
]
# How a rule may move on a pull request: a stricter floor is higher, a stricter min-drop lower,
# a stricter tag list selects a superset, a stricter ignore list a subset, a stricter switch is
# on (or off); "same" cannot move.
Tighten = Literal["higher", "lower", "superset", "subset", "on", "off", "same"]
ALL_DOORS: frozenset[str] = frozenset({"cli", "action", "file"})
FROM_FIELD = object()  # the default is the engine field's


@dataclass(frozen=True)
class Option:
    name: str
    help: str
    kind: Kind = "str"
    field: str | None = None  # the engine setting it fills (`Settings` path): default, bounds
    default: Any = FROM_FIELD
    group: str = ""
    rule: Tighten | None = None
    verdict: bool = False
    doors: frozenset[str] = ALL_DOORS
    choices: tuple[str, ...] = ()
    # A door whose natural default differs (the Action keeps its files under golden-gate/).
    door_defaults: Mapping[str, Any] = dc_field(default_factory=dict)
    old_flags: tuple[str, ...] = ()  # spellings kept for one minor release, with a warning
    metavar: str | None = None
    yml_default: str = ""  # action.yml's default: empty, so golden-gate.toml applies

    def describe(self, door: str) -> str:
        """The help with its default and, for a rule, what a pull request may do to it."""
        text = self.help
        default = self.default_for(door)
        if default not in (None, "", [], {}) and not isinstance(default, bool):
            text += f" Default: {show(default)}."
        elif isinstance(default, bool):
            text += f" Default: {'true' if default else 'false'}."
        if "file" in self.doors:
            text += f" In golden-gate.toml: {self.toml_name}."
        if self.rule == "same":
            text += " A rule of the gate: on a pull request it comes from the base branch."
        elif self.rule:
            text += (
                " A rule of the gate: on a pull request it comes from the base branch, and an "
                f"input may only {direction(self)}."
            )
        return text

    @property
    def key(self) -> str:
        """The key inside the option's table of the config file."""
        prefix = self.group + "-"
        if self.group and self.name.startswith(prefix):
            return self.name[len(prefix) :]
        return self.name

    @property
    def dest(self) -> str:
        return self.name.replace("-", "_")

    @property
    def flag(self) -> str:
        return "--" + self.name

    def default_for(self, door: str) -> Any:
        if door in self.door_defaults:
            return self.door_defaults[door]
        if self.default is not FROM_FIELD:
            return self.default
        assert self.field is not None, self.name
        return engine_field(self.field).get_default(call_default_factory=True)

    def spelled(self, origin: str) -> str:
        """How a message names this option for a value from `origin`."""
        if origin.startswith("flag"):
            return self.flag
        if origin.startswith("input"):
            return f"input '{self.name}'"
        if origin.startswith("default"):
            return f"'{self.name}'"
        return f"{origin.split(' ', 1)[-1]}: {self.toml_name}"

    @property
    def toml_name(self) -> str:
        return f"[{self.group}] {self.key}" if self.group else self.key


def _o(name: str, help: str, **kw: Any) -> Option:
    return Option(name=name, help=help, **kw)


CLI_ACTION = frozenset({"cli", "action"})
ACTION_FILE = frozenset({"action", "file"})
ACTION_ONLY = frozenset({"action"})
CLI_ONLY = frozenset({"cli"})

OPTIONS: tuple[Option, ...] = (
    # --- what is evaluated -------------------------------------------------------------------
    _o("golden", "Path of the golden set (JSONL).", kind="path", field="golden",
       default="evals/golden.jsonl", rule="same"),
    _o("subset-tags", "Comma-separated tags selecting the items to run (any of them); `*` (or "
       "an empty list in golden-gate.toml) runs every item.", kind="tags", field="tags",
       default=[], rule="superset", old_flags=("--tags",)),
    _o("golden-strict", "Refuse golden items with fields the schema does not know (by default "
       "they are kept, as a team's own metadata; a near-miss of a known field such as "
       "reference_keypoints or tag is always an error).", kind="bool", field="golden_strict",
       rule="on"),
    _o("shard", "i/n: evaluate shard i of n of the selected items (a matrix job).",
       doors=CLI_ACTION, default=""),
    _o("baseline", "Path of the baseline report (in the Action: in the repository, read at "
       "baseline-ref).", kind="path", default="", rule="same"),
    _o("baseline-ref", "Git ref to read the baseline (and the golden set it pairs with) at; "
       "defaults to the pull request's base branch.", doors=ACTION_FILE, default="",
       rule="same"),
    _o("paths", "An allow-list, gitignore-style patterns one a line: when set, a pull request "
       "runs the gate only when a changed file matches one of them (the gate's own inputs "
       "always do). Empty: every pull request runs unless each changed file is on the ignore "
       "list.", kind="lines", group="scope", default=[], rule="superset", doors=ACTION_FILE),
    _o("ignore-paths", "Gitignore-style patterns, one a line, added to the built-in list of "
       "files that cannot change answers (Markdown and docs/, images, licences, issue and pull "
       "request templates, editor settings); `!pattern` takes a file back. A pull request whose "
       "changed files are all on the list is skipped. Not used when paths is set.",
       kind="lines", group="scope", default=[], rule="subset", doors=ACTION_FILE),
    _o("force", "Run even when the scope would skip the pull request.", kind="bool",
       default=False, doors=ACTION_ONLY),
    _o("index-snapshot", "Index snapshot the assistant should serve (passed as INDEX_SNAPSHOT).",
       field="index_snapshot", default=""),
    # --- the assistant -----------------------------------------------------------------------
    _o("assistant-url", "Base URL of the running assistant; empty with compose-file to reach "
       "the compose service. The host `runner-host` (`http://runner-host:8000`) is the machine "
       "the runner runs on, where an earlier step started the pull request's own assistant "
       "listening on 0.0.0.0: the Action finds its address (the gateway of its container's "
       "network, or loopback) and says which it used.", group="assistant", field="target.url",
       old_flags=("--url",)),
    _o("assistant-path", "Request path.", group="assistant", field="target.path",
       old_flags=("--path",)),
    _o("request-template", "JSON request body with {question} (and {id}) slots.",
       group="assistant", field="target.request_template"),
    _o("answer-path", "Dotted path to the answer in the response JSON.", group="assistant",
       field="target.answer_path"),
    _o("model-path", "Dotted path to the model that answered in the response JSON (optional, "
       "e.g. model): a judge that is that model is warned of, as with assistant-model.",
       group="assistant", field="target.model_path", default=""),
    _o("usage-path", "Dotted path to the assistant's own token usage in the response JSON "
       "(optional, e.g. usage): recorded per run, for the cost (c_sys in `plan --cost`) and "
       "max-cost-usd.", group="assistant", field="target.usage_path", default=""),
    _o("sources-path", "Dotted path to the returned sources in the response JSON (optional).",
       group="assistant", field="target.sources_path", default=""),
    _o("context-path", "Dotted path to the retrieved passages in the response JSON (optional; "
       "groundedness and hallucination need it: a run without them fails those evaluators).",
       group="assistant", field="target.context_path", default=""),
    _o("tools-path", "Dotted path to the tool calls in the response JSON (optional): the "
       "OpenAI shape `tool_calls[].function.{name, arguments}` or a list of `{name, args}`; "
       "checked against a golden item's `expected_tools`, `forbidden_tools` and `max_steps`.",
       group="assistant", field="target.tools_path", default=""),
    _o("assistant-headers", "Request headers, one `Name: value` a line; a value `$VAR` is read "
       "from the environment variable VAR (values are masked in logs). In the config file a "
       "table of names to `$VAR`.", kind="headers", group="assistant", field="target.headers",
       metavar="NAME: VALUE"),
    _o("assistant-model", "The model(s) the assistant answers with, comma-separated (e.g. "
       "openai:gpt-4.1-mini): a judge that is one of them is warned of, since a model grading "
       "its own answers is lenient with them.", kind="tags", group="assistant",
       field="evaluation.assistant_models"),
    _o("concurrency", "Assistant requests in flight at once.", kind="int", group="assistant",
       field="target.concurrency"),
    _o("timeout", "Per-request timeout to the assistant, in seconds.", kind="float",
       group="assistant", field="target.timeout_s"),
    _o("retries", "Retries of an assistant request on transport faults.", kind="int",
       group="assistant", field="target.retries"),
    # --- starting it with docker compose -------------------------------------------------------
    _o("compose-file", "Compose file that starts the assistant; torn down afterwards, always.",
       kind="path", group="compose", default=""),
    _o("compose-project", "Compose project name.", group="compose", default="golden-gate-local",
       door_defaults={"action": ""}),
    _o("compose-service", "The assistant's service in the compose file.", group="compose",
       field="compose.service"),
    _o("wait-timeout", "Seconds to wait for the compose services to become healthy.",
       kind="float", group="compose", field="compose.wait_timeout_s"),
    _o("health-path", "Path polled on the assistant until it answers (after compose's own "
       "healthchecks).", group="compose", field="compose.health_path"),
    _o("compose-env", "Environment variables docker compose is given, comma-separated names: "
       "what the compose file's ${VAR} and the services it starts may read besides where "
       "Docker is, the locale and the CI's facts such as GITHUB_SHA. No other variable of the "
       "job reaches them (no key, no token).", kind="tags", group="compose",
       field="compose.env", rule="subset", metavar="NAMES"),
    # --- the judge -----------------------------------------------------------------------------
    _o("judge-model", "provider:model for the LLM judge, with provider openai (or an "
       "OpenAI-compatible server with judge-base-url), azure_openai (model = deployment), "
       "anthropic, google_genai or ollama (a local server) (e.g. "
       "openai:gpt-4.1-mini-2025-04-14, a dated snapshot); or "
       "keypoints for the offline judge; several, comma-separated, make a panel. Keys come from "
       "OPENAI_API_KEY, AZURE_OPENAI_API_KEY, ANTHROPIC_API_KEY, GOOGLE_API_KEY or "
       "GEMINI_API_KEY (masked).",
       group="judge", field="judge.model", rule="same"),
    _o("judge-prompt", "Judge prompt file with {inputs}, {outputs} and {reference_outputs}.",
       kind="path", group="judge", field="judge.prompt_file", default="", rule="same",
       verdict=True),
    _o("judge-base-url", "The judge provider's API base URL: an OpenAI-compatible server with "
       "openai:, the Azure endpoint with azure_openai: (else AZURE_OPENAI_ENDPOINT), or a "
       "gateway for the others.", group="judge", field="judge.base_url", default="",
       rule="same", verdict=True),
    _o("judge-temperature", "Sampling temperature of the judge.", kind="float", group="judge",
       field="judge.temperature", rule="same", verdict=True),
    _o("judge-max-tokens", "Generation cap of one verdict, in tokens, sent as each provider "
       "names it (reasoning models count their hidden reasoning against it).", kind="int",
       group="judge", field="judge.max_tokens", verdict=True),
    _o("judge-timeout", "Seconds one judge call may take, time queued inside the server "
       "included.", kind="float", group="judge", field="judge.timeout_s"),
    _o("judge-retries", "Retries of a judge call on 408, 409, 429, 5xx and timeouts (the only "
       "retry layer; every request is counted in stats.judge_attempts).", kind="int",
       group="judge", field="judge.max_retries"),
    _o("judge-concurrency", "Judge calls in flight at once; empty follows concurrency. At most "
       "the judge server's parallel slots, since a call's timeout includes its wait there.",
       kind="int", group="judge", default=None),
    _o("judge-panel", "How a panel's verdicts combine per evaluator: majority (a tie fails) or "
       "all.", kind="choice", choices=("majority", "all"), group="judge",
       field="evaluators.judge_panel", rule="same"),
    _o("judge-prices", "\"input,output\": USD per million judge input and output tokens, for "
       "the cost (empty: tokens only).", group="judge", default="", metavar="INPUT,OUTPUT"),
    _o("max-judge-calls", "Judge budget cap (empty for none).", kind="int", group="judge",
       field="evaluation.max_judge_calls"),
    _o("assistant-prices", "\"input,output\": USD per million of the assistant's own input "
       "and output tokens (read at usage-path), for the cost (empty: tokens only).",
       group="assistant", default="", metavar="INPUT,OUTPUT"),
    _o("max-cost-usd", "Stop the run as incomplete (exit 3, the report written) once what it "
       "has spent passes this many USD, at judge-prices and assistant-prices (empty for none).",
       kind="float", group="evaluation", field="evaluation.max_cost_usd"),
    _o("judge-canaries", "Golden items each model judge's canaries are derived from, per "
       "evaluator: answers with a known verdict (the key points, an empty answer, another "
       "item's key points, one key point left out, ...) asked every run, cached like any "
       "verdict; a judge that gets more than a fifth of them wrong makes the run incomplete. "
       "0 turns them off.", kind="int", group="judge", field="evaluation.canaries",
       rule="higher"),
    _o("on-missing-judge-key", "What a run does when the judge's key is not set: error (exit 2, "
       "naming the variable) or checks-only (the deterministic checks alone, said in the "
       "comment). Fork pull requests, which get no secrets, always run checks-only.",
       kind="choice", choices=("error", "checks-only"), group="judge", default="error",
       rule="same"),
    # --- what a run is ------------------------------------------------------------------------
    _o("evaluators", f"Comma-separated evaluators: {', '.join(PRESETS)}, or a prompt file "
       "path; name:0.7 asks for a score and passes at or above 0.7.", group="evaluation",
       default="correctness", rule="same"),
    _o("evaluator-rule", "A run passes when all, any or a majority of its evaluators pass.",
       kind="choice", choices=("all", "any", "majority"), group="evaluation",
       field="evaluators.rule", rule="same"),
    _o("runs", "Runs per item; every run counts (per-item score = passed runs / runs).",
       kind="int", group="evaluation", field="evaluation.runs", rule="higher"),
    _o("simulate-users", "Run the golden items with a `simulated_user` (a model plays a pinned "
       "persona for a bounded number of turns; a transcript evaluator such as task-completion "
       "judges the conversation). Off by default and meant for nightly runs: it costs model "
       "calls and varies from run to run; off, those items are left out.", kind="bool",
       group="evaluation", field="evaluation.simulate_users", default=False),
    _o("rerun-failures", "Diagnostic re-runs of a failed item, shown (consistent or flaky) and "
       "never counted: re-running only failures would bias the pass rate up.", kind="int",
       group="evaluation", field="evaluation.rerun_failures"),
    _o("max-error-rate", "Above this share of error runs the evaluation is incomplete (exit 3).",
       kind="float", group="evaluation", field="evaluation.max_error_rate", rule="lower"),
    _o("forbidden", "Regular expressions an answer must not match, one a line.", kind="lines",
       group="evaluation", field="checks.forbidden_patterns", rule="superset"),
    # --- the checks people write by hand (defaults for every item; items add their own) -----
    _o("must-include", "What every answer must hold, one a line: a substring (case-insensitive) "
       "or /regex/ (matched with a time limit); a golden item's must_include adds to it.",
       kind="lines", group="checks", field="checks.must_include", rule="superset"),
    _o("must-not-include", "What no answer may hold, one a line: a substring (case-insensitive) "
       "or /regex/; a golden item's must_not_include adds to it.", kind="lines",
       group="checks", field="checks.must_not_include", rule="superset"),
    _o("refusal-phrases", "What counts as a refusal for a golden item with must_refuse, one a "
       "line: a phrase (case-insensitive, curly apostrophes read as straight) found anywhere in "
       "the answer; the answer is refused when any one is there.", kind="lines",
       group="checks", field="checks.refusal_phrases", rule="subset"),
    _o("json-schema", "A JSON Schema file every answer must parse and validate against (an "
       "item's own json_schema replaces it).", kind="path", group="checks",
       field="checks.json_schema_file", default="", rule="same"),
    _o("citations-in-sources", "Every citation an answer makes (a Source: line, a link, a URL, "
       "a path to a document) must be among the sources it returned (sources-path): no "
       "invented citations. An item's citations_in_sources overrides it.", kind="bool",
       group="checks", field="checks.citations_in_sources", rule="on"),
    _o("custom-checks", "Custom checks, one a line: FILE.py:FUNCTION (default function: check), "
       "a function (item, answer) -> (passed, reason) run in a separate process.",
       kind="lines", group="checks", field="checks.custom_checks", default=[],
       rule="superset", metavar="FILE.py:FUNCTION"),
    _o("check-timeout", "Seconds one custom check may take on one answer; past it the run is an "
       "error.", kind="float", group="checks", field="checks.check_timeout_s", rule="higher"),
    _o("deterministic-only", "Checks only, no judge.", kind="bool", field="deterministic_only",
       default=False, doors=CLI_ONLY),
    # --- the gate ------------------------------------------------------------------------------
    _o("floor", "Minimum Wilson lower bound of the pass rate; 0 switches the floor off.",
       kind="float", group="gate", field="gate.floor", rule="higher"),
    _o("alpha", "Significance level of the paired test; 0 switches the test off.", kind="float",
       group="gate", field="gate.alpha", rule="higher"),
    _o("min-drop", "Minimum mean drop in per-item score against the baseline for a significant "
       "regression to fail.", kind="float", group="gate", field="gate.min_drop", rule="lower"),
    _o("confidence", "Level of the Wilson interval.", kind="float", group="gate",
       field="gate.confidence", rule="higher"),
    _o("retrieval-k", "How many of the returned sources count as retrieved for hit@k and "
       "recall@k (the retrieval layer, with sources-path).", kind="int", group="gate",
       field="gate.retrieval_k", rule="same"),
    _o("retrieval-floor", "Minimum Wilson lower bound of hit@k (the share of items whose "
       "expected source is in the top retrieval-k); 0 switches it off.", kind="float",
       group="gate", field="gate.retrieval_floor", rule="higher"),
    _o("floor-basis", "What the floor is on: judge (the Wilson bound of the judge's pass rate) "
       "or human (the prediction-powered lower bound of the pass rate people would give, from "
       "the judge's verdicts corrected by its errors on the calibration's labels; needs "
       "calibration, a calibration of this judge and prompt).", kind="choice",
       choices=("judge", "human"), group="gate", field="gate.floor_basis", rule="same"),
    _o("floor-by-tag", "A floor of a tag's own, on the Wilson bound of its items: `refusal = "
       "0.95`, one a line (in golden-gate.toml a table, [gate.floor-by-tag]). Each such slice "
       "also gets the paired test against the baseline, Holm-adjusted across the slices.",
       kind="floats", group="gate", field="gate.floor_by_tag", default={}, rule="higher",
       metavar="TAG = FLOOR"),
    _o("critical-tags", "Comma-separated tags where any one regressed item (passing in the "
       "baseline, failing now) fails the gate.", kind="tags", group="gate",
       field="gate.critical_tags", default=[], rule="superset"),
    _o("min-slice-items", "The fewest items a sliced tag (floor-by-tag, critical-tags) needs "
       "for a floor or test verdict of its own; below it the slice says \"not enough items\".",
       kind="int", group="gate", field="gate.min_slice_items", rule="lower"),
    _o("require-comparable", "Fail when the baseline used another golden set, judge model or "
       "judge prompt.", kind="bool", group="gate", field="gate.require_comparable", rule="on"),
    _o("fail-on-regression", "Fail the step when the gate fails; false turns it into a warning.",
       kind="bool", group="gate", default=True, rule="on", doors=ACTION_FILE),
    # --- what is written ----------------------------------------------------------------------
    _o("report-path", "Where report.json is written.", kind="path", group="output",
       field="report_path", default="report.json",
       door_defaults={"action": "golden-gate/report.json"},
       old_flags=("--report",)),
    _o("junit-xml", "Also write the results as JUnit XML here (one test case per item); empty "
       "writes none.", kind="path", group="output", default=""),
    # On in the Action: the starter workflow uploads golden-gate/, and the page is what a
    # reviewer opens from that artifact (about the report's size; a few seconds at 100k items).
    _o("html-report", "Also write the report page here: one self-contained HTML file to open in "
       "a browser (the verdict, a filterable item table, per item both answers side by side with "
       "a word diff, the checks and the judge's reasoning); empty writes none (in the Action, "
       "where it is on, `html-report = \"\"` in golden-gate.toml).", kind="path",
       group="output", default="", door_defaults={"action": "golden-gate/report.html"}),
    _o("comment", "Post (or update) the sticky PR comment.", kind="bool", group="comment",
       default=True, doors=ACTION_FILE),
    _o("comment-id", "Id in the sticky comment's marker, for several gates in one pull request.",
       group="comment", field="comment_id", default="default"),
    _o("comment-template", "Path of your own Jinja template for the comment.", kind="path",
       group="comment", default="", rule="same", old_flags=("--template",)),
    _o("comment-file", "Where the rendered comment is written.", kind="path", group="comment",
       default="", door_defaults={"action": "golden-gate/comment.md"},
       old_flags=("--comment-out",)),
    _o("summary-file", "Where the job summary is written.", kind="path", group="comment",
       default="", doors=CLI_ONLY, old_flags=("--summary-out",)),
    _o("calibration", "Path of the judge's calibration report (from calibrate) to show in the "
       "comment.", kind="path", group="comment", default="", rule="same"),
    # --- the verdict cache --------------------------------------------------------------------
    _o("cache", "How judge verdicts persist between runs: auto (in the Action the runner's cache "
       "service when it offers one, v2 at ACTIONS_RESULTS_URL or the legacy v1 at "
       "ACTIONS_CACHE_URL, else the directory only; on the command line the directory), "
       "actions (the same, warning when there is none), directory (your own actions/cache step "
       "persists cache-dir), or off.", kind="choice",
       choices=("auto", "actions", "directory", "off"), group="cache", default="auto"),
    _o("cache-dir", "Directory of the judge verdict cache; in the Action empty keeps it outside "
       "the checkout, under the runner's temporary directory, where a pull request cannot plant "
       "verdicts. A directory in the checkout is used only when git tracks nothing in it.",
       kind="path", group="cache", default=".judge-cache", door_defaults={"action": ""}),
    _o("cache-max-mb", "Verdicts not used in this run are pruned when the cache grows past this "
       "size.", kind="int", group="cache", default=50, doors=ACTION_FILE),
    # --- calibration --------------------------------------------------------------------------
    _o("labels", "Human labels (JSONL with id, answer, label pass/fail) for calibrate.",
       kind="path", group="calibration", default="", rule="same"),
    _o("min-kappa", "Calibrate fails below this Cohen's kappa between judge and humans.",
       kind="float", group="calibration", default=0.6, rule="higher"),
    _o("calibration-path", "Where calibrate writes the calibration report.", kind="path",
       group="calibration", default="golden-gate/calibration.json",
       door_defaults={"cli": "calibration.json"}),
    # --- the Action's own ---------------------------------------------------------------------
    _o("github-token", "Token for reading the pull request's files and baseline and writing the "
       "comment.", doors=ACTION_ONLY, default="", yml_default="${{ github.token }}"),
    _o("mode", "gate (evaluate, gate and comment; with `shard`, evaluate one shard only), merge "
       "(merge the shard reports of a matrix, then gate and comment), post-comment (post the "
       "comment of a fork pull request's run from a workflow_run workflow), calibrate (measure "
       "the judge against human labels), baseline (evaluate and write the baseline; with "
       "open-pr, propose it as a pull request listing the flipped items), or drift (a scheduled "
       "run on the default branch: one issue while it fails, closed when it passes).",
       kind="choice", choices=("gate", "merge", "post-comment", "calibrate", "baseline", "drift"),
       default="gate", doors=ACTION_ONLY),
    _o("shard-reports", "For mode merge, glob patterns (one a line, in the workspace) of the "
       "shard reports.", kind="lines", default=["golden-gate/report-shard-*-of-*.json"],
       doors=ACTION_ONLY),
    _o("open-pr", "For mode baseline, open or update a pull request that changes the baseline.",
       kind="bool", default=False, doors=ACTION_ONLY),
    _o("baseline-runs", "Runs per item in a baseline (at least `runs`), wherever it is made: "
       "mode baseline, and `golden-gate eval` writing the configured baseline file. A one-run "
       "baseline is one noisy sample that can make most pull requests gated against it "
       "false-alarm; three runs keep every baseline near alpha, for three times the baseline's "
       "calls and none more on pull requests (BENCHMARKS.md §6).", kind="int", default=3),
    _o("baseline-branch", "For mode baseline, the branch of that pull request.",
       default="golden-gate/baseline", doors=ACTION_FILE),
    _o("drift-label", "For mode drift, the label of the one drift issue.",
       default="golden-gate-drift", doors=ACTION_FILE),
    _o("junit-results", "For modes gate and baseline, a JUnit XML results file (Maven Surefire, "
       "pytest --junitxml) to gate instead of evaluating: an item is a test (class and name; id "
       "the name, or class::name where several classes share it), repeats = runs; the "
       "assistant is not started and no judge is called. On a "
       "pull request it must be a file the job wrote, not one git tracks.",
       kind="path", default="", doors=ACTION_ONLY),
    _o("pr-number", "Pull request number for mode post-comment (read from comment-file's "
       "metadata when empty).", kind="int", default=None, doors=ACTION_ONLY),
    _o("config", "The config file (golden-gate.toml); default: found from the working directory "
       "upward (in the Action: at the workspace's root).", kind="path", default="",
       doors=CLI_ACTION),
)  # fmt: skip

BY_NAME: dict[str, Option] = {o.name: o for o in OPTIONS}
BY_FIELD: dict[str, Option] = {o.field: o for o in OPTIONS if o.field}
GROUPS: tuple[str, ...] = tuple(dict.fromkeys(o.group for o in OPTIONS if o.group))


# Where each section of `Settings` is declared, so a command that gates imports the gate's
# model only, not the evaluation stack behind `Settings`.
SECTIONS = {
    "target": ("golden_gate.evaluation.response", "AssistantSettings"),
    "compose": ("golden_gate.evaluation.compose", "ComposeSettings"),
    "judge": ("golden_gate.evaluation.judge", "JudgeSettings"),
    "evaluators": ("golden_gate.evaluation.evaluators", "EvaluatorSettings"),
    "checks": ("golden_gate.evaluation.checks", "CheckSettings"),
    "evaluation": ("golden_gate.evaluation.eval_settings", "EvalSettings"),
    "gate": ("golden_gate.core.verdict", "GateSettings"),
    "": ("golden_gate.settings", "Settings"),
}


GATE_OPTIONS = {
    "floor": "floor",
    "alpha": "alpha",
    "min-drop": "min_drop",
    "confidence": "confidence",
    "require-comparable": "require_comparable",
    "floor-basis": "floor_basis",
    "floor-by-tag": "floor_by_tag",
    "critical-tags": "critical_tags",
    "min-slice-items": "min_slice_items",
    "retrieval-k": "retrieval_k",
    "retrieval-floor": "retrieval_floor",
}


def engine_field(path: str) -> Any:
    """The pydantic FieldInfo of `Settings` at `path` (`judge.max_tokens`)."""
    import importlib

    section, _, name = path.rpartition(".")
    module, model = SECTIONS[section]
    return getattr(importlib.import_module(module), model).model_fields[name]


def direction(option: Option) -> str:
    """What a pull request's input may do to the rule: `an input may only {direction}`."""
    if option.name in PATTERN_DIRECTIONS:
        return PATTERN_DIRECTIONS[option.name]
    return {
        "higher": "raise it",
        "lower": "lower it",
        "superset": "add to it (keeping every value the base has)",
        "subset": "remove from it (adding nothing the base lacks)",
        "on": "switch it on",
        "off": "switch it off",
        "same": "repeat it",
    }[option.rule or "same"]


# Gitignore-style lists are compared by what they select (core/path_lists.py): only the edits
# that provably select more (paths) or ignore less (ignore-paths) count as tightening.
PATTERN_DIRECTIONS = {
    "paths": "drop its `!` take-backs and add patterns after them (what it selects may only grow)",
    "ignore-paths": "add `!` take-backs at its end and drop patterns no take-back follows (what "
    "it ignores may only shrink)",
}


def show(value: Any, *, sep: str = ", ") -> str:
    """A default as help text says it: a list joined by `sep`."""
    if isinstance(value, list):
        return sep.join(map(str, value))
    return str(value)
