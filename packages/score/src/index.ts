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
export { openScoreStore, SCORE_DB_FILE, SCORE_SCHEMA_VERSION } from "./store.js";
export type { ScoreStore, StoredRun } from "./store.js";
