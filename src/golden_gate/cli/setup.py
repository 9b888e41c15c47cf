"""The commands that set a project up or explain it, before any gate: `plan` (how many items a
floor needs, and what they cost), `init`, `example-assistant`, `demo` and `config`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from golden_gate.cli.options import warn
from golden_gate.errors import EXIT_PASSED, InputError
from golden_gate.option_values import gate_settings
from golden_gate.options import BY_NAME, OPTIONS, Option


def cmd_plan(args: argparse.Namespace) -> int:
    from golden_gate.core.plan import plan_text

    settings = gate_settings(args.resolved)
    golden = args.golden if args.resolved.given("golden") else None
    if golden is not None and args.items is not None:
        raise InputError("plan: give a golden set or --items N, not both")
    if golden is None and args.items is None:
        # No argument: the golden set the config names (or the default path), if it is there.
        golden = Path(args.golden)
        if not golden.is_file():
            raise InputError(
                f"plan: no golden set at {golden} (the default); give a golden set's path, or "
                "--items N to plan for N items"
            )
    text, out_of_reach = plan_text(
        golden=golden,
        tags=args.subset_tags,
        items=args.items,
        runs=args.runs,
        baseline=args.baseline,
        settings=settings,
    )
    print(text, end="")
    if args.cost:
        print(_cost_text(args, golden, items=args.items), end="")
    if out_of_reach is not None:  # the same configuration error `eval` and `run` stop on
        raise InputError(f"floor: {out_of_reach}")
    return EXIT_PASSED


def _cost_text(args: argparse.Namespace, golden: Path | None, *, items: int | None) -> str:
    """`plan --cost`: the seed's formula with its terms, measured on the baseline."""
    from golden_gate.core import golden as golden_set
    from golden_gate.core.cost import cost_terms
    from golden_gate.core.report_file import load_report
    from golden_gate.evaluation.eval_settings import parse_prices

    if items is None:
        assert golden is not None
        items = len(golden_set.select(golden_set.load_golden(golden), args.subset_tags))
    r = args.resolved
    prices = {
        name: parse_prices(r[name], name=r.where(name)) if r[name] else None
        for name in ("judge-prices", "assistant-prices")
    }
    measured = load_report(args.baseline) if args.baseline is not None else None
    terms = cost_terms(
        items=items,
        runs=args.runs,
        measured=measured,
        judge_prices=prices["judge-prices"],
        assistant_prices=prices["assistant-prices"],
        source=Path(args.baseline).name if args.baseline is not None else "",
    )
    lines = [f"  cost: {terms.formula()}"]
    lines += [f"    {line}" for line in terms.terms_lines()]
    if measured is None:
        lines.append("    (no baseline: give one to measure the terms)")
    return "\n".join(lines) + "\n"


def cmd_init(args: argparse.Namespace) -> int:
    from golden_gate import starter

    if args.example:
        if args.convert is not None:
            raise InputError("init: --example writes its own golden set; leave out --convert")
        done = starter.example(args.dir, force=args.force)
        steps = starter.example_steps()
    else:
        done = starter.init(
            args.dir,
            source=args.convert,
            action=args.action,
            golden=args.golden,
            baseline=args.baseline,
            judge_model=args.judge_model,
            compose_file=args.compose_file,
            force=args.force,
            owners=[o for o in args.owners.replace(",", " ").split() if o],
            knowledge=[k for v in args.knowledge_base or [] for k in v.split(",") if k.strip()],
        )
        steps = starter.next_steps(
            golden=args.golden,
            baseline=args.baseline,
            compose_file=done.compose_file,
            service=done.service,
        )
    for path in done.written:
        print(f"golden-gate: wrote {path}")
    for name in done.kept:
        print(f"golden-gate: kept {args.dir / name} as it is (a golden set is never replaced)")
    if done.compose_file and args.compose_file is None and not args.example:
        print(
            f"golden-gate: the gate starts the assistant with {done.compose_file} (found in the "
            "repository); pass --compose-file to choose another"
        )
    if done.service is not None:
        print(
            f"golden-gate: the workflows start the pull request's assistant on the runner "
            f"(found: {done.service.found}) and gate it at http://runner-host:"
            f"{done.service.port}; check the start steps in .github/workflows/golden-gate.yml"
        )
    elif done.compose_file is None and not args.example:
        warn(
            "no compose file, Dockerfile or server command found: the workflows gate the "
            "deployed service at the repository variable ASSISTANT_URL, not the pull "
            "request's own code (docs/action.md, 'Where the assistant runs')"
        )
    for note in done.notes:
        print(f"golden-gate: {note}")
    if not args.example:
        _say_knowledge(done.knowledge)
    for warning in done.warnings:
        warn(warning)
    if done.codeowners:
        print(
            "golden-gate: CODEOWNERS: own the gate's rules (init --owners @org/team writes "
            "this; it is printed, not written):\n" + done.codeowners.rstrip("\n")
        )
    print("Next:")
    for number, step in enumerate(steps, start=1):
        print(f"  {number}. {step}")
    return EXIT_PASSED


