import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createScore, openScoreStore, SCORE_DB_FILE, SCORE_SCHEMA_VERSION } from "../src/index.js";
import { record } from "./helpers.js";

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "flaplab-score-store-"));
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

describe("score store", () => {
  it("creates the schema with WAL, synchronous=FULL and a version", () => {
    const store = openScoreStore(dataDir);
    store.close();
    const db = new Database(join(dataDir, SCORE_DB_FILE), { readonly: true });
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(db.pragma("user_version", { simple: true })).toBe(SCORE_SCHEMA_VERSION);
    const names = (db.prepare("SELECT name FROM sqlite_schema ORDER BY name").all() as { name: string }[]).map((r) => r.name);
    expect(names).toEqual(expect.arrayContaining(["runs", "runs_leaderboard", "runs_by_user"]));
    db.close();
  });

  it("keeps runs across a close and reopen", async () => {
    const first = openScoreStore(dataDir);
    const impl = createScore({ store: first, clock: () => 1_000 });
    await record(impl, "alice", { gameId: "keep-1", score: 7, ticks: 402, seed: 6977347407732442987n });
    await record(impl, "bob", { gameId: "keep-2", score: 31, ticks: 900, seed: 8525n });
    first.close();

    const second = openScoreStore(dataDir);
    expect(second.getRun("keep-1")).toEqual({
      gameId: "keep-1",
      username: "alice",
      score: 7,
      ticks: 402,
      seed: 6977347407732442987n,
      finishedAt: 1_000,
    });
    expect(second.leaderboard(10).map((r) => r.gameId)).toEqual(["keep-2", "keep-1"]);
    expect(second.insertRun({ gameId: "keep-1", username: "x", score: 1, ticks: 1, seed: 1n, finishedAt: 2 })).toBe(false);
    second.close();
  });

  it("refuses a database from a newer schema", () => {
    openScoreStore(dataDir).close();
    const db = new Database(join(dataDir, SCORE_DB_FILE));
    db.pragma("user_version = 99");
    db.close();
    expect(() => openScoreStore(dataDir)).toThrow(/schema version 99/);
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

    const store = openScoreStore(dataDir);
    try {
      const missing = acked.filter((id) => store.getRun(id) === undefined);
      expect(missing).toEqual([]);
      const last = acked[acked.length - 1]!;
      expect(store.getRun(last)).toMatchObject({ username: "crash", ticks: Number(last.slice("crash-".length)) });
      // The writer was still going: at most one unacknowledged run beyond the last ack.
      const stored = store.leaderboard(100_000).length;
      expect(stored).toBeGreaterThanOrEqual(acked.length);
      expect(stored).toBeLessThanOrEqual(acked.length + 1);
    } finally {
      store.close();
    }
    const db = new Database(join(dataDir, SCORE_DB_FILE), { readonly: true });
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    db.close();
  }, 30_000);
});
