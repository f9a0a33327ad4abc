import { wholeNumbersFromEnv } from "@flaplab/component";
import type { GameTableOptions } from "./games.js";
import { createPreciseTickClock } from "./precise-clock.js";
import { realTickClock, type TickClock } from "./scheduler.js";

type TableLimit = "maxGames" | "maxGamesPerPlayer" | "unplayedTtlMs" | "sweepIntervalMs";

/** The environment variable of each game table option (whole numbers; see docs/settings.md). */
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

/** Chooses the timers the engine's ticks run on. */
export const ENGINE_CLOCK_ENV = "FLAPLAB_ENGINE_CLOCK";

/** What `FLAPLAB_ENGINE_CLOCK` may say. */
export type EngineClockKind = "precise" | "timers";

/** The engine's tick clock and how to let go of it. */
export interface EngineClock {
  readonly kind: EngineClockKind;
  readonly clock: TickClock;
  /** Ends the clock's helper thread, if it has one. */
  close(): Promise<void>;
}

/**
 * Which clock `FLAPLAB_ENGINE_CLOCK` asks for: `timers` (the default: setTimeout's whole
 * milliseconds) or `precise` (sub-millisecond timers, `createPreciseTickClock`). Throws a
 * RangeError naming any other value.
 */
export function engineClockKindFromEnv(env: NodeJS.ProcessEnv): EngineClockKind {
  const raw = env[ENGINE_CLOCK_ENV]?.trim() || "timers";
  if (raw !== "timers" && raw !== "precise") throw new RangeError(`${ENGINE_CLOCK_ENV} must be "precise" or "timers", got "${raw}"`);
  return raw;
}

/** The tick clock `FLAPLAB_ENGINE_CLOCK` asks for (`engineClockKindFromEnv`), made. */
export function engineClockFromEnv(env: NodeJS.ProcessEnv): EngineClock {
  if (engineClockKindFromEnv(env) === "timers") return { kind: "timers", clock: realTickClock, close: async () => {} };
  const clock = createPreciseTickClock();
  return { kind: "precise", clock, close: () => clock.close() };
}
