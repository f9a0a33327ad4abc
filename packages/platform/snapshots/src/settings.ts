import { text, wholeNumber } from "@flaplab/settings";

const readBy = "engine, initiator";

/** Where engines keep game snapshots and heartbeats (read by `openSnapshotStore`). */
export const SNAPSHOT_STORE = text({
  name: "FLAPLAB_SNAPSHOT_STORE",
  format: "`memory` or `redis://host:port`",
  description: "where engines keep game snapshots and heartbeats",
  defaultText: "`memory` with one engine; `pnpm dev` starts Redis for several",
  readBy,
});

/** How long a stored game outlives its latest write (read by `snapshotTtlFromEnv`). */
export const SNAPSHOT_TTL = wholeNumber({
  name: "FLAPLAB_SNAPSHOT_TTL_MS",
  description:
    "an abandoned game's snapshot (≈ 2 KB; ResumeGame continues from it) is forgotten this long after its latest write, by the in-process store and by Redis, ms; after that the game cannot be resumed",
  default: 15 * 60_000,
  min: 1,
  readBy,
});

/** Every variable the snapshot stores read. */
export const SETTINGS = [SNAPSHOT_STORE, SNAPSHOT_TTL];
