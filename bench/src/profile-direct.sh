#!/usr/bin/env bash
# CPU profile of direct-mode calls: the cost breakdown, then the profile's self time by package and function.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
node --import tsx src/profile-direct.ts "${1:-300000}" "$dir/direct.cpuprofile"
echo
npx tsx src/profile-summary.ts "$dir/direct.cpuprofile" --top "${2:-30}"
