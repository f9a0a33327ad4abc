// The messages between the group's process and its engine shards, over the child processes' IPC
// channel with advanced serialization (Dates, bigints and byte arrays cross as they are).
import type { CallContext, Principal } from "@flaplab/component";
import type { GameSnapshot } from "@flaplab/engine";
import type { UpgradeRequest } from "@flaplab/streams";

/** Parent → shard: play this game; its WebSocket (admitted, not yet answered) comes as the handle. */
export interface PlayGame {
  readonly type: "play";
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

export type ToShard = PlayGame | CallResult;

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

/** Shard → parent: game `gameId`'s session has ended (game over, abandoned, or refused). */
export interface GameEnded {
  readonly type: "ended";
  readonly gameId: string;
  /** The game reached game over (else it was abandoned or never played). */
  readonly over: boolean;
}

export type FromShard = ShardReady | ShardCall | GameEnded;
