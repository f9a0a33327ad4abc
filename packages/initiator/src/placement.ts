import type { Client } from "@connectrpc/connect";
import type { EngineService } from "@flaplab/contracts/engine/v1/engine_pb";
import { type EngineBeat, rendezvousRank } from "@flaplab/snapshots";

/** One engine a game can be placed on: its client and where clients open its game streams. */
export interface EngineTarget {
  /** Its group name in the topology. */
  readonly name: string;
  readonly client: Client<typeof EngineService>;
  /** The engine's game stream URL over WebTransport, and over plain WebSocket. */
  readonly engineUrl: string;
  readonly engineWsUrl: string;
}

/** The engines to try for a game, best first. */
export type EnginePlacement = (gameId: string) => Promise<readonly EngineTarget[]>;

/** Every game on the one engine there is. */
export function singleEngine(target: EngineTarget): EnginePlacement {
  const only = [target];
  return async () => only;
}

export interface RendezvousPlacementOptions {
  readonly engines: readonly EngineTarget[];
  /** The engines whose heartbeat has not expired (the snapshot store's `liveEngines`). */
  readonly liveEngines: () => Promise<readonly EngineBeat[]>;
  /** Told when the heartbeats cannot be read (placement then ranks every engine). */
  readonly onError?: (err: Error) => void;
}

/**
 * Places a game by rendezvous hashing of its id over the engines that are up, not draining and
 * not full, the rest of them in the same order as fallbacks should a call to the first fail. When
 * none says it is up (or the heartbeats cannot be read), every engine is ranked: a dead one fails
 * fast and the next is tried.
 */
export function rendezvousPlacement(options: RendezvousPlacementOptions): EnginePlacement {
  const byName = new Map(options.engines.map((e) => [e.name, e]));
  const names = [...byName.keys()];
  return async (gameId) => {
    let open: string[] = [];
    try {
      const beats = await options.liveEngines();
      open = beats.filter((b) => byName.has(b.engine) && !b.draining && b.games < b.maxGames).map((b) => b.engine);
    } catch (err) {
      options.onError?.(err as Error);
    }
    return rendezvousRank(gameId, open.length > 0 ? open : names).map((n) => byName.get(n)!);
  };
}
