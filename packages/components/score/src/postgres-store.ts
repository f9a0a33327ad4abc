import pg from "pg";
import { describeDatabase, postgresPoolConfig, type PostgresPoolOptions } from "./postgres-connection.js";
import { migrate } from "./postgres-schema.js";
import { RUN_COLUMNS, runFromRow, StoreUnavailableError, type RunRow, type ScoreStore } from "./store.js";

export interface PostgresScoreStoreOptions extends PostgresPoolOptions {
  /**
   * Told when an idle pooled connection fails (the database restarted, the network dropped it).
   * The pool discards that connection and opens another on the next call; nothing else is needed.
   */
  readonly onConnectionError?: (err: Error) => void;
}

// Named: each pooled connection prepares them once.
const INSERT = {
  name: "score-insert-run",
  text: `INSERT INTO runs (${RUN_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (game_id) DO NOTHING`,
};
const BY_ID = { name: "score-run-by-id", text: `SELECT ${RUN_COLUMNS} FROM runs WHERE game_id = $1` };
const OWN = {
  name: "score-own-runs",
  text: `SELECT ${RUN_COLUMNS} FROM runs WHERE username = $1 ORDER BY finished_at DESC, seq DESC LIMIT $2`,
};
const TOP = {
  name: "score-leaderboard",
  text: `SELECT ${RUN_COLUMNS} FROM runs ORDER BY score DESC, finished_at ASC, seq ASC LIMIT $1`,
};

/**
 * SQLSTATEs of a server that is going away or cannot take the connection: class 08 (connection
 * exception), admin/crash shutdown, starting up, too many connections.
 */
function isUnavailableState(code: string | undefined): boolean {
  return code !== undefined && (code.startsWith("08") || ["57P01", "57P02", "57P03", "53300"].includes(code));
}

/**
 * Whether an error from the driver means the database could not be reached. An answer from the
 * server (`DatabaseError`) says so only through its SQLSTATE; an error without an answer (refused,
 * reset, timed out, TLS) does, unless it is a programming error.
 */
function isUnavailable(err: unknown): boolean {
  if (err instanceof pg.DatabaseError) return isUnavailableState(err.code);
  return err instanceof Error && !(err instanceof TypeError) && !(err instanceof RangeError);
}

function codeOf(err: unknown): string | undefined {
  const code = err instanceof Error ? (err as { code?: unknown }).code : undefined;
  return typeof code === "string" ? code : undefined;
}

/** For the operator: the code and the driver's message (which may name hosts). */
function detailOf(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const code = codeOf(err);
  return code === undefined ? message : `${code}: ${message}`;
}

/** For a caller (it may reach a player's screen): the code alone when there is one. */
function briefOf(err: unknown): string {
  return codeOf(err) ?? (err instanceof Error ? err.message : String(err));
}

/**
 * Runs in a Postgres database: table `runs` and the migration table, created on open under an
 * advisory lock. A committed insert is durable as Postgres makes it (WAL, `synchronous_commit`).
 * Calls while the database is unreachable reject with `StoreUnavailableError`; the pool reconnects
 * by itself once it is back.
 */
export async function openPostgresScoreStore(
  databaseUrl: string,
  options: PostgresScoreStoreOptions = {},
): Promise<ScoreStore> {
  const where = describeDatabase(databaseUrl);
  const pool = new pg.Pool(postgresPoolConfig(databaseUrl, options));
  // An idle connection that fails emits 'error' on the pool; unhandled, it would crash the process.
  pool.on("error", (err) => options.onConnectionError?.(err));
  try {
    await migrate(pool, where);
  } catch (err) {
    await pool.end();
    if (isUnavailable(err)) {
      throw new StoreUnavailableError(`cannot reach the score database ${where}: ${detailOf(err)}`, { cause: err });
    }
    throw err;
  }

  async function query(q: { name: string; text: string }, values: unknown[]): Promise<pg.QueryResult<RunRow>> {
    try {
      return await pool.query<RunRow>({ ...q, values });
    } catch (err) {
      if (isUnavailable(err)) {
        throw new StoreUnavailableError(`the score database is unavailable (${briefOf(err)})`, { cause: err });
      }
      throw err;
    }
  }

  let closing: Promise<void> | undefined;
  return {
    async insertRun(run) {
      const values = [run.gameId, run.username, run.score, run.ticks, run.seed.toString(), run.finishedAt];
      return (await query(INSERT, values)).rowCount === 1;
    },
    async getRun(gameId) {
      const [row] = (await query(BY_ID, [gameId])).rows;
      return row && runFromRow(row);
    },
    async ownRuns(username, limit) {
      return (await query(OWN, [username, limit])).rows.map(runFromRow);
    },
    async leaderboard(limit) {
      return (await query(TOP, [limit])).rows.map(runFromRow);
    },
    close() {
      closing ??= pool.end();
      return closing;
    },
  };
}
