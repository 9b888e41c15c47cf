"""Changes that look clustered by page, with no cluster declared, are said (issue 29, point 3)."""

import json

from golden_gate.publish import publish
from golden_gate.settings import Settings
from tests.helpers import ids, report

NAMES = ids(200)


def _golden(tmp_path):
    path = tmp_path / "golden.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {"id": i, "question": f"q {i}?", "reference_urls": [f"docs/page{n // 8}.md"]}
            )
            + "\n"
            for n, i in enumerate(NAMES)
        )
    )
    return path


def _outcome(tmp_path, failing):
    baseline = report({i: n // 8 not in (0, 1, 2) for n, i in enumerate(NAMES)})
    candidate = report({i: not failing(n) for n, i in enumerate(NAMES)})
    settings = Settings(golden=_golden(tmp_path), cache_dir=None)
    return publish(candidate, baseline, settings)


def test_whole_pages_changing_together_are_said_with_what_to_set(tmp_path):
    # Three pages broke in the baseline, three others now: no net drop, all of it by page.
    outcome = _outcome(tmp_path, lambda n: n // 8 in (3, 4, 5))
    (warning,) = [w for w in outcome.gate.warnings if "look clustered by page" in w]
    assert "give golden items a `cluster`" in warning
    assert "look clustered by page" in outcome.comment


def test_scattered_changes_are_not(tmp_path):
    # The same number of changes, one question here and there.
    outcome = _outcome(tmp_path, lambda n: (n // 8 in (0, 1, 2) and n % 8 != 0) or n % 29 == 5)
    assert not any("look clustered by page" in w for w in outcome.gate.warnings)
