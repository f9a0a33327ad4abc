#!/usr/bin/env bash
# Fails when packages/platform/contracts/src/gen is not what `pnpm generate` would write from these protos.
set -euo pipefail
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
buf lint
buf generate --template "{\"version\":\"v2\",\"plugins\":[{\"local\":\"protoc-gen-es\",\"out\":\"$tmp\",\"opt\":[\"target=ts\",\"import_extension=js\"]}]}"
if ! diff -r "$tmp" ../packages/platform/contracts/src/gen >/dev/null; then
  diff -r "$tmp" ../packages/platform/contracts/src/gen | head -20 >&2
  echo "generated code is stale: run 'pnpm generate' and commit packages/platform/contracts/src/gen" >&2
  exit 1
fi
echo "proto: lint ok, generated code up to date ($(find "$tmp" -name '*.ts' | wc -l) files)"
