import type { Pool } from "pg";

/** One row per applied migration; the schema version is the highest. */
const SCHEMA_TABLE = "score_schema_migrations";

/**
 * Key of the transaction-level advisory lock held while migrating, so that two processes starting
 * at once migrate one after the other. Any constant works; this one is "score" in ASCII.
 */
const MIGRATION_LOCK_KEY = 0x73636f7265;

// Each entry moves the schema from version i to i + 1. `seq` is the insertion order, which breaks
// ties between runs finished in the same millisecond. The two indexes serve both ORDER BYs of the
// store as index scans with no sort. seed is the int64 as BIGINT; finished_at is epoch ms.
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE runs (
     game_id     text    NOT NULL PRIMARY KEY,
     username    text    NOT NULL,
     score       integer NOT NULL,
     ticks       integer NOT NULL,
     seed        bigint  NOT NULL,
     finished_at bigint  NOT NULL,
     seq         bigint  GENERATED ALWAYS AS IDENTITY
   );
   CREATE INDEX runs_leaderboard ON runs (score DESC, finished_at ASC, seq ASC);
   CREATE INDEX runs_by_user ON runs (username, finished_at DESC, seq DESC);`,
];

/**
 * Brings the database to this code's schema in one transaction, under an advisory lock. A database
 * whose schema is newer than this code is refused and left unchanged.
 */
export async function migrate(pool: Pool, where: string): Promise<void> {
  const client = await pool.connect();
  // A checked-out client has no pool listener: without one, a dropped connection would crash the
  // process. The failure reaches us through the pending query anyway.
  const ignore = (): void => undefined;
  client.on("error", ignore);
  try {
    await client.query("BEGIN");
    await client.query(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${SCHEMA_TABLE} (
         version    integer     NOT NULL PRIMARY KEY,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    const { rows } = await client.query<{ version: number | null }>(`SELECT max(version) AS version FROM ${SCHEMA_TABLE}`);
    const version = rows[0]?.version ?? 0;
    if (version > MIGRATIONS.length) {
      throw new Error(`the score database ${where} has schema version ${version}, newer than this code (${MIGRATIONS.length})`);
    }
    for (let v = version; v < MIGRATIONS.length; v++) {
      await client.query(MIGRATIONS[v]!);
      await client.query(`INSERT INTO ${SCHEMA_TABLE} (version) VALUES ($1)`, [v + 1]);
    }
    await client.query("COMMIT");
    client.removeListener("error", ignore);
    client.release();
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    client.removeListener("error", ignore);
    // Discard the connection rather than return it to the pool in an unknown state.
    client.release(true);
    throw err;
  }
}
