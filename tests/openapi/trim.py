"""Trim GitHub's official OpenAPI description to the operations the fake GitHub serves.

The full description (npm package `@octokit/openapi`, `generated/api.github.com.json`) is 13 MB;
the fake serves a handful of operations, so only those are kept, with every `#/components/...`
they reference, transitively. Run it again after adding an operation to `OPERATIONS`:

    .venv/bin/python tests/openapi/trim.py

It fetches the pinned packages with the ordinary npm client (`npm pack`) into a temporary
directory and rewrites `tests/openapi/github-trimmed.json`. Where the description disagrees
with what GitHub really answers, a documented patch below fixes the copy (listed in
`info.x-trimmed-from.patches`); validation is never turned off.

It also rewrites `tests/openapi/fixtures-sample.json`: a few real exchanges recorded from
api.github.com by `@octokit/fixtures` (`SAMPLE` below), which tests/action/test_github.py replays
through the same validator to show that it accepts what GitHub really sends.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

PACKAGE = "@octokit/openapi"
VERSION = "23.0.2"
MEMBER = "package/generated/api.github.com.json"
OUT = Path(__file__).with_name("github-trimmed.json")
FIXTURES = "@octokit/fixtures"
FIXTURES_VERSION = "23.1.2"
SAMPLE_OUT = Path(__file__).with_name("fixtures-sample.json")

# (path template exactly as in the description, method): what tests/fakes/github_server.py serves.
OPERATIONS: list[tuple[str, str]] = [
    ("/user", "get"),
    ("/repos/{owner}/{repo}", "get"),
    ("/repos/{owner}/{repo}/pulls/{pull_number}", "get"),
    ("/repos/{owner}/{repo}/pulls/{pull_number}/files", "get"),
    ("/repos/{owner}/{repo}/issues/{issue_number}/comments", "get"),
    ("/repos/{owner}/{repo}/issues/{issue_number}/comments", "post"),
    ("/repos/{owner}/{repo}/issues/comments/{comment_id}", "get"),
    ("/repos/{owner}/{repo}/issues/comments/{comment_id}", "patch"),
    ("/repos/{owner}/{repo}/issues/comments/{comment_id}", "delete"),
    ("/repos/{owner}/{repo}/contents/{path}", "get"),
    ("/repos/{owner}/{repo}/git/blobs/{file_sha}", "get"),
    # baseline promotion: a branch, a file commit on it, one pull request
    ("/repos/{owner}/{repo}/git/ref/{ref}", "get"),
    ("/repos/{owner}/{repo}/git/refs", "post"),
    ("/repos/{owner}/{repo}/git/refs/{ref}", "patch"),
    ("/repos/{owner}/{repo}/contents/{path}", "put"),
    ("/repos/{owner}/{repo}/commits", "get"),
    ("/repos/{owner}/{repo}/pulls", "get"),
    ("/repos/{owner}/{repo}/pulls", "post"),
    ("/repos/{owner}/{repo}/pulls/{pull_number}", "patch"),
    # drift alerts: one labelled issue
    ("/repos/{owner}/{repo}/labels", "post"),
    ("/repos/{owner}/{repo}/labels/{name}", "get"),
    ("/repos/{owner}/{repo}/issues", "get"),
    ("/repos/{owner}/{repo}/issues", "post"),
    ("/repos/{owner}/{repo}/issues/{issue_number}", "patch"),
]

# Operations the fake does not serve, kept so that recorded exchanges from `@octokit/fixtures`
# can be replayed through the validator.
REPLAY_ONLY: list[tuple[str, str]] = [
    ("/repos/{owner}/{repo}/issues/{issue_number}/labels", "post"),
]

# (scenario, index of the exchange in its normalized-fixture.json) replayed by the tests.
# Left out: get-repository (recorded before `has_discussions` became required), raw-media
# and /repositories/{id} exchanges (not in the description).
SAMPLE: list[tuple[str, int]] = [
    ("get-content", 0),  # a directory listing: a JSON array (see the discriminator patch)
    ("paginate-issues", 0),  # a page with a Link header; open issues have state_reason null
    ("add-labels-to-issue", 0),
    ("add-labels-to-issue", 1),
    ("errors", 0),  # 422 Validation Failed
    ("git-refs", 1),
    ("create-file", 0),
]
SAMPLE_HEADERS = ("content-type", "link", "location", "retry-after")

# GitHub answers these on any operation (bad token, no access, rate limits, outages) but the
# description lists them only on some operations.
ANY_OPERATION_ERRORS = ("401", "403", "404", "429", "500", "502", "503")

PATCHES = [
    "responses: every kept operation also documents "
    + ", ".join(ANY_OPERATION_ERRORS)
    + " with #/components/schemas/basic-error where the description lists no such status "
    "(GitHub answers them on every operation: bad credentials, 'Resource not accessible by "
    "integration', secondary rate limits, outages)",
    "GET /repos/{owner}/{repo}/contents/{path} 200: the `discriminator` on `type` is dropped from "
    "the oneOf (a directory is answered as a JSON array, which has no `type` property, so the "
    "discriminator rejects every directory listing; the oneOf alone is exclusive: an array, or "
    "an object whose `type` enum is file, symlink or submodule)",
    "`nullable: true` schemas with an `enum` get null added to the enum (OpenAPI 3.0.3 says "
    "nullable does not extend an enum, and GitHub sends e.g. `state_reason: null` for open "
    "issues)",
    "PUT /repos/{owner}/{repo}/contents/{path} 409: the `oneOf` of basic-error and "
    "repository-rule-violation-error becomes `anyOf` (neither requires a property nor forbids "
    "others, so every body matches both and the oneOf rejects every 409, e.g. GitHub's "
    "'PATH does not match SHA')",
    "media-type `examples` and `#/components/examples` are dropped (documentation only, 60% of "
    "the size)",
]


def npm_pack(workdir: Path, spec: str) -> Path:
    """`npm pack` a package into `workdir`; the tarball's path."""
    out = subprocess.run(
        ["npm", "pack", spec, "--silent"],
        cwd=workdir,
        check=True,
        capture_output=True,
        text=True,
    )
    return workdir / out.stdout.strip().splitlines()[-1]


