/** One finished run as stored. */
export interface StoredRun {
  readonly gameId: string;
  readonly username: string;
  readonly score: number;
  readonly ticks: number;
  /** int64 world seed, kept exactly (TEXT in SQLite, BIGINT in Postgres). */
  readonly seed: bigint;
  /** Epoch milliseconds. */
  readonly finishedAt: number;
}

/** A `runs` row as both databases return it (SQLite: seed TEXT; Postgres: BIGINTs as strings). */
export interface RunRow {
  game_id: string;
  username: string;
  score: number;
  ticks: number;
  seed: string;
  finished_at: number | string;
}

/** The `runs` columns every query reads, in `RunRow` order. */
export const RUN_COLUMNS = "game_id, username, score, ticks, seed, finished_at";

export function runFromRow(row: RunRow): StoredRun {
  return {
    gameId: row.game_id,
    username: row.username,
    score: row.score,
    ticks: row.ticks,
    seed: BigInt(row.seed),
    finishedAt: Number(row.finished_at),
  };
}

/**
 * Where finished runs live: SQLite (`openSqliteScoreStore`) or Postgres (`openPostgresScoreStore`),
 * with the same behaviour. Ties in either ordering go by insertion order.
 */
export interface ScoreStore {
  /** Stores a run; false (and nothing changed) when its game id is already recorded. */
  insertRun(run: StoredRun): Promise<boolean>;
  getRun(gameId: string): Promise<StoredRun | undefined>;
  /** The user's runs, newest first. */
  ownRuns(username: string, limit: number): Promise<StoredRun[]>;
  /** All runs by score descending, then earliest finish. */
  leaderboard(limit: number): Promise<StoredRun[]>;
  /** Idempotent. */
  close(): Promise<void>;
}

/**
 * The schema version both stores migrate to (each has this many migrations; the tests check it).
 * A database with a higher version is refused.
 */
export const SCORE_SCHEMA_VERSION = 1;

/**
 * The database could not be reached or dropped the connection (it may be restarting). The call
 * may succeed later; the score handler answers `Unavailable`.
 */
export class StoreUnavailableError extends Error {
  override readonly name = "StoreUnavailableError";
}
