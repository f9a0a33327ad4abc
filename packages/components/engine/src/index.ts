export { engineComponent, createEngine, courseOf, checkWorld, playStateOf, MAX_PIPES } from "./engine.js";
export type { EngineDeps } from "./engine.js";
export {
  GameTable,
  checkGameId,
  birdOrDefault,
  DEFAULT_MAX_GAMES,
  DEFAULT_MAX_GAMES_PER_PLAYER,
  DEFAULT_SWEEP_INTERVAL_MS,
  DEFAULT_UNPLAYED_TTL_MS,
  MAX_GAME_ID_LENGTH,
} from "./games.js";
export { InputLog, type InputRecord } from "./input-log.js";
export type { AdoptOptions, Game, GameOwner, GameSnapshot, GameTableLogger, GameTableOptions, InputResult, NewGame, SweepResult } from "./games.js";
export { DEFAULT_SLICE_MS, DEFAULT_SLOT_MS, TickScheduler, realTickClock } from "./scheduler.js";
export type { TickClock, TickFn, TickInfo, TickTarget, ScheduledTask, TickSchedulerOptions } from "./scheduler.js";
export { ManualTickClock, SingleTimerClock } from "./manual-clock.js";
export { createPreciseTickClock, DEFAULT_MIN_INTERVAL_MS, type PreciseTickClock, type PreciseTickClockOptions } from "./precise-clock.js";
export {
  createGameSessionHandler,
  DEFAULT_MAX_BUFFERED_BYTES,
  DEFAULT_MAX_INPUT_BYTES,
  DEFAULT_RECORD_RETRY_DELAYS_MS,
  DEFAULT_RECORD_TIMEOUT_MS,
  LATENESS_RANGE_US,
  LATENESS_SAMPLE_EVERY,
} from "./game-session.js";
export type { DrainResult, EngineLogger, GameSessionDeps, GameSessionHandler, MoveTarget } from "./game-session.js";
export { type PendingRun, type RunOutbox, recordPendingRun } from "./pending-runs.js";
export {
  DEFAULT_HEARTBEAT_INTERVAL_MS,
  DEFAULT_HEARTBEAT_TTL_MS,
  SnapshotKeeper,
  type SnapshotKeeperOptions,
  type KeptGameRef,
  type SnapshotWrites,
  snapshotWritesFor,
  gameOf,
  originOf,
  snapshotOf,
} from "./snapshot-keeper.js";
export { ENGINE_CLOCK_ENV, type EngineClock, type EngineClockKind, engineClockFromEnv, engineClockKindFromEnv, GAME_TABLE_ENV, gameTableOptionsFromEnv } from "./config.js";
