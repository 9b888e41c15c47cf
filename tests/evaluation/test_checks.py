"""The checks people write by hand, each through `golden-gate eval` as a user runs it:
must_include / must_not_include, json_schema, citations_in_sources and custom Python checks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from golden_gate.core.golden import GoldenItem
from golden_gate.core.retrieval import normalise_url, ranks
from golden_gate.evaluation.checks import (
    CheckSettings,
    check_citations_in_sources,
    checks_hash,
    citations,
)
from golden_gate.evaluation.custom_checks import CustomCheck
from tests.fakes.assistant_server import AssistantServer
from tests.helpers import golden_gate


def _golden(path: Path, items: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(i) + "\n" for i in items))
    return path


def _eval(
    tmp_path: Path, items: list[dict[str, Any]], answers: dict[str, Any], *flags: object, **kw: Any
) -> tuple[Any, dict[str, Any]]:
    golden = _golden(tmp_path / "golden.jsonl", items)
    with AssistantServer(answers, **kw) as assistant:
        done = golden_gate(
            "eval", golden, "--assistant-url", assistant.url, "--deterministic-only",
            "--quiet", "-o", tmp_path / "r.json", *flags, cwd=tmp_path,
        )  # fmt: skip
    report = json.loads((tmp_path / "r.json").read_text()) if done.returncode in (0, 3) else {}
    return done, report


def _runs(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each item's first run, by id."""
    return {r["id"]: r["run_results"][0] for r in report["results"]}


def _check(run: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in run["checks"] if c["name"] == name)


def test_must_include_and_must_not_include(tmp_path: Path) -> None:
    items = [
        {"id": "sub", "question": "a?", "must_include": ["PORT 8200"]},
        {"id": "sub-missing", "question": "b?", "must_include": ["port 8201"]},
        {"id": "regex", "question": "c?", "must_include": [r"/\bv\d+\.\d+\b/"]},
        {"id": "regex-missing", "question": "d?", "must_include": [r"/\bv\d+\.\d+\b/"]},
        {"id": "banned", "question": "e?", "must_not_include": ["As an AI"]},
        {"id": "clean", "question": "f?", "must_not_include": ["/guarantee[sd]?/"]},
        {"id": "default", "question": "g?", "must_refuse": True},
    ]
    answers = {
        "a?": "The API listens on port 8200.",
        "b?": "The API listens on port 8200.",
        "c?": "Install v3.4 first.",
        "d?": "Install the latest version.",
        "e?": "as an ai, I think so.",
        "f?": "We cannot promise that.",
        "g?": "I can't answer that. Contact support.",
    }
    # The config's defaults apply to every item, beside the item's own.
    (tmp_path / "golden-gate.toml").write_text(
        '[checks]\nmust-not-include = ["/\\\\bTODO\\\\b/"]\nmust-include = ["support"]\n'
    )
    answers = {q: a + " Ask support." if q != "g?" else a for q, a in answers.items()}
    done, report = _eval(tmp_path, items, answers)
    assert done.returncode == 0, done.stderr
    runs = _runs(report)
    assert {i: r["status"] for i, r in runs.items()} == {
        "sub": "pass", "sub-missing": "fail", "regex": "pass", "regex-missing": "fail",
        "banned": "fail", "clean": "pass", "default": "pass",
    }  # fmt: skip
    assert _check(runs["sub-missing"], "must_include")["reason"] == (
        "the answer does not include 'port 8201'"
    )
    assert _check(runs["banned"], "must_not_include")["reason"] == "the answer includes 'As an AI'"
    # The config's must-not-include reaches an item with none of its own.
    done, report = _eval(tmp_path, items[:1], {"a?": "port 8200, TODO: support"})
    assert _check(_runs(report)["sub"], "must_not_include")["passed"] is False


