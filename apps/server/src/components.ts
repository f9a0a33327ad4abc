import { join } from "node:path";
import type { ComponentName } from "@flaplab/component";
import { authComponent, createAuth, openUserStore } from "@flaplab/auth";
import { createEngine, engineComponent, GameTable } from "@flaplab/engine";
import { createSigner, hasPrivateKey, type PublicKeyMaterial } from "@flaplab/identity";
import { createInitiator, initiatorComponent } from "@flaplab/initiator";
import { createMusic, createMusicStreams, musicComponent, type MusicStreams } from "@flaplab/music";
import { groupOf, type Runtime } from "@flaplab/runtime";
import { createScore, openScoreStore, scoreComponent } from "@flaplab/score";
import { createWorldGen, worldgenComponent } from "@flaplab/worldgen";

/** What the components of one process share, and what must be closed at shutdown. */
export interface MountedGroup {
  readonly names: readonly ComponentName[];
  /** Music streams of this process (present when music runs here). */
  readonly musicStreams?: MusicStreams;
  close(): Promise<void>;
}

/**
 * Builds and mounts the components the runtime's group runs: the composition root. Each
 * component gets typed clients for the components it calls; the runtime picks the call mode.
 */
export function mountGroup(runtime: Runtime, opts: { dataDir: string; keys: PublicKeyMaterial }): MountedGroup {
  const closers: Array<() => void> = [];
  const names = runtime.group.components;
  let musicStreams: MusicStreams | undefined;
  for (const name of names) {
    switch (name) {
      case "auth": {
        if (!hasPrivateKey(opts.keys)) {
          throw new Error("the auth component needs the private signing key (FLAPLAB_JWT_PRIVATE_KEY or the data dir)");
        }
        const store = openUserStore(opts.dataDir);
        closers.push(() => store.close());
        runtime.mount(authComponent, createAuth({ store, signer: createSigner({ privateKey: opts.keys.privateKey }) }));
        break;
      }
      case "worldgen":
        runtime.mount(worldgenComponent, createWorldGen());
        break;
      case "engine":
        runtime.mount(engineComponent, createEngine({ games: new GameTable() }));
        break;
      case "initiator": {
        const engineGroup = groupOf(runtime.topology, "engine")!;
        const musicGroup = groupOf(runtime.topology, "music")!;
        runtime.mount(
          initiatorComponent,
          createInitiator({
            worldgen: runtime.client(worldgenComponent, "initiator"),
            engine: runtime.client(engineComponent, "initiator"),
            endpoints: { engineUrl: engineGroup.publicUrl, musicUrl: musicGroup.publicUrl },
          }),
        );
        break;
      }
      case "music":
        musicStreams = createMusicStreams();
        runtime.mount(musicComponent, createMusic({ streams: musicStreams }));
        break;
      case "score": {
        const store = openScoreStore(opts.dataDir);
        closers.push(() => store.close());
        runtime.mount(scoreComponent, createScore({ store }));
        break;
      }
    }
  }
  return {
    names,
    ...(musicStreams ? { musicStreams } : {}),
    async close() {
      for (const close of closers.reverse()) close();
    },
  };
}

export function callLogPath(dataDir: string, topology: string, group: string): string {
  return join(dataDir, "logs", `rpc-${topology}-${group}.ndjson`);
}
