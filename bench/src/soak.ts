// pnpm bench --soak: thousands of games for minutes, games ending and starting all the time, over
// the plain WebSocket link with clients in another process. What must stay flat is sampled once
// an interval: the engine's RSS and file descriptors (its process and its shards); no game may be lost.
import { ENGINE_NODE_FLAGS } from "@flaplab/component";
import { mkdtemp, rm } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { type Child, startChild } from "./child.js";
import type { SoakClientsSample } from "./soak-clients.js";
import type { SoakServerInfo, SoakServerSample } from "./soak-server.js";
import { count, sig } from "./table.js";
import type { Table } from "./table.js";

export interface SoakOptions {
  readonly games: number;
  /**
   * Engine shard processes behind the one WebSocket port (as `FLAPLAB_ENGINE_SHARDS` runs them);
   * 0: the games play in the port's own process.
   */
  readonly shards: number;
  readonly minutes: number;
  /** Length of one sample interval (60 000 for a real soak; shorter in tests). */
  readonly intervalMs: number;
  /** Intervals left out of the flatness checks while the games ramp up and the heap settles. */
  readonly warmupIntervals: number;
  /** A game flaps until a tick drawn from this range, then lets its bird fall (default 200–1200). */
  readonly gameTicks?: readonly [number, number];
  readonly workDir: string;
  readonly log: (line: string) => void;
}

export interface SoakInterval {
  readonly index: number;
  readonly server: SoakServerSample;
  readonly clients: SoakClientsSample;
}

export interface SoakResult {
  readonly options: Omit<SoakOptions, "log" | "workDir">;
  readonly intervals: readonly SoakInterval[];
  readonly checks: readonly { readonly check: string; readonly measured: string; readonly met: boolean }[];
  readonly table: Table;
  readonly seconds: number;
}

/** RSS and file descriptors must stay within this share of their median after the warm-up. */
export const FLAT_TOLERANCE = 0.1;
export const DEFAULT_SOAK = { games: 2000, shards: availableParallelism(), minutes: 10, intervalMs: 60_000, warmupIntervals: 2, gameTicks: [200, 1200] as const };

const MiB = 2 ** 20;

/** Every value within ±tolerance of the values' median: [met, the widest deviation]. */
export function flat(values: readonly number[], tolerance = FLAT_TOLERANCE): { met: boolean; deviation: number; median: number } {
  if (values.length === 0) return { met: false, deviation: Number.NaN, median: Number.NaN };
  const sorted = [...values].sort((a, b) => a - b);
  const median = sorted[(sorted.length - 1) >> 1]!;
  const deviation = Math.max(...values.map((v) => Math.abs(v - median) / median));
  return { met: deviation <= tolerance, deviation, median };
}

