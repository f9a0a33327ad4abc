import { CloseCode } from "./close-codes.js";
import type { StreamSession } from "./session.js";

/** Why a stream is refused: the close code and the reason the client sees. */
export interface StreamRefusal {
  readonly code: CloseCode;
  readonly reason: string;
}

/**
 * The ownership check of every game stream (engine and music): a session is admitted only when
 * its stream ticket names the game of the URL (the initiator issues a game's ticket to the player
 * it created the game for, so a ticket of game G for user U says U owns G), and, where the
 * component knows the game's owner (the engine), when that owner is the ticket's player.
 * Returns the refusal to close the session with, or undefined to admit it.
 */
export function checkStreamOwnership(
  session: Pick<StreamSession, "gameId" | "principal">,
  owner?: string | undefined,
): StreamRefusal | undefined {
  const { gameId, principal } = session;
  if (principal.gameId === undefined) {
    return { code: CloseCode.Unauthenticated, reason: "a stream needs the game's stream ticket" };
  }
  if (principal.gameId !== gameId) {
    return { code: CloseCode.PermissionDenied, reason: `the stream ticket is not for game ${gameId}` };
  }
  if (owner !== undefined && owner !== principal.username) {
    return { code: CloseCode.PermissionDenied, reason: `game ${gameId} belongs to another player` };
  }
  return undefined;
}