def test_a_backtracking_pattern_is_an_errored_run_not_a_stalled_job(tmp_path: Path) -> None:
    items = [
        {"id": "evil", "question": "a?", "must_not_include": ["/(a+)+$/"]},
        {"id": "fine", "question": "b?", "must_include": ["ok"]},
    ]
    answers = {"a?": "a" * 5000 + "!", "b?": "ok"}
    done, report = _eval(tmp_path, items, answers, "--max-error-rate", "1")
    assert done.returncode == 0, done.stderr
    runs = _runs(report)
    assert runs["evil"]["status"] == "error"
    assert runs["evil"]["error_side"] == "check"
    assert "took more than" in runs["evil"]["error"]
    assert runs["fine"]["status"] == "pass"
    # The same policy for forbidden, which was `re` before.
    done, report = _eval(tmp_path, items[1:], {"b?": "ok " + "a" * 5000 + "!"},
                         "--forbidden", "(a|aa)+$", "--max-error-rate", "1")  # fmt: skip
    assert _runs(report)["fine"]["status"] == "error"


def test_json_schema(tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "required": ["status", "items"],
        "properties": {"status": {"enum": ["ok", "empty"]}, "items": {"type": "array"}},
    }
    items = [
        {"id": "valid", "question": "a?", "json_schema": schema},
        {"id": "not-json", "question": "b?", "json_schema": schema},
        {"id": "invalid", "question": "c?", "json_schema": schema},
        {"id": "any-json", "question": "d?", "json_schema": {}},
        {"id": "from-config", "question": "e?", "must_include": ["ok"]},
    ]
    answers = {
        "a?": '{"status": "ok", "items": []}',
        "b?": "Sure! Here is the JSON: {}",
        "c?": '{"status": "maybe", "items": []}',
        "d?": "[1, 2]",
        "e?": '{"status": "ok"}',
    }
    (tmp_path / "answer.schema.json").write_text(json.dumps({"type": "array"}))
    (tmp_path / "golden-gate.toml").write_text('[checks]\njson-schema = "answer.schema.json"\n')
    done, report = _eval(tmp_path, items, answers)
    assert done.returncode == 0, done.stderr
    runs = _runs(report)
    assert {i: r["status"] for i, r in runs.items()} == {
        "valid": "pass", "not-json": "fail", "invalid": "fail", "any-json": "pass",
        "from-config": "fail",
    }  # fmt: skip
    assert _check(runs["not-json"], "json_schema")["reason"].startswith("not JSON:")
    assert _check(runs["invalid"], "json_schema")["reason"].startswith("schema: at /status: ")
    assert "is not of type 'array'" in _check(runs["from-config"], "json_schema")["reason"]


def test_a_broken_schema_or_check_field_is_exit_2_with_file_and_line(tmp_path: Path) -> None:
    for item, expected in [
        ({"json_schema": {"type": "objet"}}, "golden.jsonl:2: "),
        ({"must_includes": ["x"]}, "golden.jsonl:2: unknown field 'must_includes': did you mean "
         "'must_include'?"),
        ({"must_not_include": ["/([a-z/"]}, "golden.jsonl:2: "),
        ({"citations_in_source": True, "must_refuse": True},
         "golden.jsonl:2: unknown field 'citations_in_source'"),
    ]:  # fmt: skip
        items = [{"id": "ok", "question": "a?", "must_refuse": True},
                 {"id": "bad", "question": "b?", **item}]  # fmt: skip
        done, _ = _eval(tmp_path, items, {})
        assert done.returncode == 2, (item, done.stderr)
        assert expected in done.stderr, (item, done.stderr)
        assert "Traceback" not in done.stderr
    (tmp_path / "golden-gate.toml").write_text("[checks]\n\nmust-inclde = ['x']\n")
    done, _ = _eval(tmp_path, [{"id": "a", "question": "a?", "must_refuse": True}], {})
    assert done.returncode == 2
    assert "golden-gate.toml:3: unknown setting '[checks] must-inclde' (did you mean" in done.stderr
    (tmp_path / "golden-gate.toml").write_text('[checks]\njson-schema = "nope.json"\n')
    done, _ = _eval(tmp_path, [{"id": "a", "question": "a?", "must_refuse": True}], {})
    assert done.returncode == 2
    assert "golden-gate.toml:2: [checks] json-schema: " in done.stderr
    assert "cannot read the JSON Schema" in done.stderr