export async function runSoak(opts: SoakOptions): Promise<SoakResult> {
  const started = performance.now();
  const intervals = Math.max(1, Math.round((opts.minutes * 60_000) / opts.intervalMs));
  const dir = await mkdtemp(join(opts.workDir, "soak-"));
  let server: Child | undefined;
  let clients: Child | undefined;
  const samples: SoakInterval[] = [];
  try {
    server = await startChild("soak-server.ts", ENGINE_NODE_FLAGS);
    clients = await startChild("soak-clients.ts");
    const info = await server.request<SoakServerInfo>({ type: "start", keysDir: dir, shards: opts.shards }, 60_000);
    const where = opts.shards > 0 ? `on ${opts.shards} engine shard${opts.shards === 1 ? "" : "s"}` : "in one engine process";
    opts.log(`soak: ${count(opts.games)} games for ${opts.minutes} min over the WebSocket link, ${where}, a sample every ${opts.intervalMs / 1000} s`);
    const rampMs = Math.min(10_000, opts.intervalMs / 2);
    await clients.request({ type: "start", wsUrl: info.wsUrl, gamesUrl: info.gamesUrl, games: opts.games, rampMs, seed: 1, gameTicks: opts.gameTicks ?? DEFAULT_SOAK.gameTicks }, rampMs + 120_000);
    // The first interval starts when every game has started.
    await server.request({ type: "sample" });
    await clients.request({ type: "sample" });
    for (let i = 1; i <= intervals; i++) {
      await new Promise((r) => setTimeout(r, opts.intervalMs));
      const s = await server.request<SoakServerSample>({ type: "sample" }, 30_000);
      const c = await clients.request<SoakClientsSample>({ type: "sample" }, 30_000);
      samples.push({ index: i, server: s, clients: c });
      opts.log(
        `soak: ${i}/${intervals}  RSS ${sig(s.rssBytes / MiB)} MiB  heap ${sig(s.heapUsedBytes / MiB)} MiB  fds ${s.fds}  open ${c.open}  ` +
          `started ${c.started}  finished ${c.finished}  lost ${c.lost}  not started ${c.startFailed}  late ticks ${count(s.lateTicks)} of ${count(s.ticks)}  p99 ${sig((s.latenessP99Us ?? 0) / 1000)} ms` +
          (s.shardSessions.length > 0 ? `  sessions per shard ${s.shardSessions.join("/")}` : ""),
      );
    }
    await clients.request({ type: "stop" }, 30_000);
  } finally {
    await clients?.stop();
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  }
  const after = samples.filter((s) => s.index > opts.warmupIntervals);
  const judged = after.length > 0 ? after : samples;
  const rss = flat(judged.map((s) => s.server.rssBytes));
  const fds = flat(judged.map((s) => s.server.fds));
  const lost = samples.reduce((a, s) => a + s.clients.lost, 0);
  const finished = samples.reduce((a, s) => a + s.clients.finished, 0);
  const reasons: Record<string, number> = {};
  for (const s of samples) for (const [k, v] of Object.entries(s.clients.lostReasons)) reasons[k] = (reasons[k] ?? 0) + v;
  const lostGames = samples.flatMap((s) => s.clients.lostGames).slice(0, 10);
  const notStarted = samples.reduce((a, s) => a + s.clients.startFailed, 0);
  const startErrors: Record<string, number> = {};
  for (const s of samples) for (const [k, v] of Object.entries(s.clients.startFailures)) startErrors[k] = (startErrors[k] ?? 0) + v;
  const startText = notStarted > 0 ? `; ${count(notStarted)} new games could not be made (${Object.entries(startErrors).map(([k, v]) => `${v}× ${k}`).join(", ")})` : "";
  const pct = (x: number) => `${sig(x * 100, 2)} %`;
  const checks = [
    { check: `RSS flat within ±${FLAT_TOLERANCE * 100} % after the warm-up`, measured: `median ${sig(rss.median / MiB)} MiB, widest ${pct(rss.deviation)}`, met: rss.met },
    { check: "no game lost", measured: `${count(lost)} lost of ${count(finished + lost)} ended${lost > 0 ? ` (${Object.entries(reasons).map(([k, v]) => `${v}× ${k}`).join(", ")}; first: ${lostGames.join(", ")})` : ""}${startText}`, met: lost === 0 },
    { check: `file descriptors flat within ±${FLAT_TOLERANCE * 100} % after the warm-up`, measured: `median ${count(fds.median)}, widest ${pct(fds.deviation)}`, met: fds.met },
  ];
  const unit = opts.intervalMs === 60_000 ? "Minute" : `Interval (${opts.intervalMs / 1000} s)`;
  const table: Table = {
    headers: [unit, "Open games", "Started", "Finished", "Lost", "Not started", "Ticks", "Late ticks (> 2 ms)", "p99 lateness ms", "GC max ms", "CPU %", "RSS MiB", "Heap MiB", "FDs"],
    align: ["r", "r", "r", "r", "r", "r", "r", "r", "r", "r", "r", "r", "r", "r"],
    rows: samples.map(({ index, server: s, clients: c }) => [
      `${index}${index <= opts.warmupIntervals ? " (warm-up)" : ""}`,
      count(c.open),
      count(c.started),
      count(c.finished),
      count(c.lost),
      count(c.startFailed),
      count(s.ticks),
      count(s.lateTicks),
      sig((s.latenessP99Us ?? 0) / 1000),
      sig(s.gcMaxMs),
      sig((s.cpuUs / 1000 / opts.intervalMs) * 100),
      sig(s.rssBytes / MiB),
      sig(s.heapUsedBytes / MiB),
      count(s.fds),
    ]),
  };
  const { log: _log, workDir: _workDir, ...options } = opts;
  return { options, intervals: samples, checks, table, seconds: (performance.now() - started) / 1000 };
}
