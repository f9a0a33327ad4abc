// Section 3's tables: every measured row with the baselines above it and the capacities below, and
// the client-link table (3b).
import type { EngineClockKind } from "@flaplab/engine";
import { STAT_HEADERS, STAT_KEYS } from "@flaplab/report-kit/latency";
import type { Baselines, TickPathCost } from "./engine-memory.js";
import type { EnginePlan, EngineRow } from "./engine-plan.js";
import { count, ratio, sig, type Table, tailCells } from "./table.js";

/** The most games each kind of measurement held with p99 ≤ 2 ms, as numbers and as cells. */
export interface Capacities {
  readonly memMax: number;
  readonly preciseMax: number;
  readonly shardMax: number;
  /** The best of the engine's links (the loopback floor left out), and which it was. */
  readonly streamMax: number;
  readonly streamMaxOf: Readonly<Record<string, number>>;
  readonly memText: string;
  readonly preciseText: string;
  readonly shardText: string;
  readonly streamText: string;
  /** Each link's maximum, the loopback floor's last. */
  readonly linkText: string;
}

/** The maxima of the stepped rows (`counted`): a row measured outside the stepping never sets one. */
export function capacities(rows: readonly EngineRow[], plan: EnginePlan, variants: readonly string[], floorVariant: string | undefined): Capacities {
  const counted = rows.filter((r) => r.counted !== false);
  const maxOf = (t: EngineRow["transport"], variant?: string) =>
    Math.max(0, ...counted.filter((r) => r.transport === t && r.pass && (variant === undefined || r.variant === variant)).map((r) => r.games));
  const rowsOf = (t: EngineRow["transport"]) => counted.filter((r) => r.transport === t);
  /** The fewest games of `of`'s steps. */
  const firstOf = (of: readonly EngineRow[]) => Math.min(...of.map((r) => r.games));
  /** One of `of`'s steps passed at the last size of `all`: the maximum may be higher. */
  const lastTried = (of: readonly EngineRow[], all: readonly number[]) => of.some((r) => r.pass && r.games === all[all.length - 1]);
  const cell = (max: number, of: readonly EngineRow[], all: readonly number[]) => (max === 0 ? `< ${firstOf(of)}` : `${count(max)}${lastTried(of, all) ? "+" : ""}`);
  const memMax = maxOf("memory");
  const preciseMax = maxOf("memory-precise");
  const shardMax = maxOf("sharded");
  const streamMaxOf: Record<string, number> = Object.fromEntries(variants.map((v) => [v, maxOf("stream", v)]));
  const engineLinks = variants.filter((v) => v !== floorVariant);
  const engineStreamRows = counted.filter((r) => r.transport === "stream" && r.variant !== floorVariant);
  const streamMax = Math.max(0, ...engineLinks.map((v) => streamMaxOf[v]!));
  const bestLink = engineLinks.find((v) => streamMaxOf[v] === streamMax) ?? engineLinks[0];
  const fewestSteps = Math.min(...plan.stream, ...plan.streamBelow);
  const held = (v: string) => (streamMaxOf[v] === 0 ? `< ${fewestSteps}` : count(streamMaxOf[v]!));
  return {
    memMax,
    preciseMax,
    shardMax,
    streamMax,
    streamMaxOf,
    memText: cell(memMax, rowsOf("memory"), plan.memory),
    preciseText: cell(preciseMax, rowsOf("memory-precise"), plan.memory),
    shardText: cell(shardMax, rowsOf("sharded"), plan.sharded),
    streamText: streamMax === 0 ? `< ${firstOf(engineStreamRows)}` : `${count(streamMax)}${lastTried(engineStreamRows, plan.stream) ? "+" : ""} (${bestLink})`,
    linkText: [...engineLinks.map((v) => `${v} ${held(v)}`), ...(floorVariant === undefined ? [] : [`the loopback floor (plain TCP, no engine, Go readers) ${held(floorVariant)}`])].join(", "),
  };
}

const ORDER: Readonly<Record<EngineRow["transport"], number>> = { floor: 0, "floor-precise": 0, memory: 1, "memory-precise": 2, "gc-engine": 3, "gc-v8-default": 3, sharded: 4, stream: 5 };

function label(r: EngineRow, serverClock: EngineClockKind): string {
  if (r.transport === "stream") return `stream server → clients, ${r.variant}`;
  return {
    floor: `timer floor (${count(r.games)} idle tasks), setTimeout`,
    "floor-precise": `timer floor (${count(r.games)} idle tasks), precise clock`,
    memory: `in memory (${serverClock === "precise" ? "precise clock" : "setTimeout"})`,
    "memory-precise": "in memory, precise clock",
    "gc-engine": "in memory, fresh process",
    "gc-v8-default": "in memory, fresh process, V8's default young generation",
    sharded: "in memory, sharded",
  }[r.transport];
}

/** A measured row's cells; p99 ÷ floor is against `floorP99` (the first timer floor's). */
function rowCells(r: EngineRow, serverClock: EngineClockKind, floorP99: number | null, coreNs: number, isFloor: boolean): string[] {
  return [
    label(r, serverClock),
    count(r.games),
    count(r.ticks),
    ...tailCells(r.lateness),
    isFloor ? "1×" : ratio(r.lateness.p99, floorP99),
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
  ];
}

function tickPathRow(name: string, r: TickPathCost, coreNs: number, note: string): string[] {
  return [name, "1,000", count(r.frames), "", "", "", "", "", "", "", sig(r.cpuPerFrameUs), ratio(r.cpuPerFrameUs * 1000, coreNs), sig(r.bytesPerFrame), "", "", note];
}

