import { mkdirSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";

/** One finished run as stored. */
export interface StoredRun {
  readonly gameId: string;
  readonly username: string;
  readonly score: number;
  readonly ticks: number;
  /** int64 world seed; kept as decimal TEXT in SQLite so no precision is lost. */
  readonly seed: bigint;
  /** Epoch milliseconds. */
  readonly finishedAt: number;
}

export interface ScoreStore {
  /** Stores a run; false (and nothing changed) when its game id is already recorded. */
  insertRun(run: StoredRun): boolean;
  getRun(gameId: string): StoredRun | undefined;
  /** The user's runs, newest first. */
  ownRuns(username: string, limit: number): StoredRun[];
  /** All runs by score descending, then earliest finish. */
  leaderboard(limit: number): StoredRun[];
  close(): void;
}

export const SCORE_DB_FILE = "score.sqlite";
export const SCORE_SCHEMA_VERSION = 1;

interface RunRow {
  game_id: string;
  username: string;
  score: number;
  ticks: number;
  seed: string;
  finished_at: number;
}

const COLUMNS = "game_id, username, score, ticks, seed, finished_at";

function fromRow(row: RunRow): StoredRun {
  return {
    gameId: row.game_id,
    username: row.username,
    score: row.score,
    ticks: row.ticks,
    seed: BigInt(row.seed),
    finishedAt: row.finished_at,
  };
}

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

function migrate(db: Database.Database): void {
  db.transaction(() => {
    const version = db.pragma("user_version", { simple: true }) as number;
    if (version > MIGRATIONS.length) {
      throw new Error(`${SCORE_DB_FILE} has schema version ${version}, newer than this code (${MIGRATIONS.length})`);
    }
    for (let v = version; v < MIGRATIONS.length; v++) db.exec(MIGRATIONS[v]!);
    if (version !== MIGRATIONS.length) db.pragma(`user_version = ${MIGRATIONS.length}`);
  }).immediate();
}

/**
 * Runs in `<dataDir>/score.sqlite`. WAL with synchronous=FULL: once `insertRun` returns, the run
 * is on disk and survives a process crash or power loss.
 */
export function openScoreStore(dataDir: string): ScoreStore {
  mkdirSync(dataDir, { recursive: true });
  const db = new Database(join(dataDir, SCORE_DB_FILE));
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = FULL");
    db.pragma("busy_timeout = 5000");
    migrate(db);
  } catch (err) {
    db.close();
    throw err;
  }

  const insert = db.prepare<[string, string, number, number, string, number]>(
    `INSERT INTO runs (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (game_id) DO NOTHING`,
  );
  const byId = db.prepare<[string], RunRow>(`SELECT ${COLUMNS} FROM runs WHERE game_id = ?`);
  // rowid breaks ties in insertion order.
  const own = db.prepare<[string, number], RunRow>(
    `SELECT ${COLUMNS} FROM runs WHERE username = ? ORDER BY finished_at DESC, rowid DESC LIMIT ?`,
  );
  const top = db.prepare<[number], RunRow>(
    `SELECT ${COLUMNS} FROM runs ORDER BY score DESC, finished_at ASC, rowid ASC LIMIT ?`,
  );

  return {
    insertRun(run) {
      const info = insert.run(run.gameId, run.username, run.score, run.ticks, run.seed.toString(), run.finishedAt);
      return info.changes === 1;
    },
    getRun(gameId) {
      const row = byId.get(gameId);
      return row && fromRow(row);
    },
    ownRuns(username, limit) {
      return own.all(username, limit).map(fromRow);
    },
    leaderboard(limit) {
      return top.all(limit).map(fromRow);
    },
    close() {
      if (db.open) db.close();
    },
  };
}
