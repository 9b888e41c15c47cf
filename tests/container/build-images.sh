#!/usr/bin/env bash
# Builds the three images of the container tier (tests/container), reusing the layer cache, and
# prints how long each took:
#
#   golden-gate-action:test             the Action's Dockerfile as the runner builds it, on
#                                       golden-gate-base:bookworm (no image registry here)
#   golden-gate-example-assistant:test  examples/assistant/Dockerfile, on the same base
#   golden-gate-fakes:test              tests/container/Dockerfile.fakes, on the action image
#
# A build's output is shown only when it fails. Images replaced by a rebuild are pruned (only
# those carrying this tier's label). Needs the engine and base image of scripts/setup-docker.sh.
#
# Environment: GG_BASE_IMAGE (default golden-gate-base:bookworm), GG_IMAGE_TAG (default test; the
# tests take other names from GG_ACTION_IMAGE, GG_ASSISTANT_IMAGE and GG_FAKES_IMAGE).
set -euo pipefail
cd "$(dirname "$0")/../.."

base_image=${GG_BASE_IMAGE:-golden-gate-base:bookworm}
tag=${GG_IMAGE_TAG:-test}
label=golden-gate.test=container

now_ms() { date +%s%3N; }
seconds_since() { awk -v start="$1" -v end="$(now_ms)" 'BEGIN { printf "%.1f", (end - start) / 1000 }'; }

build() {
    local image=$1 started log
    shift
    started=$(now_ms)
    log=$(mktemp)
    if ! docker build --label "$label" -t "$image" "$@" >"$log" 2>&1; then
        cat "$log" >&2
        rm -f "$log"
        echo "build-images: building $image failed" >&2
        exit 1
    fi
    rm -f "$log"
    echo "build-images: $image in $(seconds_since "$started") s"
}

started=$(now_ms)
build "golden-gate-action:$tag" --build-arg BASE_IMAGE="$base_image" .
build "golden-gate-example-assistant:$tag" --build-arg BASE_IMAGE="$base_image" \
    -f examples/assistant/Dockerfile .
build "golden-gate-fakes:$tag" --build-arg ACTION_IMAGE="golden-gate-action:$tag" \
    -f tests/container/Dockerfile.fakes tests
docker image prune -f --filter "label=$label" >/dev/null
echo "build-images: all in $(seconds_since "$started") s"
