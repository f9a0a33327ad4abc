import { wholeNumbersFromEnv } from "@flaplab/component";
import type { GameTableOptions } from "./games.js";

type TableLimit = "maxGames" | "maxGamesPerPlayer" | "unplayedTtlMs" | "sweepIntervalMs";

/** The environment variable of each game table option (whole numbers; see the root README). */
export const GAME_TABLE_ENV: Readonly<Record<TableLimit, string>> = Object.freeze({
  maxGames: "FLAPLAB_ENGINE_MAX_GAMES",
  maxGamesPerPlayer: "FLAPLAB_ENGINE_MAX_GAMES_PER_PLAYER",
  unplayedTtlMs: "FLAPLAB_ENGINE_UNPLAYED_TTL_MS",
  sweepIntervalMs: "FLAPLAB_ENGINE_SWEEP_INTERVAL_MS",
});

const MINIMUM: Readonly<Record<TableLimit, number>> = { maxGames: 1, maxGamesPerPlayer: 1, unplayedTtlMs: 1, sweepIntervalMs: 0 };

/** The game table options set in `env` (FLAPLAB_ENGINE_*); throws a RangeError naming a bad value. */
export function gameTableOptionsFromEnv(env: NodeJS.ProcessEnv): Pick<GameTableOptions, TableLimit> {
  return wholeNumbersFromEnv(env, GAME_TABLE_ENV, (key) => MINIMUM[key], (message) => new RangeError(message));
}
