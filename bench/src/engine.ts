// Section 3: how many concurrent games one engine process ticks with p99 lateness ≤ 2 ms,
// (a) with frames going to memory, (b) over the real stream server to headless clients.
import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { ENGINE_NODE_FLAGS } from "@flaplab/component";
import { ENGINE_CLOCK_ENV, type EngineClockKind, engineClockKindFromEnv } from "@flaplab/engine";
import { LATE_TICK_US } from "@flaplab/engine-shards";
import { findFlapSchedule } from "./autopilot.js";
import { type Child, startChild } from "./child.js";
import { goClientsUnavailable, startGoClients } from "./go-stream-clients.js";
import { availableParallelism } from "node:os";
import type { StepResult } from "./engine-harness.js";
import type { ShardedStepResult } from "./engine-shards.js";
import type { GcPauses } from "./gc.js";
import type { Percentiles } from "./hist.js";
import { type GoalResult, metText, type RunOptions, type SectionResult } from "./section.js";
import type { ClientStats, OpenResult, StreamLink } from "./stream-clients.js";
import { loopbackBytes } from "./machine.js";
import { STAT_HEADERS, STAT_KEYS } from "@flaplab/report-kit/latency";
import type { StreamGame, StreamServerInfo, StreamServerStats } from "./stream-server.js";
import { count, ratio, sig, tailCells } from "./table.js";

/** The p99 tick lateness a step must keep, µs: the engine shards' late-tick line. */
export const LATENESS_LIMIT_US = LATE_TICK_US;
export const MEMORY_GOAL = 6000;
export const STREAM_GOAL = 900;
/** Goal: engine CPU per tick frame in memory, µs. */
export const CPU_GOAL_US = 4;
/** Goal: no GC pause longer than this (ms) at `GC_GOAL_GAMES` games in memory. */
export const GC_GOAL_MS = 1;
export const GC_GOAL_GAMES = 2000;
/** Rounds of the GC goal's runs (each: the engine's Node flags, as the server runs it, then V8's defaults). */
const GC_ROUNDS = 2;

export interface EngineRow {
  /** "gc-engine" / "gc-v8-default": the GC goal's runs in fresh processes, with the engine's Node flags (as the server runs it) or V8's default young generation. */
  /**
   * Every row runs on the clock the server would (FLAPLAB_ENGINE_CLOCK, default setTimeout's) but
   * "floor" (setTimeout's), "floor-precise" and "memory-precise" (the precise tick clock).
   */
  readonly transport: "floor" | "floor-precise" | "memory" | "memory-precise" | "gc-engine" | "gc-v8-default" | "sharded" | "stream";
  /** Which round of the GC goal's runs. */
  readonly round?: number;
  readonly games: number;
  readonly lateness: Percentiles;
  readonly ticks: number;
  readonly skipped: number;
  /** Games that ended (died or were closed) during the step: flaps that came too late. */
  readonly lost: number;
  readonly cpuPerFrameUs: number | null;
  readonly pass: boolean;
  readonly note: string;
  readonly client?: ClientStats;
  readonly gc?: GcPauses;
  readonly longestBurstMs?: number;
  /** JS heap bytes allocated per tick frame during the measurement. */
  readonly allocBytesPerFrame?: number;
  /** The client link of a stream row, and how its server ran (`LinkVariant.name`). */
  readonly link?: StreamLink;
  readonly variant?: string;
  /** Loopback bytes (both directions, headers included) ÷ frames received. */
  readonly wireBytesPerFrame?: number | null;
  /** False for a row measured only for the link table (it does not count for the maximum). */
  readonly counted?: boolean;
}

/**
 * The client links section 3b compares, whether the server plays a link's games on shard
 * processes (FLAPLAB_ENGINE_SHARDS), on which tick clock (FLAPLAB_ENGINE_CLOCK; default: the
 * server's), and which clients play them: the bench's Node clients (stream-clients.ts, default) or
 * the Go ones (bench/go-stream-clients: gorilla/websocket, a client nobody here wrote).
 */
export interface LinkVariant {
  readonly name: string;
  readonly link: StreamLink;
  readonly shards: number;
  readonly clock?: EngineClockKind;
  readonly clients?: "node" | "go";
  /**
   * Not the engine: the loopback floor (stream-floor.ts), plain TCP sockets that a TickScheduler
   * writes one 18-byte message a tick, read by the Go clients. What this machine gives any stream
   * server before it does anything; it does not count for the goal.
   */
  readonly floor?: boolean;
}

const SHARDS = Math.max(2, availableParallelism());
export const LINK_VARIANTS: readonly LinkVariant[] = [
  { name: "loopback floor (plain TCP, no engine)", link: "tcp", shards: 0, clients: "go", floor: true },
  { name: "webtransport", link: "webtransport", shards: 0 },
  { name: "websocket", link: "websocket", shards: 0 },
  { name: `websocket, ${SHARDS} shards`, link: "websocket", shards: SHARDS },
  { name: "websocket, precise clock", link: "websocket", shards: 0, clock: "precise" },
  { name: "websocket, Go clients", link: "websocket", shards: 0, clients: "go" },
];

