// Section 3's shared vocabulary: the goals' constants, the counts each step tries, the row every
// measurement records and the client links the stream steps compare.
import { availableParallelism } from "node:os";
import type { EngineClockKind } from "@flaplab/engine";
import { LATE_TICK_US } from "@flaplab/engine-shards";
import type { GcPauses } from "./gc.js";
import type { Percentiles } from "./hist.js";
import type { ClientStats, StreamLink } from "./stream-clients.js";

/** The p99 tick lateness a step must keep, µs: the engine shards' late-tick line. */
export const LATENESS_LIMIT_US = LATE_TICK_US;
/** Games in memory the CPU and lateness goals are measured at (full runs). */
export const MEMORY_GOAL = 6000;
/** Goal: engine CPU per tick frame in memory at `MEMORY_GOAL` games, µs. */
export const CPU_GOAL_US = 4;
/** Goal: p99 lateness at `MEMORY_GOAL` games ≤ the p99 of as many idle tasks on the same clock + this, µs. */
export const LATENESS_MARGIN_US = 500;
/** Goal: the WebSocket link holds at least this share of the connections the loopback floor held. */
export const LINK_CONNECTIONS_SHARE = 0.8;
/** Goal: the WebSocket link's server CPU per frame is at most this multiple of the loopback floor's. */
export const LINK_CPU_RATIO = 1.25;
/** Goal: no GC pause longer than this (ms) at `GC_GOAL_GAMES` games in memory. */
export const GC_GOAL_MS = 1;
export const GC_GOAL_GAMES = 2000;
/** Rounds of the GC goal's runs (each: the engine's Node flags, as the server runs it, then V8's defaults). */
export const GC_ROUNDS = 2;
/** Games each link's server plays, unmeasured, before its steps (`streamWarmupMs`). */
export const STREAM_WARMUP_GAMES = 100;

export interface EngineRow {
  /**
   * Every row runs on the clock the server would (FLAPLAB_ENGINE_CLOCK, default setTimeout's) but
   * "floor" (setTimeout's), "floor-precise" and "memory-precise" (the precise tick clock).
   * "gc-engine" / "gc-v8-default": the GC goal's runs in fresh processes, with the engine's Node
   * flags (as the server runs it) or V8's default young generation.
   */
  readonly transport: "floor" | "floor-precise" | "memory" | "memory-precise" | "gc-engine" | "gc-v8-default" | "sharded" | "stream";
  /** The tick clock of a timer-floor or in-memory row. */
  readonly clock?: EngineClockKind;
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
  /**
   * False for a row measured outside the stepping (the link table's one game, the goal's games
   * after the stepping stopped): it does not count for the maximum.
   */
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
/** The WebSocket link the link goals judge against the loopback floor: one process, the floor's Go clients. */
export const GOAL_LINK = "websocket, Go clients";
export const LINK_VARIANTS: readonly LinkVariant[] = [
  { name: "loopback floor (plain TCP, no engine)", link: "tcp", shards: 0, clients: "go", floor: true },
  { name: "webtransport", link: "webtransport", shards: 0 },
  { name: "websocket", link: "websocket", shards: 0 },
  { name: `websocket, ${SHARDS} shards`, link: "websocket", shards: SHARDS },
  { name: "websocket, precise clock", link: "websocket", shards: 0, clock: "precise" },
  { name: GOAL_LINK, link: "websocket", shards: 0, clients: "go" },
];

export interface EnginePlan {
  readonly memory: readonly number[];
  /** Tried, largest first, only when the first step of `memory` fails. */
  readonly memoryBelow: readonly number[];
  /** In memory, one shard (worker thread) per core. */
  readonly sharded: readonly number[];
  readonly shardedBelow: readonly number[];
  readonly stream: readonly number[];
  readonly streamBelow: readonly number[];
  /**
   * Games in memory the CPU and lateness goals are read at, on each clock: measured after the
   * stepping when the stepping stopped below it; the timer floor is measured at as many idle tasks.
   */
  readonly goalGames: number;
  readonly rampMs: number;
  readonly settleMs: number;
  readonly measureMs: number;
  readonly streamMeasureMs: number;
  /** Each link's server plays `STREAM_WARMUP_GAMES` games this long before its measured steps. */
  readonly streamWarmupMs: number;
  readonly coreFrames: number;
}

const FULL: EnginePlan = {
  memory: [1000, 1500, 2000, 3000, 4000, 6000, 8000, 10_000, 12_000],
  memoryBelow: [500, 250],
  sharded: [2000, 3000, 4000, 6000, 8000, 10_000, 12_000],
  shardedBelow: [1000, 500],
  stream: [100, 200, 400, 900, 1500],
  streamBelow: [50, 25],
  goalGames: MEMORY_GOAL,
  rampMs: 1000,
  settleMs: 500,
  measureMs: 6000,
  streamMeasureMs: 5000,
  streamWarmupMs: 6000,
  coreFrames: 300_000,
};
const QUICK: EnginePlan = {
  memory: [200],
  memoryBelow: [],
  sharded: [200],
  shardedBelow: [],
  stream: [10],
  streamBelow: [],
  goalGames: 200,
  rampMs: 200,
  settleMs: 200,
  measureMs: 500,
  streamMeasureMs: 500,
  streamWarmupMs: 0,
  coreFrames: 20_000,
};

export const planOf = (quick: boolean): EnginePlan => (quick ? QUICK : FULL);

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

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Where each sub-section's progress lines go. */
export type Log = (line: string) => void;
