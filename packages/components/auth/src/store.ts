import { join } from "node:path";
import { openDurableSqlite } from "@flaplab/sqlite";

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

interface UserRow {
  username: string;
  password_hash: string;
  created_at: number;
}

// Each entry moves the schema from version i to i + 1.
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE users (
     username      TEXT    NOT NULL PRIMARY KEY COLLATE NOCASE,
     password_hash TEXT    NOT NULL,
     created_at    INTEGER NOT NULL
   );`,
];

/**
 * Accounts in `<dataDir>/auth.sqlite` (WAL, synchronous=FULL: a registration that was
 * acknowledged survives a crash or power loss).
 */
export function openUserStore(dataDir: string): UserStore {
  const db = openDurableSqlite({ file: join(dataDir, USER_DB_FILE), migrations: MIGRATIONS, name: USER_DB_FILE });
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
