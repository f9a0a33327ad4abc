import { type CallOptions, type Client, Code, ConnectError } from "@connectrpc/connect";
import { runInCall } from "@flaplab/component";
import type { ScoreService } from "@flaplab/contracts/score/v1/score_pb";

/** A run the engine could not record at game over, kept to be recorded later. */
export interface PendingRun {
  readonly gameId: string;
  readonly score: number;
  readonly ticks: number;
  /** The world's seed, in decimal. */
  readonly seed: string;
  /** The player it is recorded for. */
  readonly player: string;
  /** The game's trace (W3C `traceparent`, when tracing was on): the later RecordRun joins it. */
  readonly traceparent?: string | undefined;
}

/** A durable place for pending runs (`DurableOutbox` of @flaplab/outbox fits). */
export interface RunOutbox {
  /** Keeps `run`; it is safe on disk when this returns. Throws when it cannot be kept. */
  add(run: PendingRun): void;
}

/** RecordRun answers that a later attempt would get again: the run itself is refused. */
export const PERMANENT_RECORD_CODES: ReadonlySet<Code> = new Set([
  Code.InvalidArgument,
  Code.PermissionDenied,
  Code.Unauthenticated,
  Code.AlreadyExists,
  Code.FailedPrecondition,
  Code.OutOfRange,
  Code.Unimplemented,
]);

/**
 * Records a pending run with the engine's score client, for its player: "delivered" when the
 * score component took it (AlreadyExists: an earlier attempt did), "refused" when it never will;
 * throws (to be tried again) when the score component cannot be reached.
 */
export async function recordPendingRun(
  score: Client<typeof ScoreService>,
  run: PendingRun,
  options: CallOptions = { timeoutMs: 5000 },
): Promise<"delivered" | "refused"> {
  // No token is kept: the engine's component credential acts for the player.
  const call = {
    component: "engine" as const,
    verb: "Outbox",
    principal: { username: run.player, token: "", expiresAt: new Date(0) },
    gameId: run.gameId,
    traceparent: run.traceparent,
  };
  try {
    await runInCall(call, () => score.recordRun({ gameId: run.gameId, score: run.score, ticks: run.ticks, seed: BigInt(run.seed) }, options));
    return "delivered";
  } catch (err) {
    const e = ConnectError.from(err);
    if (e.code === Code.AlreadyExists) return "delivered";
    if (PERMANENT_RECORD_CODES.has(e.code)) return "refused";
    throw e;
  }
}
