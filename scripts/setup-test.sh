#!/usr/bin/env bash
# Installs the system packages the test suite needs (Debian): a C++ toolchain for better-sqlite3.
set -euo pipefail
need=()
command -v make >/dev/null || need+=(make)
command -v g++ >/dev/null || need+=(g++)
command -v python3 >/dev/null || need+=(python3)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then echo "setup:test: please install: ${need[*]} (needs root)" >&2; exit 1; fi
  apt-get update -qq && apt-get install -y -qq "${need[@]}"
fi
echo "setup:test: system packages present"
