#!/usr/bin/env bash
# Type-checks sst.config.ts offline: `sst install` writes .sst/platform (SST's components and
# @pulumi/aws types, ~300 MB from the npm registry; no Pulumi CLI, no provider plugins, no AWS),
# then tsc checks the config against them. Exits non-zero on any error.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

# Without these, every sst command first downloads Pulumi and Bun from GitHub and the AWS SDK
# probes the EC2 metadata address.
export SST_SKIP_DEPENDENCY_CHECK=1 SST_NO_BUN=1 SST_TELEMETRY_DISABLED=1 AWS_EC2_METADATA_DISABLED=true

sst="$root/infra/node_modules/.bin/sst"
tsc="$root/node_modules/.bin/tsc"

start=$(date +%s)
"$sst" install --stage "${SST_STAGE:-monolith}"
installed=$(date +%s)
echo "sst install: $((installed - start)) s" >&2

"$tsc" --noEmit --strict --skipLibCheck --moduleResolution Bundler --module ESNext --target ES2022 \
  --types node sst.config.ts
echo "tsc sst.config.ts: $(($(date +%s) - installed)) s" >&2