/** Games each link's server plays, unmeasured, before its steps (`streamWarmupMs`). */
const STREAM_WARMUP_GAMES = 100;

const FULL = {
  memory: [1000, 1500, 2000, 3000, 4000, 6000, 8000, 10_000, 12_000],
  /** Tried, largest first, only when the first step of `memory` fails. */
  memoryBelow: [500, 250],
  /** In memory, one shard (worker thread) per core. */
  sharded: [2000, 3000, 4000, 6000, 8000, 10_000, 12_000],
  shardedBelow: [1000, 500],
  stream: [100, 200, 400, 900, 1500],
  streamBelow: [50, 25],
  rampMs: 1000,
  settleMs: 500,
  measureMs: 6000,
  streamMeasureMs: 5000,
  /** Each link's server plays `STREAM_WARMUP_GAMES` games this long before its measured steps. */
  streamWarmupMs: 6000,
  coreFrames: 300_000,
};
const QUICK = {
  memory: [200],
  memoryBelow: [],
  sharded: [200],
  shardedBelow: [],
  stream: [10],
  streamBelow: [],
  rampMs: 200,
  settleMs: 200,
  measureMs: 500,
  streamMeasureMs: 500,
  streamWarmupMs: 0,
  coreFrames: 20_000,
};

/**
 * Runs `up` in order until a step fails; when even the first fails, tries `below` (largest first)
 * until one passes. Returns nothing: `run` records each step.
 */
