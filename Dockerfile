# The golden-gate Action image. Released images are built by .github/workflows/release.yml
# (scripts/release-image.sh) and pulled by digest; on main, action.yml still says
# `image: Dockerfile` and the runner builds this file at job set-up (`docker build`, no build
# arguments). Either way the runner runs it as root with the workspace at /github/workspace and
# the host's Docker socket mounted, so the gate can start the assistant with `docker compose`.
#
# Only the last stage is the image, and it receives files from the others, never their tools or
# caches (BENCHMARKS.md, "Image size and job set-up"):
#
#   system        the base with git, CA certificates (and Python when the base has none): the
#                 final image's first layer
#   docker-cli    fetches the Docker CLI and the compose v2 plugin; only the two binaries leave
#   venv          builds /opt/venv from requirements.lock with pip (and binutils to strip debug
#                 info) on system's Python, without test suites
#   app           golden-gate installed with that pip, under /opt/app
#   runtime-venv  the venv without pip and setuptools
#   (final)       system + the two binaries + runtime-venv's /opt/venv + app's /opt/app + /action
#
# BASE_IMAGE: any Debian (bookworm or later) image. The default has Python 3.11; a base without
# Python (e.g. a debootstrap'd bookworm) gets Debian's python3 instead.
ARG BASE_IMAGE=python:3.11-slim

# --- system: what the final image runs on ------------------------------------------------------
FROM ${BASE_IMAGE} AS system

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PATH=/opt/venv/bin:$PATH

SHELL ["/bin/bash", "-o", "pipefail", "-c"]

