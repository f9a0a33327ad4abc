#!/usr/bin/env bash
# Builds a pinned Go command from the Go module proxy into .tools/bin/<name>, once per version.
# Usage: bash scripts/go-tool.sh <name> <module/path/cmd/x> <version> [<what it takes>]
# Idempotent: skips the build when .tools/bin/<name>.version already names this version.
set -euo pipefail
name="$1" package="$2" version="$3" takes="${4:-about a minute}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$root/.tools/bin"
marker="$bin/$name.version"
if [ -x "$bin/$name" ] && [ "$(cat "$marker" 2>/dev/null)" = "$version" ]; then
  echo "setup: $bin/$name $version already installed"
  exit 0
fi
if ! command -v go >/dev/null; then
  echo "setup: needs Go (https://go.dev/dl/, or Debian's golang-go) to build $name $version" >&2
  exit 1
fi
mkdir -p "$bin"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "setup: building $name $version with $(go version | cut -d' ' -f3) ($takes)"
GOBIN="$tmp" GOFLAGS=-mod=mod go install "$package@$version"
mv "$tmp/$(basename "$package")" "$bin/$name"
# A binary built this way may print "dev" as its version: the marker records the pinned one.
echo "$version" > "$marker"
echo "setup: installed $bin/$name ($version)"
