#!/usr/bin/env bash
# Installs the pinned ghz (an independent gRPC load generator, used by the bench and the h2c flood
# test) into .tools/bin/ghz, built from source with Go from the Go module proxy.
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/go-tool.sh" ghz github.com/bojand/ghz/cmd/ghz v0.121.0 "one to two minutes"
