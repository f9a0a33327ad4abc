// The messages between the group's process and its engine shards, over the child processes' IPC
// channel with advanced serialization (Dates, bigints and byte arrays cross as they are).
import type { CallContext, Principal } from "@flaplab/component";
import type { GameSnapshot } from "@flaplab/engine";
import type { UpgradeRequest } from "@flaplab/streams";

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

export type ToShard = PlayGame | CallResult | SampleRequest | CloseSession;

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

export type FromShard = ShardReady | ShardCall | SessionClosed | GameEnded | SampleReply;
