#!/usr/bin/env bash
# Installs the pinned Connect conformance runner (connectrpc.com/conformance, the official suite
# for Connect, gRPC and gRPC-Web implementations) into .tools/bin/connectconformance, built from
# source with Go from the Go module proxy. Used by packages/platform/conformance.
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/go-tool.sh" connectconformance connectrpc.com/conformance/cmd/connectconformance v1.0.7 "about a minute"
