"""The release flow end to end, against a real registry ("A real registry" in
docs/architecture.md#facts-established-since-the-first-release).

The same commands as .github/workflows/release.yml (scripts/release-image.sh), with the two
differences the script's header explains: one platform and no attestations, and the base image
given as a build argument, since no image registry is reachable here. In order:

1. a registry (Debian's docker-registry, distribution 2.8) on 127.0.0.1 with a login, started by
   scripts/local-registry.sh, and `release-image.sh login` to it (a Docker config of this
   module's own, so the machine's is untouched);
2. `release-image.sh build-push`: build, push, and the pushed reference IMAGE@sha256:<digest>;
3. `release-image.sh pin`: action.yml pulling that reference.

Then: the registry serves the manifest by that digest; the pinned action.yml is valid action
metadata and differs from action.yml only in naming exactly that digest; with the local copy
removed, `docker pull IMAGE@sha256:<digest>` works and the pulled image runs. Build and pull
times are printed, never asserted (timings vary on a shared machine).

`make test-container` runs this; `make test` deselects it (marker `container`).
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import shutil
import subprocess
import sys
import tarfile
import time
import urllib.request
from base64 import b64encode
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.container

ROOT = Path(__file__).resolve().parents[2]
RELEASE = ROOT / "scripts" / "release-image.sh"
REGISTRY = ROOT / "scripts" / "local-registry.sh"
BASE_IMAGE = os.environ.get("GG_BASE_IMAGE", "golden-gate-base:bookworm")
REPOSITORY = "golden-gate-test/golden-gate"  # <owner>/golden-gate, as on a real registry
MANIFEST_TYPES = (
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
    "application/vnd.docker.distribution.manifest.v2+json",
)
BUILD_TIMEOUT_S = 1800


def run(
    *args: str | Path, env: dict[str, str], stdin: str | None = None, timeout: float = 300
) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [str(a) for a in args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        raise AssertionError(
            f"{' '.join(map(str, args))} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
        )
    return done


def say(config: pytest.Config, line: str) -> None:
    """A measurement, shown even under -q and output capture (never asserted)."""
    capture = config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():
        print(f"\nrelease: {line}", flush=True)


@dataclass
class Release:
    env: dict[str, str]  # DOCKER_CONFIG with the registry login, and the script's settings
    address: str  # 127.0.0.1:PORT
    auth: str  # the Authorization header for the registry
    image: str  # <address>/golden-gate-test/golden-gate
    version: str
    ref: str  # <image>@sha256:<digest>, as build-push printed it
    pinned: Path  # action.yml as pin wrote it
    build_push_s: float
    tmp: Path

    @property
    def digest(self) -> str:
        return self.ref.split("@", 1)[1]

    def registry_get(self, path: str, accept: tuple[str, ...] = ()) -> tuple[int, dict, bytes]:
        request = urllib.request.Request(f"http://{self.address}{path}")
        request.add_header("Authorization", self.auth)
        if accept:
            request.add_header("Accept", ", ".join(accept))
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, dict(answer.headers), answer.read()


def unpack_filter(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo | None:
    """tarfile's `tar` filter, skipping (not failing on) what it refuses."""
    try:
        return tarfile.tar_filter(member, dest)
    except tarfile.FilterError:
        return None


def cold_pull(release: Release, manifest: dict, dest: Path) -> tuple[float, int]:
    """What `docker pull` does on an engine without any of the image's layers (a hosted runner):
    every layer downloaded from the registry, gunzipped and unpacked (here with Python's gzip and
    tarfile, into `dest`). Returns (seconds, bytes downloaded)."""
    started = time.perf_counter()
    downloaded = 0
    for layer in manifest["layers"]:
        request = urllib.request.Request(
            f"http://{release.address}/v2/{REPOSITORY}/blobs/{layer['digest']}"
        )
        request.add_header("Authorization", release.auth)
        with (
            urllib.request.urlopen(request, timeout=120) as answer,
            tarfile.open(fileobj=answer, mode="r|gz", errorlevel=0) as archive,
        ):
            archive.extractall(dest, filter=unpack_filter)
        downloaded += layer["size"]
    return time.perf_counter() - started, downloaded


