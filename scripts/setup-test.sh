#!/usr/bin/env bash
# Installs the system packages the test suite needs (Debian): a C++ toolchain for better-sqlite3,
# Debian's Chromium for the browser tests (driven by playwright-core; no browser download), the
# PostgreSQL server binaries, from which the score store's tests start a throwaway cluster, and
# redis-server, from which the snapshot store's tests and `pnpm dev` with several engines start one.
set -euo pipefail
need=()
command -v make >/dev/null || need+=(make)
command -v g++ >/dev/null || need+=(g++)
command -v python3 >/dev/null || need+=(python3)
[ -x /usr/bin/chromium ] || need+=(chromium)
postgres_initdb() { { compgen -G "/usr/lib/postgresql/*/bin/initdb" || true; } | sort -V | tail -1; }
[ -n "$(postgres_initdb)" ] || command -v initdb >/dev/null || need+=(postgresql)
command -v redis-server >/dev/null || need+=(redis-server)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "setup:test: please install these Debian packages (needs root): ${need[*]}" >&2
    exit 1
  fi
  echo "setup:test: installing ${need[*]}"
  apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
# toxiproxy (latency emulation tests) is built with Go from the Go module proxy.
if ! command -v go >/dev/null; then
  if [ "$(id -u)" != 0 ]; then echo "setup:test: please install Go (Debian: golang-go) for toxiproxy" >&2; exit 1; fi
  apt-get update -qq && apt-get install -y -qq --no-install-recommends golang-go >/dev/null
fi
bash "$(dirname "$0")/setup-toxiproxy.sh"
# ghz (grpc-go load client) for the h2c flood test's second client (about a minute to build).
bash "$(dirname "$0")/setup-ghz.sh"
# Connect's conformance runner for the slow tier's conformance suite (about a minute to build).
bash "$(dirname "$0")/setup-conformance.sh"
initdb="$(postgres_initdb)"
initdb="${initdb:-$(command -v initdb)}"
echo "setup:test: $(/usr/bin/chromium --version 2>/dev/null | head -1), $(g++ --version | head -1), $(go version), $("$(dirname "$initdb")/postgres" --version), $(redis-server --version | cut -d' ' -f1-3)"