def read_member(tarball: Path, name: str) -> Any:
    with tarfile.open(tarball) as tar:
        member = tar.extractfile(name)
        if member is None:
            raise SystemExit(f"{name} is missing from {tarball.name}")
        return json.load(member)


def fetch(workdir: Path) -> dict[str, Any]:
    return read_member(npm_pack(workdir, f"{PACKAGE}@{VERSION}"), MEMBER)


def sample(workdir: Path) -> dict[str, Any]:
    """The `SAMPLE` exchanges, reduced to what validation needs."""
    tarball = npm_pack(workdir, f"{FIXTURES}@{FIXTURES_VERSION}")
    exchanges = []
    for scenario, index in SAMPLE:
        name = f"package/scenarios/api.github.com/{scenario}/normalized-fixture.json"
        recorded = read_member(tarball, name)[index]
        headers = recorded.get("headers", {})
        exchanges.append(
            {
                "scenario": f"{scenario}[{index}]",
                "method": recorded["method"].upper(),
                "path": recorded["path"],
                "request_headers": {
                    k: str(v) for k, v in recorded["reqheaders"].items() if k != "authorization"
                },
                "request_body": recorded.get("body") or None,
                "status": recorded["status"],
                "response_headers": {
                    k: str(v) for k, v in headers.items() if k.lower() in SAMPLE_HEADERS
                },
                "response_body": recorded["response"],
            }
        )
    return {
        "source": (
            f"{FIXTURES}@{FIXTURES_VERSION}, scenarios/api.github.com/*/normalized-fixture.json "
            "(real api.github.com exchanges, normalized by octokit; MIT licence); "
            "regenerate with python tests/openapi/trim.py"
        ),
        "exchanges": exchanges,
    }


def refs(node: Any) -> Iterator[str]:
    """Every `$ref` string anywhere below `node`."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from refs(value)


def drop_examples(node: Any) -> Any:
    """Media-type `examples` only reference #/components/examples: documentation, not rules."""
    if isinstance(node, dict):
        return {
            key: drop_examples(value)
            for key, value in node.items()
            if not (key == "examples" and isinstance(value, dict) and _is_media_examples(value))
        }
    if isinstance(node, list):
        return [drop_examples(value) for value in node]
    return node


