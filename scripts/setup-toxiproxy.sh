#!/usr/bin/env bash
# Installs the pinned toxiproxy server (used by `pnpm dev` to emulate network latency between
# processes) into .tools/bin/toxiproxy-server, built from source with Go from the Go module proxy.
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/go-tool.sh" toxiproxy-server github.com/Shopify/toxiproxy/v2/cmd/server v2.12.0
