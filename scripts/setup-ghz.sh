#!/usr/bin/env bash
# Installs the pinned ghz (an independent gRPC load generator, used by the bench's overload section
# and the h2c flood test) into .tools/bin/ghz, built from source with Go from the Go module proxy.
# Idempotent: skips the build when .tools/bin/ghz.version already names this version.
set -euo pipefail
version=v0.121.0
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$root/.tools/bin"
marker="$bin/ghz.version"
if [ -x "$bin/ghz" ] && [ "$(cat "$marker" 2>/dev/null)" = "$version" ]; then
  echo "setup:ghz: $bin/ghz $version already installed"
  exit 0
fi
if ! command -v go >/dev/null; then
  echo "setup:ghz: needs Go (https://go.dev/dl/, or Debian's golang-go) to build ghz $version" >&2
  exit 1
fi
mkdir -p "$bin"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "setup:ghz: building ghz $version with $(go version | cut -d' ' -f3) (one to two minutes)"
GOBIN="$tmp" GOFLAGS=-mod=mod go install "github.com/bojand/ghz/cmd/ghz@$version"
mv "$tmp/ghz" "$bin/ghz"
# `ghz --version` prints "dev" when built this way: the marker records the pinned version.
echo "$version" > "$marker"
echo "setup:ghz: installed $bin/ghz ($version)"