def _is_media_examples(value: dict[str, Any]) -> bool:
    # A schema's `examples` would be a list (JSON Schema); media-type ones map names to objects.
    return all(isinstance(v, dict) and ("$ref" in v or "value" in v) for v in value.values())


def add_common_errors(operation: dict[str, Any]) -> None:
    responses = operation.setdefault("responses", {})
    for status in ANY_OPERATION_ERRORS:
        responses.setdefault(
            status,
            {
                "description": "Error (added by tests/openapi/trim.py)",
                "content": {
                    "application/json": {
                        "schema": {"$ref": "#/components/schemas/basic-error"},
                    }
                },
            },
        )


def drop_contents_discriminator(paths: dict[str, Any]) -> None:
    operation = paths["/repos/{owner}/{repo}/contents/{path}"]["get"]
    schema = operation["responses"]["200"]["content"]["application/json"]["schema"]
    if "discriminator" not in schema:
        raise SystemExit("the contents discriminator is gone upstream: drop this patch")
    del schema["discriminator"]


def contents_conflict_any_of(paths: dict[str, Any]) -> None:
    operation = paths["/repos/{owner}/{repo}/contents/{path}"]["put"]
    schema = operation["responses"]["409"]["content"]["application/json"]["schema"]
    if "oneOf" not in schema:
        raise SystemExit("the contents 409 oneOf is gone upstream: drop this patch")
    schema["anyOf"] = schema.pop("oneOf")


def null_in_nullable_enums(node: Any) -> None:
    if isinstance(node, dict):
        enum = node.get("enum")
        if node.get("nullable") is True and isinstance(enum, list) and None not in enum:
            enum.append(None)
        for value in node.values():
            null_in_nullable_enums(value)
    elif isinstance(node, list):
        for value in node:
            null_in_nullable_enums(value)


def trim(full: dict[str, Any]) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for path, method in [*OPERATIONS, *REPLAY_ONLY]:
        item = full["paths"][path]
        kept = paths.setdefault(path, {k: v for k, v in item.items() if k == "parameters"})
        kept[method] = copy.deepcopy(item[method])
        add_common_errors(kept[method])
    paths = drop_examples(paths)
    drop_contents_discriminator(paths)
    contents_conflict_any_of(paths)

    components: dict[str, dict[str, Any]] = {}
    pending = list(refs(paths))
    seen: set[str] = set()
    while pending:
        ref = pending.pop()
        if ref in seen:
            continue
        seen.add(ref)
        if not ref.startswith("#/components/"):
            raise SystemExit(f"unexpected reference {ref}")
        _, _, section, name = ref.split("/", 3)
        node = drop_examples(full["components"][section][name])
        components.setdefault(section, {})[name] = node
        pending.extend(refs(node))

    null_in_nullable_enums(paths)
    null_in_nullable_enums(components)

    info = dict(full["info"])
    info["x-trimmed-from"] = {
        "package": f"{PACKAGE}@{VERSION}",
        "file": MEMBER.removeprefix("package/"),
        "regenerate": "python tests/openapi/trim.py (edit OPERATIONS there first)",
        "operations": [f"{m.upper()} {p}" for p, m in OPERATIONS],
        "replay_only": [f"{m.upper()} {p}" for p, m in REPLAY_ONLY],
        "patches": PATCHES,
    }
    return {
        "openapi": full["openapi"],
        "info": info,
        "servers": full["servers"],
        "paths": paths,
        "components": {k: dict(sorted(v.items())) for k, v in sorted(components.items())},
    }


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="octokit-openapi-") as tmp:
        full = fetch(Path(tmp))
        exchanges = sample(Path(tmp))
    trimmed = trim(full)
    OUT.write_text(json.dumps(trimmed, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    SAMPLE_OUT.write_text(
        json.dumps(exchanges, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    n = sum(len(v) for v in trimmed["components"].values())
    print(
        f"wrote {OUT.name}: {len(trimmed['paths'])} paths, {n} components, "
        f"{OUT.stat().st_size // 1024} KiB; {SAMPLE_OUT.name}: "
        f"{len(exchanges['exchanges'])} exchanges",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