def docker_config(tmp: Path) -> Path:
    """A Docker config of this module's own (the login goes there), with the caller's CLI
    plugins (buildx) when they live in the caller's config directory."""
    config = tmp / "docker-config"
    config.mkdir()
    own = Path(os.environ.get("DOCKER_CONFIG") or Path.home() / ".docker")
    if (own / "cli-plugins").is_dir():
        (config / "cli-plugins").symlink_to(own / "cli-plugins")
    return config


@pytest.fixture(scope="module")
def release(
    tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config
) -> Iterator[Release]:
    tmp = tmp_path_factory.mktemp("release")
    env = {**os.environ, "DOCKER_CONFIG": str(docker_config(tmp))}
    for tool, why in (
        ("docker", "no Docker engine"),
        ("docker-registry", "no docker-registry"),
    ):
        if shutil.which(tool) is None:
            pytest.fail(f"{why}: run `make test-container` (scripts/setup-docker.sh)")
    if subprocess.run(["docker", "buildx", "version"], env=env, capture_output=True).returncode:
        pytest.fail("no buildx plugin: run `make test-container` (scripts/setup-docker.sh)")
    if subprocess.run(["docker", "image", "inspect", BASE_IMAGE], capture_output=True).returncode:
        pytest.fail(f"no base image {BASE_IMAGE}: run `make test-container`")

    user, password = "releaser", secrets.token_hex(16)
    registry_dir = tmp / "registry"
    registry_env = {**env, "GG_REGISTRY_USER": user, "GG_REGISTRY_PASSWORD": password}
    address = run("bash", REGISTRY, "start", registry_dir, env=registry_env).stdout.strip()
    image = f"{address}/{REPOSITORY}"
    version = run(
        sys.executable, "-c",
        "import tomllib; print(tomllib.load(open('pyproject.toml', 'rb'))['project']['version'])",
        env=env,
    ).stdout.strip()  # fmt: skip
    pushed: list[str] = []
    try:
        run("bash", RELEASE, "login", image, user, env=env, stdin=password)
        env |= {
            "PLATFORMS": "linux/amd64",
            "ATTEST": "false",
            "BUILD_ARGS": f"BASE_IMAGE={BASE_IMAGE}",
        }
        started = time.perf_counter()
        done = run("bash", RELEASE, "build-push", image, version, env=env, timeout=BUILD_TIMEOUT_S)
        build_push_s = time.perf_counter() - started
        pushed.append(f"{image}:{version}")
        ref = done.stdout.strip()
        pushed.append(ref)
        pinned = tmp / "pinned" / "action.yml"
        run("bash", RELEASE, "pin", ref, ROOT / "action.yml", pinned, env=env)
        say(
            pytestconfig, f"build-push took {build_push_s:.1f} s (a re-run reuses BuildKit's cache)"
        )
        yield Release(
            env=env,
            address=address,
            auth="Basic " + b64encode(f"{user}:{password}".encode()).decode(),
            image=image,
            version=version,
            ref=ref,
            pinned=pinned,
            build_push_s=build_push_s,
            tmp=tmp,
        )
    finally:
        for name in pushed:  # the local copies: the built one, the pulled one
            subprocess.run(["docker", "rmi", name], env=env, capture_output=True)
        subprocess.run(["bash", REGISTRY, "stop", registry_dir], capture_output=True)


def test_build_push_prints_the_pushed_reference(release: Release) -> None:
    assert re.fullmatch(re.escape(release.image) + r"@sha256:[0-9a-f]{64}", release.ref)


