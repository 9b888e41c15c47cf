#!/usr/bin/env bash
# Releases golden-gate's Action image: the commands .github/workflows/release.yml runs, and the
# ones tests/container/test_release.py runs against a registry on 127.0.0.1.
#
#   scripts/release-image.sh check-version VERSION
#       VERSION is X.Y.Z and is the version in pyproject.toml and golden_gate/__init__.py.
#   printf '%s' "$PASSWORD" | scripts/release-image.sh login IMAGE USER
#       `docker login` to IMAGE's registry (its first path component), password on stdin.
#   scripts/release-image.sh build-push IMAGE VERSION
#       Builds the Dockerfile for $PLATFORMS, pushes it as IMAGE:VERSION (any X.Y.Z: the workflow
#       runs check-version first) with provenance and SBOM attestations when $ATTEST is true,
#       and prints the pushed reference, IMAGE@sha256:<digest>, the one line on stdout (also
#       written to $REF_FILE when set).
#   scripts/release-image.sh pin IMAGE@sha256:<digest> [IN [OUT]]
#       Writes action.yml (IN, default action.yml) to OUT (default IN) with
#       `image: docker://IMAGE@sha256:<digest>`: the runner then pulls that image and builds nothing.
#   scripts/release-image.sh commit-tag VERSION IMAGE@sha256:<digest> [OWNER/NAME]
#       Makes the release commit on no branch (the work tree and the branch keep
#       `image: Dockerfile`): HEAD with the pinned action.yml and with the repository the Action
#       is published from (OWNER/NAME, default $GITHUB_REPOSITORY) stamped into the package
#       (ACTION_REPOSITORY in src/golden_gate/__init__.py, which `init` writes into workflows)
#       and into the docs and examples in place of their stand-in, org/golden-gate-action;
#       tags it vVERSION and moves vMAJOR to it; prints it.
#   scripts/release-image.sh push-tags VERSION [REMOTE]
#       Pushes vVERSION, and force-pushes vMAJOR (only that tag is ever forced), to REMOTE (origin).
#
# Every command but pin works on the git repository of the current directory (its top level:
# the build context, pyproject.toml); pin reads and writes the paths it is given.
#
# IMAGE is <registry>/<path>, e.g. <registry>/<owner>/golden-gate, lower case, no tag or digest.
#
# Environment of build-push:
#   PLATFORMS   platforms to build (default linux/amd64,linux/arm64)
#   ATTEST      true (default): --provenance=mode=max --sbom=true; false: no attestations
#   BUILD_ARGS  NAME=VALUE words, each passed as --build-arg. Local tests only: a release builds
#               with none, so that BASE_IMAGE has its default.
#   BUILDER     the buildx builder (default: the current one for one platform without
#               attestations, else golden-gate-release, a docker-container builder made on first
#               use, from BUILDKIT_IMAGE when set)
#   REF_FILE    also write the pushed reference there
#
# Why the local test sets PLATFORMS=linux/amd64 ATTEST=false: the engine on the test machines is
# Docker 20.10 with its classic image store (no containerd store), so its own BuildKit (the docker
# driver) can build one platform at a time and cannot attach attestations: both need an OCI image
# index, which only the containerd store or a docker-container builder can make. A
# docker-container builder runs BuildKit from its image, and `--sbom=true` runs the SBOM scanner
# from another image; neither can be pulled there (no image registry is reachable). The release
# workflow, on a GitHub runner, uses the defaults: a docker-container builder, QEMU for arm64.
set -euo pipefail

PLATFORMS=${PLATFORMS:-linux/amd64,linux/arm64}
ATTEST=${ATTEST:-true}