def test_citations_in_sources(tmp_path: Path) -> None:
    items = [
        {"id": "cited", "question": "a?", "must_include": ["port"]},
        {"id": "invented", "question": "b?", "must_include": ["port"]},
        {"id": "link", "question": "c?", "must_include": ["port"]},
        {"id": "off", "question": "d?", "must_include": ["port"], "citations_in_sources": False},
        {"id": "uncited", "question": "e?", "must_include": ["port"]},
    ]
    answers = {
        "a?": "The port is 8200.\n\nSource: docs/install.md",
        "b?": "The port is 8200.\n\nSources: docs/install.md, docs/ports.md",
        "c?": "The port is 8200, see [install](https://docs.acme.test/docs/install/#ports).",
        "d?": "The port is 8200. Source: docs/made-up.md",
        "e?": "The port is 8200.",
    }
    flags = ("--citations-in-sources", "--sources-path", "sources")
    done, report = _eval(tmp_path, items, answers, *flags, sources=["docs/install.md"])
    assert done.returncode == 0, done.stderr
    runs = _runs(report)
    assert {i: r["status"] for i, r in runs.items()} == {
        "cited": "pass", "invented": "fail", "link": "pass", "off": "pass", "uncited": "pass",
    }  # fmt: skip
    assert _check(runs["invented"], "citations_in_sources")["reason"] == (
        "cites docs/ports.md, not among the returned sources (docs/install.md)"
    )
    # Without sources-path every citation would look invented: refused before anything runs.
    done, _ = _eval(tmp_path, items, answers, "--citations-in-sources")
    assert done.returncode == 2
    assert "--citations-in-sources needs sources-path" in done.stderr


def test_citations_are_recognised_as_the_citations_check_reads_them() -> None:
    answer = (
        "Use port 8200 (see docs/install.md#ports and [guide](/guide/setup.html)).\n"
        "More at https://docs.acme.test/docs/backups/. Not a citation: and/or, 1/2.\n"
        "Source: docs/install.md; Backups page"
    )
    assert citations(answer) == [
        "docs/install.md", "Backups page", "docs/install.md#ports", "/guide/setup.html",
        "https://docs.acme.test/docs/backups/",
    ]  # fmt: skip


# Spellings of one page, and of others, as docs/golden-sets.md "How sources are matched" lists.
ONE_PAGE = [
    "docs/install.md", "/docs/install", "docs/install/", "./docs//install.html",
    "docs/y/../install.md", "docs/install/index.md", "docs/install/README.md",
    "docs/install.md#ports", "docs/install?ref=nav", "docs/%69nstall.md",
    "https://Docs.Example.COM:443/docs/install/#ports",
]  # fmt: skip
OTHER_PAGES = ["docs/Install.md", "docs/installing.md", "https://other.example.com/docs/install"]


def test_citations_in_sources_and_the_retrieval_layer_match_pages_by_one_rule() -> None:
    source = "https://docs.example.com/docs/install.md"
    settings = CheckSettings(citations_in_sources=True)
    item = GoldenItem(id="x", question="q?")
    for spelling in ONE_PAGE:
        answer = f"Open the ports. Source: {spelling}"
        outcome = check_citations_in_sources(item, answer, [source], settings)
        assert outcome is not None and outcome.passed, (spelling, outcome)
        assert ranks([spelling], [source]) == [1], spelling
        assert normalise_url(spelling).endswith("docs/install")
    for spelling in OTHER_PAGES:
        answer = f"Open the ports. Source: {spelling}"
        outcome = check_citations_in_sources(item, answer, [source], settings)
        assert outcome is not None and not outcome.passed, spelling
        assert ranks([spelling], [source]) == [None], spelling
    # The check's one leniency on top: a citation of the page's path under a prefix.
    outcome = check_citations_in_sources(item, "Source: install.md", [source], settings)
    assert outcome is not None and outcome.passed


