import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runSoak } from "../src/soak.js";

let dir: string | undefined;
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("the soak, in small", () => {
  it("keeps games ending and starting over the WebSocket link, loses none, and samples the engine each interval", async () => {
    dir = await mkdtemp(join(tmpdir(), "flaplab-soak-test-"));
    const lines: string[] = [];
    const result = await runSoak({ games: 20, shards: 0, minutes: 0.1, intervalMs: 2000, warmupIntervals: 1, gameTicks: [20, 50], workDir: dir, log: (l) => lines.push(l) });
    expect(result.intervals).toHaveLength(3);
    const finished = result.intervals.reduce((a, s) => a + s.clients.finished, 0);
    const started = result.intervals.reduce((a, s) => a + s.clients.started, 0);
    // Games of 20–50 ticks (≤ 2 s with the fall) end and are replaced within the 6 s.
    expect(finished).toBeGreaterThan(10);
    expect(started).toBeGreaterThan(10);
    expect(result.checks.find((c) => c.check === "no game lost"), lines.join("\n")).toMatchObject({ met: true });
    for (const s of result.intervals) {
      expect(s.server.rssBytes).toBeGreaterThan(0);
      expect(s.server.fds).toBeGreaterThan(0);
      expect(s.server.ticks).toBeGreaterThan(0);
      expect(s.clients.open).toBeGreaterThan(0);
      expect(s.clients.lostGames).toEqual([]);
    }
    expect(result.table.rows).toHaveLength(3);
    expect(lines.at(-1)).toMatch(/^soak: 3\/3 {2}RSS/);
  }, 60_000);

  it("plays the games on engine shards behind the one port, loses none, and sums the shards into each sample", async () => {
    dir ??= await mkdtemp(join(tmpdir(), "flaplab-soak-test-"));
    const lines: string[] = [];
    const result = await runSoak({ games: 20, shards: 2, minutes: 0.1, intervalMs: 2000, warmupIntervals: 1, gameTicks: [20, 50], workDir: dir, log: (l) => lines.push(l) });
    expect(result.checks.find((c) => c.check === "no game lost"), lines.join("\n")).toMatchObject({ met: true });
    expect(result.intervals.reduce((a, s) => a + s.clients.finished, 0)).toBeGreaterThan(10);
    for (const s of result.intervals) {
      expect(s.server.shardSessions).toHaveLength(2);
      // The games are on the shards: their sessions are the open ones.
      expect(s.server.shardSessions.reduce((a, n) => a + n, 0)).toBe(s.server.openSessions);
      expect(s.server.ticks).toBeGreaterThan(0);
      // Two shards and the port's process: more memory than one process's heap.
      expect(s.server.rssBytes).toBeGreaterThan(s.server.heapUsedBytes);
    }
    expect(lines[0]).toMatch(/on 2 engine shards/);
  }, 60_000);
});
