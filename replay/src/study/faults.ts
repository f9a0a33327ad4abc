import type { Deployment } from "@flaplab/deployment";
import { groupOf } from "@flaplab/runtime";
import { RedisSnapshotStore } from "@flaplab/snapshots";
import type { FaultKind } from "../run/options.js";

/**
 * What a study fault does to a running deployment, for one game: the engine that holds the game
 * (found in the snapshot store), or the music or score process, killed with SIGKILL or drained
 * with SIGTERM. The deployment restarts a process that exits, as `pnpm dev` does.
 */
export function faultInjector(kind: FaultKind, deployment: Deployment, log: (line: string) => void): (gameId: string) => Promise<string> {
  return async (gameId) => {
    const group = kind.startsWith("engine-") ? await engineOf(deployment, gameId) : groupOf(deployment.topology, kind === "music-kill" ? "music" : "score")!.name;
    const pid = deployment.pidOf(group);
    if (pid === undefined) throw new Error(`${group} is not running: cannot inject ${kind}`);
    const signal = kind === "engine-drain" ? "SIGTERM" : "SIGKILL";
    process.kill(pid, signal);
    const action = `${signal} ${group} (pid ${pid})`;
    log(`fault ${kind}: ${action} for game ${gameId}`);
    return action;
  };
}

/** The engine group that holds `gameId` now: its latest snapshot's writer, or the only engine. */
async function engineOf(deployment: Deployment, gameId: string): Promise<string> {
  const url = deployment.snapshotStoreUrl;
  if (url === undefined) return groupOf(deployment.topology, "engine")!.name;
  const store = new RedisSnapshotStore({ url });
  try {
    await store.connect();
    const stored = await store.read(gameId);
    if (!stored) throw new Error(`the snapshot store has no game ${gameId}: cannot tell which engine holds it`);
    return stored.snapshot.engine;
  } finally {
    await store.close();
  }
}
