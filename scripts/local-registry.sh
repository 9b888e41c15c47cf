#!/usr/bin/env bash
# A real image registry on this machine, for testing the release flow end to end: Debian's
# docker-registry (distribution 2.8, installed by scripts/setup-docker.sh), run with
# `docker-registry serve CONFIG` on 127.0.0.1 only, on a free port, with its configuration, storage,
# log and pid in a directory the caller owns. Nothing else on the machine is touched, so several
# can run at once. The engine treats 127.0.0.0/8 as an insecure registry: plain HTTP works.
#
#   scripts/local-registry.sh start DIR   # prints the address, 127.0.0.1:PORT
#   scripts/local-registry.sh stop DIR    # stops the registry that `start DIR` started
#
# Environment for start (not REGISTRY_*: the registry reads those as overrides of its
# configuration, and they are removed from its environment):
#   GG_REGISTRY_PORT                          the port (default: one the kernel says is free)
#   GG_REGISTRY_USER, GG_REGISTRY_PASSWORD    when both are set, the registry asks for them
#                                             (htpasswd, as a real registry asks for a login)
set -euo pipefail

die() { printf 'local-registry: error: %s\n' "$*" >&2; exit 1; }

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The pid in DIR/registry.pid when that process is still the registry serving DIR/config.yml.
running_pid() { # dir
    local pid
    pid=$(cat "$1/registry.pid" 2>/dev/null) || return 1
    [ -n "$pid" ] || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "serve $1/config.yml" || return 1
    printf '%s\n' "$pid"
}

htpasswd_line() { # user password: a bcrypt entry, as the registry's htpasswd auth wants
    if command -v htpasswd >/dev/null 2>&1; then
        htpasswd -nbB "$1" "$2" | head -n1
    else
        python3 -W ignore -c 'import crypt, sys
print(sys.argv[1] + ":" + crypt.crypt(sys.argv[2], crypt.mksalt(crypt.METHOD_BLOWFISH)))' "$1" "$2" ||
            die "cannot make a bcrypt password: install apache2-utils (htpasswd)"
    fi
}

write_config() { # dir port
    local dir=$1 port=$2
    {
        printf 'version: 0.1\n'
        printf 'log:\n  level: info\n'
        printf 'storage:\n  filesystem:\n    rootdirectory: %s/storage\n  delete:\n    enabled: true\n' "$dir"
        printf 'http:\n  addr: 127.0.0.1:%s\n  headers:\n    X-Content-Type-Options: [nosniff]\n' "$port"
        if [ -n "${GG_REGISTRY_USER:-}" ] && [ -n "${GG_REGISTRY_PASSWORD:-}" ]; then
            printf 'auth:\n  htpasswd:\n    realm: golden-gate-test\n    path: %s/htpasswd\n' "$dir"
        fi
    } >"$dir/config.yml"
}

start() { # dir
    local dir=$1 pid port attempt overrides
    command -v docker-registry >/dev/null 2>&1 ||
        die "docker-registry is not installed: run scripts/setup-docker.sh"
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    if pid=$(running_pid "$dir"); then
        cat "$dir/address"
        return
    fi
    mkdir -p "$dir/storage"
    if [ -n "${GG_REGISTRY_USER:-}" ] && [ -n "${GG_REGISTRY_PASSWORD:-}" ]; then
        htpasswd_line "$GG_REGISTRY_USER" "$GG_REGISTRY_PASSWORD" >"$dir/htpasswd"
    fi
    # A free port can be taken between the look and the bind: then try another.
    for attempt in 1 2 3 4 5; do
        port=${GG_REGISTRY_PORT:-$(free_port)}
        write_config "$dir" "$port"
        mapfile -t overrides < <(compgen -e | grep '^REGISTRY_' | sed 's/^/--unset=/' || true)
        setsid env "${overrides[@]}" docker-registry serve "$dir/config.yml" \
            >"$dir/registry.log" 2>&1 </dev/null &
        pid=$!
        echo "$pid" >"$dir/registry.pid"
        for _ in $(seq 1 100); do
            kill -0 "$pid" 2>/dev/null || break
            if curl -s -o /dev/null "http://127.0.0.1:$port/v2/"; then
                echo "127.0.0.1:$port" | tee "$dir/address"
                return
            fi
            sleep 0.1
        done
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
        rm -f "$dir/registry.pid"
        if [ -n "${GG_REGISTRY_PORT:-}" ] || ! grep -q 'address already in use' "$dir/registry.log"; then
            break
        fi
        echo "local-registry: port $port was taken (attempt $attempt), trying another" >&2
    done
    tail -n 20 "$dir/registry.log" >&2
    die "the registry did not start (log: $dir/registry.log)"
}

stop() { # dir
    local dir pid
    dir=$(cd "$1" 2>/dev/null && pwd) || return 0
    pid=$(running_pid "$dir") || { rm -f "$dir/registry.pid"; return 0; }
    kill "$pid"
    for _ in $(seq 1 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$dir/registry.pid"
}

case "${1:-}" in
start) [ $# -eq 2 ] || die "usage: $0 start DIR"; start "$2" ;;
stop) [ $# -eq 2 ] || die "usage: $0 stop DIR"; stop "$2" ;;
*) die "usage: $0 start DIR | stop DIR" ;;
esac