const blank = (n: number): string[] => Array.from({ length: n }, () => "");

/** The section's main table: baselines, every measured row, then the capacities. */
export function engineTable(rows: readonly EngineRow[], b: Baselines, plan: EnginePlan, serverClock: EngineClockKind, caps: Capacities, variants: readonly string[]): Table {
  const linkRank = (r: EngineRow): number => (r.variant ? variants.indexOf(r.variant) : -1);
  const floorP99 = rows[0]?.lateness.p99 ?? null;
  const gamesPerCore = 1e9 / b.coreNs / (1000 / 33);
  const memRow = rows.find((r) => r.transport === "memory" && r.games === caps.memMax) ?? rows.find((r) => r.transport === "memory");
  const preciseBeside = rows.some((r) => r.transport === "memory-precise");
  const sorted = [...rows].sort((x, y) => ORDER[x.transport] - ORDER[y.transport] || (x.round ?? 0) - (y.round ?? 0) || linkRank(x) - linkRank(y) || x.games - y.games);
  return {
    headers: ["Transport", "Games", "Ticks", "p50 µs", "p99 µs", "p99.9 µs", "max µs", "p99 ÷ floor", "Skipped", "Lost", "CPU µs/frame", "CPU ÷ core work", "alloc B/frame", "GC max ms", "p99 ≤ 2 ms", "Notes"],
    align: ["l", "r", "r", "r", "r", "r", "r", "r", "r", "r", "r", "r", "r", "r", "l", "l"],
    rows: [
      ["core work (tight loop)", "1", count(plan.coreFrames), ...blank(7), sig(b.coreNs / 1000), "1×", sig(b.coreBytes), "", "", `${count(gamesPerCore)} games/core at 30 fps; FrameWriter + the copy handed to the transport`],
      ["core work, library encoding", "1", count(plan.coreFrames), ...blank(7), sig(b.library.nsPerFrame / 1000), ratio(b.library.nsPerFrame, b.coreNs), sig(b.library.bytesPerFrame), "", "", "FrameEncoder.encode + create(GameStreamMessage) + sizeDelimitedEncode, as before FrameWriter"],
      tickPathRow(
        "engine tick path (manual clock)",
        b.tickPath,
        b.coreNs,
        "handler + TickScheduler + GameTable on a manual clock in 1 ms rounds (whole ms, one timer slot: the clock allocates nothing), no inputs, no timers, no point scored (a point calls PlayMusic): what one tick frame costs in CPU (best of 5 rounds) and heap (frames handed over with sendFrom: the session copies what it keeps). On the real clock each run also reads performance.now(), a new 16-byte number",
      ),
      tickPathRow(
        "engine tick path + snapshot keeper (manual clock)",
        b.tickPathSnapshots,
        b.coreNs,
        "the same with the SnapshotKeeper writing every round's ticked games to the snapshot store, here in memory (what each engine does with a shared store, Redis; a server with one engine and its store in memory writes a game only when it leaves, as the in-memory steps below do)",
      ),
      ...sorted.map((r) => rowCells(r, serverClock, floorP99, b.coreNs, r === rows[0])),
      ["max games, in memory", caps.memText, ...blank(8), sig(memRow?.cpuPerFrameUs), "", sig(memRow?.allocBytesPerFrame), sig(memRow?.gc?.maxMs), "", "capacity (goals: 3c); Go engine: 3,000–4,000 at 3.4–4.3 µs CPU/frame (reference)"],
      ...(preciseBeside ? [["max games, in memory, precise clock", caps.preciseText, ...blank(13), "FLAPLAB_ENGINE_CLOCK=precise"]] : []),
      ["max games, in memory, sharded", caps.shardText, ...blank(13), "one worker thread per core, each its own scheduler, table and handler (worker threads, in the bench only; the server shards with processes, FLAPLAB_ENGINE_SHARDS: the websocket, N shards rows)"],
      ["max games, over a stream link", caps.streamText, ...blank(13), `${caps.linkText}; Go over QUIC: 100–175 (reference)`],
    ],
  };
}

/** 3b: each link at 1 game, at the first step and at the most it held with p99 ≤ 2 ms. */
export function linkTable(rows: readonly EngineRow[], variants: readonly string[], floorVariant: string | undefined, caps: Capacities, firstStep: number): Table {
  const linkRows: string[][] = [];
  for (const variant of variants) {
    const at = (games: number) => rows.find((r) => r.transport === "stream" && r.variant === variant && r.games === games);
    const picked = [...new Set([1, firstStep, caps.streamMaxOf[variant]!])].map(at).filter((r): r is EngineRow => r !== undefined && r.client !== undefined);
    for (const r of picked) {
      const c = r.client!;
      const which = r.games === caps.streamMaxOf[variant] ? `${count(r.games)} (max)` : count(r.games);
      const measured = [["frame inter-arrival", c.interArrivalStats], ["input → ack", c.inputToAck]] as const;
      // The floor's clients send no inputs: no acks to time.
      for (const [what, st] of variant === floorVariant ? measured.slice(0, 1) : measured) {
        linkRows.push([variant, which, what, ...STAT_KEYS.map((k) => (k === "samples" ? count(st.samples) : sig(st[k]))), sig(r.cpuPerFrameUs), sig(c.frames > 0 ? c.cpuUs / c.frames : null), sig(r.wireBytesPerFrame)]);
      }
    }
  }
  return {
    headers: ["Link", "Games", "What", ...STAT_HEADERS, "server CPU µs/frame", "client CPU µs/frame", "loopback B/frame"],
    align: ["l", "r", "l", ...STAT_HEADERS.map(() => "r" as const), "r", "r", "r"],
    rows: linkRows,
  };
}
