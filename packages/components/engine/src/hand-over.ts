import { create } from "@bufbuild/protobuf";
import { GameStreamMessageSchema } from "@flaplab/contracts/engine/v1/stream_pb";
import { encodeDelimited } from "@flaplab/game-protocol";
import type { Game } from "./game.js";
import { messageOf } from "./message-of.js";

/** Where a drained game goes: the new engine's stream URLs and a ticket that opens them. */
export interface MoveTarget {
  readonly engineUrl: string;
  readonly engineWsUrl: string;
  readonly streamTicket: string;
}

/** What a drain did. */
export interface DrainResult {
  /** Games handed over (told where they moved). */
  readonly moved: number;
  /** Games that had nowhere to go: their streams closed 4500, the snapshot kept for ResumeGame. */
  readonly stranded: number;
}

/** What became of one game of a drain: moved, stranded (nowhere to go), or ended first (game over, stream closed). */
export type MoveOutcome = "moved" | "stranded" | "ended";

/** A draining game that has not ticked within this long moves without waiting for its tick. */
export const DRAIN_TICK_WAIT_MS = 100;

/** A game stream as a hand-over drives it. */
export interface Movable {
  readonly game: Game;
  /**
   * Takes `move` to run right after its next tick (`move.go()`; `move.end()` when the game ends
   * in it instead): true; false when it is not ticking (not started, over, closed), to move at once.
   */
  waitForTick(move: PendingMove): boolean;
  /** Stops ticks and inputs for the move; false when the game is over or its stream closed. */
  freeze(): boolean;
  /** Resolves once the frozen game's snapshot is in the store. */
  stored(): Promise<void>;
  /** Tells the client where the game went and removes it here; false when its stream closed. */
  moveTo(target: MoveTarget): boolean;
  /** Nowhere to go: closes the stream, the snapshot stays in the store for ResumeGame. */
  strand(): void;
}

/** One game's move, due right after its next tick, or after `waitMs` without one. */
export class PendingMove {
  readonly outcome: Promise<MoveOutcome>;
  /** Continued here and still waiting for the client's re-sent presses: they restart the tick clock. */
  tickOnResend = false;
  private resolve!: (outcome: MoveOutcome) => void;
  private settled = false;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly stream: Movable,
    readonly target: MoveTarget | undefined,
  ) {
    this.outcome = new Promise((resolve) => {
      this.resolve = resolve;
    });
  }

  /** Moves after `waitMs` even when no tick came. */
  deadline(waitMs: number): void {
    this.timer = setTimeout(() => this.go(), waitMs);
  }

  /** Moves now (its tick's frame is out, or the wait is over); once. */
  go(): void {
    if (!this.settle()) return;
    void handOver(this.stream, this.target).then(this.resolve);
  }

  /** The game ended before it could move; once. */
  end(): void {
    if (this.settle()) this.resolve("ended");
  }

  private settle(): boolean {
    if (this.settled) return false;
    this.settled = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    return true;
  }
}

/**
 * Moves `stream`'s game to `target` (or strands it, without one) right after its next tick; at
 * once when it is not ticking, or when it does not tick within `waitMs`.
 */
export function moveAfterTick(stream: Movable, target: MoveTarget | undefined, waitMs = DRAIN_TICK_WAIT_MS): Promise<MoveOutcome> {
  const move = new PendingMove(stream, target);
  if (stream.waitForTick(move)) move.deadline(waitMs);
  else move.go();
  return move.outcome;
}

/** Freezes the game, waits for its snapshot to be stored, then moves or strands it. */
export async function handOver(stream: Movable, target: MoveTarget | undefined): Promise<MoveOutcome> {
  if (!stream.freeze()) return "ended";
  await stream.stored();
  if (target && stream.moveTo(target)) return "moved";
  stream.strand();
  return "stranded";
}

/** The logging a drain does; a pino logger fits. */
export interface DrainLogger {
  warn(obj: object, msg?: string): void;
}

/**
 * Hands every stream's game over: first settles where each goes (`moveTo`, while they still
 * play: a game's pause starts only at its freeze; a failure strands it), then moves each right
 * after its next tick, so a player waits for the move alone, not for the rest of a tick period.
 */
export async function drainStreams(
  streams: readonly Movable[],
  moveTo: (gameId: string) => Promise<MoveTarget | undefined>,
  logger: DrainLogger,
  waitMs = DRAIN_TICK_WAIT_MS,
): Promise<DrainResult> {
  const targets = await Promise.all(
    streams.map(async (stream) => {
      try {
        return await moveTo(stream.game.id);
      } catch (err) {
        logger.warn({ gameId: stream.game.id, err: messageOf(err) }, "no engine to move the game to");
        return undefined;
      }
    }),
  );
  const outcomes = await Promise.all(streams.map((stream, i) => moveAfterTick(stream, targets[i], waitMs)));
  return {
    moved: outcomes.filter((o) => o === "moved").length,
    stranded: outcomes.filter((o) => o === "stranded").length,
  };
}

/** The `Moved` message that tells a client where its game went, as the tick it left at. */
export function movedMessage(target: MoveTarget, tick: number): Uint8Array {
  return encodeDelimited(GameStreamMessageSchema, create(GameStreamMessageSchema, { kind: { case: "moved", value: { ...target, tick } } }));
}