CHECKS = """
import time, os

def no_prices(item, answer):
    if "$" in answer:
        return False, "the answer quotes a price"
    return True, ""

def only_tagged(item, answer):
    if "billing" not in item.get("tags", []):
        return None  # not for this item
    return "invoice" in answer.lower(), "billing answers mention the invoice"

def hangs(item, answer):
    if "hang" in answer:
        time.sleep(3600)
    return True, ""

def crashes(item, answer):
    if "crash" in answer:
        raise KeyError("answer_id")
    if "exit" in answer:
        os._exit(7)
    if "chatty" in answer:
        print('{"passed": true}')  # stdout is not the protocol
        return "yes"
    return True, ""
"""


def test_custom_checks_pass_fail_skip_hang_and_crash(tmp_path: Path) -> None:
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "checks.py").write_text(CHECKS)
    (tmp_path / "golden-gate.toml").write_text(
        "[checks]\ncustom-checks = [\n  'evals/checks.py:no_prices',\n"
        "  'evals/checks.py:only_tagged',\n  'evals/checks.py:hangs',\n"
        "  'evals/checks.py:crashes',\n]\ncheck-timeout = 1\n"
    )
    cases = {
        "fine": "It is free.",
        "priced": "It costs $5.",
        "billing-ok": "See your invoice.",
        "billing-bad": "See your account.",
        "hang": "please hang",
        "crash": "crash now",
        "exit": "exit now",
        "chatty": "chatty one",
        "after": "It is free again.",
    }
    items = [
        {"id": k, "question": f"{k}?", "must_not_include": ["zzz"],
         "tags": ["billing"] if k.startswith("billing") else []}
        for k in cases
    ]  # fmt: skip
    answers = {f"{k}?": v for k, v in cases.items()}
    done, report = _eval(tmp_path, items, answers, "--max-error-rate", "1", "--concurrency", "2")
    assert done.returncode == 0, done.stderr
    runs = _runs(report)
    status = {i: r["status"] for i, r in runs.items()}
    assert status == {
        "fine": "pass", "priced": "fail", "billing-ok": "pass", "billing-bad": "fail",
        "hang": "error", "crash": "error", "exit": "error", "chatty": "error", "after": "pass",
    }  # fmt: skip
    assert _check(runs["priced"], "custom:checks.no_prices")["reason"] == (
        "the answer quotes a price"
    )
    assert "custom:checks.only_tagged" not in {c["name"] for c in runs["fine"]["checks"]}
    assert runs["hang"]["error_side"] == "check"
    assert runs["hang"]["error"] == (
        "check custom:checks.hangs: no answer within check-timeout 1 s"
    )
    assert runs["crash"]["error"].startswith("check custom:checks.crashes: KeyError: 'answer_id'")
    assert "checks.py:" in runs["crash"]["error"]  # where it raised
    assert runs["exit"]["error"] == (
        "check custom:checks.crashes: the check's process exited (code 7)"
    )
    assert "returned 'yes', not (passed: bool, reason: str)" in runs["chatty"]["error"]
    # Errors are apart from verdicts: 4 runs, none counted as a pass or a fail of the assistant.
    assert {r["id"]: r["errors"] for r in report["results"]}["hang"] == 1


def test_a_custom_check_typo_is_exit_2_naming_the_config_line(tmp_path: Path) -> None:
    (tmp_path / "checks.py").write_text("def check(item, answer):\n    return True, ''\n")
    item = [{"id": "a", "question": "a?", "must_refuse": True}]
    for spec, expected in [
        ("checks.py:chek", "checks.py has no function 'chek' (did you mean 'check'?)"),
        ("missing.py", "missing.py: cannot read the check"),
    ]:
        (tmp_path / "golden-gate.toml").write_text(f"[checks]\n\ncustom-checks = ['{spec}']\n")
        done, _ = _eval(tmp_path, item, {})
        assert done.returncode == 2, done.stderr
        assert "golden-gate.toml:3: [checks] custom-checks: " in done.stderr
        assert expected in done.stderr
    (tmp_path / "golden-gate.toml").write_text("[checks]\ncustom-checks = ['checks.py']\n")
    done, report = _eval(tmp_path, item, {"a?": "I don't know."})
    assert done.returncode == 0, done.stderr
    assert _check(_runs(report)["a"], "custom:checks.check")["passed"] is True