# git and CA certificates, and Python when the base has none. No documentation, man pages or
# translations (dpkg path filters), no apt lists. git depends on perl, for its commands written in
# Perl (send-email, svn, instaweb, …); the gate runs only git's built-in commands (ls-files, diff,
# rev-parse, show, cat-file: tried below), so the perl packages this step pulled in (perl, its
# library and modules, Perl modules such as liberror-perl: about 47 MB; the essential perl-base
# stays) make way for golden-gate-no-perl, an empty package that provides the names git depends
# on: dpkg's state stays consistent, and an `apt-get install` on top of the image still works (a
# package that needs a real perl gets it). Versions come from the base's Debian release, which
# serves no old versions, so pinning them would break the build (DL3008): a released image is
# immutable and pinned by digest instead.
# hadolint ignore=DL3008
RUN set -eux; \
    export DEBIAN_FRONTEND=noninteractive; \
    printf '%s\n' 'path-exclude /usr/share/doc/*' 'path-include /usr/share/doc/*/copyright' \
        'path-exclude /usr/share/man/*' 'path-exclude /usr/share/info/*' \
        'path-exclude /usr/share/locale/*' >/etc/dpkg/dpkg.cfg.d/golden-gate-nodoc; \
    before=$(dpkg-query -W -f '${Package}\n' | sort); \
    apt-get update; \
    packages=(git ca-certificates); \
    if ! command -v python3 >/dev/null; then packages+=(python3); fi; \
    apt-get install -y --no-install-recommends "${packages[@]}"; \
    mapfile -t perl < <(comm -13 <(printf '%s\n' "$before") <(dpkg-query -W -f '${Package}\n' | sort) \
        | grep -E '^(perl|perl-modules-[0-9.]+|libperl[0-9.]+|lib[a-z0-9-]+-perl)$' || true); \
    if [ "${#perl[@]}" -gt 0 ]; then \
        provides=$(printf '%s\n' "${perl[@]}" | grep -E '^perl$|-perl$' | paste -s -d, -); \
        work=$(mktemp -d); \
        chmod 0755 "$work"; \
        mkdir "$work/DEBIAN"; \
        printf '%s\n' 'Package: golden-gate-no-perl' 'Version: 1' 'Architecture: all' \
            'Multi-Arch: foreign' 'Maintainer: golden-gate' "Provides: $provides" 'Priority: optional' \
            'Description: perl for git, without Perl' \
            ' golden-gate runs only git commands built into git itself.' >"$work/DEBIAN/control"; \
        dpkg-deb --build "$work" /tmp/golden-gate-no-perl.deb; \
        dpkg -i /tmp/golden-gate-no-perl.deb; \
        dpkg --purge "${perl[@]}"; \
        rm -rf "$work" /tmp/golden-gate-no-perl.deb; \
    fi; \
    apt-get check; \
    apt-get clean; \
    rm -rf /var/lib/apt/lists/* /var/cache/debconf/*-old /var/log/apt /var/log/dpkg.log; \
    git config --system --add safe.directory '*'; \
    work=$(mktemp -d); \
    git -C "$work" init -q; \
    echo a >"$work/a"; \
    git -C "$work" add a; \
    git -C "$work" -c user.name=t -c user.email=t@t commit -q -m a; \
    git -C "$work" ls-files -z -- a >/dev/null; \
    git -C "$work" diff --name-only HEAD HEAD; \
    git -C "$work" show HEAD:a >/dev/null; \
    git -C "$work" rev-parse --verify --quiet 'HEAD^{commit}' >/dev/null; \
    git -C "$work" cat-file -e HEAD:a; \
    rm -rf "$work"; \
    git --version; \
    python3 --version

# --- docker-cli: the Docker CLI and the compose v2 plugin -------------------------------------
# Both come from Debian trixie (docker-cli 26.x speaks API 1.45, which current Docker engines
# still accept; bookworm's 20.10 client is too old for them, and its docker-compose is v1). Their
# .debs are fetched with a separate sources list for trixie whose mirror is copied from the
# base's own apt sources, and only the two binaries are extracted. `apt-get download` writes to
# the current directory, hence the `cd` in a subshell (DL3003).
FROM ${BASE_IMAGE} AS docker-cli
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# hadolint ignore=DL3003,DL3008
RUN set -eux; \
    if [ ! -f /etc/ssl/certs/ca-certificates.crt ]; then \
        apt-get update; \
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ca-certificates; \
    fi; \
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
    install -D -m 0755 "$work/root/usr/bin/docker" /out/docker; \
    install -D -m 0755 "$work/root/usr/libexec/docker/cli-plugins/docker-compose" /out/docker-compose; \
    rm -rf "$work"; \
    /out/docker --version

# --- venv: the Python environment -------------------------------------------------------------
FROM system AS venv

# PIP_CERT: optional path of a CA bundle inside the base image for pip (builds behind a TLS proxy),
# as a build argument or the base image's ENV. Declared without a default: BuildKit would let an
# empty default hide the base image's ENV. Unset, pip uses its own bundle.
ARG PIP_CERT
ENV PIP_DISABLE_PIP_VERSION_CHECK=1
SHELL ["/bin/bash", "-o", "pipefail", "-c"]

# The runtime dependencies, pinned (scripts/lock.sh regenerates requirements.lock), as pip
# installs them (bytecode compiled: start-up time matters), then without what never runs:
#   - the test suites of numpy, scipy and google-genai (51 MB; nothing imports them);
#   - debug information in the compiled extensions that carry it (31 MB, zstandard's 22).
#     `strip --strip-debug` keeps every symbol; the other libraries are left alone, since
#     stripping a library that auditwheel patched (numpy's OpenBLAS) breaks its loading.
# Build tools (python3-venv on a base without ensurepip, binutils) exist in this stage only.
# hadolint ignore=DL3008
RUN set -eux; \
    export DEBIAN_FRONTEND=noninteractive; \
    if [ -z "${PIP_CERT:-}" ]; then unset PIP_CERT; else export PIP_CERT; fi; \
    packages=(binutils); \
    if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then packages+=(python3-venv); fi; \
    apt-get update; \
    apt-get install -y --no-install-recommends "${packages[@]}"; \
    rm -rf /var/lib/apt/lists/*; \
    python3 -m venv /opt/venv
COPY requirements.lock /tmp/requirements.lock
RUN set -eux; \
    if [ -z "${PIP_CERT:-}" ]; then unset PIP_CERT; else export PIP_CERT; fi; \
    /opt/venv/bin/pip install --no-cache-dir -r /tmp/requirements.lock; \
    site=$(/opt/venv/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))'); \
    find "$site/numpy" "$site/scipy" "$site/google/genai" -depth -type d -name tests \
        -exec rm -rf {} +; \
    find "$site" -name '*.so*' -type f -print0 | while IFS= read -r -d '' library; do \
        sections=$(readelf -S "$library"); \
        if [[ $sections == *.debug_info* ]]; then \
            strip --strip-debug "$library"; \
            echo "stripped $library"; \
        fi; \
    done

# --- app: golden-gate itself, with the venv's pip --------------------------------------------
# Installed under /opt/app (`--root`: the same paths below /opt/app), so the final image takes it
# as a layer of its own: a change to our code leaves the venv (stage runtime-venv) alone.
FROM venv AS app
ARG PIP_CERT
COPY pyproject.toml README.md /src/
COPY templates/ /src/templates/
COPY src/ /src/src/
RUN set -eux; \
    if [ -z "${PIP_CERT:-}" ]; then unset PIP_CERT; else export PIP_CERT; fi; \
    /opt/venv/bin/pip install --no-cache-dir --no-deps --root /opt/app /src; \
    test -x /opt/app/opt/venv/bin/golden-gate

# --- runtime-venv: the venv without pip and setuptools, build tools the gate never runs -------
FROM venv AS runtime-venv
RUN /opt/venv/bin/pip uninstall -y -q pip setuptools

# --- the image --------------------------------------------------------------------------------
FROM system
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
COPY --from=docker-cli /out/docker /usr/bin/docker
COPY --from=docker-cli /out/docker-compose /usr/libexec/docker/cli-plugins/docker-compose
COPY --from=runtime-venv /opt/venv /opt/venv
COPY --from=app /opt/app/ /
# /action: the entrypoints, and for reference the sources, templates and pyproject.toml (whose
# test pins tests/container/Dockerfile.fakes reads).
COPY pyproject.toml /action/
COPY templates/ /action/templates/
COPY src/ /action/src/
COPY entrypoint.py post-entrypoint /action/
RUN set -eux; \
    chmod 0755 /action/post-entrypoint; \
    docker --version; \
    docker compose version; \
    golden-gate --version; \
    python -c 'from golden_gate.evaluation.providers import import_integrations as i; print(*i())'; \
    python -c 'import zstandard as z; assert z.decompress(z.compress(b"x" * 999)) == b"x" * 999'; \
    python -c 'from scipy.special import bdtrc, gammaln; print(bdtrc(3, 10, 0.5), gammaln(10.0))'; \
    python -c 'import cffi, charset_normalizer, cryptography.hazmat.bindings._rust, jiter, nacl, \
        numpy, orjson, ormsgpack, pydantic_core, regex, tiktoken, uuid_utils, websockets, xxhash, yaml'; \
    ! python -c 'import pip' 2>/dev/null

ENTRYPOINT ["/opt/venv/bin/python", "/action/entrypoint.py"]
