"""Sharding a golden set across a matrix and merging the shard reports back."""

import json
import re

import pytest

from golden_gate.core.golden import GoldenItem, Shard, shard_of
from golden_gate.core.merge import merge_reports, shard_report_path
from golden_gate.core.report import DatasetInfo
from golden_gate.core.report_file import load_report
from golden_gate.errors import InputError
from golden_gate.example_assistant import golden_path, start
from tests.helpers import golden_gate, report


def test_shards_partition_stably_and_evenly():
    items = [GoldenItem(id=f"item-{i}", question="q?") for i in range(1003)]
    parts = [shard_of(items, Shard(index=i, count=4)) for i in range(1, 5)]
    ids = [item.id for part in parts for item in part]
    assert sorted(ids) == sorted(item.id for item in items)  # each item exactly once
    sizes = [len(part) for part in parts]
    assert max(sizes) - min(sizes) <= 1
    again = [shard_of(list(reversed(items)), Shard(index=i, count=4)) for i in range(1, 5)]
    assert [{i.id for i in p} for p in parts] == [{i.id for i in p} for p in again]


@pytest.mark.parametrize("text", ["5/4", "0/3", "1/0", "a/b", "2", ""])
def test_bad_shard_is_named(text):
    with pytest.raises(InputError, match="input 'shard' must be i/n"):
        Shard.parse(text)