def test_the_registry_serves_the_manifest_by_digest(
    release: Release, pytestconfig: pytest.Config
) -> None:
    path = f"/v2/{REPOSITORY}/manifests/{release.digest}"
    status, headers, body = release.registry_get(path, MANIFEST_TYPES)
    assert status == 200
    assert headers["Docker-Content-Digest"] == release.digest
    assert "sha256:" + hashlib.sha256(body).hexdigest() == release.digest
    manifest = yaml.safe_load(body)  # JSON is YAML
    assert manifest["mediaType"] in MANIFEST_TYPES
    assert headers["Content-Type"] == manifest["mediaType"]
    # One platform here: an image manifest whose config and layers the registry has.
    assert manifest["mediaType"].endswith(("manifest.v1+json", "manifest.v2+json"))
    for blob in [manifest["config"], *manifest["layers"]]:
        status, _, _ = release.registry_get(f"/v2/{REPOSITORY}/blobs/{blob['digest']}")
        assert status == 200
    # The tag names the same manifest.
    _, tagged, _ = release.registry_get(
        f"/v2/{REPOSITORY}/manifests/{release.version}", MANIFEST_TYPES
    )
    assert tagged["Docker-Content-Digest"] == release.digest
    compressed = sum(layer["size"] for layer in manifest["layers"])
    say(
        pytestconfig,
        f"pushed {len(manifest['layers'])} layers, {compressed / 1e6:.1f} MB compressed",
    )


def test_the_pinned_action_names_exactly_that_digest(release: Release) -> None:
    check = Path(sys.executable).parent / "check-jsonschema"
    run(check, "--builtin-schema", "vendor.github-actions", release.pinned, env=release.env)
    source = (ROOT / "action.yml").read_text().splitlines()
    pinned = release.pinned.read_text().splitlines()
    changed = [(a, b) for a, b in zip(source, pinned, strict=True) if a != b]
    assert changed == [("  image: Dockerfile", f"  image: docker://{release.ref}")]
    runs = yaml.safe_load(release.pinned.read_text())["runs"]
    assert runs["using"] == "docker"
    assert runs["image"] == f"docker://{release.ref}"
    assert runs["post-entrypoint"] == "/action/post-entrypoint"


def test_the_image_pulls_by_digest_and_runs(release: Release, pytestconfig: pytest.Config) -> None:
    env = release.env
    path = f"/v2/{REPOSITORY}/manifests/{release.digest}"
    manifest = yaml.safe_load(release.registry_get(path, MANIFEST_TYPES)[2])
    # The runner has no local copy: remove ours (the tag build-push left), then pull.
    run("docker", "rmi", f"{release.image}:{release.version}", env=env)
    gone = subprocess.run(["docker", "image", "inspect", release.ref], env=env, capture_output=True)
    assert gone.returncode != 0
    started = time.perf_counter()
    pulled = run("docker", "pull", release.ref, env=env, timeout=600)
    pull_s = time.perf_counter() - started
    assert release.digest in pulled.stdout
    downloaded = pulled.stdout.count("Pull complete")
    present = pulled.stdout.count("Already exists")

    version = run(
        "docker", "run", "--rm", "--entrypoint", "golden-gate", release.ref, "--version", env=env
    )  # fmt: skip
    assert version.stdout.strip() == f"golden-gate {release.version}"
    revision = run(
        "docker", "image", "inspect", release.ref,
        "--format", '{{index .Config.Labels "org.opencontainers.image.revision"}}',
        env=env,
    ).stdout.strip()  # fmt: skip
    assert revision == run("git", "rev-parse", "HEAD", env=env).stdout.strip()

    # This engine keeps the layers it built (BuildKit's cache holds them), so its pull above
    # downloads little; a runner's engine has none of them: measure that pull too.
    unpacked = release.tmp / "cold-pull"
    cold_s, cold_bytes = cold_pull(release, manifest, unpacked)
    shutil.rmtree(unpacked, ignore_errors=True)
    say(
        pytestconfig,
        f"docker pull by digest took {pull_s:.1f} s ({downloaded} layers downloaded, {present} "
        f"already here); a cold pull (all {len(manifest['layers'])} layers, "
        f"{cold_bytes / 1e6:.1f} MB, downloaded and unpacked) {cold_s:.1f} s; "
        f"build-push {release.build_push_s:.1f} s",
    )
