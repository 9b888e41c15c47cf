"""Job set-up of the Action: building its image from the Dockerfile vs pulling the released one.

    .venv/bin/python bench/setup_time.py [--base-image golden-gate-base:bookworm]

What a runner does before the gate's first line runs, measured in one run on this machine:

- **built, cold**: `docker build --no-cache` of the Dockerfile, what a GitHub-hosted runner pays
  on every job (`runs: image: Dockerfile`; its layer cache does not outlive the job);
- **built, warm**: the same build again with the layer cache, what a long-lived self-hosted
  runner pays after the first job;
- **pulled**: `docker pull IMAGE@sha256:…` of the image the release workflow's own commands
  (`scripts/release-image.sh build-push`) pushed to a real registry (Debian's docker-registry)
  on 127.0.0.1, after removing every local copy: what the released Action costs.

Layers another local image shares (the container tier's build of the same Dockerfile) stay on
the engine, so "pulled" can be a warm pull; tests/container/test_release.py times a cold one.
The registry is on loopback, so "pulled" is the unpacking alone; over a network add the
compressed size (printed) divided by the runner's bandwidth. Prints a Markdown table.
Needs the engine, buildx and the registry of scripts/setup-docker.sh.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MB = 1e6


def run(*args: str, env: dict[str, str] | None = None) -> tuple[str, float]:
    started = time.perf_counter()
    done = subprocess.run(
        args,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} exited {done.returncode}:\n{done.stderr[-3000:]}")
    return done.stdout.strip(), time.perf_counter() - started


def compressed_size(ref: str) -> float:
    """The layers' size as the registry stores and sends them, in MB."""
    image, digest = ref.split("@")
    host, name = image.split("/", 1)
    accept = "application/vnd.docker.distribution.manifest.v2+json"
    request = urllib.request.Request(
        f"http://{host}/v2/{name}/manifests/{digest}", headers={"Accept": accept}
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        manifest = json.loads(answer.read())
    return sum(layer["size"] for layer in manifest["layers"]) / MB


def image_size(image: str) -> float:
    out, _ = run("docker", "image", "inspect", "--format", "{{.Size}}", image)
    return int(out) / MB


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-image", default="golden-gate-base:bookworm")
    args = parser.parse_args()
    base = f"BASE_IMAGE={args.base_image}"
    with tempfile.TemporaryDirectory(prefix="golden-gate-bench-registry-") as registry_dir:
        address, _ = run("bash", "scripts/local-registry.sh", "start", registry_dir)
        image = f"{address.splitlines()[-1]}/bench/golden-gate"
        try:
            env = {"PLATFORMS": "linux/amd64", "ATTEST": "false", "BUILD_ARGS": base}
            out, _ = run("bash", "scripts/release-image.sh", "build-push", image, "0.0.0", env=env)
            ref = out.splitlines()[-1]
            local = "golden-gate-bench:built"
            build = ("docker", "build", "--build-arg", base, "-t", local, ".")
            _, cold = run(build[0], build[1], "--no-cache", *build[2:])
            _, warm = run(*build)
            size = image_size(local)
            run("docker", "image", "rm", "-f", local, f"{image}:0.0.0", ref)
            _, pulled = run("docker", "pull", ref)
            pulled_size = image_size(ref)
            compressed = compressed_size(ref)
            run("docker", "image", "rm", "-f", ref)
        finally:
            run("bash", "scripts/local-registry.sh", "stop", registry_dir)
    print("| job set-up of the gate step | seconds | image |")
    print("| --- | ---: | --- |")
    print(f"| built from the Dockerfile, cold (hosted runner) | {cold:.1f} | {size:.0f} MB |")
    print(f"| built from the Dockerfile, layer cache warm | {warm:.1f} | {size:.0f} MB |")
    print(
        f"| pulled by digest from a registry on 127.0.0.1 | {pulled:.1f} | {pulled_size:.0f} MB "
        f"({compressed:.0f} MB compressed) |"
    )
    print(f"\ncold build / pull: {cold / pulled:.1f}x")


if __name__ == "__main__":
    main()
