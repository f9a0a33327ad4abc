import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";

export interface DurableSqliteOptions {
  /** The database file; its directory is created when missing. */
  readonly file: string;
  /**
   * Plain SQL, no transaction statements. Entry i moves the schema from version i to i + 1, so the
   * code's version is `migrations.length`. Append only: never edit or reorder an entry once shipped.
   */
  readonly migrations: readonly string[];
  /** How errors name the file; `file` when absent. */
  readonly name?: string;
}

const BUSY_TIMEOUT_MS = 5000;

function schemaVersion(db: Database.Database, name: string, latest: number): number {
  const version = db.pragma("user_version", { simple: true }) as number;
  if (version > latest) {
    throw new Error(`${name} has schema version ${version}, newer than this code (${latest})`);
  }
  return version;
}

/**
 * Opens `file` for durable writes: WAL with synchronous=FULL (a committed write survives a process
 * crash or power loss) and a 5 s busy timeout, then brings the schema, versioned in
 * `PRAGMA user_version`, up to `migrations.length`.
 *
 * The missing migrations run in one IMMEDIATE transaction, which re-reads the version, so several
 * processes opening one file at once migrate it once; an up-to-date file takes no write lock. A file
 * from newer code is refused before anything is written to it. On any failure the transaction rolls
 * back, the connection is closed and the error is thrown.
 */
export function openDurableSqlite(options: DurableSqliteOptions): Database.Database {
  const { file, migrations } = options;
  const name = options.name ?? file;
  const latest = migrations.length;
  mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file);
  try {
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // Checked before switching to WAL, which rewrites the file header.
    const version = schemaVersion(db, name, latest);
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = FULL");
    if (version < latest) {
      db.transaction(() => {
        const current = schemaVersion(db, name, latest);
        for (let v = current; v < latest; v++) db.exec(migrations[v]!);
        if (current !== latest) db.pragma(`user_version = ${latest}`);
      }).immediate();
    }
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}
