#!/usr/bin/env bash
# Sets up a real Docker engine on this machine for the container test tier
# (docs/architecture.md#tools-that-work-offline):
#
#   1. the engine: Debian's docker.io, with dockerd started in the background;
#   2. compose v2: the static plugin from the next Debian release's docker-compose package
#      (bookworm's docker-compose is the old Python v1), fetched with apt from a separate sources
#      list for that suite;
#   3. buildx: the plugin from the same suite's docker-buildx package, the same way, for
#      scripts/release-image.sh (`docker buildx build --push --metadata-file`). With it installed,
#      a plain `docker build` also goes through BuildKit (the engine's own, docker driver);
#      DOCKER_BUILDKIT=0 selects the legacy builder;
#   4. a real registry: Debian's docker-registry package (distribution 2.8), installed but not
#      started (no service is started by the install); scripts/local-registry.sh runs one on
#      127.0.0.1 with a configuration and storage in a directory of the caller's;
#   5. a base image, golden-gate-base:bookworm, made with debootstrap (no image registry is
#      reachable here), carrying the machine's CA bundle so pip works inside builds; the image
#      names it in PIP_CERT.
#
# Idempotent: each step that is already done is skipped, so a second run takes about a second.
# Mirror addresses are read from the machine's own apt sources at run time, never written here.
#
# Environment:
#   GG_BASE_IMAGE      name of the base image (default golden-gate-base:bookworm)
#   GG_DOCKERD_LOG     dockerd's log file (default /var/log/golden-gate-dockerd.log)
#   GG_COMPOSE_SUITE   Debian suite that has compose v2 and a buildx plugin (default trixie)
set -euo pipefail

started=$(date +%s)
base_image=${GG_BASE_IMAGE:-golden-gate-base:bookworm}
dockerd_log=${GG_DOCKERD_LOG:-/var/log/golden-gate-dockerd.log}
compose_suite=${GG_COMPOSE_SUITE:-trixie}
# Where the machine's CA bundle lies inside the base image. Not /etc/ssl/certs/ca-certificates.crt:
# installing ca-certificates in a build regenerates that file and would drop the machine's CAs.
image_ca_bundle=/etc/ssl/host-ca-certificates.crt
host_ca_bundle=/etc/ssl/certs/ca-certificates.crt

