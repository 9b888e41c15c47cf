"""`golden-gate`: the same engine as the Action, one subcommand per stage."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from golden_gate import ACTION_REPOSITORY, __version__, process, runner
from golden_gate.cli.commands import (
    cmd_calibrate,
    cmd_eval,
    cmd_gate,
    cmd_merge,
    cmd_pairwise,
    cmd_report,
    cmd_run,
    cmd_subset,
)
from golden_gate.cli.diff_view import cmd_diff, cmd_view
from golden_gate.cli.importing import cmd_import
from golden_gate.cli.junit import cmd_import_junit
from golden_gate.cli.options import (
    COMMANDS,
    Parser,
    add_config_arg,
    add_options,
    add_trend_arg,
    fail,
    finish,
)
from golden_gate.cli.review import cmd_review
from golden_gate.cli.setup import cmd_config, cmd_demo, cmd_example_assistant, cmd_init, cmd_plan
from golden_gate.errors import EXIT_INCOMPLETE, GateError, unexpected

Handler = Callable[[argparse.Namespace], int]
EXIT_BROKEN_PIPE = 141  # as a shell reports a command ended by SIGPIPE


def add_format_arg(
    p: argparse.ArgumentParser, *, md: str = "the comment", json: str = "the gate's result"
) -> None:
    p.add_argument(
        "--format",
        choices=["text", "md", "json"],
        default="text",
        help=f"what to print: text (a summary in a terminal, plain lines elsewhere), md ({md}) "
        f"or json ({json})",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="golden-gate",
        description="A statistical quality gate for LLM-backed services.",
        epilog="Exit codes: 0 passed, 1 gate failed, 2 bad input, 3 evaluation incomplete.",
    )
    parser.add_argument("--version", action="version", version=f"golden-gate {__version__}")
    sub = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=Parser
    )

    p = sub.add_parser(
        "gate",
        help="gate a report against a baseline",
        description=(
            "Apply the floor on the Wilson lower bound and, with a baseline, the paired sign test; "
            "print the numbers and every regressed item."
        ),
    )
    p.add_argument("report", type=Path, help="candidate report.json")
    p.add_argument("baseline_arg", metavar="baseline", nargs="?", help="baseline report (optional)")
    add_format_arg(p)
    add_trend_arg(p)
    p.set_defaults(handler=cmd_gate, command_options=COMMANDS["gate"])

    p = sub.add_parser(
        "report",
        help="render a report as the PR comment or as JSON",
        description="Render the gate's comment (Markdown) or its result (JSON).",
    )
    p.add_argument("report", type=Path, help="report.json")
    p.add_argument(
        "--format", choices=["md", "json"], default="md", help="the comment, or the gate's result"
    )
    add_trend_arg(p)
    p.set_defaults(handler=cmd_report, command_options=COMMANDS["report"])

    p = sub.add_parser(
        "pairwise",
        help="compare the report's answers with the baseline's, both orders, by a model judge",
        description=(
            "For each item whose answer changed since --baseline, ask the judge which answer is "
            "better, A or B or neither, in both orders: a win only when both orders agree, a "
            "tie otherwise (a judge that always prefers A ties). Prints the win rate with an "
            "exact sign test and writes every item's outcome and reasons."
        ),
    )
    p.add_argument("report", type=Path, help="report.json")
    p.add_argument("golden", nargs="?", help="golden set (JSONL): questions and key points")
    p.add_argument(
        "-o", "--output", type=Path, default=Path("pairwise.json"), help="the outcomes (JSON)"
    )
    p.set_defaults(handler=cmd_pairwise, command_options=COMMANDS["pairwise"])

    p = sub.add_parser(
        "review",
        help="write the answers a person should label, in the format calibrate reads",
        description=(
            "Write the regressed items (with --baseline), the correctness canaries the judge "
            "got wrong, the runs a panel's judges disagreed on and the unstable items as a "
            "labels file: question, answer, the judge's verdict and reason, and a blank label "
            "to fill with pass or fail. calibrate skips the lines still blank. With "
            "--candidates: take the candidate items marked review: accept (from import "
            "--from-traces or --key-points, once a person wrote their reference) into the "
            "golden set, drop those marked reject, keep the rest as candidates."
        ),
    )
    p.add_argument("report", type=Path, nargs="?", help="report.json")
    p.add_argument(
        "--candidates",
        type=Path,
        default=None,
        metavar="FILE",
        help="candidate items to take into the golden set (their review field: accept, "
        "reject or blank)",
    )
    p.add_argument(
        "--into",
        type=Path,
        default=None,
        metavar="GOLDEN",
        help="with --candidates: the golden set the accepted join (default: FILE itself)",
    )
    p.add_argument(
        "-o", "--output", type=Path, default=Path("review.jsonl"), help="the labels file to write"
    )
    p.set_defaults(handler=cmd_review, command_options=COMMANDS["review"])

    p = sub.add_parser(
        "diff",
        help="what changed between two reports, item by item",
        description=(
            "List the items that regressed, improved, changed their answer or are in one report "
            "only, from report A (the baseline) to report B, with both answers and reasons."
        ),
    )
    p.add_argument("a", type=Path, help="report A: the baseline")
    p.add_argument("b", type=Path, help="report B: the candidate")
    p.add_argument(
        "--format", choices=["text", "md", "json"], default="text", help="how to print it"
    )
    p.set_defaults(handler=cmd_diff)

    p = sub.add_parser(
        "view",
        help="write a report (and its baseline) as one HTML page to open in a browser",
        description=(
            "Write one self-contained HTML file (no network, works from file://): the verdict "
            "and the gate's figures, a filterable item table, and per item both answers with a "
            "word-level diff, the checks and each evaluator's verdict and reasoning."
        ),
    )
    p.add_argument("report", type=Path, help="report.json")
    p.add_argument(
        "-o", "--output", type=Path, default=Path("report.html"), help="the page to write"
    )
    add_trend_arg(p)
    p.set_defaults(handler=cmd_view, command_options=COMMANDS["view"])

    p = sub.add_parser(
        "subset",
        help="write the items carrying any of the given tags",
        description="Select items by tag (file order kept) into a new JSONL file.",
    )
    p.add_argument("golden", nargs="?", help="golden set (JSONL)")
    p.add_argument("-o", "--output", type=Path, required=True, help="output JSONL")
    p.set_defaults(handler=cmd_subset, command_options=COMMANDS["subset"])

    p = sub.add_parser(
        "eval",
        help="evaluate a golden set against a running assistant",
        description="Ask, check, judge (with the verdict cache) and write a report.",
    )
    p.add_argument("golden", nargs="?", help="golden set (JSONL)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    add_format_arg(p, md="the comment, without a baseline")
    p.set_defaults(handler=cmd_eval, command_options=COMMANDS["eval"])

    p = sub.add_parser(
        "run",
        help="eval, then gate against a baseline and render the comment",
        description="The whole gate, as the Action runs it, on your machine.",
    )
    p.add_argument("golden", nargs="?", help="golden set (JSONL)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    add_format_arg(p)
    add_trend_arg(p)
    p.set_defaults(handler=cmd_run, command_options=COMMANDS["run"])

    p = sub.add_parser(
        "calibrate",
        help="measure how well the judge agrees with human labels",
        description=(
            "Run the configured judge on human-labelled answers (id, answer, label pass/fail) "
            "and report agreement, Cohen's kappa (κ) with a 95% confidence interval, the "
            "confusion matrix and the disagreeing items; exit 1 below --min-kappa."
        ),
    )
    p.add_argument("golden", nargs="?", help="golden set (JSONL): questions and key points")
    add_format_arg(p, md="the calibration as Markdown", json="the calibration report")
    p.set_defaults(handler=cmd_calibrate, command_options=COMMANDS["calibrate"])

    p = sub.add_parser(
        "merge",
        help="merge shard reports, then gate and render as one run would",
        description=(
            "Merge the reports of a sharded evaluation (refusing shards that disagree, are "
            "missing or duplicated, or share an item), then gate against a baseline."
        ),
    )
    p.add_argument("reports", type=Path, nargs="+", help="shard reports")
    p.add_argument("-o", "--output", type=Path, default=Path("report.json"), help="merged report")
    add_format_arg(p)
    p.set_defaults(handler=cmd_merge, command_options=COMMANDS["merge"])

    p = sub.add_parser(
        "import-junit",
        help="turn a test suite's JUnit XML results into a report to gate",
        description=(
            "Read JUnit XML (Maven Surefire, Gradle, pytest --junitxml, jest, Playwright): an "
            "item is a test, its class (or file) and name; its id is the name, or class::name "
            "where the name is several classes' test; repeats (the same test again, "
            "repetition i of N, method()[n], retry #n, pytest-repeat's [i-N]) are its runs, "
            "parameterised cases items of their own; two tests on one id are an error. "
            "<failure> is a failed run, <error> a run without a verdict, <skipped> no run. "
            "Write a report that `gate`, `merge` and the Action gate like any. Exit 3 when "
            "errors pass max-error-rate or the file has more test cases than are read."
        ),
    )
    p.add_argument("results", type=Path, help="the JUnit XML results file")
    p.add_argument(
        "--explain",
        action="store_true",
        help="print how the tests became items: each item's id, class, test names and why",
    )
    p.set_defaults(handler=cmd_import_junit, command_options=COMMANDS["import-junit"])

    p = sub.add_parser(
        "import",
        help="turn another tool's dataset (or production traces) into a golden set",
        description=(
            "Read a promptfoo config or tests file, deepeval goldens, OpenAI evals samples, a "
            "ragas testset, a LangSmith or Langfuse dataset export, or a plain CSV/JSONL with "
            "--map, and write golden items: an expected answer is the reference the judge "
            "reads, as written; checks that have an equivalent map, the rest are listed as "
            "dropped; a record with nothing to judge is listed, not written. With "
            "--from-traces: OpenTelemetry GenAI spans (OTLP JSON) or a Langfuse or LangSmith "
            "trace export become candidate items (from-traces, needs-reference) that run "
            "leaves out until review --candidates accepts them."
        ),
    )
    p.add_argument("source", type=Path, help="the file to import")
    p.add_argument("-o", "--output", type=Path, required=True, help="the golden set to write")
    p.add_argument(
        "--format",
        default=None,
        help="the file's format (default: told from the file): promptfoo, openai-evals, "
        "ragas, langfuse, deepeval, langsmith, table; with --from-traces: otlp, langfuse, "
        "langsmith",
    )
    p.add_argument(
        "--map",
        default=None,
        metavar="FIELD=COLUMN,...",
        help="which column is which field (question, reference, key_points, urls, tags, id, "
        "must_refuse), e.g. question=Prompt,reference=Answer",
    )
    p.add_argument(
        "--question-var", default=None, help="promptfoo: the var that holds the question"
    )
    p.add_argument(
        "--key-points",
        action="store_true",
        help="draw key points from an expected answer, one a sentence, tagged needs-review "
        "(run leaves them out until reviewed); default: the whole answer is the reference",
    )
    p.add_argument(
        "--without-reference",
        action="store_true",
        help="also write items with nothing to judge them by, for evaluators that need no "
        "reference (relevancy, conciseness, groundedness)",
    )
    p.add_argument(
        "--from-traces", action="store_true", help="read production traces: candidate items"
    )
    p.add_argument(
        "--golden",
        type=Path,
        default=None,
        help="with --from-traces: the golden set whose questions are not candidates again",
    )
    p.add_argument("--force", action="store_true", help="replace the output file if it exists")
    p.set_defaults(handler=cmd_import)

    p = sub.add_parser(
        "plan",
        help="before running: what the floor demands and what drop the gate could catch",
        description=(
            "For n items (a golden set and tags, or --items) and --runs, with the baseline's "
            "observed per-item variability: the fewest passes that clear the floor, the drop "
            "the paired test catches 80% of the time, and the items needed to catch a "
            "5-point drop. Exit 1 when the floor is out of reach at this n."
        ),
    )
    p.add_argument("golden", nargs="?", default=None, help="golden set (JSONL)")
    p.add_argument("--items", type=int, default=None, help="plan for this many items instead")
    p.add_argument(
        "--cost",
        action="store_true",
        help="also the cost before the run: N · R · (c_sys + (1 − h) · c_judge), its terms "
        "measured on the baseline (token usage, judge cache hit rate) at judge-prices and "
        "assistant-prices",
    )
    p.set_defaults(handler=cmd_plan, command_options=COMMANDS["plan"])

    p = sub.add_parser(
        "init",
        help="start gating a repository: golden-gate.toml, a starter golden set, three workflows",
        description=(
            "In a git repository, write golden-gate.toml (or add what is new to yours, "
            "keeping every setting and comment you wrote), a starter golden set (commented "
            "examples, or converted from --convert FILE; a golden set that exists is kept) and "
            "the pull-request gate, fork-comment and baseline workflows, with the Action pinned "
            "to a full commit SHA when its ref resolves; add what runs leave behind to "
            ".gitignore; then say what to do next. With --example: a runnable offline example "
            "in an empty folder instead."
        ),
    )
    p.add_argument("--dir", type=Path, default=Path("."), help="the repository's root")
    p.add_argument(
        "--example",
        action="store_true",
        help="write a runnable example (an example assistant's settings, its golden set, "
        "golden-gate.toml with the offline judge) instead",
    )
    p.add_argument(
        "--convert",
        type=Path,
        default=None,
        metavar="FILE",
        help="make the golden set from this CSV/TSV (header row) or JSONL of questions and "
        "expected answers (columns such as question/input, expected/answer, id, tags)",
    )
    p.add_argument(
        "--action",
        default=f"{ACTION_REPOSITORY}@v{__version__}" if ACTION_REPOSITORY else "",
        metavar="OWNER/REPO@REF",
        help="the Action to pin: a full commit SHA, or a tag resolved to one with git ls-remote"
        + (
            f" (default: {ACTION_REPOSITORY}@v{__version__}, this release's)"
            if ACTION_REPOSITORY
            else "; needed: this golden-gate is not a release, so it does not know the "
            "repository the Action is published from"
        ),
    )
    p.add_argument("--golden", default="evals/golden.jsonl", help="where the golden set goes")
    p.add_argument(
        "--baseline", default="evals/baseline.json", help="where the baseline report will live"
    )
    p.add_argument(
        "--judge-model",
        default="openai:gpt-4.1-mini-2025-04-14",
        help="the judge the workflows use (a dated snapshot: an alias can change model "
        "under the same name)",
    )
    p.add_argument(
        "--compose-file",
        default=None,
        help="start the assistant with this compose file in the workflows (default: one found "
        "at the repository's root, else the assistant at ASSISTANT_URL)",
    )
    p.add_argument(
        "--knowledge-base",
        action="append",
        default=None,
        metavar="DIR",
        help="a folder of Markdown (or other text) the assistant answers from, taken back from "
        "the ignore list so a pull request changing only it is gated (repeatable; default: "
        "the folders the compose file mounts, the Dockerfile copies, or named kb/, "
        "knowledge/, data/ ... that hold Markdown)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="rewrite the workflows if they exist (golden-gate.toml is merged either way: what "
        "you wrote stays, what is new is added; the golden set is never replaced)",
    )
    p.add_argument(
        "--owners",
        default="",
        metavar="@ORG/TEAM,...",
        help="the code owners of the gate's rules (golden set, config, judge prompts, "
        "calibration, workflows): a CODEOWNERS stanza naming them is written, or appended to "
        "the CODEOWNERS you have; without it the stanza is printed for you to add",
    )
    p.set_defaults(handler=cmd_init)

    p = sub.add_parser(
        "example-assistant",
        help="start or stop the example assistant of `init --example`",
        description=(
            "In the folder `golden-gate init --example` wrote: start the example assistant in "
            "the background (it answers once this returns), stop it, or serve it in the "
            "foreground. Its address and answer style are in assistant.toml."
        ),
    )
    p.add_argument("action", choices=["start", "stop", "serve"], help="what to do")
    p.add_argument("--dir", type=Path, default=Path("."), help="the example's folder")
    p.set_defaults(handler=cmd_example_assistant)

    p = sub.add_parser(
        "demo",
        help="run the whole gate offline on the bundled example",
        description=(
            "Start the bundled example assistant on 127.0.0.1 in its candidate configuration, "
            "evaluate the bundled golden set with the offline judge, gate against the bundled "
            "baseline and print the comment."
        ),
    )
    p.add_argument("--out", type=Path, default=Path("demo-output"), help="folder for the files")
    p.add_argument(
        "--variant",
        choices=["candidate", "baseline", "retriever"],
        default="candidate",
        help="the example assistant's configuration: a regressed prompt (and retriever), "
        "main's, or only the retriever change (every answer as main's, a page ranked last)",
    )
    p.add_argument(
        "--junit-xml",
        type=Path,
        default=None,
        help="also write the results as JUnit XML here (one test case per item)",
    )
    p.set_defaults(handler=cmd_demo)

    p = sub.add_parser(
        "config",
        help="print the effective settings (and with --show-origin where each came from)",
        description=(
            "Print every setting as golden-gate.toml, defaults, flags and inputs make it, or the "
            "JSON Schema of golden-gate.toml."
        ),
    )
    p.add_argument("--show-origin", action="store_true", help="say where each value came from")
    p.add_argument("--schema", action="store_true", help="print the config file's JSON Schema")
    p.set_defaults(handler=cmd_config, command_options=COMMANDS["config"])
    for action in sub.choices.values():
        names = action.get_default("command_options")
        if names is not None:
            add_options(action, names)
            add_config_arg(action)
    return parser


# The flags naming a file a pull request can write that is read as text (rules and data).
RULE_FILES = {
    "golden": "golden set",
    "judge_prompt": "judge prompt",
    "comment_template": "comment template",
    "calibration": "calibration",
    "labels": "labels file",
}


def _refuse_outside_workspace(args: argparse.Namespace) -> None:
    """In a workflow, a file named by a flag must resolve inside the checkout (a pull
    request's symlink to /proc/self/environ is refused); on a laptop any path is the user's."""
    if os.environ.get("GITHUB_ACTIONS") != "true":
        return
    from golden_gate.files import inside

    workspace = Path(os.environ.get("GITHUB_WORKSPACE") or Path.cwd())
    for name, what in RULE_FILES.items():
        path = getattr(args, name, None)
        if isinstance(path, Path):
            inside(path, workspace, what=what)


def main(argv: Sequence[str] | None = None) -> int:
    process.start()
    if os.environ.get("GITHUB_ACTIONS") == "true":
        runner.guard_output()  # a workflow step's log: no printed line can be a command
    args = build_parser().parse_args(argv)
    handler: Handler = args.handler
    try:
        finish(args)
        _refuse_outside_workspace(args)
        code = handler(args)
        sys.stdout.flush()  # here, so a reader that left early is handled below, not at exit
        return code
    except BrokenPipeError:
        # `golden-gate report … | head`: the reader has what it wanted. Point stdout at
        # /dev/null so the interpreter's own flush at exit cannot fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except GateError as exc:
        fail(str(exc))
        return exc.exit_code
    except KeyboardInterrupt:
        fail("interrupted")
        return 130
    except Exception as exc:  # a defect of ours: one sentence and exit 3, never "gate failed"
        fail(unexpected(exc, os.environ))
        return EXIT_INCOMPLETE


def run() -> None:
    """The `golden-gate` command: `main`, then the process ends without tearing down its
    modules (process.exit)."""
    process.exit(main())


if __name__ == "__main__":
    run()
