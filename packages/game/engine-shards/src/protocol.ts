// The messages between the group's process and its engine shards, over the child processes' IPC
// channel with advanced serialization (Dates, bigints and byte arrays cross as they are).
import type { CallContext, Principal } from "@flaplab/component";
import type { GameSnapshot, SnapshotWrites } from "@flaplab/engine";
import type { UpgradeRequest } from "@flaplab/stream-servers";

/** Parent → shard: play this game; its WebSocket (admitted, not yet answered) comes as the handle. */
export interface PlayGame {
  readonly type: "play";
  /** The parent's id of the game's session (`CloseSession` and `SessionClosed` name it). */
  readonly session: number;
  readonly game: GameSnapshot;
  readonly path: string;
  readonly principal: Principal;
  readonly upgrade: UpgradeRequest;
  /** Bytes the parent read past the request's headers. */
  readonly head: Uint8Array;
}

/** Parent → shard: the answer to a `call`. */
export interface CallResult {
  readonly type: "result";
  readonly id: number;
  /** Undefined when the call succeeded. */
  readonly error?: { readonly code: number; readonly message: string };
}

/** Parent → shard: report what you measured since the last report (and start again). */
export interface SampleRequest {
  readonly type: "sample";
  readonly id: number;
}

/**
 * Parent → shard: close session `session` with `code` and `reason` (a newer session of its player
 * replaced it in the parent's shares, or the parent's link is closing).
 */
export interface CloseSession {
  readonly type: "close-session";
  readonly session: number;
  readonly code: number;
  readonly reason: string;
}

/** Parent → shard: the answer to a `store` call. */
export interface StoreResult {
  readonly type: "store-result";
  readonly id: number;
  /** `writeSnapshots`: the games another engine owns now (their snapshots were not written). */
  readonly lost?: readonly string[];
  /** Undefined when the call succeeded. */
  readonly error?: string;
}

export type ToShard = PlayGame | CallResult | SampleRequest | CloseSession | StoreResult;

/**
 * How a shard keeps its games' snapshots (its command line's fifth argument, JSON): as the group's
 * engine, at the group's cadence, in the group's store.
 */
export interface ShardSnapshotSetup {
  /** The group's engine name: a shard's snapshots are its engine's (the store's owner of the game). */
  readonly engine: string;
  /** The group's keeper's `writes`. */
  readonly writes: SnapshotWrites;
  /**
   * "group": the store is in the group's process (in memory), reached through the group (`store`
   * calls); "shared": the deployment's shared store (`FLAPLAB_SNAPSHOT_STORE`, in the environment
   * the shard inherits), which the shard connects to itself, so that its writes neither pass
   * through the group nor die with it.
   */
  readonly store: "group" | "shared";
}

/**
 * Shard → parent: a write to the group's in-process snapshot store, messages encoded (protobuf
 * binary). The only calls a shard's keeper makes: it neither resumes games nor beats a heartbeat.
 */
export type StoreCall = { readonly type: "store"; readonly id: number } & (
  | { readonly method: "writeOrigin"; readonly origin: Uint8Array }
  | { readonly method: "writeSnapshots"; readonly engine: string; readonly snapshots: readonly Uint8Array[] }
  | { readonly method: "remove"; readonly gameIds: readonly string[] }
);

/** Shard → parent: started and listening for games. */
export interface ShardReady {
  readonly type: "ready";
}

/**
 * Shard → parent: a call to another component made while playing a game (PlayMusic, RecordRun),
 * made by the parent in the shard's call context. `id` 0: fire and forget.
 */
export interface ShardCall {
  readonly type: "call";
  readonly id: number;
  readonly method: "playMusic" | "recordRun";
  readonly context: CallContext | undefined;
  readonly request: unknown;
  readonly timeoutMs?: number;
}

/**
 * Shard → parent: session `session` has closed, or never opened (its game or socket refused): the
 * parent's shares stop counting it. Reported for every `PlayGame`, beside the game's `ended`.
 */
export interface SessionClosed {
  readonly type: "session-closed";
  readonly session: number;
}

/** Shard → parent: game `gameId`'s session has ended (game over, abandoned, or refused). */
export interface GameEnded {
  readonly type: "ended";
  readonly gameId: string;
  /** The game reached game over (else it was abandoned or never played). */
  readonly over: boolean;
}

/** A tick that runs more than this past its deadline counts as late in `ShardSample.lateTicks`. */
export const LATE_TICK_US = 2_000;

/** What one shard measured over an interval. */
export interface ShardSample {
  readonly index: number;
  readonly pid: number;
  /** Ticks run, and how late they ran (µs past their deadline). */
  readonly ticks: number;
  readonly latenessUs: { readonly p50: number | null; readonly p99: number | null; readonly p999: number | null; readonly max: number | null };
  /** Ticks more than `LATE_TICK_US` past their deadline. */
  readonly lateTicks: number;
  /** The longest garbage-collection pause (perf_hooks "gc" entries), ms; null: none. */
  readonly gcMaxMs: number | null;
  /** Process CPU (user + system), µs. */
  readonly cpuUs: number;
  readonly wallMs: number;
  /** Games in its table and sessions open now. */
  readonly games: number;
  readonly sessions: number;
  /** Games its snapshot keeper keeps now (null: it keeps no snapshots). */
  readonly keptGames: number | null;
  readonly rssBytes: number;
  readonly heapUsedBytes: number;
  /** Open file descriptors (null where /proc/self/fd cannot be read). */
  readonly fds: number | null;
}

/** Shard → parent: the answer to a `sample`. */
export interface SampleReply {
  readonly type: "sample";
  readonly id: number;
  readonly sample: ShardSample;
}

export type FromShard = ShardReady | ShardCall | SessionClosed | GameEnded | SampleReply | StoreCall;