def _say_knowledge(folders: tuple[Any, ...]) -> None:
    if folders:
        for folder in folders:
            print(
                f"golden-gate: scope: a pull request changing only {folder.path}/ is gated "
                f"(the assistant's knowledge base: {folder.why})"
            )
        return
    print(
        "golden-gate: scope: found no folder of Markdown the assistant answers from; if it "
        "has one, run init again with --knowledge-base DIR (a pull request changing only "
        "Markdown is skipped otherwise)"
    )


def cmd_example_assistant(args: argparse.Namespace) -> int:
    from golden_gate.example_assistant import control

    try:
        if args.action == "serve":
            return control.serve(args.dir)
        if args.action == "start":
            url = control.start(args.dir)
            print(f"golden-gate: the example assistant answers at {url}")
            print("  stop it with: golden-gate example-assistant stop")
        elif control.stop(args.dir):
            print("golden-gate: stopped the example assistant")
        else:
            print("golden-gate: no example assistant was running from here")
    except control.ControlError as exc:
        raise InputError(str(exc)) from None
    return EXIT_PASSED


def cmd_demo(args: argparse.Namespace) -> int:
    from golden_gate.demo import run_demo

    return run_demo(out=args.out, variant=args.variant, junit_path=args.junit_xml)


def cmd_config(args: argparse.Namespace) -> int:
    """The effective settings as TOML-ish lines, grouped as in the file; `--schema` the file's
    JSON Schema."""
    from golden_gate.option_schema import schema_text

    if args.schema:
        print(schema_text(), end="")
        return EXIT_PASSED
    resolved = args.resolved
    source = resolved.config_path or "none found (defaults and flags only)"
    print(f"# config file: {source}")
    tables: dict[str, list[Option]] = {"": []}  # top-level keys first: in TOML a key after
    for option in OPTIONS:  # a table header belongs to that table; each table once
        if option.name in resolved.values and option.name != "config":
            tables.setdefault(option.group, []).append(option)
    for group, options in tables.items():
        if group and options:
            print(f"\n[{group}]")
        for option in options:
            value = resolved[option.name]
            line = (
                f"# {option.key} is unset"
                if value is None
                else f"{option.key} = {_toml(value, BY_NAME[option.name].kind)}"
            )
            if "file" not in option.doors:  # shown, not a key a config file may set
                line = f"# {line.removeprefix('# ')} (not a config-file setting)"
            if args.show_origin:
                line = f"{line:<56} # {resolved.origin(option.name)}"
            print(line)
    return EXIT_PASSED


def _toml(value: Any, kind: str) -> str:
    import json

    from golden_gate import redaction

    if kind == "headers":  # by name only: a value may be a secret
        return (
            "{"
            + ", ".join(
                f"{json.dumps(k)} = {json.dumps(redaction.scrub(v))}" for k, v in value.items()
            )
            + "}"
        )
    if kind == "floats":
        return "{" + ", ".join(f"{json.dumps(k)} = {v!r}" for k, v in value.items()) + "}"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(json.dumps(str(v)) for v in value) + "]"
    return json.dumps(str(value))
