#!/bin/sh
# Entry point of the server image (apps/server/Dockerfile): `container-start.sh <command…>`.
#  - FLAPLAB_TOPOLOGY_JSON, when set, is a whole topology: written to a file that FLAPLAB_TOPOLOGY then names.
#  - The call log (FLAPLAB_DATA_DIR/logs/rpc-*.ndjson, pino NDJSON, `"msg":"rpc"`) is copied to stdout as it
#    grows, one line per write, so the container's log driver (CloudWatch in the cloud) keeps it after the
#    task and its storage are gone. FLAPLAB_CALL_LOG_STDOUT=0 turns that off.
# The command then replaces the shell, so it receives the container's signals.
set -eu
if [ -n "${FLAPLAB_TOPOLOGY_JSON:-}" ]; then
  printf '%s' "$FLAPLAB_TOPOLOGY_JSON" > /tmp/flaplab-topology.json
  export FLAPLAB_TOPOLOGY=/tmp/flaplab-topology.json
fi
if [ "${FLAPLAB_CALL_LOG_STDOUT:-1}" != "0" ]; then
  logs="${FLAPLAB_DATA_DIR:-/var/lib/flaplab}/logs"
  # The server creates its call log while starting; follow the first one that appears (one group per container).
  (
    while :; do
      for f in "$logs"/rpc-*.ndjson; do
        if [ -e "$f" ]; then exec stdbuf -oL tail -n +1 -F "$f" 2>/dev/null; fi
      done
      sleep 0.5
    done
  ) &
fi
exec "$@"
