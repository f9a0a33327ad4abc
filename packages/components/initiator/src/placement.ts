import type { Client } from "@connectrpc/connect";
import type { EngineService } from "@flaplab/contracts/engine/v1/engine_pb";
import { type EngineBeat, rendezvousRank, takesGames } from "@flaplab/snapshots";

/** One engine a game can be placed on: its client and where clients open its game streams. */
export interface EngineTarget {
  /** Its group name in the topology. */
  readonly name: string;
  readonly client: Client<typeof EngineService>;
  /** The engine's game stream URL over WebTransport, and over plain WebSocket. */
  readonly engineUrl: string;
  readonly engineWsUrl: string;
}

/**
 * The engines to try for a game, best first: for a new game (`start`), or for one to continue
 * (`resume`), which should go back to the engine that holds it when that one is up.
 */
export type EnginePlacement = (gameId: string, purpose: "start" | "resume") => Promise<readonly EngineTarget[]>;

/** Every game on the one engine there is. */
export function singleEngine(target: EngineTarget): EnginePlacement {
  const only = [target];
  return async () => only;
}

export interface RendezvousPlacementOptions {
  readonly engines: readonly EngineTarget[];
  /** The engines whose heartbeat has not expired (the snapshot store's `liveEngines`). */
  readonly liveEngines: () => Promise<readonly EngineBeat[]>;
  /**
   * The engine that holds a game now (the writer of its latest snapshot), if known: a resumed
   * game goes back to it first while it is up, so that a game never plays on two engines.
   */
  readonly holderOf?: (gameId: string) => Promise<string | undefined>;
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
  return async (gameId, purpose) => {
    let open: string[] = [];
    let holder: string | undefined;
    try {
      const [beats, held] = await Promise.all([
        options.liveEngines(),
        purpose === "resume" && options.holderOf ? options.holderOf(gameId) : undefined,
      ]);
      open = beats.filter((b) => byName.has(b.engine) && takesGames(b)).map((b) => b.engine);
      // The holder while it is up (draining or not: a draining engine hands its games over itself).
      if (held !== undefined && beats.some((b) => b.engine === held)) holder = held;
    } catch (err) {
      options.onError?.(err as Error);
    }
    const ranked = rendezvousRank(gameId, open.length > 0 ? open : names).filter((n) => n !== holder);
    return (holder !== undefined && byName.has(holder) ? [holder, ...ranked] : ranked).map((n) => byName.get(n)!);
  };
}
