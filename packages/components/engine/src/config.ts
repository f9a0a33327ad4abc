import { choiceOf, namesOf, readWholeNumbers } from "@flaplab/settings";
import type { GameTableOptions } from "./games.js";
import { createPreciseTickClock } from "./precise-clock.js";
import { realTickClock, type TickClock } from "./scheduler.js";
import { ENGINE_CLOCK, GAME_TABLE_SETTINGS } from "./settings.js";

type TableLimit = "maxGames" | "maxGamesPerPlayer" | "unplayedTtlMs" | "sweepIntervalMs";

/** The environment variable of each game table option (whole numbers; declared in settings.ts). */
export const GAME_TABLE_ENV: Readonly<Record<TableLimit, string>> = Object.freeze(namesOf(GAME_TABLE_SETTINGS));

/** The game table options set in `env` (FLAPLAB_ENGINE_*); throws a RangeError naming a bad value. */
export function gameTableOptionsFromEnv(env: NodeJS.ProcessEnv): Pick<GameTableOptions, TableLimit> {
  return readWholeNumbers(env, GAME_TABLE_SETTINGS, (message) => new RangeError(message));
}

/** Chooses the timers the engine's ticks run on. */
export const ENGINE_CLOCK_ENV = ENGINE_CLOCK.name;

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
  return choiceOf(env, ENGINE_CLOCK, (message) => new RangeError(message));
}

/** The tick clock `FLAPLAB_ENGINE_CLOCK` asks for (`engineClockKindFromEnv`), made. */
export function engineClockFromEnv(env: NodeJS.ProcessEnv): EngineClock {
  if (engineClockKindFromEnv(env) === "timers") return { kind: "timers", clock: realTickClock, close: async () => {} };
  const clock = createPreciseTickClock();
  return { kind: "precise", clock, close: () => clock.close() };
}
