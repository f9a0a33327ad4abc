// Getting a game back on an engine after its stream broke: ResumeGame, tried again with backoff.
import { Code, ConnectError } from "@connectrpc/connect";

/** Where a game is played: an engine's stream URLs and the ticket that opens them. */
export interface EngineHome {
  readonly engineUrl: string;
  readonly engineWsUrl: string;
  readonly streamTicket: string;
}

/** ResumeGame answers after which trying again cannot help (no snapshot, another player's, over). */
export const FINAL_RESUME_CODES: ReadonlySet<Code> = new Set([
  Code.NotFound,
  Code.PermissionDenied,
  Code.FailedPrecondition,
  Code.Unauthenticated,
  Code.InvalidArgument,
]);

export function isFinalResumeError(err: unknown): boolean {
  return err instanceof ConnectError && FINAL_RESUME_CODES.has(err.code);
}

/** The wait before try `attempt` (0-based) of a reconnection: 50 ms, doubling, at most 500 ms. */
export function backoffMs(attempt: number, firstMs = 50, maxMs = 500): number {
  return Math.min(firstMs * 2 ** attempt, maxMs);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
