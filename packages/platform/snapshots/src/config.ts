import { MemorySnapshotStore } from "./memory-store.js";
import { RedisSnapshotStore } from "./redis-store.js";
import { readText, wholeNumberOf } from "@flaplab/settings";
import { SNAPSHOT_STORE, SNAPSHOT_TTL } from "./settings.js";
import type { SnapshotStore } from "./store.js";

/** `memory`, or a `redis://host:port[/db]` URL. */
export const SNAPSHOT_STORE_ENV = SNAPSHOT_STORE.name;
/** How long a stored game outlives its latest write, ms (whole number ≥ 1; default 15 min). */
export const SNAPSHOT_TTL_ENV = SNAPSHOT_TTL.name;

/** The stored games' time to live `env` asks for (FLAPLAB_SNAPSHOT_TTL_MS), or the default; throws a RangeError naming a bad value. */
export function snapshotTtlFromEnv(env: NodeJS.ProcessEnv): number {
  return wholeNumberOf(env, SNAPSHOT_TTL, (message) => new RangeError(message));
}

/**
 * The snapshot store FLAPLAB_SNAPSHOT_STORE names, connected: `redis://…` (Redis or Valkey), or
 * `memory` (in this process). Unset: in this process when the deployment runs one engine; an
 * error when it runs several, whose engines must share one store. Either store forgets a game
 * FLAPLAB_SNAPSHOT_TTL_MS after its latest write (default 15 min).
 */
export async function openSnapshotStore(
  env: NodeJS.ProcessEnv,
  context: { readonly engines: number; readonly topology: string; readonly onError?: (err: Error) => void },
): Promise<SnapshotStore> {
  const ttlMs = snapshotTtlFromEnv(env);
  const raw = readText(env, SNAPSHOT_STORE)?.trim();
  if (raw === undefined || raw === "" || raw === "memory") {
    if (context.engines > 1) {
      throw new Error(
        `topology ${context.topology} runs ${context.engines} engines, which share their games' snapshots: set ${SNAPSHOT_STORE_ENV}=redis://host:port (pnpm dev starts a Redis server for it)`,
      );
    }
    return new MemorySnapshotStore(Date.now, { ttlMs });
  }
  if (!/^rediss?:\/\//.test(raw) || !URL.canParse(raw)) {
    throw new Error(`${SNAPSHOT_STORE_ENV} must be "memory" or a redis:// URL, got "${raw}"`);
  }
  const store = new RedisSnapshotStore({ url: raw, ttlMs, ...(context.onError ? { onError: context.onError } : {}) });
  await store.connect();
  return store;
}
