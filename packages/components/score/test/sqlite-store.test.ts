import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openScoreStore, openSqliteScoreStore, SCORE_DB_FILE, SCORE_SCHEMA_VERSION } from "../src/index.js";

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "flaplab-score-store-"));
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

describe("SQLite score store", () => {
  it("is what openScoreStore gives without a database URL", async () => {
    const store = await openScoreStore({ dataDir });
    await store.insertRun({ gameId: "g1", username: "alice", score: 1, ticks: 1, seed: 1n, finishedAt: 1 });
    await store.close();
    // An empty URL (an unset variable) means SQLite too.
    const again = await openScoreStore({ dataDir, databaseUrl: "" });
    expect(await again.getRun("g1")).toMatchObject({ username: "alice" });
    await again.close();
  });

  it("creates the schema with WAL, synchronous=FULL and a version", async () => {
    await openSqliteScoreStore(dataDir).close();
    const db = new Database(join(dataDir, SCORE_DB_FILE), { readonly: true });
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(db.pragma("user_version", { simple: true })).toBe(SCORE_SCHEMA_VERSION);
    const names = (db.prepare("SELECT name FROM sqlite_schema ORDER BY name").all() as { name: string }[]).map((r) => r.name);
    expect(names).toEqual(expect.arrayContaining(["runs", "runs_leaderboard", "runs_by_user"]));
    db.close();
  });

  it("refuses a database from a newer schema", async () => {
    await openSqliteScoreStore(dataDir).close();
    const db = new Database(join(dataDir, SCORE_DB_FILE));
    db.pragma("user_version = 99");
    db.close();
    expect(() => openSqliteScoreStore(dataDir)).toThrow(/schema version 99, newer than this code \(1\)/);
  });

  it("keeps every acknowledged run when the writer is SIGKILLed mid-way", async () => {
    const fixture = fileURLToPath(new URL("./fixtures/crash-writer.ts", import.meta.url));
    const child = spawn(process.execPath, ["--import", "tsx", fixture, dataDir], { stdio: ["ignore", "pipe", "inherit"] });
    const acked: string[] = [];
    const killAfter = 150;
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
    const lines = createInterface({ input: child.stdout });
    for await (const line of lines) {
      if (!line.startsWith("ack ")) continue;
      acked.push(line.slice(4));
      if (acked.length === killAfter) child.kill("SIGKILL");
    }
    expect(await exited).toBe("SIGKILL");
    // Lines already in the pipe when the kill landed were acknowledged too.
    expect(acked.length).toBeGreaterThanOrEqual(killAfter);

    const store = openSqliteScoreStore(dataDir);
    try {
      const found = await Promise.all(acked.map((id) => store.getRun(id)));
      const missing = acked.filter((_, i) => found[i] === undefined);
      expect(missing).toEqual([]);
      const last = acked[acked.length - 1]!;
      expect(await store.getRun(last)).toMatchObject({ username: "crash", ticks: Number(last.slice("crash-".length)) });
      // The writer was still going: at most one unacknowledged run beyond the last ack.
      const stored = (await store.leaderboard(100_000)).length;
      expect(stored).toBeGreaterThanOrEqual(acked.length);
      expect(stored).toBeLessThanOrEqual(acked.length + 1);
    } finally {
      await store.close();
    }
    const db = new Database(join(dataDir, SCORE_DB_FILE), { readonly: true });
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    db.close();
  }, 30_000);
});