export async function stepGames(up: readonly number[], below: readonly number[], run: (games: number) => Promise<boolean>): Promise<void> {
  let passed = false;
  for (const games of up) {
    if (!(await run(games))) break;
    passed = true;
  }
  if (passed) return;
  for (const games of below) if (await run(games)) return;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runEngine(opts: RunOptions): Promise<SectionResult> {
  const started = performance.now();
  const plan = opts.quick ? QUICK : FULL;
  // The clock the server would tick on here (FLAPLAB_ENGINE_CLOCK; the children inherit it).
  const serverClock = engineClockKindFromEnv(process.env);
  // A variant on a clock of its own is left out when that clock is the server's (it would repeat a row).
  const linkVariants = LINK_VARIANTS.filter((v) => v.clock !== serverClock);
  const rows: EngineRow[] = [];
  let coreNs = 0;
  let coreBytes = 0;
  let library: { nsPerFrame: number; bytesPerFrame: number } | undefined;
  let tickPath: { bytesPerFrame: number; cpuPerFrameUs: number; frames: number } | undefined;
  let tickPathSnapshots: { bytesPerFrame: number; cpuPerFrameUs: number; frames: number } | undefined;

  // (a) In memory, in a fresh process.
  const engine = await startChild("engine-child.ts", ["--expose-gc", ...ENGINE_NODE_FLAGS]);
  try {
    const core = await engine.request<{ nsPerFrame: number; bytesPerFrame: number; library: { nsPerFrame: number; bytesPerFrame: number }; survivesTicks: number; flaps: number }>({ type: "core", frames: plan.coreFrames });
    coreNs = core.nsPerFrame;
    coreBytes = core.bytesPerFrame;
    library = core.library;
    opts.log(
      `  engine core work ${sig(coreNs / 1000)} µs/frame, ${sig(coreBytes)} B allocated/frame (library encoding: ${sig(library.nsPerFrame / 1000)} µs, ${sig(library.bytesPerFrame)} B); ` +
        `flap schedule survives ${core.survivesTicks} ticks with ${core.flaps} flaps`,
    );
    tickPath = await engine.request<{ bytesPerFrame: number; cpuPerFrameUs: number; frames: number }>({ type: "tickpath" }, 60_000);
    opts.log(`  engine tick path (manual clock, 1,000 games, no inputs): ${sig(tickPath.cpuPerFrameUs)} µs CPU/frame, ${sig(tickPath.bytesPerFrame)} B allocated/frame`);
    tickPathSnapshots = await engine.request<{ bytesPerFrame: number; cpuPerFrameUs: number; frames: number }>({ type: "tickpath", snapshots: true }, 60_000);
    opts.log(`  engine tick path + snapshots written every round (as a shared store is; here in memory): ${sig(tickPathSnapshots.cpuPerFrameUs)} µs CPU/frame, ${sig(tickPathSnapshots.bytesPerFrame)} B allocated/frame`);
    // The timer floor: 100 idle tasks, then as many as the goal's games (what the scheduler and this
    // machine give that many tasks that do nothing; full runs only).
    for (const tasks of opts.quick ? [100] : [100, MEMORY_GOAL]) {
      for (const clock of ["timers", "precise"] as const) {
        const floor = await engine.request<Percentiles>({ type: "floor", measureMs: Math.min(plan.measureMs, 3000), clock, tasks }, 60_000);
        rows.push({ transport: clock === "timers" ? "floor" : "floor-precise", games: tasks, lateness: floor, ticks: floor.samples, skipped: 0, lost: 0, cpuPerFrameUs: null, pass: (floor.p99 ?? Infinity) <= LATENESS_LIMIT_US, note: "" });
        opts.log(`  timer floor, ${count(tasks)} idle tasks, ${clock} clock: lateness p50 ${sig(floor.p50)} p99 ${sig(floor.p99)} µs`);
      }
    }
    // The server's clock (default setTimeout's), then the precise tick clock unless that was it.
    const clocks: EngineClockKind[] = serverClock === "precise" ? ["precise"] : ["timers", "precise"];
    for (const clock of clocks) {
      const transport = clock === serverClock ? "memory" : "memory-precise";
      await stepGames(plan.memory, plan.memoryBelow, async (games) => {
        const r = await engine.request<StepResult>({ type: "step", games, rampMs: plan.rampMs, settleMs: plan.settleMs, measureMs: plan.measureMs, clock }, 120_000);
        const pass = (r.lateness.p99 ?? Infinity) <= LATENESS_LIMIT_US;
        const reasons = Object.entries(r.endReasons).map(([k, v]) => `${v}× "${k}"`).join(", ");
        const callbacks = `${count(Math.round((r.rounds * 1000) / r.wallMs))} timer callbacks/s`;
        const note = [callbacks, reasons ? `ended: ${reasons}` : ""].filter(Boolean).join("; ");
        rows.push({ transport, games, lateness: r.lateness, ticks: r.ticks, skipped: r.skipped, lost: r.ended, cpuPerFrameUs: r.cpuPerFrameUs, pass, note, gc: r.gc, longestBurstMs: r.longestBurstMs, allocBytesPerFrame: r.allocBytesPerFrame });
        opts.log(
          `  engine memory ${games} games, ${clock} clock: lateness p50 ${sig(r.lateness.p50)} p99 ${sig(r.lateness.p99)} µs, ${sig(r.cpuPerFrameUs)} µs CPU/frame, ` +
            `${sig(r.allocBytesPerFrame)} B allocated/frame, GC max ${sig(r.gc.maxMs)} ms, ${r.ended} lost, ${callbacks}`,
        );
        return pass;
      });
    }
    // (a') The same, the games split over one worker-thread shard per core.
    const shards = Math.max(2, availableParallelism());
    await stepGames(plan.sharded, plan.shardedBelow, async (games) => {
      const r = await engine.request<ShardedStepResult>({ type: "sharded", shards, games, rampMs: plan.rampMs, settleMs: plan.settleMs, measureMs: plan.measureMs }, 180_000);
      const pass = (r.lateness.p99 ?? Infinity) <= LATENESS_LIMIT_US;
      const reasons = Object.entries(r.endReasons).map(([k, v]) => `${v}× "${k}"`).join(", ");
      rows.push({ transport: "sharded", games, lateness: r.lateness, ticks: r.ticks, skipped: r.skipped, lost: r.ended, cpuPerFrameUs: r.cpuPerFrameUs, pass, note: [`${shards} shards, worst shard's lateness and GC`, reasons ? `ended: ${reasons}` : ""].filter(Boolean).join("; "), gc: r.gc, allocBytesPerFrame: r.allocBytesPerFrame });
      opts.log(
        `  engine sharded ${games} games (${shards} shards): worst shard p50 ${sig(r.lateness.p50)} p99 ${sig(r.lateness.p99)} µs, ${sig(r.cpuPerFrameUs)} µs CPU/frame, ` +
          `${sig(r.allocBytesPerFrame)} B allocated/frame, GC max ${sig(r.gc.maxMs)} ms, ${r.ended} lost`,
      );
      return pass;
    });
  } finally {
    await engine.stop();
  }

  // (a'') The GC goal: GC_GOAL_GAMES games, each time in a fresh process (no heap left from
  // earlier steps), with the engine's Node flags (its small young generation, as the server runs
  // it) and with V8's default young generation, alternately, GC_ROUNDS times: this machine's noise
  // shows in the rounds.
  if (!opts.quick) {
    for (let round = 1; round <= GC_ROUNDS; round++) {
      for (const transport of ["gc-engine", "gc-v8-default"] as const) {
        const child = await startChild("engine-child.ts", ["--expose-gc", ...(transport === "gc-engine" ? ENGINE_NODE_FLAGS : [])]);
        try {
          const r = await child.request<StepResult>({ type: "step", games: GC_GOAL_GAMES, rampMs: plan.rampMs, settleMs: plan.settleMs, measureMs: plan.measureMs }, 120_000);
          rows.push({ transport, games: GC_GOAL_GAMES, lateness: r.lateness, ticks: r.ticks, skipped: r.skipped, lost: r.ended, cpuPerFrameUs: r.cpuPerFrameUs, pass: (r.lateness.p99 ?? Infinity) <= LATENESS_LIMIT_US, note: `round ${round}`, gc: r.gc, longestBurstMs: r.longestBurstMs, allocBytesPerFrame: r.allocBytesPerFrame, round });
          opts.log(`  engine memory ${GC_GOAL_GAMES} games, fresh process, ${transport}, round ${round}: p99 ${sig(r.lateness.p99)} µs, ${sig(r.cpuPerFrameUs)} µs CPU/frame, GC ${r.gc.count} pauses, total ${sig(r.gc.totalMs)} ms, max ${sig(r.gc.maxMs)} ms`);
        } finally {
          await child.stop();
        }
      }
    }
  }

  // (b) Over the stream server, clients in another process: each link in turn, stepping up, after
  // one game alone (the link table's first row).
  const dir = await mkdtemp(join(opts.workDir, "streams-"));
  /** The flap schedule, for the Go clients (the Node clients plan it themselves). */
  const flapTicks = findFlapSchedule().flapTicks;
  /** Link variants that could not run here: name → why. */
  const notRun = new Map<string, string>();
  let server: Child | undefined;
  let clients: Child | undefined;
  try {
    const goMissing = linkVariants.some((v) => v.clients === "go") ? await goClientsUnavailable() : null;
    for (const { name: variant, link, shards, clock, clients: players, floor } of linkVariants) {
      if (players === "go" && goMissing !== null) {
        notRun.set(variant, goMissing);
        opts.log(`  engine ${variant}: not run (${goMissing})`);
        continue;
      }
      // Fresh processes per link: one link's garbage must not be collected in the other's steps.
      const srv = (server = await startChild(floor ? "stream-floor.ts" : "stream-server.ts", ["--expose-gc", ...ENGINE_NODE_FLAGS], clock ? { [ENGINE_CLOCK_ENV]: clock } : {}));
      const cli = (clients = players === "go" ? await startGoClients(opts.log) : await startChild("stream-clients.ts"));
      const info = await srv.request<StreamServerInfo>({ type: "start", keysDir: dir, shards }, 60_000);
      /** Makes `games` games, opens their streams from the clients and starts them. */
      const play = async (games: number, prefix: string): Promise<OpenResult> => {
        const made = await srv.request<StreamGame[]>({ type: "games", count: games, prefix });
        const url = link === "websocket" ? info.wsUrl : info.url;
        const opened = await cli.request<OpenResult>({ type: "open", link, url, certSha256: info.certSha256, games: made, concurrency: 16, flapTicks }, 180_000);
        await cli.request({ type: "start", rampMs: plan.rampMs }, 60_000);
        return opened;
      };
      /** Closes every game's stream and clears the server's table. */
      const endAll = async (): Promise<void> => {
        await cli.request({ type: "close" }, 60_000);
        await srv.request({ type: "clear" }, 30_000);
      };
      const step = async (games: number, stepping: boolean): Promise<boolean> => {
        const opened = await play(games, `${link}-${games}`);
        await sleep(plan.settleMs);
        await srv.request({ type: "reset" });
        await cli.request({ type: "reset" });
        const wire0 = loopbackBytes();
        await sleep(plan.streamMeasureMs);
        const s = await srv.request<StreamServerStats>({ type: "stats" }, 30_000);
        const c = await cli.request<ClientStats>({ type: "stats" }, 30_000);
        const wire1 = loopbackBytes();
        const lost = Object.values(c.closedByServer).reduce((a, b) => a + b, 0) + opened.failed;
        const pass = (s.lateness.p99 ?? Infinity) <= LATENESS_LIMIT_US && lost === 0;
        const closes = Object.entries(c.closedByServer).map(([k, v]) => `${v}× "${k}"`).join(", ");
        const note = [opened.failed > 0 ? `${opened.failed} failed to open (${opened.firstError})` : "", closes ? `closed: ${closes}` : "", stepping ? "" : "link table only"].filter(Boolean).join("; ");
        const wireBytesPerFrame = wire0 !== null && wire1 !== null && c.frames > 0 ? (wire1 - wire0) / c.frames : null;
        rows.push({ transport: "stream", link, variant, games, lateness: s.lateness, ticks: s.ticks, skipped: s.skipped, lost, cpuPerFrameUs: s.ticks > 0 ? s.cpuUs / s.ticks : null, pass, note, client: c, gc: s.gc, longestBurstMs: s.longestBurstMs, wireBytesPerFrame, counted: stepping });
        opts.log(
          `  engine ${variant} ${games} games (opened in ${(opened.openMs / 1000).toFixed(1)} s): lateness p50 ${sig(s.lateness.p50)} p99 ${sig(s.lateness.p99)} µs, ` +
            `${sig(s.ticks > 0 ? s.cpuUs / s.ticks : null)} µs server CPU/frame, ${sig(wireBytesPerFrame)} loopback B/frame, ` +
            `frame gap p99 ${sig(c.interArrivalStats.p99)} ms, input→ack median ${sig(c.inputToAck.median)} ms${note ? `; ${note}` : ""}`,
        );
        await endAll();
        return pass;
      };
      // Warm-up, not measured: the server's JIT optimizes the stream path under load first, as it
      // has in a server that has run a while (measured at once, 100 games spent ≈ 15 % of the
      // server's CPU compiling and ran ≈ 30 % more CPU per frame than after 8 s).
      if (plan.streamWarmupMs > 0 && !floor) {
        await play(STREAM_WARMUP_GAMES, `${link}-warmup`);
        await sleep(plan.streamWarmupMs);
        await endAll();
      }
      await step(1, false);
      await stepGames(plan.stream, plan.streamBelow, (games) => step(games, true));
      await clients.stop();
      await server.stop();
    }
  } finally {
    await clients?.stop();
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  }

  const counted = rows.filter((r) => r.counted !== false);
  const maxOf = (t: EngineRow["transport"], variant?: string) =>
    Math.max(0, ...counted.filter((r) => r.transport === t && r.pass && (variant === undefined || r.variant === variant)).map((r) => r.games));
  const memMax = maxOf("memory");
  const preciseMax = maxOf("memory-precise");
  /** The precise clock was measured beside the server's (it is not the server's). */
  const preciseBeside = rows.some((r) => r.transport === "memory-precise");
  const shardMax = maxOf("sharded");
  const variants = linkVariants.map((v) => v.name).filter((v) => !notRun.has(v));
  const streamMaxOf: Record<string, number> = Object.fromEntries(variants.map((v) => [v, maxOf("stream", v)]));
  // The goal counts the engine's links; the loopback floor is what the machine gives without it.
  const floorVariant = linkVariants.find((v) => v.floor && !notRun.has(v.name))?.name;
  const engineLinks = variants.filter((v) => v !== floorVariant);
  const engineStreamRows = counted.filter((r) => r.transport === "stream" && r.variant !== floorVariant);
  const streamMax = Math.max(0, ...engineLinks.map((v) => streamMaxOf[v]!));
  const bestLink = engineLinks.find((v) => streamMaxOf[v] === streamMax) ?? engineLinks[0];
  const fewestSteps = Math.min(...plan.stream, ...plan.streamBelow);
  const rowsOf = (t: EngineRow["transport"]) => counted.filter((r) => r.transport === t);
  /** The fewest games of `of`'s steps. */
  const firstOf = (of: readonly EngineRow[]) => Math.min(...of.map((r) => r.games));
  /** One of `of`'s steps passed at the last size of `all`: the maximum may be higher. */
  const lastTried = (of: readonly EngineRow[], all: readonly number[]) => of.some((r) => r.pass && r.games === all[all.length - 1]);
  const memText = memMax === 0 ? `< ${firstOf(rowsOf("memory"))}` : `${count(memMax)}${lastTried(rowsOf("memory"), plan.memory) ? "+" : ""}`;
  const preciseText = preciseMax === 0 ? `< ${firstOf(rowsOf("memory-precise"))}` : `${count(preciseMax)}${lastTried(rowsOf("memory-precise"), plan.memory) ? "+" : ""}`;
  const shardText = shardMax === 0 ? `< ${firstOf(rowsOf("sharded"))}` : `${count(shardMax)}${lastTried(rowsOf("sharded"), plan.sharded) ? "+" : ""}`;
  const streamText = streamMax === 0 ? `< ${firstOf(engineStreamRows)}` : `${count(streamMax)}${lastTried(engineStreamRows, plan.stream) ? "+" : ""} (${bestLink})`;
  const linkText = [
    ...engineLinks.map((v) => `${v} ${streamMaxOf[v] === 0 ? `< ${fewestSteps}` : count(streamMaxOf[v]!)}`),
    ...(floorVariant === undefined ? [] : [`the loopback floor (plain TCP, no engine, Go readers) ${streamMaxOf[floorVariant] === 0 ? `< ${fewestSteps}` : count(streamMaxOf[floorVariant]!)}`]),
  ].join(", ");
  const gamesPerCore = 1e9 / coreNs / (1000 / 33);
  const memRow = rows.find((r) => r.transport === "memory" && r.games === memMax) ?? rows.find((r) => r.transport === "memory");
  // The GC goal: the longest pause over the fresh-process runs with the engine's Node flags.
  const gcRuns = rows.filter((r) => r.transport === "gc-engine" && r.gc);
  const gcMax = gcRuns.length > 0 ? Math.max(...gcRuns.map((r) => r.gc?.maxMs ?? 0)) : undefined;
  const v8Default = rows.filter((r) => r.transport === "gc-v8-default" && r.gc);
  const v8DefaultMax = v8Default.length > 0 ? Math.max(...v8Default.map((r) => r.gc?.maxMs ?? 0)) : undefined;
  // The CPU goal is read at the step that set the capacity: the most games any in-memory kind held.
  const capacityKinds: Partial<Record<EngineRow["transport"], string>> = { memory: "one thread", "memory-precise": "one thread, precise clock", sharded: "one shard per core" };
  const capacityRow =
    counted
      .filter((r) => capacityKinds[r.transport] !== undefined && r.pass && r.cpuPerFrameUs != null)
      .reduce<EngineRow | undefined>((best, r) => (best === undefined || r.games > best.games ? r : best), undefined) ?? memRow;
  const cpuText =
    capacityRow?.cpuPerFrameUs != null
      ? `${sig(capacityRow.cpuPerFrameUs)} µs at ${count(capacityRow.games)} games (${capacityKinds[capacityRow.transport] ?? capacityRow.transport})`
      : "n/a";
  // What the goal's number of idle tasks alone gets from the scheduler and this machine.
  const goalFloors = rows.filter((r) => (r.transport === "floor" || r.transport === "floor-precise") && r.games === MEMORY_GOAL);
  const goalFloorText =
    goalFloors.length === 0
      ? ""
      : `; ${count(MEMORY_GOAL)} idle tasks alone: p99 ${goalFloors.map((r) => `${sig(r.lateness.p99)} µs (${r.transport === "floor" ? "setTimeout" : "precise clock"})`).join(", ")}`;
  const goals: GoalResult[] = [
    {
      section: "3a",
      goal: `≥ ${count(MEMORY_GOAL)} games in memory with p99 lateness ≤ 2 ms`,
      measured: `${memText} (one thread); ${preciseBeside ? `${preciseText} (one thread, precise clock); ` : ""}${shardText} (one shard per core)${goalFloorText}`,
      met: Math.max(memMax, preciseMax, shardMax) >= MEMORY_GOAL,
    },
    {
      section: "3a",
      goal: `≤ ${CPU_GOAL_US} µs engine CPU per frame (in memory, at the most games that kept p99 ≤ 2 ms)`,
      measured: cpuText,
      met: capacityRow?.cpuPerFrameUs != null ? capacityRow.cpuPerFrameUs <= CPU_GOAL_US : null,
    },
    {
      section: "3a",
      goal: `no GC pause > ${GC_GOAL_MS} ms at ${count(GC_GOAL_GAMES)} games in memory`,
      measured:
        gcMax === undefined
          ? "not run"
          : `max ${sig(gcMax)} ms over ${gcRuns.length} runs (${gcRuns.map((r) => r.gc?.count ?? 0).join(", ")} pauses)` +
            (v8DefaultMax === undefined ? "" : `; with V8's default young generation ${sig(v8DefaultMax)} ms (${v8Default.map((r) => r.gc?.count ?? 0).join(", ")} pauses)`),
      met: gcMax === undefined ? null : gcMax <= GC_GOAL_MS,
    },
    { section: "3b", goal: `≥ ${STREAM_GOAL} games over a real stream link with p99 lateness ≤ 2 ms`, measured: `${streamText}; ${linkText}`, met: streamMax >= STREAM_GOAL },
  ];
  const order = { floor: 0, "floor-precise": 0, memory: 1, "memory-precise": 1, "gc-engine": 2, "gc-v8-default": 2, sharded: 3, stream: 4 } as const;
  const linkRank = (r: EngineRow): number => (r.variant ? variants.indexOf(r.variant) : -1);
  const label = (r: EngineRow): string =>
    r.transport === "stream" ? `stream server → clients, ${r.variant}` : { floor: `timer floor (${count(r.games)} idle tasks), setTimeout`, "floor-precise": `timer floor (${count(r.games)} idle tasks), precise clock`, memory: `in memory (${serverClock === "precise" ? "precise clock" : "setTimeout"})`, "memory-precise": "in memory, precise clock", "gc-engine": "in memory, fresh process", "gc-v8-default": "in memory, fresh process, V8's default young generation", sharded: "in memory, sharded" }[r.transport];
  const floorP99 = rows[0]!.lateness.p99;
  // The link table: each link at 1 game, 100 games and the most it held with p99 ≤ 2 ms.
  const linkRows: string[][] = [];
  for (const variant of variants) {
    const at = (games: number) => rows.find((r) => r.transport === "stream" && r.variant === variant && r.games === games);
    const picked = [...new Set([1, 100, streamMaxOf[variant]!])].map(at).filter((r): r is EngineRow => r !== undefined && r.client !== undefined);
    for (const r of picked) {
      const c = r.client!;
      const which = r.games === streamMaxOf[variant] ? `${count(r.games)} (max)` : count(r.games);
      const measured = [["frame inter-arrival", c.interArrivalStats], ["input → ack", c.inputToAck]] as const;
      // The floor's clients send no inputs: no acks to time.
      for (const [what, st] of variant === floorVariant ? measured.slice(0, 1) : measured) {
        linkRows.push([variant, which, what, ...STAT_KEYS.map((k) => (k === "samples" ? count(st.samples) : sig(st[k]))), sig(r.cpuPerFrameUs), sig(c.frames > 0 ? c.cpuUs / c.frames : null), sig(r.wireBytesPerFrame)]);
      }
    }
  }
  const tickPathRow = (label: string, r: typeof tickPath, note: string): string[] => [
    label,
    "1,000",
    count(r?.frames ?? 0),
    "", "", "", "", "", "", "",
    sig(r?.cpuPerFrameUs),
    r ? ratio(r.cpuPerFrameUs * 1000, coreNs) : "",
    sig(r?.bytesPerFrame),
    "", "",
    note,
  ];
  return {
    id: "engine",
    title: "3. Engine capacity (concurrent games, 33 ms ticks; lateness in µs)",
    table: {
      headers: ["Transport", "Games", "Ticks", "p50 µs", "p99 µs", "p99.9 µs", "max µs", "p99 ÷ floor", "Skipped", "Lost", "CPU µs/frame", "CPU ÷ core work", "alloc B/frame", "GC max ms", "p99 ≤ 2 ms", "Notes"],
      align: ["l", "r", "r", "r", "r", "r", "r", "r", "r", "r", "r", "r", "r", "r", "l", "l"],
      rows: [
        ["core work (tight loop)", "1", count(plan.coreFrames), "", "", "", "", "", "", "", sig(coreNs / 1000), "1×", sig(coreBytes), "", "", `${count(gamesPerCore)} games/core at 30 fps; FrameWriter + the copy handed to the transport`],
        [
          "core work, library encoding",
          "1",
          count(plan.coreFrames),
          "", "", "", "", "", "", "",
          sig(library ? library.nsPerFrame / 1000 : null),
          library ? ratio(library.nsPerFrame, coreNs) : "",
          sig(library?.bytesPerFrame),
          "", "",
          "FrameEncoder.encode + create(GameStreamMessage) + sizeDelimitedEncode, as before FrameWriter",
        ],
        tickPathRow(
          "engine tick path (manual clock)",
          tickPath,
          "handler + TickScheduler + GameTable on a manual clock in 1 ms rounds (whole ms, one timer slot: the clock allocates nothing), no inputs, no timers, no point scored (a point calls PlayMusic): what one tick frame costs in CPU (best of 5 rounds) and heap (frames handed over with sendFrom: the session copies what it keeps). On the real clock each run also reads performance.now(), a new 16-byte number",
        ),
        tickPathRow(
          "engine tick path + snapshot keeper (manual clock)",
          tickPathSnapshots,
          "the same with the SnapshotKeeper writing every round's ticked games to the snapshot store, here in memory (what each engine does with a shared store, Redis; a server with one engine and its store in memory writes a game only when it leaves, as the in-memory steps below do)",
        ),
        ...[...rows].sort((a, b) => order[a.transport] - order[b.transport] || (a.round ?? 0) - (b.round ?? 0) || linkRank(a) - linkRank(b) || a.games - b.games).map((r) => [
          label(r),
          count(r.games),
          count(r.ticks),
          ...tailCells(r.lateness),
          r === rows[0] ? "1×" : ratio(r.lateness.p99, floorP99),
          count(r.skipped),
          r.transport === "floor" || r.transport === "floor-precise" ? "" : count(r.lost),
          sig(r.cpuPerFrameUs),
          r.cpuPerFrameUs === null ? "" : ratio(r.cpuPerFrameUs * 1000, coreNs),
          sig(r.allocBytesPerFrame),
          sig(r.gc?.maxMs),
          r.pass ? "yes" : "no",
          [
            r.cpuPerFrameUs ? `CPU-bound ≈ ${count(1e6 / r.cpuPerFrameUs / (1000 / 33))} games/core` : "",
            r.gc ? `GC: ${r.gc.count} pauses, p50 ${sig(r.gc.p50Ms)} ms, max ${sig(r.gc.maxMs)} ms, ${r.gc.over2Ms} > 2 ms` : "",
            r.longestBurstMs !== undefined ? `longest timer callback ${sig(r.longestBurstMs)} ms` : "",
            r.note,
          ].filter(Boolean).join("; "),
        ]),
        ["max games, in memory", memText, "", "", "", "", "", "", "", "", sig(memRow?.cpuPerFrameUs), "", sig(memRow?.allocBytesPerFrame), sig(memRow?.gc?.maxMs), metText(memMax >= MEMORY_GOAL), `goal ≥ ${count(MEMORY_GOAL)}; Go engine: 3,000–4,000 at 3.4–4.3 µs CPU/frame (reference)`],
        ...(preciseBeside ? [["max games, in memory, precise clock", preciseText, "", "", "", "", "", "", "", "", "", "", "", "", metText(preciseMax >= MEMORY_GOAL), "FLAPLAB_ENGINE_CLOCK=precise"]] : []),
        ["max games, in memory, sharded", shardText, "", "", "", "", "", "", "", "", "", "", "", "", metText(shardMax >= MEMORY_GOAL), "one worker thread per core, each its own scheduler, table and handler (worker threads, in the bench only; the server shards with processes, FLAPLAB_ENGINE_SHARDS: the websocket, N shards rows)"],
        ["max games, over a stream link", streamText, "", "", "", "", "", "", "", "", "", "", "", "", metText(streamMax >= STREAM_GOAL), `${linkText}; goal ≥ ${STREAM_GOAL}; Go over QUIC: 100–175 (reference)`],
      ],
    },
    notes: [
      `Each step starts its games evenly over ${plan.rampMs / 1000} s (so their tick phases spread over the period), waits ${plan.settleMs / 1000} s, then measures ${plan.measureMs / 1000} s; in memory, one full collection ends the wait (it promotes the objects of the games the ramp made at once, a burst a server's spread-out game starts never make). Stepping up stops at the first step over 2 ms; when the first step already fails, smaller counts are tried.`,
      `Games play the easy seed with a flap schedule planned on the physics (survives ≥ 60 s); a client flaps when the frame before the flap's tick arrives. "Lost" = games that ended during the step (a flap arrived a tick late, or a session was closed). "Back-to-back" = a game ticked twice in one scheduler timer callback, so an input sent between those ticks could not be applied in time.`,
      `In memory: the engine's game session handler, TickScheduler, GameTable, FrameEncoder and SnapshotKeeper (an in-memory snapshot store, written when a game leaves, as a server with one engine runs it) in one process, with in-memory sessions; CPU µs/frame = process CPU ÷ tick frames. Over streams: the real stream server in one process with the same handler and keeper, serving WebTransport (HTTP/2 mapping, the library's Node clients) and plain WebSocket (on an HTTP/1.1 port as the server's RPC port serves it, \`ws\` clients); the clients in another process; CPU is the server process's. "websocket, N shards": the same with the games handed to N engine shard processes (\`@flaplab/engine-shards\`, as FLAPLAB_ENGINE_SHARDS=N does), lateness the worst shard's, CPU the group's process plus its shards. "websocket, precise clock": the one-process server on the precise tick clock (FLAPLAB_ENGINE_CLOCK=precise): its ticks start ≈ 0.2 ms after their deadlines instead of 0–1 ms, for a helper thread's wake-ups.`,
      `GC goal: ${count(GC_GOAL_GAMES)} games in memory, each run in a fresh process (no heap left from the steps before), ${GC_ROUNDS} rounds; "in memory, fresh process" runs with the engine's Node flags, as a server process hosting the engine starts (${ENGINE_NODE_FLAGS.join(" ")}: at most 2 MiB per semi-space); "V8's default young generation" without them (it grows to 16 MiB per semi-space on Node 20): longer scavenges, fewer of them. The goal is judged on the engine's rounds (their longest pause).`,
      `Allocation: JS heap bytes allocated ÷ tick frames, from V8's GC statistics (heap used at the end − at the start + what each collection freed, \`v8.GCProfiler\`); in memory it includes the bench client's input messages (one per ≈ 30 frames). GC max: the longest collection pause in the measurement (perf_hooks "gc" entries). Goals: ≤ ${CPU_GOAL_US} µs CPU/frame at the most games in memory that kept p99 ≤ 2 ms; no GC pause > ${GC_GOAL_MS} ms at ${count(GC_GOAL_GAMES)} games.`,
      `Core work = a physics tick + delta frame + size-delimited message in a tight loop, measured in this run (best of 3 rounds); the timer floor is 100 tasks that do nothing, on the same scheduler (what its 1 ms timers and this machine alone give), and again as many as the goal's games (${count(MEMORY_GOAL)}): the lateness that many tasks get before they do anything. Go figures are quoted references, not measured here.`,
      `Clocks: every row runs on the clock the server would (FLAPLAB_ENGINE_CLOCK, now ${serverClock}; the default is setTimeout's: whole milliseconds, so a tick starts 0–1 ms after its deadline); the "precise clock" rows run on the precise tick clock (a helper thread wakes the event loop within ≈ 0.1–0.2 ms of a deadline, at most one callback per 0.25 ms). "timer callbacks/s" = the scheduler's rounds; every round wakes a thread. Game starts sit on the scheduler's 1 ms slot grid, so there are at most ≈ 1,000 rounds a second on either clock. p99 ÷ floor is against setTimeout's floor.`,
    ],
    subsections: [
      {
        title: "3b. Client links side by side (ms; clients in another process)",
        table: {
          headers: ["Link", "Games", "What", ...STAT_HEADERS, "server CPU µs/frame", "client CPU µs/frame", "loopback B/frame"],
          align: ["l", "r", "l", ...STAT_HEADERS.map(() => "r" as const), "r", "r", "r"],
          rows: linkRows,
        },
        notes: [
          "Frame inter-arrival: the time between two tick frames of one game at its client (33 ms when every tick is on time). Input → ack: a flap written by the client → its input ack read by it (the engine acks before anything else).",
          "Server CPU µs/frame: the stream server process's CPU ÷ tick frames. Loopback B/frame: bytes the loopback interface carried during the measurement ÷ frames the clients read (/proc/net/dev: both directions, IP and TCP headers, acknowledgements, inputs, and anything else on loopback meanwhile).",
          "1 game and 100 games are measured for every link; \"(max)\" is the most games the link held with p99 tick lateness ≤ 2 ms in the stepping above.",
          "Client CPU µs/frame: the clients' process CPU ÷ tick frames it read. The clients share the machine's cores with the server, so what they spend is taken from it. \"websocket, Go clients\": the same server and link, played by bench/go-stream-clients (Go, gorilla/websocket; the same schedule, requests and measurements as the Node clients), a client nobody here wrote and a lighter one; built with Go into .tools/bin on first use.",
          "Loopback floor (plain TCP, no engine): what this machine gives any stream server before it does anything (bench/src/stream-floor.ts). One process accepts plain TCP connections; each one's first byte puts it on the engine's TickScheduler (the server's clock, its 1 ms slots), whose every tick writes one 18-byte message (a tick frame with its WebSocket header, a buffer of its own, as the WebSocket session writes a frame); the Go clients read them in another process. Its server CPU per frame is the floor under the links' (syscall and loopback TCP, both ends' wake-ups), and the most connections it held with p99 ≤ 2 ms is about the most a one-process link can hold on this machine with its clients beside it (one sample: the p99 of a given load moves from minute to minute here, so a link may pass a step its floor failed). It does not count for the goal.",
          ...[...notRun].map(([variant, why]) => `${variant}: not run (${why}).`),
        ],
      },
    ],
    goals,
    data: { rows, maxGamesSharded: shardMax, coreNsPerFrame: coreNs, coreBytesPerFrame: coreBytes, libraryCore: library, tickPath, tickPathSnapshots, gamesPerCoreAt30fps: gamesPerCore, maxGamesMemory: memMax, maxGamesStream: streamMax, maxGamesByLink: streamMaxOf, plan },
    seconds: (performance.now() - started) / 1000,
  };
}
