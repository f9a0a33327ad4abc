#!/usr/bin/env bash
# CPU profile of direct-mode calls: the cost breakdown, then the profile's self time by package and function.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
node --cpu-prof --cpu-prof-dir="$dir" --import tsx src/profile-direct.ts "${1:-300000}"
echo
npx tsx src/profile-summary.ts "$(ls -S "$dir"/*.cpuprofile | head -1)" --top "${2:-30}"
