import { join } from "node:path";
import { openDurableSqlite } from "@flaplab/sqlite";
import { RUN_COLUMNS, runFromRow, type RunRow, type ScoreStore } from "./store.js";

export const SCORE_DB_FILE = "score.sqlite";

// Each entry moves the schema from version i to i + 1. The two indexes serve both ORDER BYs
// below without sorting (runs_by_user is scanned backwards for newest first).
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE runs (
     game_id     TEXT    NOT NULL PRIMARY KEY,
     username    TEXT    NOT NULL,
     score       INTEGER NOT NULL,
     ticks       INTEGER NOT NULL,
     seed        TEXT    NOT NULL,
     finished_at INTEGER NOT NULL
   );
   CREATE INDEX runs_leaderboard ON runs (score DESC, finished_at ASC);
   CREATE INDEX runs_by_user ON runs (username, finished_at);`,
];

/**
 * Runs in `<dataDir>/score.sqlite`. WAL with synchronous=FULL: once `insertRun` resolves, the run
 * is on disk and survives a process crash or power loss. The schema version is `PRAGMA user_version`.
 */
export function openSqliteScoreStore(dataDir: string): ScoreStore {
  const db = openDurableSqlite({ file: join(dataDir, SCORE_DB_FILE), migrations: MIGRATIONS, name: SCORE_DB_FILE });

  const insert = db.prepare<[string, string, number, number, string, number]>(
    `INSERT INTO runs (${RUN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (game_id) DO NOTHING`,
  );
  const byId = db.prepare<[string], RunRow>(`SELECT ${RUN_COLUMNS} FROM runs WHERE game_id = ?`);
  // rowid breaks ties in insertion order.
  const own = db.prepare<[string, number], RunRow>(
    `SELECT ${RUN_COLUMNS} FROM runs WHERE username = ? ORDER BY finished_at DESC, rowid DESC LIMIT ?`,
  );
  const top = db.prepare<[number], RunRow>(
    `SELECT ${RUN_COLUMNS} FROM runs ORDER BY score DESC, finished_at ASC, rowid ASC LIMIT ?`,
  );

  // better-sqlite3 is synchronous; the methods are async to share the interface with Postgres.
  return {
    async insertRun(run) {
      const info = insert.run(run.gameId, run.username, run.score, run.ticks, run.seed.toString(), run.finishedAt);
      return info.changes === 1;
    },
    async getRun(gameId) {
      const row = byId.get(gameId);
      return row && runFromRow(row);
    },
    async ownRuns(username, limit) {
      return own.all(username, limit).map(runFromRow);
    },
    async leaderboard(limit) {
      return top.all(limit).map(runFromRow);
    },
    async close() {
      if (db.open) db.close();
    },
  };
}
