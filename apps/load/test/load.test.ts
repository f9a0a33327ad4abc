// The load generator against a real monolith on loopback: every game counted, the figures and
// files it promises, arrivals, the per-address limits it avoids, and a worker that dies.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { runLoad } from "../src/coordinator.js";
import { parseLoadArgs } from "../src/options.js";
import { METRICS } from "../src/protocol.js";
import { CSV_PERCENTILES, GAME_COLUMNS, mergeRun, SECOND_COLUMNS } from "../src/summary.js";
import { type Monolith, runCli, startMonolith } from "./monolith.js";

let monolith: Monolith;
let out: string;

beforeAll(async () => {
  // Two registrations per address: bots spread over loopback addresses never reach it; bots
  // that all come from 127.0.0.1 do at the third.
  monolith = await startMonolith({ FLAPLAB_AUTH_REGISTRATIONS_PER_ADDRESS: "2" });
  out = await mkdtemp(join(tmpdir(), "flaplab-load-"));
}, 60_000);

afterAll(async () => {
  await monolith?.stop();
  if (out) await rm(out, { recursive: true, force: true });
});

const csv = async (file: string) => (await readFile(join(out, file), "utf8")).trim().split("\n").map((l) => l.split(","));

describe("pnpm load against a monolith", () => {
  it("--players 6 --duration 4s over WebSocket: every game counted and completed at the simulator's score, the histograms and CSVs filled", async () => {
    const r = await runCli(["--url", monolith.baseUrl, "--players", "6", "--duration", "4s", "--ramp", "1s", "--game-length", "1s", "--workers", "2", "--out", out]);
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(await readFile(join(out, "summary.json"), "utf8"));
    expect(summary.games.lost).toBe(0);
    expect(summary.games.started).toBeGreaterThanOrEqual(6);
    expect(summary.games.completed + summary.games.failed + summary.games.unfinished).toBe(summary.games.started);
    expect(summary.games.completed).toBe(summary.games.started);
    expect(summary.failures).toEqual({});
    // Six bots, six source addresses (two registrations per address would refuse a seventh account on one).
    expect(summary.sourceAddresses).toBe(6);
    for (const m of METRICS) expect(summary.latency[m].samples, m).toBeGreaterThan(0);
    expect(summary.latency["frame-interarrival"].p50).toBeGreaterThan(20);
    expect(summary.latency["frame-interarrival"].p50).toBeLessThan(50);

    const games = await csv("games.csv");
    expect(games[0]).toEqual([...GAME_COLUMNS]);
    expect(games).toHaveLength(summary.games.started + 1);
    const col = (name: (typeof GAME_COLUMNS)[number]) => GAME_COLUMNS.indexOf(name);
    for (const g of games.slice(1)) {
      expect(g[col("outcome")]).toBe("completed");
      expect(g[col("score")]).toBe(g[col("simulator_score")]);
      expect(Number(g[col("presses")])).toBeGreaterThan(0);
    }
    // Each bot plays one game after another: bot 0's first is meant for 0, the sixth bot's for 5/6 s.
    expect(new Set(games.slice(1).map((g) => g[col("bot")]))).toEqual(new Set(["0", "1", "2", "3", "4", "5"]));
    for (const m of METRICS) {
      const rows = await csv(`${m}.csv`);
      expect(rows[0]).toEqual(["percentile", "value_ms", "samples"]);
      expect(rows.slice(1).map((row) => Number(row[0]))).toEqual([...CSV_PERCENTILES]);
      expect(Number(rows[1]![2])).toBe(summary.latency[m].samples);
      const values = rows.slice(1).map((row) => Number(row[1]));
      expect(values.every((v, i) => i === 0 || v >= values[i - 1]!)).toBe(true);
    }
    const seconds = await csv("seconds.csv");
    expect(seconds[0]).toEqual([...SECOND_COLUMNS]);
    expect(seconds.length).toBeGreaterThanOrEqual(5);
    // One progress line a second, and the summary with its verdict.
    expect(r.stderr).toMatch(/^warm-up \d+s: accounts registered \d+\/6/m);
    expect(r.stderr).toMatch(/^t=3s games started\/finished\/failed \d+\/\d+\/\d+, in flight \d+, inputs\/s \d+, bot lateness p99 .*, worker CPU \d+% \d+%$/m);
    expect(r.stdout).toMatch(/^games: started \d+, completed \d+, failed 0, unfinished at drain 0, lost 0/m);
    expect(r.stdout).toMatch(/^verdict: the load generator (held|could not hold) this level/m);
  }, 90_000);

  it("--arrival-rate 3 (steady) for 2 s: six fresh bot games, each counted", async () => {
    const r = await runCli(["--url", monolith.baseUrl, "--arrival-rate", "3", "--arrivals", "steady", "--duration", "2s", "--game-length", "1s", "--workers", "2", "--out", out]);
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(await readFile(join(out, "summary.json"), "utf8"));
    expect(summary.scheduled).toBe(6);
    expect(summary.games).toEqual({ started: 6, completed: 6, failed: 0, unfinished: 0, lost: 0 });
    const games = await csv("games.csv");
    expect(games.slice(1).map((g) => Number(g[GAME_COLUMNS.indexOf("intended_start_ms")]))).toEqual([0, 333.333, 666.667, 1000, 1333.333, 1666.667]);
  }, 90_000);

  it("the server sees the bots' own addresses: from 127.0.0.1 alone the per-address registration limit refuses the third account, and says which setting", async () => {
    const r = await runCli(["--url", monolith.baseUrl, "--players", "3", "--duration", "1s", "--workers", "1", "--no-spread"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/the warm-up failed: .*refused by a limit \(FLAPLAB_AUTH_REGISTRATIONS_PER_ADDRESS\)/);
  }, 90_000);

  it("a worker that dies is reported with the games it had started, and the run ends on time", async () => {
    // A monolith of its own: the runs above used up the first addresses' two registrations.
    const fresh = await startMonolith();
    onTestFinished(() => fresh.stop());
    const options = parseLoadArgs(["--url", fresh.baseUrl, "--players", "4", "--duration", "3s", "--ramp", "500ms", "--game-length", "10s", "--drain", "2s", "--workers", "2"]);
    const children = new Map<number, import("node:child_process").ChildProcess>();
    let killed = false;
    const began = performance.now();
    const run = await runLoad(options, {
      progress: (line) => {
        if (!killed && line.startsWith("t=2s")) {
          killed = true;
          children.get(1)?.kill("SIGKILL");
        }
      },
      onWorker: (w, child) => children.set(w, child),
    });
    expect(killed).toBe(true);
    expect(run.lost).toEqual([{ worker: 1, why: "killed by SIGKILL", started: 2 }]);
    const merged = mergeRun(run);
    expect(merged.summary.games.lost).toBe(2);
    expect(merged.summary.failures["worker died (its games are not counted)"]).toBe(2);
    expect(merged.summary.verdict).toMatch(/could not hold this level .*1 worker\(s\) died/);
    // Worker 0's games were still going at the drain's end: counted unfinished, not lost.
    expect(merged.summary.games.unfinished).toBe(2);
    expect(performance.now() - began).toBeLessThan(40_000);
  }, 90_000);
});
