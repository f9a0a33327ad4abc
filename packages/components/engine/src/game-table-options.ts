import { GAME_TABLE_SETTINGS } from "./settings.js";

export interface GameTableOptions {
  /** Most games held at once (default 10 000); StartGame beyond it is ResourceExhausted. */
  readonly maxGames?: number;
  /**
   * Most unfinished games (ready or playing) one player may hold (default 3). At the limit a new
   * game replaces the player's oldest game that never started; when all of them have started,
   * `create` throws ResourceExhausted.
   */
  readonly maxGamesPerPlayer?: number;
  /** Epoch ms (default Date.now). */
  readonly clock?: () => number;
  /** How long a finished game stays before `sweep` removes it (default 60 s). */
  readonly finishedTtlMs?: number;
  /** How long a game that never started (no first input) stays before `sweep` removes it (default 60 s). */
  readonly unplayedTtlMs?: number;
  /**
   * How long a started, unfinished game may go without input or tick before `sweep` removes it
   * (default 10 min; a game's ticks count as seen by the sweeps, so up to one sweep interval more).
   */
  readonly idleTtlMs?: number;
  /** Inputs kept per game (default 1 000). */
  readonly maxInputLog?: number;
  /**
   * Period of the sweep timer, ms (default 10 s; 0: no timer, `sweep` runs only from `create`).
   * `create` also sweeps at most this often, and always when the table is full.
   */
  readonly sweepIntervalMs?: number;
  /** Where sweeps that removed games and refusals are logged (pino-compatible). */
  readonly logger?: GameTableLogger;
}

/** The part of a pino logger the table uses. */
export interface GameTableLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/** What one sweep removed, by reason. */
export interface SweepResult {
  readonly finished: number;
  readonly unplayed: number;
  readonly idle: number;
}

export const DEFAULT_MAX_GAMES = GAME_TABLE_SETTINGS.maxGames.default;
export const DEFAULT_MAX_GAMES_PER_PLAYER = GAME_TABLE_SETTINGS.maxGamesPerPlayer.default;
export const DEFAULT_UNPLAYED_TTL_MS = GAME_TABLE_SETTINGS.unplayedTtlMs.default;
export const DEFAULT_SWEEP_INTERVAL_MS = GAME_TABLE_SETTINGS.sweepIntervalMs.default;
