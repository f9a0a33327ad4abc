import { mkdirSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";

export interface UserRecord {
  /** The name as registered; lookups ignore ASCII case. */
  readonly username: string;
  readonly passwordHash: string;
  /** Epoch milliseconds. */
  readonly createdAt: number;
}

/** Where accounts live. Usernames are unique ignoring ASCII case. */
export interface UserStore {
  /** Adds a user; false (and nothing changed) when the name is taken. */
  addUser(user: UserRecord): boolean;
  findUser(username: string): UserRecord | undefined;
  close(): void;
}

export const USER_DB_FILE = "auth.sqlite";
const SCHEMA_VERSION = 1;

interface UserRow {
  username: string;
  password_hash: string;
  created_at: number;
}

function migrate(db: Database.Database): void {
  const version = db.pragma("user_version", { simple: true }) as number;
  if (version > SCHEMA_VERSION) {
    throw new Error(`${USER_DB_FILE} has schema version ${version}, newer than this code (${SCHEMA_VERSION})`);
  }
  if (version < 1) {
    db.transaction(() => {
      db.exec(`
        CREATE TABLE users (
          username      TEXT    NOT NULL PRIMARY KEY COLLATE NOCASE,
          password_hash TEXT    NOT NULL,
          created_at    INTEGER NOT NULL
        );
      `);
      db.pragma(`user_version = ${SCHEMA_VERSION}`);
    }).immediate();
  }
}

/**
 * Accounts in `<dataDir>/auth.sqlite` (WAL, synchronous=FULL: a registration that was
 * acknowledged survives a crash or power loss).
 */
export function openUserStore(dataDir: string): UserStore {
  mkdirSync(dataDir, { recursive: true });
  const db = new Database(join(dataDir, USER_DB_FILE));
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = FULL");
    db.pragma("busy_timeout = 5000");
    migrate(db);
  } catch (err) {
    db.close();
    throw err;
  }
  const insert = db.prepare<[string, string, number]>(
    "INSERT INTO users (username, password_hash, created_at) VALUES (?, ?, ?) ON CONFLICT (username) DO NOTHING",
  );
  const select = db.prepare<[string], UserRow>(
    "SELECT username, password_hash, created_at FROM users WHERE username = ?",
  );
  return {
    addUser(user) {
      return insert.run(user.username, user.passwordHash, user.createdAt).changes === 1;
    },
    findUser(username) {
      const row = select.get(username);
      return row && { username: row.username, passwordHash: row.password_hash, createdAt: row.created_at };
    },
    close() {
      if (db.open) db.close();
    },
  };
}

/** A store that forgets everything on exit (tests, throwaway runs). */
export function createMemoryUserStore(): UserStore {
  const users = new Map<string, UserRecord>();
  const key = (name: string) => name.toLowerCase();
  return {
    addUser(user) {
      if (users.has(key(user.username))) return false;
      users.set(key(user.username), { ...user });
      return true;
    },
    findUser(username) {
      return users.get(key(username));
    },
    close() {
      users.clear();
    },
  };
}
