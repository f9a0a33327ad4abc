import { type BirdBox, type Course, DEFAULT_BIRD, type GameState, type InputEffect, type Phase } from "@flaplab/physics";
import type { InputLog, InputRecord } from "./input-log.js";
import type { GameTable } from "./games.js";

/** Who started a game: only this user may send it inputs. */
export interface GameOwner {
  readonly username: string;
  /** The player's bearer token, forwarded on calls made on the player's behalf (e.g. the score). */
  readonly token: string;
  /** When `token` expires, if known. */
  readonly expiresAt?: Date;
}

/**
 * A game in the table. Read it freely; change it only through the table. `state` is the
 * physics state, mutated in place by `GameTable.input` and `GameTable.tick`.
 */
export interface Game {
  readonly id: string;
  readonly owner: GameOwner;
  readonly seed: bigint;
  readonly state: GameState;
  readonly createdAtMs: number;
  /** When the start press arrived. */
  readonly startedAtMs: number | undefined;
  /** When the game-over tick ran. */
  readonly finishedAtMs: number | undefined;
  /**
   * Last creation or input; for a game that ticks, the last sweep that saw it tick (within one
   * sweep interval of its latest tick). Its ticks are not timed one by one: a clock read per tick
   * was a new heap number per frame.
   */
  readonly lastActivityMs: number;
  /** Highest input sequence number received (0 before any). */
  readonly lastInputSeq: number;
  /**
   * Highest input sequence number the latest tick reflects: what its frame should echo. A flap
   * applied since that tick is already in `state` (its velocity); the game stream acks it itself.
   */
  readonly reflectedSeq: number;
  /** Accepted inputs in arrival order, the oldest dropped beyond `maxInputLog`. */
  readonly inputs: InputLog;
  /**
   * W3C `traceparent` of the call that started the game, when tracing is on: the game's own calls
   * (PlayMusic, RecordRun) are made in that trace, on whichever engine plays it.
   */
  readonly traceparent?: string | undefined;
}

/** A game as the table holds it: `table` is the table it is in now (undefined once it left). */
export type MutableGame = { -readonly [K in keyof Game]: Game[K] } & {
  table: GameTable | undefined;
  /** The game's tick when a sweep last looked at it: a game whose tick moved on since is active. */
  sweptAtTick: number;
  /**
   * Continued from a snapshot (`adopt` with `resumed`) and not played on since (no input, no
   * tick): when that began. Such a game is swept after `unplayedTtlMs`, like one never started,
   * and is the first a new game of its owner replaces.
   */
  waitingSinceMs: number | undefined;
};

/** How `GameTable.adopt` takes a game in. */
export interface AdoptOptions {
  /**
   * Continued from the snapshot store (ResumeGame, a hand-over, a stream opened here): it counts
   * against its owner's `maxGamesPerPlayer` here as a new game does (replacing their oldest game
   * nobody plays, else ResourceExhausted), and until it is played on it is swept as unplayed.
   * Without it (a game detached from another table of this engine) the detaching table keeps the
   * owner's limit.
   */
  readonly resumed?: boolean;
}

/**
 * A game as plain data (structured-cloneable: what `postMessage` and a child process's advanced
 * IPC serialization carry), to move it to another process: `GameTable.detach` makes one,
 * `GameTable.adopt` plays it on.
 */
export type GameSnapshot = Omit<Game, "inputs"> & { readonly inputs: readonly InputRecord[] };

export interface NewGame {
  readonly id: string;
  readonly owner: GameOwner;
  readonly course: Course;
  /** Defaults to 34×24; a zero dimension takes the default's. */
  readonly bird?: BirdBox;
  readonly seed?: bigint;
  /** The trace the game was started in (see `Game.traceparent`). */
  readonly traceparent?: string | undefined;
}

export interface InputResult {
  /** The next tick: the first whose movement the input affects. */
  readonly tick: number;
  /** The game's phase after the input. */
  readonly phase: Phase;
  readonly effect: InputEffect;
}

/** The bird box to play with: a zero (unset) dimension takes the 34×24 default's. */
export function birdOrDefault(bird: BirdBox | undefined): BirdBox {
  return {
    width: bird?.width || DEFAULT_BIRD.width,
    height: bird?.height || DEFAULT_BIRD.height,
  };
}

/** `game` as plain data (what `GameTable.detach` hands to another process). */
export function plainGameOf(game: Game): GameSnapshot {
  return {
    id: game.id,
    owner: { ...game.owner },
    seed: game.seed,
    state: game.state,
    createdAtMs: game.createdAtMs,
    startedAtMs: game.startedAtMs,
    finishedAtMs: game.finishedAtMs,
    lastActivityMs: game.lastActivityMs,
    lastInputSeq: game.lastInputSeq,
    reflectedSeq: game.reflectedSeq,
    inputs: game.inputs.toArray(),
    traceparent: game.traceparent,
  };
}
