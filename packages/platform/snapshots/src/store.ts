import type { GameOrigin, GameSnapshot } from "@flaplab/contracts/engine/v1/snapshot_pb";
import { SNAPSHOT_TTL } from "./settings.js";

/** What an engine says of itself every heartbeat. */
export interface EngineBeat {
  /** The engine's group name in the topology. */
  readonly engine: string;
  /** Games it holds, and the most it holds. */
  readonly games: number;
  readonly maxGames: number;
  /** Draining: it takes no new games and hands its games over. */
  readonly draining: boolean;
}

/** Whether an engine takes new and moved games: up (it beats), not draining, not full. */
export function takesGames(beat: EngineBeat): boolean {
  return !beat.draining && beat.games < beat.maxGames;
}

/** A game as the store has it: where it started, and its latest state. */
export interface StoredGame {
  readonly origin: GameOrigin;
  readonly snapshot: GameSnapshot;
}

/**
 * Where engines keep a snapshot of every live game and say that they are up. Each game has an
 * owner, the engine that plays it: the first to write its snapshot, or the last to `claim` it.
 * Only the owner's snapshots are written, so a game continued elsewhere is never overwritten by
 * an engine that still believes it plays it (a partition); that engine learns it lost the game.
 */
export interface SnapshotStore {
  /** "memory" (in this process) or "redis". */
  readonly kind: string;
  /** Writes a game's origin, once, before its first snapshot. */
  writeOrigin(origin: GameOrigin): Promise<void>;
  /**
   * Writes the latest snapshot of each game that `engine` owns (or nobody does yet: it then owns
   * it), in one batch (one round trip). Returns the ids of the games another engine owns now:
   * their snapshots were not written.
   */
  writeSnapshots(engine: string, snapshots: readonly GameSnapshot[]): Promise<string[]>;
  /** Makes `engine` the owner of game `gameId` (it continues the game). */
  claim(gameId: string, engine: string): Promise<void>;
  /** A game's origin and latest snapshot, or undefined when either is missing. */
  read(gameId: string): Promise<StoredGame | undefined>;
  /** Forgets games (they ended). */
  remove(gameIds: readonly string[]): Promise<void>;
  /** Says that `beat.engine` is up, for `ttlMs`. */
  heartbeat(beat: EngineBeat, ttlMs: number): Promise<void>;
  /** Says that `engine` is gone, now. */
  retire(engine: string): Promise<void>;
  /** Engines whose latest heartbeat has not expired. */
  liveEngines(): Promise<EngineBeat[]>;
  close(): Promise<void>;
}

/** How long a stored game outlives its latest write (a game nobody continues goes away). */
export const SNAPSHOT_TTL_MS = SNAPSHOT_TTL.default;
