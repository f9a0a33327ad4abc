export {
  createScore,
  scoreComponent,
  DEFAULT_LIMIT,
  MAX_GAME_ID_LENGTH,
  MAX_LIMIT,
  MAX_SCORE,
  MAX_TICKS,
} from "./score.js";
export type { ScoreDeps } from "./score.js";
export { openScoreStore } from "./open-store.js";
export type { ScoreStoreConfig } from "./open-store.js";
export { SCORE_SCHEMA_VERSION, StoreUnavailableError } from "./store.js";
export type { ScoreStore, StoredRun } from "./store.js";
export { openSqliteScoreStore, SCORE_DB_FILE } from "./sqlite-store.js";
export { openPostgresScoreStore } from "./postgres-store.js";
export type { PostgresScoreStoreOptions } from "./postgres-store.js";
export { postgresPoolConfig } from "./postgres-connection.js";
export type { PostgresPoolOptions } from "./postgres-connection.js";