log() { printf 'setup-docker: %s\n' "$*"; }
die() { printf 'setup-docker: error: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "run as root (it installs packages and starts dockerd)"
export DEBIAN_FRONTEND=noninteractive

apt_updated=false
apt_install() {
    if [ "$apt_updated" = false ]; then
        apt-get update -q
        apt_updated=true
    fi
    apt-get install -y -q --no-install-recommends "$@"
}

# The Debian mirror this machine's apt already uses (the first non-security URI).
debian_mirror() {
    local uri=""
    if compgen -G '/etc/apt/sources.list.d/*.sources' >/dev/null; then
        uri=$(sed -n -E 's/^URIs:[[:space:]]*([^[:space:]]+).*/\1/p' \
            /etc/apt/sources.list.d/*.sources | grep -v -- '-security' | grep -i debian | head -n1 || true)
    fi
    if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
        uri=$(sed -n -E 's/^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?([^[:space:]]+)[[:space:]].*/\2/p' \
            /etc/apt/sources.list | grep -v -- '-security' | grep -i debian | head -n1 || true)
    fi
    [ -n "$uri" ] || die "found no Debian mirror in the apt sources"
    printf '%s\n' "$uri"
}

debian_keyring() {
    local keyring
    for keyring in /usr/share/keyrings/debian-archive-keyring.gpg \
        /usr/share/keyrings/debian-archive-keyring.pgp; do
        if [ -f "$keyring" ]; then
            printf '%s\n' "$keyring"
            return
        fi
    done
    die "found no Debian archive keyring"
}

docker_up() { docker info >/dev/null 2>&1; }

# --- 1. the engine ---------------------------------------------------------------------------
step=$(date +%s)
if docker_up; then
    log "engine: already running, skipped"
else
    if ! command -v dockerd >/dev/null 2>&1; then
        log "engine: installing docker.io"
        apt_install docker.io
    fi
    log "engine: starting dockerd (log: $dockerd_log)"
    nohup dockerd >"$dockerd_log" 2>&1 </dev/null &
    for _ in $(seq 1 120); do
        docker_up && break
        sleep 0.5
    done
    docker_up || { tail -n 30 "$dockerd_log" >&2; die "dockerd did not come up in 60 s"; }
    log "engine: up in $(($(date +%s) - step)) s"
fi

# A Docker CLI plugin from a Debian package of $compose_suite: the .deb is fetched with apt using
# a separate sources list for that suite (so the machine's apt state is untouched), and only the
# plugin binary is extracted and installed.
install_cli_plugin() { # package plugin
    local package=$1 plugin=$2 work
    work=$(mktemp -d)
    chmod 755 "$work"
    mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/parts" "$work/pkg"
    printf 'deb [signed-by=%s] %s %s main\n' "$(debian_keyring)" "$(debian_mirror)" "$compose_suite" \
        >"$work/sources.list"
    local apt_opts=(
        -o "Dir::Etc::SourceList=$work/sources.list"
        -o "Dir::Etc::SourceParts=$work/parts"
        -o "Dir::State::Lists=$work/lists"
        -o "Dir::Cache=$work/cache"
    )
    apt-get -q "${apt_opts[@]}" update
    if id _apt >/dev/null 2>&1; then chown _apt "$work/pkg"; fi
    (cd "$work/pkg" && apt-get -q "${apt_opts[@]}" download "$package")
    dpkg -x "$work/pkg/${package}"_*.deb "$work/root"
    local binary="$work/root/usr/libexec/docker/cli-plugins/$plugin"
    [ -x "$binary" ] || die "the $compose_suite $package package has no cli plugin $plugin"
    install -D -m 0755 "$binary" "/usr/libexec/docker/cli-plugins/$plugin"
    install -D -m 0755 "$binary" "$HOME/.docker/cli-plugins/$plugin"
    rm -rf "$work"
}

# --- 2. compose v2 ---------------------------------------------------------------------------
step=$(date +%s)
if docker compose version >/dev/null 2>&1; then
    log "compose: $(docker compose version --short 2>/dev/null || echo present), skipped"
else
    log "compose: fetching docker-compose from $compose_suite"
    install_cli_plugin docker-compose docker-compose
    docker compose version >/dev/null || die "the compose plugin does not run"
    log "compose: $(docker compose version --short) installed in $(($(date +%s) - step)) s"
fi

# --- 3. buildx -------------------------------------------------------------------------------
step=$(date +%s)
if docker buildx version >/dev/null 2>&1; then
    log "buildx: $(docker buildx version 2>/dev/null | awk '{print $2}'), skipped"
else
    log "buildx: fetching docker-buildx from $compose_suite"
    install_cli_plugin docker-buildx docker-buildx
    docker buildx version >/dev/null || die "the buildx plugin does not run"
    log "buildx: $(docker buildx version | awk '{print $2}') installed in $(($(date +%s) - step)) s"
fi

# --- 4. a registry ---------------------------------------------------------------------------
step=$(date +%s)
if command -v docker-registry >/dev/null 2>&1; then
    log "registry: docker-registry present, skipped"
else
    log "registry: installing docker-registry"
    # The package's maintainer script starts its service (on port 5000, every interface) unless
    # a policy says no: say no for this install when the machine has no policy of its own.
    policy=/usr/sbin/policy-rc.d
    own_policy=false
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' >"$policy"
        chmod 0755 "$policy"
        own_policy=true
    fi
    apt_install docker-registry || { [ "$own_policy" = false ] || rm -f "$policy"; exit 1; }
    [ "$own_policy" = false ] || rm -f "$policy"
    command -v docker-registry >/dev/null || die "docker-registry did not install"
    log "registry: $(docker-registry --version | awk '{print $NF}') installed in $(($(date +%s) - step)) s"
fi

# --- 5. the base image -----------------------------------------------------------------------
step=$(date +%s)
if docker image inspect "$base_image" >/dev/null 2>&1; then
    log "base image: $base_image exists, skipped"
else
    command -v debootstrap >/dev/null 2>&1 || apt_install debootstrap
    [ -f "$host_ca_bundle" ] || die "no CA bundle at $host_ca_bundle"
    rootfs=$(mktemp -d /var/tmp/golden-gate-base.XXXXXX)
    trap 'rm -rf "$rootfs"' EXIT
    mirror=$(debian_mirror)
    log "base image: debootstrap --variant=minbase bookworm"
    debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$rootfs.log" 2>&1 ||
        { tail -n 30 "$rootfs.log" >&2; die "debootstrap failed (log: $rootfs.log)"; }
    rm -f "$rootfs.log"
    install -D -m 0644 "$host_ca_bundle" "$rootfs$image_ca_bundle"
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
    tar -C "$rootfs" -c . | docker import \
        --change "ENV PIP_CERT=$image_ca_bundle" \
        --change 'CMD ["/bin/bash"]' \
        - "$base_image" >/dev/null
    rm -rf "$rootfs"
    trap - EXIT
    log "base image: $base_image built in $(($(date +%s) - step)) s"
fi

log "engine $(docker version --format '{{.Server.Version}}'), compose $(docker compose version --short), buildx $(docker buildx version | awk '{print $2}'), base image $base_image"
log "done in $(($(date +%s) - started)) s"