die() { printf 'release-image: error: %s\n' "$*" >&2; exit 1; }
log() { printf 'release-image: %s\n' "$*" >&2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

to_top_level() {
    local top
    top=$(git rev-parse --show-toplevel 2>/dev/null) ||
        die "$PWD is not in a git work tree: run this in golden-gate's repository."
    cd "$top"
}

# A repository name with its registry host: host[:port]/component[/component...], lower case.
IMAGE_RE='^([a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]+)?)(/[a-z0-9]+([._-]+[a-z0-9]+)*)+$'
DIGEST_RE='^sha256:[0-9a-f]{64}$'
VERSION_RE='^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$'
REPOSITORY_RE='^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?/[A-Za-z0-9._-]+$'
# How the docs and examples name the Action's repository until a release stamps the real one.
PLACEHOLDER=org/golden-gate-action
PACKAGE_INIT=src/golden_gate/__init__.py

check_image() { # image
    [ -n "$1" ] || die "no image name: set RELEASE_IMAGE to <registry>/<owner>/golden-gate."
    [[ $1 =~ $IMAGE_RE ]] ||
        die "image name '$1' is not <registry>/<path> in lower case, without a tag or digest."
    local host=${1%%/*}
    [[ $host == *.* || $host == *:* || $host == localhost ]] ||
        die "image name '$1' starts with no registry host (a name with a dot or a port)."
}

check_ref() { # image@sha256:digest
    [[ $1 == *@* ]] || die "'$1' is not IMAGE@sha256:<digest>."
    check_image "${1%@*}"
    [[ ${1#*@} =~ $DIGEST_RE ]] || die "'${1#*@}' in '$1' is not a sha256 digest."
}

check_version() { # version
    [[ $1 =~ $VERSION_RE ]] || die "version '$1' is not X.Y.Z (e.g. 1.4.0, no leading v)."
    local project package
    to_top_level
    project=$(python3 -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["version"])')
    package=$(sed -n -E 's/^__version__ = "([^"]+)"$/\1/p' src/golden_gate/__init__.py)
    [ "$1" = "$project" ] ||
        die "version $1 is not pyproject.toml's ($project): bump the version on main first."
    [ "$1" = "$package" ] ||
        die "version $1 is not src/golden_gate/__init__.py's ($package): bump the version on main first."
}

login() { # image user; password on stdin
    check_image "$1"
    [ -n "$2" ] || die "no user name to log in to ${1%%/*} with."
    docker login "${1%%/*}" --username "$2" --password-stdin >&2
}

# The builder for this build, as buildx arguments in `builder`: the current one can do one
# platform without attestations; more needs a docker-container builder.
choose_builder() {
    builder=()
    if [ -n "${BUILDER:-}" ]; then
        builder=(--builder "$BUILDER")
    elif [[ $PLATFORMS == *,* || $ATTEST == true ]]; then
        if ! docker buildx inspect golden-gate-release >/dev/null 2>&1; then
            log "creating the docker-container builder golden-gate-release"
            docker buildx create --name golden-gate-release --driver docker-container \
                ${BUILDKIT_IMAGE:+--driver-opt "image=$BUILDKIT_IMAGE"} >/dev/null
        fi
        builder=(--builder golden-gate-release)
    fi
}

build_push() { # image version
    local image=$1 version=$2 metadata=$work/metadata.json digest ref word words
    check_image "$image"
    # Any X.Y.Z tags the image (benchmarks push 0.0.0); commit-tag, which releases, and the
    # workflow's check-version want pyproject.toml's.
    [[ $version =~ $VERSION_RE ]] || die "version '$version' is not X.Y.Z (e.g. 1.4.0, no leading v)."
    to_top_level
    case $ATTEST in
    true) attest=(--provenance=mode=max --sbom=true) ;;
    false) attest=(--provenance=false --sbom=false) ;;
    *) die "ATTEST is '$ATTEST', not true or false." ;;
    esac
    local build_args=()
    read -r -a words <<<"${BUILD_ARGS:-}"
    for word in "${words[@]}"; do
        [[ $word == ?*=* ]] || die "BUILD_ARGS word '$word' is not NAME=VALUE."
        build_args+=(--build-arg "$word")
    done
    choose_builder
    local labels=(
        --label "org.opencontainers.image.title=golden-gate"
        --label "org.opencontainers.image.version=$version"
        --label "org.opencontainers.image.revision=$(git rev-parse HEAD)"
        --label "org.opencontainers.image.licenses=MIT"
    )
    if [ -n "${GITHUB_SERVER_URL:-}" ] && [ -n "${GITHUB_REPOSITORY:-}" ]; then
        # The registry links the package to the repository by this label.
        labels+=(--label "org.opencontainers.image.source=$GITHUB_SERVER_URL/$GITHUB_REPOSITORY")
    fi
    log "building $image:$version for $PLATFORMS (attestations: $ATTEST)"
    docker buildx build "${builder[@]}" --progress=plain --platform "$PLATFORMS" "${attest[@]}" \
        "${build_args[@]}" "${labels[@]}" --tag "$image:$version" \
        --metadata-file "$metadata" --push . >&2
    digest=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get("containerimage.digest", ""))' \
        "$metadata")
    [[ $digest =~ $DIGEST_RE ]] ||
        die "buildx reported no pushed digest for $image:$version (metadata: $(cat "$metadata"))."
    ref="$image@$digest"
    log "pushed $ref"
    if [ -n "${REF_FILE:-}" ]; then printf '%s\n' "$ref" >"$REF_FILE"; fi
    printf '%s\n' "$ref"
}

pin() { # ref [in [out]]
    local ref=$1 in=${2:-action.yml} out=${3:-${2:-action.yml}} count tmp
    check_ref "$ref"
    [ -f "$in" ] || die "no action metadata file at $in."
    count=$(grep -c -E '^  image: ' "$in" || true)
    [ "$count" = 1 ] || die "$in has $count 'image:' lines under runs, not one."
    grep -q -E '^  using: docker$' "$in" || die "$in is not a Docker container action (runs.using: docker)."
    tmp=$work/pinned.yml
    sed -E "s|^  image: .*$|  image: docker://$ref|" "$in" >"$tmp"
    mkdir -p "$(dirname "$out")"
    cat "$tmp" >"$out"
    log "pinned $out to docker://$ref"
}

# Stage HEAD's `path` with `sed_script` applied into the index $index; fails when that changes
# nothing.
stage_stamped() { # path sed_script
    local path=$1 mode blob
    mode=$(git ls-tree HEAD -- "$path" | cut -d' ' -f1)
    git show "HEAD:$path" | sed -E "$2" >"$work/stamped"
    ! git show "HEAD:$path" | cmp -s - "$work/stamped" || return 1
    blob=$(git hash-object -w "$work/stamped")
    GIT_INDEX_FILE=$index git update-index --cacheinfo "$mode,$blob,$path"
}

# The repository the Action is published from, into the package and in place of the docs'
# stand-in, staged in $index.
stamp_repository() { # repository
    local repository=$1 path
    stage_stamped "$PACKAGE_INIT" "s|^ACTION_REPOSITORY = \"\"\$|ACTION_REPOSITORY = \"$repository\"|" ||
        die "$PACKAGE_INIT has no line 'ACTION_REPOSITORY = \"\"' to stamp $repository into."
    for path in $(git grep -l -F "$PLACEHOLDER" HEAD -- README.md docs examples | sed 's/^HEAD://'); do
        stage_stamped "$path" "s|$PLACEHOLDER|$repository|g"
    done
}

commit_tag() { # version ref [repository]
    local version=$1 ref=$2 repository=${3:-${GITHUB_REPOSITORY:-}} major blob tree commit
    index=$work/index
    check_version "$version"
    check_ref "$ref"
    [ -n "$repository" ] ||
        die "no repository to stamp into the release: pass OWNER/NAME or set GITHUB_REPOSITORY."
    [[ $repository =~ $REPOSITORY_RE ]] || die "repository '$repository' is not OWNER/NAME."
    [ "${repository,,}" != "$PLACEHOLDER" ] ||
        die "repository '$repository' is the docs' stand-in: pass the repository the Action is published from."
    major=v${version%%.*}
    if git rev-parse -q --verify "refs/tags/v$version" >/dev/null; then
        die "tag v$version exists already: a released version is never moved."
    fi
    git show HEAD:action.yml >"$work/action.yml"
    pin "$ref" "$work/action.yml" "$work/action.pinned.yml"
    blob=$(git hash-object -w "$work/action.pinned.yml")
    GIT_INDEX_FILE=$index git read-tree HEAD
    GIT_INDEX_FILE=$index git update-index --cacheinfo "100644,$blob,action.yml"
    stamp_repository "$repository"
    tree=$(GIT_INDEX_FILE=$index git write-tree)
    commit=$(git commit-tree "$tree" -p HEAD -m "Release v$version

action.yml pulls the released image, built from $(git rev-parse HEAD):
docker://$ref
The Action's repository, in the package and the docs: $repository")
    git tag -a "v$version" -m "golden-gate $version: docker://$ref" "$commit"
    git tag -f -a "$major" -m "golden-gate $version: docker://$ref" "$commit" >/dev/null
    log "tagged v$version and $major: $commit"
    printf '%s\n' "$commit"
}

push_tags() { # version [remote]
    local version=$1 remote=${2:-origin}
    [[ $version =~ $VERSION_RE ]] || die "version '$version' is not X.Y.Z."
    to_top_level
    git push "$remote" "refs/tags/v$version:refs/tags/v$version"
    git push --force "$remote" "refs/tags/v${version%%.*}:refs/tags/v${version%%.*}"
}

command=${1:-}
[ $# -gt 0 ] && shift
case $command in
check-version) [ $# -eq 1 ] || die "usage: $0 check-version VERSION"; check_version "$1" ;;
login) [ $# -eq 2 ] || die "usage: $0 login IMAGE USER (password on stdin)"; login "$1" "$2" ;;
build-push) [ $# -eq 2 ] || die "usage: $0 build-push IMAGE VERSION"; build_push "$1" "$2" ;;
pin) [ $# -ge 1 ] && [ $# -le 3 ] || die "usage: $0 pin IMAGE@sha256:DIGEST [IN [OUT]]"; pin "$@" ;;
commit-tag) [ $# -ge 2 ] && [ $# -le 3 ] || die "usage: $0 commit-tag VERSION IMAGE@sha256:DIGEST [OWNER/NAME]"; commit_tag "$@" ;;
push-tags) [ $# -ge 1 ] && [ $# -le 2 ] || die "usage: $0 push-tags VERSION [REMOTE]"; push_tags "$@" ;;
*) die "usage: $0 check-version | login | build-push | pin | commit-tag | push-tags (see the header)" ;;
esac
