import { text, wholeNumber } from "@flaplab/settings";

/** The topology a server process loads (read by `main.ts`; the container entry point may write it). */
export const TOPOLOGY = text({
  name: "FLAPLAB_TOPOLOGY",
  format: "name or path",
  description: "topology name (`topologies/<name>.json`) or path of a topology file (`--topology`)",
  defaultText: "`monolith`",
  readBy: "server (`main.ts`), container entry point",
});

/** A whole topology as JSON (read by the container entry point, `container-start.sh`). */
export const TOPOLOGY_JSON = text({
  name: "FLAPLAB_TOPOLOGY_JSON",
  format: "JSON",
  description: "a whole topology as JSON text; written to a file that `FLAPLAB_TOPOLOGY` then names",
  defaultText: "unset",
  readBy: "container entry point (`apps/server/container-start.sh`)",
});

/** The process group a server process runs (read by `main.ts`). */
export const GROUP = text({
  name: "FLAPLAB_GROUP",
  format: "group name",
  description: "the process group of the topology this process runs (`--group`)",
  defaultText: "the only group of a one-group topology",
  readBy: "server",
});

/** Keys, certificate, databases and call logs (read by `main.ts`, `dev.ts` and `container-start.sh`). */
export const DATA_DIR = text({
  name: "FLAPLAB_DATA_DIR",
  format: "path",
  description: "keys, TLS certificate, SQLite databases (`auth.sqlite`, `score.sqlite`), call logs (`--data-dir`)",
  defaultText: "`.data` (image: `/var/lib/flaplab`)",
  readBy: "server, `pnpm dev`, container entry point",
});

/** How often `pnpm dev` restarts a process group before it gives up (read by `dev.ts`). */
export const DEV_MAX_RESTARTS_PER_MINUTE = wholeNumber({
  name: "FLAPLAB_DEV_MAX_RESTARTS_PER_MINUTE",
  description: "restarts of one process group within a minute before `pnpm dev` calls it crash-looping and stops all",
  default: 5,
  min: 0,
  readBy: "`pnpm dev`",
});

/** Whether the container copies the call log to stdout (read by `container-start.sh`). */
export const CALL_LOG_STDOUT = text({
  name: "FLAPLAB_CALL_LOG_STDOUT",
  format: "`0` or `1`",
  description: "`0`: do not copy the call log to stdout",
  defaultText: "`1`",
  readBy: "container entry point",
});

/** Where the score component keeps its runs (read by `main.ts`). */
export const SCORE_DATABASE_URL = text({
  name: "FLAPLAB_SCORE_DATABASE_URL",
  format: "`postgres://` URL",
  description:
    "`postgres://user:password@host:port/database` URL: the score component keeps its runs in that Postgres database, as it does in the cloud",
  defaultText: "unset: SQLite in the data dir",
  readBy: "server (score)",
});

/** Every variable the server, `pnpm dev` and the container entry point read. */
export const SETTINGS = [TOPOLOGY, TOPOLOGY_JSON, GROUP, DATA_DIR, DEV_MAX_RESTARTS_PER_MINUTE, CALL_LOG_STDOUT, SCORE_DATABASE_URL];