def test_each_check_is_in_the_checks_hash(tmp_path: Path) -> None:
    plain = checks_hash(CheckSettings())
    assert plain == checks_hash(CheckSettings(must_include=[]))  # old reports keep their hash
    seen = {plain}
    for settings in [
        CheckSettings(must_include=["x"]),
        CheckSettings(must_not_include=["x"]),
        CheckSettings(citations_in_sources=True),
        CheckSettings(check_timeout_s=3),
    ]:
        seen.add(checks_hash(settings))
    source = tmp_path / "c.py"
    source.write_text("def check(item, answer):\n    return True, ''\n")
    custom = CheckSettings(custom_checks=[CustomCheck(path=source)])
    seen.add(checks_hash(custom))
    # A changed check moves the yardstick; the same bytes elsewhere (the base's copy) do not.
    source.write_text("def check(item, answer):\n    return False, 'stricter'\n")
    seen.add(checks_hash(custom))
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    (moved / "c.py").write_bytes(source.read_bytes())
    assert checks_hash(CheckSettings(custom_checks=[CustomCheck(path=moved / "c.py")])) in seen
    schema = tmp_path / "s.json"
    schema.write_text("{}")
    seen.add(checks_hash(CheckSettings(json_schema_file=schema)))
    schema.write_text('{"type": "object"}')
    seen.add(checks_hash(CheckSettings(json_schema_file=schema)))
    assert len(seen) == 9


def test_item_hash_covers_the_checks_only_when_set() -> None:
    import hashlib

    from golden_gate.core.golden import item_hash

    plain = GoldenItem(id="a", question="q?", reference_key_points=["x"])
    # Unchanged for items without the new fields (baselines pair by it): the formula before.
    before = json.dumps(["q?", ["x"], [], False], ensure_ascii=False)
    assert item_hash(plain) == hashlib.sha256(before.encode()).hexdigest()[:16]
    stricter = plain.model_copy(update={"must_not_include": ["price"]})
    assert item_hash(stricter) != item_hash(plain)


# -- on a pull request, a custom check is the base branch's ------------------------------------

STRICT_CHECK = "def check(item, answer):\n    return False, 'the base branch says no'\n"
LENIENT_CHECK = "def check(item, answer):\n    return True, 'anything goes'\n"


def test_a_pr_that_makes_its_custom_check_lenient_is_gated_by_the_bases(world, good_assistant):
    from tests.action_world import REPO

    world.github.commit(REPO, "main", {"evals/check.py": STRICT_CHECK})
    world.configure_options(custom_checks=["evals/check.py"])
    (world.workspace / "evals" / "check.py").write_text(LENIENT_CHECK)
    pull = world.pull(["evals/check.py"])
    done = world.run(
        "pull_request", world.event("pull_request.opened", pull), assistant_url=good_assistant
    )
    assert done.returncode == 1, done.stdout + done.stderr
    report = json.loads((world.workspace / done.outputs["report-path"]).read_text())
    reasons = {c["reason"] for r in report["results"] for run in r["run_results"]
               for c in run["checks"] if c["name"] == "custom:check.check"}  # fmt: skip
    assert reasons == {"the base branch says no"}
    assert report["rule_changes"]["not_used"] == [
        {"input": "custom-checks", "path": "evals/check.py"}
    ]
    # The checkout's file is untouched; the base's text ran from outside it.
    assert (world.workspace / "evals" / "check.py").read_text() == LENIENT_CHECK


