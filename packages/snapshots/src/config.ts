import { MemorySnapshotStore } from "./memory-store.js";
import { RedisSnapshotStore } from "./redis-store.js";
import type { SnapshotStore } from "./store.js";

/** `memory`, or a `redis://host:port[/db]` URL. */
export const SNAPSHOT_STORE_ENV = "FLAPLAB_SNAPSHOT_STORE";

/**
 * The snapshot store FLAPLAB_SNAPSHOT_STORE names, connected: `redis://…` (Redis or Valkey), or
 * `memory` (in this process). Unset: in this process when the deployment runs one engine; an
 * error when it runs several, whose engines must share one store.
 */
export async function openSnapshotStore(
  env: NodeJS.ProcessEnv,
  context: { readonly engines: number; readonly topology: string; readonly onError?: (err: Error) => void },
): Promise<SnapshotStore> {
  const raw = env[SNAPSHOT_STORE_ENV]?.trim();
  if (raw === undefined || raw === "" || raw === "memory") {
    if (context.engines > 1) {
      throw new Error(
        `topology ${context.topology} runs ${context.engines} engines, which share their games' snapshots: set ${SNAPSHOT_STORE_ENV}=redis://host:port (pnpm dev starts a Redis server for it)`,
      );
    }
    return new MemorySnapshotStore();
  }
  if (!/^rediss?:\/\//.test(raw) || !URL.canParse(raw)) {
    throw new Error(`${SNAPSHOT_STORE_ENV} must be "memory" or a redis:// URL, got "${raw}"`);
  }
  const store = new RedisSnapshotStore({ url: raw, ...(context.onError ? { onError: context.onError } : {}) });
  await store.connect();
  return store;
}
