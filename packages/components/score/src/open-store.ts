import { openPostgresScoreStore, type PostgresScoreStoreOptions } from "./postgres-store.js";
import { openSqliteScoreStore } from "./sqlite-store.js";
import type { ScoreStore } from "./store.js";

export interface ScoreStoreConfig extends PostgresScoreStoreOptions {
  /** Directory of `score.sqlite`, used when there is no `databaseUrl`. */
  readonly dataDir: string;
  /** A `postgres://` URL (`FLAPLAB_SCORE_DATABASE_URL` in the cloud): keep the runs there instead. */
  readonly databaseUrl?: string | undefined;
}

/** The store the configuration asks for: Postgres when a database URL is given, else SQLite. */
export async function openScoreStore(config: ScoreStoreConfig): Promise<ScoreStore> {
  const { dataDir, databaseUrl, ...postgres } = config;
  return databaseUrl ? openPostgresScoreStore(databaseUrl, postgres) : openSqliteScoreStore(dataDir);
}
