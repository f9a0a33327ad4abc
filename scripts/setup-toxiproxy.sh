#!/usr/bin/env bash
# Installs the pinned toxiproxy server (used by `pnpm dev` to emulate network latency between
# processes) into .tools/bin/toxiproxy-server, built from source with Go from the Go module proxy.
set -euo pipefail
version=v2.12.0
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$root/.tools/bin"
if [ -x "$bin/toxiproxy-server" ]; then
  echo "setup:toxiproxy: $bin/toxiproxy-server already installed"
  exit 0
fi
if ! command -v go >/dev/null; then
  echo "setup:toxiproxy: needs Go (https://go.dev/dl/, or Debian's golang-go) to build toxiproxy $version" >&2
  exit 1
fi
mkdir -p "$bin"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "setup:toxiproxy: building toxiproxy $version with $(go version | cut -d' ' -f3) (about a minute)"
GOBIN="$tmp" GOFLAGS=-mod=mod go install "github.com/Shopify/toxiproxy/v2/cmd/server@$version"
mv "$tmp/server" "$bin/toxiproxy-server"
echo "setup:toxiproxy: installed $bin/toxiproxy-server"
