import type { Deployment } from "@flaplab/deployment";
import { groupOf } from "@flaplab/runtime";
import { RedisSnapshotStore } from "@flaplab/snapshots";
import type { FaultKind } from "../run/options.js";

/** How long a link cut lasts, ms. */
export const LINK_CUT_MS = 500;

/**
 * What a study fault does to a running deployment, for one game: the engine that holds the game
 * (found in the snapshot store), or the music or score process, killed with SIGKILL or drained
 * with SIGTERM (the deployment restarts a process that exits, as `pnpm dev` does); or the
 * browser's links to that engine (its toxiproxy proxies, which the deployment must have:
 * `proxyBrowserLinks`) turned off for `LINK_CUT_MS`, which drops every connection on them.
 */
export function faultInjector(kind: FaultKind, deployment: Deployment, log: (line: string) => void): (gameId: string) => Promise<string> {
  return async (gameId) => {
    if (kind === "link-cut") {
      const engine = await engineOf(deployment, gameId);
      const links = (deployment.emulation?.edges ?? []).filter((e) => e.from === "browser" && e.to === engine).map((e) => e.name);
      if (links.length === 0 || !deployment.toxiproxyUrl) throw new Error(`no proxy on the browser's links to ${engine}: start the deployment with proxyBrowserLinks`);
      const toxiproxy = deployment.toxiproxyUrl;
      const enable = (enabled: boolean) =>
        Promise.all(
          links.map(async (name) => {
            const res = await fetch(`${toxiproxy}/proxies/${encodeURIComponent(name)}`, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ enabled }),
            });
            if (!res.ok) throw new Error(`toxiproxy ${name}: HTTP ${res.status} ${await res.text()}`);
          }),
        );
      await enable(false);
      setTimeout(() => void enable(true).catch((err: unknown) => log(`link-cut: could not restore ${links.join(", ")}: ${(err as Error).message}`)), LINK_CUT_MS);
      const action = `cut ${links.join(" and ")} for ${LINK_CUT_MS} ms`;
      log(`fault ${kind}: ${action} for game ${gameId}`);
      return action;
    }
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