def test_four_shards_merged_equal_the_unsharded_run(tmp_path):
    with start("candidate") as assistant:

        def run(*extra):
            done = golden_gate(
                "eval",
                golden_path(),
                "--assistant-url",
                assistant.url,
                "--quiet",
                "--cache-dir",
                tmp_path / "cache",
                "--usage-path",
                "usage",
                "--assistant-prices",
                "0.15,0.60",
                *extra,
                cwd=tmp_path,
            )
            assert done.returncode == 0, done.stderr

        run("-o", tmp_path / "whole.json")
        shard_paths = []
        for i in range(1, 5):
            path = shard_report_path(tmp_path / "report.json", Shard(index=i, count=4))
            run("--shard", f"{i}/4", "-o", path)
            shard_paths.append(path)
    assert shard_paths[1].name == "report-shard-2-of-4.json"
    done = golden_gate(
        "merge",
        *shard_paths,
        "-o",
        tmp_path / "merged.json",
        "--baseline",
        tmp_path / "whole.json",
        "--floor",
        "0.5",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    whole = load_report(tmp_path / "whole.json")
    merged = load_report(tmp_path / "merged.json")
    assert len(merged.results) == len(whole.results) == 24

    def essence(rep):
        return {
            r.id: (
                r.passes,
                r.runs,
                r.errors,
                r.item_hash,
                [
                    (
                        x.status,
                        x.answer,
                        [c.model_dump() for c in x.checks],
                        x.verdict.passed if x.verdict else None,
                    )
                    for x in r.run_results
                ],
            )
            for r in rep.results
        }

    assert essence(merged) == essence(whole)
    assert merged.dataset.fingerprint == whole.dataset.fingerprint
    assert merged.dataset.shard is None and merged.model_extra["shards"] == 4
    assert "0 regressed, 0 improved on 24 shared items" in done.stdout
    # The assistant's usage adds up over the shards, as `plan --cost` reads it.
    assert merged.stats.assistant_tokens == whole.stats.assistant_tokens
    assert merged.stats.assistant_tokens.input_tokens > 0
    # each shard rounds its cost to a millionth of a dollar
    assert merged.stats.assistant_cost_usd == pytest.approx(
        whole.stats.assistant_cost_usd, abs=1e-5
    )
    assert merged.stats.tokens_per_answer == whole.stats.tokens_per_answer
    assert merged.stats.latency_ms.count == whole.stats.latency_ms.count == 24


def shard(outcomes, index, count, **kw):
    rep = report(outcomes, **kw)
    rep.dataset = DatasetInfo(fingerprint="sha256:x", shard=f"{index}/{count}")
    return rep


def test_merge_refuses_inconsistent_shards():
    one, two = shard({"a": True}, 1, 2), shard({"b": True}, 2, 2)
    two.warnings = ["3 judge calls timed out while others succeeded"]
    merged = merge_reports([("1.json", one), ("2.json", two)])
    assert [r.id for r in merged.results] == ["a", "b"]
    assert merged.warnings == ["2.json: 3 judge calls timed out while others succeeded"]
    with pytest.raises(InputError, match="shard\\(s\\) 2/2 missing"):
        merge_reports([("1.json", one)])
    with pytest.raises(InputError, match=re.escape("2.json: shard 1/2 is duplicated")):
        merge_reports([("1.json", one), ("2.json", shard({"c": True}, 1, 2))])
    with pytest.raises(InputError, match=re.escape("item 'a' is also in 1.json")):
        merge_reports([("1.json", one), ("2.json", shard({"a": True}, 2, 2))])
    other_judge = shard({"b": True}, 2, 2, judge="keypoints")
    with pytest.raises(InputError, match=re.escape("2.json: its judge ('keypoints') differs")):
        merge_reports([("1.json", one), ("2.json", other_judge)])
    other_set = shard({"b": True}, 2, 2)
    other_set.dataset.fingerprint = "sha256:y"
    with pytest.raises(InputError, match="its golden set"):
        merge_reports([("1.json", one), ("2.json", other_set)])
    with pytest.raises(InputError, match="not a shard report"):
        merge_reports([("x.json", report({"a": True}))])


def test_merge_command_exits_2_on_a_missing_shard(tmp_path):
    path = tmp_path / "s1.json"
    path.write_text(shard({"a": True}, 1, 3).model_dump_json())
    done = golden_gate("merge", path, "-o", tmp_path / "m.json")
    assert done.returncode == 2
    assert "shard(s) 2/3, 3/3 missing" in done.stderr
    assert not (tmp_path / "m.json").exists()
    assert json.loads(path.read_text())["dataset"]["shard"] == "1/3"


def test_merge_is_incomplete_where_gate_on_the_same_report_is(tmp_path):
    """Runs the judge could not judge that would flip a pass: `gate` says incomplete (exit 3),
    and so does `merge` of the same items in two shards."""
    import copy

    from tests.gate_pairs import judge_errors

    candidate, baseline = judge_errors()
    (tmp_path / "c.json").write_text(json.dumps(candidate))
    (tmp_path / "b.json").write_text(json.dumps(baseline))
    gated = golden_gate("gate", tmp_path / "c.json", tmp_path / "b.json")
    assert gated.returncode == 3, gated.stdout + gated.stderr
    results = candidate["results"]
    shards = []
    for k, part in enumerate((results[0::2], results[1::2]), start=1):
        shard = copy.deepcopy(candidate)
        shard["results"] = part
        shard["dataset"] = {
            "path": "g.jsonl", "fingerprint": "sha256:x", "items": len(part), "tags": [],
            "shard": f"{k}/2",
        }  # fmt: skip
        (tmp_path / f"s{k}.json").write_text(json.dumps(shard))
        shards.append(tmp_path / f"s{k}.json")
    merged = golden_gate(
        "merge", *shards, "--baseline", tmp_path / "b.json", "-o", tmp_path / "m.json"
    )
    assert merged.returncode == 3, merged.stdout + merged.stderr
    assert "no gate result" in merged.stderr


def test_shards_canaries_and_judges_merge_and_are_checked_together():
    from golden_gate.core.canaries import Canaries, CanaryProbe, check
    from golden_gate.core.report import JudgeIdentity

    def probes(item, passed):
        return [
            CanaryProbe(
                evaluator="correctness",
                judge="openai:j",
                kind=kind,
                item=item,
                expected=kind == "known-good",
                answer="x",
                passed=passed,
            )
            for kind in ("known-good", "empty", "off-topic", "key-point-removed")
        ]

    one, two = shard({"a": True}, 1, 2), shard({"b": True}, 2, 2)
    # shard 1's judge could not judge its probes, shard 2's got one of four wrong: each alone
    # would not pass (unchecked; 1 > 0 allowed of 4), together 1 of 8 is within the tolerance
    one.canaries = Canaries(items=2, checks=check(probes("a", None)), probes=probes("a", None))
    wrong = probes("b", False)
    wrong[0] = wrong[0].model_copy(update={"passed": True})  # known-good passed: right
    wrong[1] = wrong[1].model_copy(update={"passed": True})  # empty answer passed: wrong
    two.canaries = Canaries(items=2, checks=check(wrong), probes=wrong)
    one.judges = [JudgeIdentity(judge="openai:j", served_models=["j-1"])]
    two.judges = [JudgeIdentity(judge="openai:j", served_models=["j-2"])]
    merged = merge_reports([("1.json", one), ("2.json", two)])
    assert merged.canaries is not None and len(merged.canaries.probes) == 8
    [checked] = merged.canaries.checks
    assert (checked.probes, checked.wrong, checked.unjudged, checked.status) == (8, 1, 4, "passed")
    assert merged.judges == [JudgeIdentity(judge="openai:j", served_models=["j-1", "j-2"])]
