import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { openDurableSqlite } from "../src/index.js";

// Neither statement can run twice: CREATE TABLE and ADD COLUMN fail on a second attempt.
const V1 = "CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT NOT NULL);";
const V2 = "ALTER TABLE items ADD COLUMN weight INTEGER NOT NULL DEFAULT 0; CREATE INDEX items_by_weight ON items (weight);";

let dir: string;
let file: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "flaplab-sqlite-"));
  file = join(dir, "data", "test.sqlite");
});
afterEach(async () => {
  vi.restoreAllMocks();
  await rm(dir, { recursive: true, force: true });
});

function inspect(path: string): { version: number; names: string[]; columns: string[] } {
  const db = new Database(path, { readonly: true });
  try {
    const version = db.pragma("user_version", { simple: true }) as number;
    const names = (db.prepare("SELECT name FROM sqlite_schema ORDER BY name").all() as { name: string }[]).map((r) => r.name);
    const columns = names.includes("items")
      ? (db.prepare("SELECT name FROM pragma_table_info('items')").all() as { name: string }[]).map((r) => r.name)
      : [];
    return { version, names, columns };
  } finally {
    db.close();
  }
}

describe("openDurableSqlite", () => {
  it("creates the directory and migrates a new file to the latest version", () => {
    const db = openDurableSqlite({ file, migrations: [V1, V2] });
    db.prepare("INSERT INTO items (label, weight) VALUES (?, ?)").run("a", 3);
    db.close();
    expect(inspect(file)).toEqual({
      version: 2,
      names: ["items", "items_by_weight"],
      columns: ["id", "label", "weight"],
    });
  });

  it("sets WAL, synchronous=FULL and a 5 s busy timeout", () => {
    const db = openDurableSqlite({ file, migrations: [V1] });
    try {
      expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
      expect(db.pragma("synchronous", { simple: true })).toBe(2); // FULL
      expect(db.pragma("busy_timeout", { simple: true })).toBe(5000);
    } finally {
      db.close();
    }
  });

  it("applies only the missing migrations to an older file and keeps its rows", () => {
    const old = openDurableSqlite({ file, migrations: [V1] });
    old.prepare("INSERT INTO items (label) VALUES (?)").run("kept");
    old.close();
    expect(inspect(file).version).toBe(1);

    // V1 again would fail with "table items already exists".
    const db = openDurableSqlite({ file, migrations: [V1, V2] });
    expect(db.prepare("SELECT label, weight FROM items").all()).toEqual([{ label: "kept", weight: 0 }]);
    db.close();
    expect(inspect(file)).toMatchObject({ version: 2, columns: ["id", "label", "weight"] });
  });

  it("reopens an up-to-date file without a write lock", () => {
    openDurableSqlite({ file, migrations: [V1] }).close();
    const writer = new Database(file);
    writer.exec("BEGIN IMMEDIATE");
    try {
      const started = performance.now();
      const db = openDurableSqlite({ file, migrations: [V1] });
      db.close();
      // Waiting for the writer would take the whole 5 s busy timeout and then fail.
      expect(performance.now() - started).toBeLessThan(1000);
    } finally {
      writer.exec("ROLLBACK");
      writer.close();
    }
  });

  it("refuses a file from newer code, naming it and both versions, and leaves it untouched", () => {
    // Written by other code: the default rollback journal, not WAL.
    file = join(dir, "newer.sqlite");
    const newer = new Database(file);
    newer.exec("CREATE TABLE future (x); INSERT INTO future VALUES (1);");
    newer.pragma("user_version = 3");
    newer.close();
    const before = readFileSync(file);
    expect(inspect(file).version).toBe(3);

    const close = vi.spyOn(Database.prototype, "close");
    expect(() => openDurableSqlite({ file, migrations: [V1, V2] })).toThrow(
      `${file} has schema version 3, newer than this code (2)`,
    );
    expect(close).toHaveBeenCalledTimes(1);
    // Not even switched to WAL: the bytes are the same and no journal was left behind.
    expect(readFileSync(file).equals(before)).toBe(true);
    expect(existsSync(`${file}-wal`)).toBe(false);
    expect(existsSync(`${file}-shm`)).toBe(false);
  });

  it("names the file as told in errors", () => {
    openDurableSqlite({ file, migrations: [V1, V2] }).close();
    expect(() => openDurableSqlite({ file, migrations: [V1], name: "items.sqlite" })).toThrow(
      /^items\.sqlite has schema version 2, newer than this code \(1\)$/,
    );
  });

  it("rolls a failing migration back, with the ones before it in the same open, and closes", () => {
    openDurableSqlite({ file, migrations: [V1] }).close();
    const close = vi.spyOn(Database.prototype, "close");
    const broken = "CREATE TABLE half_done (x); INSERT INTO no_such_table VALUES (1);";
    expect(() => openDurableSqlite({ file, migrations: [V1, V2, broken] })).toThrow(/no such table: no_such_table/);
    expect(close).toHaveBeenCalledTimes(1);
    close.mockRestore();
    // Still version 1: neither V2 nor the first half of the broken migration stayed.
    expect(inspect(file)).toEqual({ version: 1, names: ["items"], columns: ["id", "label"] });

    // The file is not locked or damaged: the fixed list migrates it.
    openDurableSqlite({ file, migrations: [V1, V2, "CREATE TABLE half_done (x);"] }).close();
    expect(inspect(file)).toMatchObject({ version: 3, names: ["half_done", "items", "items_by_weight"] });
  });

  it("rolls a failing first migration of a new file back to version 0", () => {
    expect(() => openDurableSqlite({ file, migrations: [V1, "NOT SQL"] })).toThrow(/syntax error/);
    expect(inspect(file)).toEqual({ version: 0, names: [], columns: [] });
  });
});
