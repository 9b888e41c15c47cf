# The golden-gate Action image. The runner builds it at job set-up (`docker build` with no build
# arguments) and runs it as root with the workspace at /github/workspace and the host's Docker
# socket mounted, so the gate can start the assistant with `docker compose`.
#
# BASE_IMAGE: any Debian (bookworm or later) image. The default has Python 3.11; a base without
# Python (e.g. a debootstrap'd bookworm) gets Debian's python3 instead.
ARG BASE_IMAGE=python:3.11-slim
FROM ${BASE_IMAGE}

# PIP_CERT: optional path of a CA bundle inside the base image for pip (builds behind a TLS proxy),
# as a build argument or the base image's ENV. Declared without a default: BuildKit would let an
# empty default hide the base image's ENV. Unset, pip uses its own bundle.
ARG PIP_CERT

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PATH=/opt/venv/bin:$PATH

SHELL ["/bin/bash", "-o", "pipefail", "-c"]

# System packages: git and CA certificates, Python when the base has none, and the Docker CLI with
# the compose v2 plugin. Both come from Debian trixie (docker-cli 26.x speaks API 1.45, which
# current Docker engines still accept; bookworm's 20.10 client is too old for them, and its
# docker-compose is v1). Their .debs are fetched with a separate sources list for trixie whose
# mirror is copied from the base's own apt sources, and only the two binaries are extracted.
# Versions come from the base's Debian release; the image is rebuilt per job, not shipped
# (DL3008). `apt-get download` writes to the current directory, hence the `cd` in a subshell
# (DL3003).
# hadolint ignore=DL3008,DL3003
RUN set -eux; \
    export DEBIAN_FRONTEND=noninteractive; \
    printf '%s\n' 'path-exclude /usr/share/doc/*' 'path-include /usr/share/doc/*/copyright' \
        'path-exclude /usr/share/man/*' 'path-exclude /usr/share/info/*' \
        'path-exclude /usr/share/locale/*' >/etc/dpkg/dpkg.cfg.d/golden-gate-nodoc; \
    apt-get update; \
    packages=(git ca-certificates); \
    if ! command -v python3 >/dev/null || ! python3 -c 'import venv, ensurepip' 2>/dev/null; then \
        packages+=(python3 python3-venv); \
    fi; \
    apt-get install -y --no-install-recommends "${packages[@]}"; \
    mirror=""; \
    if compgen -G '/etc/apt/sources.list.d/*.sources' >/dev/null; then \
        mirror=$(sed -n -E 's/^URIs:[[:space:]]*([^[:space:]]+).*/\1/p' /etc/apt/sources.list.d/*.sources \
            | grep -v -- '-security' | head -n1 || true); \
    fi; \
    if [ -z "$mirror" ] && [ -f /etc/apt/sources.list ]; then \
        mirror=$(sed -n -E 's/^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?([^[:space:]]+)[[:space:]].*/\2/p' /etc/apt/sources.list \
            | grep -v -- '-security' | head -n1 || true); \
    fi; \
    test -n "$mirror"; \
    for keyring in /usr/share/keyrings/debian-archive-keyring.gpg /usr/share/keyrings/debian-archive-keyring.pgp; do \
        if [ -f "$keyring" ]; then break; fi; \
    done; \
    test -f "$keyring"; \
    work=$(mktemp -d); \
    chmod 755 "$work"; \
    mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/parts" "$work/debs"; \
    chown _apt "$work/debs" 2>/dev/null || true; \
    echo "deb [signed-by=$keyring] $mirror trixie main" >"$work/trixie.list"; \
    apt_opts=(-o "Dir::Etc::SourceList=$work/trixie.list" -o "Dir::Etc::SourceParts=$work/parts" \
        -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache"); \
    apt-get "${apt_opts[@]}" update; \
    (cd "$work/debs" && apt-get "${apt_opts[@]}" download docker-cli docker-compose); \
    for deb in "$work"/debs/*.deb; do dpkg -x "$deb" "$work/root"; done; \
    install -m 0755 "$work/root/usr/bin/docker" /usr/bin/docker; \
    install -D -m 0755 "$work/root/usr/libexec/docker/cli-plugins/docker-compose" \
        /usr/libexec/docker/cli-plugins/docker-compose; \
    rm -rf "$work"; \
    apt-get clean; \
    rm -rf /var/lib/apt/lists/*; \
    git config --system --add safe.directory '*'; \
    docker --version; \
    docker compose version

# The runtime dependencies, pinned (scripts/lock.sh regenerates requirements.lock).
COPY requirements.lock /tmp/requirements.lock
RUN set -eux; \
    if [ -z "${PIP_CERT:-}" ]; then unset PIP_CERT; else export PIP_CERT; fi; \
    python3 -m venv /opt/venv; \
    /opt/venv/bin/pip install --no-cache-dir -r /tmp/requirements.lock; \
    rm /tmp/requirements.lock

# Our code last, so a change to it rebuilds only these layers.
COPY pyproject.toml README.md /action/
COPY templates/ /action/templates/
COPY src/ /action/src/
COPY entrypoint.py post-entrypoint /action/
RUN set -eux; \
    if [ -z "${PIP_CERT:-}" ]; then unset PIP_CERT; else export PIP_CERT; fi; \
    chmod 0755 /action/post-entrypoint; \
    /opt/venv/bin/pip install --no-cache-dir --no-deps /action; \
    /opt/venv/bin/golden-gate --version; \
    /opt/venv/bin/python -c 'from golden_gate.providers import import_integrations as i; print(*i())'

ENTRYPOINT ["/opt/venv/bin/python", "/action/entrypoint.py"]
