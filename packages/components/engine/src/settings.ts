import { choice, type WholeNumberSetting, wholeNumber } from "@flaplab/settings";

const readBy = "engine";

/** The game table's limits, one variable each (read by `gameTableOptionsFromEnv`). */
export const GAME_TABLE_SETTINGS = {
  maxGames: wholeNumber({ name: "FLAPLAB_ENGINE_MAX_GAMES", description: "games one engine holds", default: 10_000, min: 1, readBy }),
  maxGamesPerPlayer: wholeNumber({ name: "FLAPLAB_ENGINE_MAX_GAMES_PER_PLAYER", description: "unfinished games per player", default: 3, min: 1, readBy }),
  unplayedTtlMs: wholeNumber({
    name: "FLAPLAB_ENGINE_UNPLAYED_TTL_MS",
    description:
      "a game with no first input is removed this long after its creation; a game continued from its snapshot that nobody plays on, this long after it was continued, ms",
    default: 60_000,
    min: 1,
    readBy,
  }),
  sweepIntervalMs: wholeNumber({
    name: "FLAPLAB_ENGINE_SWEEP_INTERVAL_MS",
    description: "how often the engine sweeps expired games, ms (0: only when a game is created)",
    default: 10_000,
    min: 0,
    readBy,
  }),
} as const satisfies Readonly<Record<string, WholeNumberSetting>>;

/** The timers the engine's ticks run on (read by `engineClockKindFromEnv`). */
export const ENGINE_CLOCK = choice({
  name: "FLAPLAB_ENGINE_CLOCK",
  choices: ["precise", "timers"],
  default: "timers",
  description:
    "the timers games tick on: `timers` (setTimeout: a tick starts 0–1 ms after its deadline) or `precise` (a helper thread wakes the engine within ≈ 0.1–0.2 ms of the deadline: 2–4× the games in memory at p99 ≤ 2 ms in the bench, for 25–60 % more CPU per frame, and worse acks when other processes share the cores; [`packages/components/engine/README.md`](../packages/components/engine/README.md))",
  readBy,
});

/** Every variable the engine reads. */
export const SETTINGS = [...Object.values(GAME_TABLE_SETTINGS), ENGINE_CLOCK];
