#!/usr/bin/env bash
# Writes src/gen from the conformance suite's protos, which ship in the Go module's source
# (connectrpc.com/conformance@v1.0.7, the version scripts/setup-conformance.sh builds).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
version=v1.0.7
protos="$(go env GOMODCACHE)/connectrpc.com/conformance@$version/proto"
if [ ! -d "$protos" ]; then
  GOFLAGS=-mod=mod go mod download "connectrpc.com/conformance@$version"
fi
buf generate "$protos" --template buf.gen.yaml
