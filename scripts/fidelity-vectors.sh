#!/usr/bin/env bash
# Regenerates the fidelity test data in test-data/flappygo/ (see its README.md):
#  - go-math-rand-vectors.json and go-math-rand-cooked.json from Go's own math/rand
#    (scripts/fidelity-vectors/main.go; needs Go);
#  - worlds/*.json and traces/*.csv copied from FlappyGo's published data
#    (FLAPPYGO_DIR, default ../shared/flappygo next to the repository).
# Usage: bash scripts/fidelity-vectors.sh   (then review `git diff test-data/`)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/test-data/flappygo"
src="${FLAPPYGO_DIR:-$root/../shared/flappygo}"
mkdir -p "$out/worlds" "$out/traces"
(cd "$root/scripts/fidelity-vectors" && go run main.go "$out")
if [ -d "$src" ]; then
  cp "$src"/worlds/*.json "$out/worlds/"
  cp "$src"/traces/*.csv "$out/traces/"
  echo "copied worlds and traces from $src"
else
  echo "no FlappyGo data at $src: worlds and traces left as they are" >&2
fi
