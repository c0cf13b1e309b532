#!/usr/bin/env bash
# Prints the path of an OpenTofu binary, building it from the Go module proxy when it is
# not cached yet. OpenTofu's release binaries cannot be downloaded here, and `go install`
# refuses it (its go.mod has replace directives), so we build from the module's source:
# about 3.5 minutes on 2 cores, once per machine. The cache lives outside the repository.
set -euo pipefail

version="${OPENTOFU_VERSION:-1.12.6}"
# --version: the version this script builds (make cli-check checks it before anything runs).
if [ "${1:-}" = "--version" ]; then
  echo "$version"
  exit 0
fi
cache="${KVMFORGE_CACHE:-/var/cache/kvmforge}/opentofu/${version}"
bin="${cache}/tofu"

if [ -x "$bin" ] && "$bin" version >/dev/null 2>&1; then
  echo "$bin"
  exit 0
fi

echo "opentofu: building v${version} from the Go module proxy (takes a few minutes)" >&2
dir=$(go mod download -json "github.com/opentofu/opentofu@v${version}" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -n "$dir" ] || { echo "opentofu: go mod download gave no source directory" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The module cache is read-only; build in a writable copy.
cp -r "$dir/." "$work/src"
chmod -R u+w "$work/src"
(cd "$work/src" && CGO_ENABLED=0 go build -trimpath \
  -ldflags "-s -w -X github.com/opentofu/opentofu/version.dev=no" -o "$work/tofu" ./cmd/tofu)
mkdir -p "$cache"
mv "$work/tofu" "$bin.tmp" && mv "$bin.tmp" "$bin"
"$bin" version >&2
echo "$bin"
