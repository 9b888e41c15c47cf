"""The Docker CLI as the container and act tiers call it."""

from __future__ import annotations

import subprocess


def docker(*args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess:
    """`docker ARGS`, its output captured; a failure fails the test with docker's message."""
    done = subprocess.run(
        ["docker", *args], capture_output=True, text=True, timeout=timeout, check=False
    )
    if check and done.returncode != 0:
        raise AssertionError(f"docker {' '.join(args)} exited {done.returncode}:\n{done.stderr}")
    return done
