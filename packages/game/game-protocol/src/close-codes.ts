/**
 * Application close codes of the game and music streams (WebTransport `closeCode`), sent with a
 * human-readable reason. 0 is a normal end (game over).
 */
export const CloseCode = {
  /** The game ended; the reason says how. */
  Normal: 0,
  /** The game moved to another engine: a `Moved` message said where (this engine is draining). */
  Moved: 4301,
  /** A message could not be decoded, or broke the protocol (e.g. a sequence number went back). */
  Malformed: 4400,
  /** Missing, expired or invalid token. */
  Unauthenticated: 4401,
  /** The game belongs to another player. */
  PermissionDenied: 4403,
  /** No such game (or no such stream path). */
  NotFound: 4404,
  /** The game already has a stream of this kind. */
  AlreadyConnected: 4409,
  /** Input after the game ended. */
  GameOver: 4410,
  /** A message larger than the stream allows. */
  TooLarge: 4413,
  /** More inputs than a player can press: the flood limit ran out. */
  TooManyInputs: 4420,
  /** The client did not read its frames fast enough. */
  TooSlow: 4429,
  /**
   * A limit refuses the session: the player's unfinished games on this engine, the engine's game
   * table, or the stream sessions of the game, player or address. The reason names it.
   */
  LimitReached: 4430,
  /** The server failed or is shutting down. */
  Internal: 4500,
} as const;
export type CloseCode = (typeof CloseCode)[keyof typeof CloseCode];