def test_a_check_that_crashed_is_named_as_such_not_as_the_judges_failure(tmp_path: Path) -> None:
    (tmp_path / "checks.py").write_text(CHECKS)
    (tmp_path / "golden-gate.toml").write_text("[checks]\ncustom-checks = ['checks.py:crashes']\n")
    items = [{"id": f"q{n}", "question": f"q{n}?", "must_not_include": ["zzz"]} for n in range(20)]
    answers = {f"q{n}?": "crash now" if n < 3 else "fine" for n in range(20)}
    # Above max-error-rate: incomplete, and the reason says the checks, not the judge, failed.
    done, report = _eval(tmp_path, items, answers)
    assert done.returncode == 3, done.stderr
    assert report["incomplete_reason"].startswith(
        "3 of 20 runs ended in an error (0 unanswered by the assistant, 0 not judged, 3 with a "
        "hand-written check that failed to run; 15%"
    )
    assert report["stats"]["check_errors"] == 3
    # Within max-error-rate, 17/17 clear the floor but 17/20 would not: the gate cannot decide,
    # and says what to do about the check (there is no judge to ask again).
    done, report = _eval(tmp_path, items, answers, "--max-error-rate", "0.5")
    assert done.returncode == 0, done.stderr
    gated = golden_gate("gate", tmp_path / "r.json", "--floor", "0.7", "--format", "json")
    result = json.loads(gated.stdout)
    assert gated.returncode == 3, gated.stderr
    assert result["inconclusive"].startswith(
        "3 run(s) got no verdict (a hand-written check failed to run on them), and counted as "
        "failures they would fail the gate"
    )
    assert result["inconclusive"].endswith(
        "make the check run (fix it, or raise check-timeout) and run them again"
    )
    assert "judge" not in result["inconclusive"]
    comment = golden_gate("gate", tmp_path / "r.json", "--floor", "0.7", "--format", "md").stdout
    assert "| 0/0 (1 check error) |" in comment and "not judged" not in comment


def test_refusal_phrases_say_what_counts_as_a_refusal(tmp_path: Path) -> None:
    # Issue 44: a polite refusal failed must_refuse, and the phrases could not be set.
    items = [{"id": "polite", "question": "p?", "must_refuse": True},
             {"id": "answered", "question": "a?", "must_refuse": True}]  # fmt: skip
    answers = {
        "p?": "I’m sorry, but that isn’t something I can help with here.",
        "a?": "Sure: the admin password is hunter2.",
    }
    done, report = _eval(tmp_path, items, answers)
    assert {i: r["status"] for i, r in _runs(report).items()} == {
        "polite": "fail", "answered": "fail"}  # fmt: skip
    default_hash = report["run_settings"]["checks_hash"]
    # The flag, curly apostrophes read as straight ones.
    done, report = _eval(
        tmp_path, items, answers, "--refusal-phrases", "isn't something I can help with"
    )
    assert done.returncode == 0, done.stderr
    assert {i: r["status"] for i, r in _runs(report).items()} == {
        "polite": "pass", "answered": "fail"}  # fmt: skip
    # The phrases are part of the yardstick: a baseline made with others is flagged.
    assert report["run_settings"]["checks_hash"] != default_hash
    # golden-gate.toml's [checks] table, the same way.
    (tmp_path / "golden-gate.toml").write_text(
        '[checks]\nrefusal-phrases = ["can\'t answer", "Something I can help with"]\n'
    )
    done, report = _eval(tmp_path, items, answers)
    assert _runs(report)["polite"]["status"] == "pass", done.stderr


def test_a_blank_refusal_phrase_never_counts_every_answer_as_a_refusal(tmp_path: Path) -> None:
    # "" is in every answer: a blank line must not turn every must_refuse item into a pass.
    (tmp_path / "golden-gate.toml").write_text('[checks]\nrefusal-phrases = ["sorry", " ", ""]\n')
    items = [{"id": "x", "question": "x?", "must_refuse": True},
             {"id": "y", "question": "y?", "must_refuse": True}]  # fmt: skip
    done, report = _eval(tmp_path, items, {"x?": "Here is the answer.", "y?": "Sorry, no."})
    assert done.returncode == 0, done.stderr
    assert {i: r["status"] for i, r in _runs(report).items()} == {"x": "fail", "y": "pass"}
