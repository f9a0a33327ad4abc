// Section 3a, in one engine process with in-memory sessions: the baselines (core work, tick path,
// timer floor), the capacity steps on each clock, the goal's games, and the sharded steps.
import { availableParallelism } from "node:os";
import { ENGINE_NODE_FLAGS } from "@flaplab/component";
import type { EngineClockKind } from "@flaplab/engine";
import { type Child, startChild } from "./child.js";
import type { StepResult } from "./engine-harness.js";
import { type EnginePlan, type EngineRow, LATENESS_LIMIT_US, type Log, stepGames } from "./engine-plan.js";
import type { ShardedStepResult } from "./engine-shards.js";
import type { Percentiles } from "./hist.js";
import { count, sig } from "./table.js";

/** A tick path's cost on a manual clock (engine-harness `tickPathAllocation`). */
export interface TickPathCost {
  readonly bytesPerFrame: number;
  readonly cpuPerFrameUs: number;
  readonly frames: number;
}

export interface Baselines {
  /** The core work (physics tick + delta frame + message) in a tight loop, ns and heap bytes per frame. */
  readonly coreNs: number;
  readonly coreBytes: number;
  /** The same with the library's message objects. */
  readonly library: { readonly nsPerFrame: number; readonly bytesPerFrame: number };
  readonly tickPath: TickPathCost;
  readonly tickPathSnapshots: TickPathCost;
}

export interface InMemoryResult {
  readonly baselines: Baselines;
  /** Timer-floor, in-memory and sharded rows, in the order measured. */
  readonly rows: readonly EngineRow[];
  /** Why the goal's games have no row on a clock (the step failed or could not run). */
  readonly goalMissing: Readonly<Partial<Record<EngineClockKind, string>>>;
}

/** A step of the goal's games may take this long (the ramp and teardown of 6,000 games on an overloaded loop). */
const GOAL_STEP_TIMEOUT_MS = 90_000;

const startEngine = (): Promise<Child> => startChild("engine-child.ts", ["--expose-gc", ...ENGINE_NODE_FLAGS]);
const clockName = (clock: EngineClockKind): string => (clock === "precise" ? "precise" : "setTimeout");

/** Core work, the tick path on a manual clock (with and without the snapshot keeper). */
export async function measureBaselines(engine: Child, plan: EnginePlan, log: Log): Promise<Baselines> {
  const core = await engine.request<{ nsPerFrame: number; bytesPerFrame: number; library: { nsPerFrame: number; bytesPerFrame: number }; survivesTicks: number; flaps: number }>({ type: "core", frames: plan.coreFrames });
  log(
    `  engine core work ${sig(core.nsPerFrame / 1000)} µs/frame, ${sig(core.bytesPerFrame)} B allocated/frame (library encoding: ${sig(core.library.nsPerFrame / 1000)} µs, ${sig(core.library.bytesPerFrame)} B); ` +
      `flap schedule survives ${core.survivesTicks} ticks with ${core.flaps} flaps`,
  );
  const tickPath = await engine.request<TickPathCost>({ type: "tickpath" }, 60_000);
  log(`  engine tick path (manual clock, 1,000 games, no inputs): ${sig(tickPath.cpuPerFrameUs)} µs CPU/frame, ${sig(tickPath.bytesPerFrame)} B allocated/frame`);
  const tickPathSnapshots = await engine.request<TickPathCost>({ type: "tickpath", snapshots: true }, 60_000);
  log(`  engine tick path + snapshots written every round (as a shared store is; here in memory): ${sig(tickPathSnapshots.cpuPerFrameUs)} µs CPU/frame, ${sig(tickPathSnapshots.bytesPerFrame)} B allocated/frame`);
  return { coreNs: core.nsPerFrame, coreBytes: core.bytesPerFrame, library: core.library, tickPath, tickPathSnapshots };
}

/**
 * The timer floor: 100 idle tasks, then as many as the goal's games (what the scheduler and this
 * machine give that many tasks that do nothing), on each clock.
 */
export async function measureTimerFloors(engine: Child, plan: EnginePlan, log: Log): Promise<EngineRow[]> {
  const rows: EngineRow[] = [];
  for (const tasks of [...new Set([100, plan.goalGames])]) {
    for (const clock of ["timers", "precise"] as const) {
      const floor = await engine.request<Percentiles>({ type: "floor", measureMs: Math.min(plan.measureMs, 3000), clock, tasks }, 60_000);
      rows.push({ transport: clock === "timers" ? "floor" : "floor-precise", clock, games: tasks, lateness: floor, ticks: floor.samples, skipped: 0, lost: 0, cpuPerFrameUs: null, pass: (floor.p99 ?? Infinity) <= LATENESS_LIMIT_US, note: "" });
      log(`  timer floor, ${count(tasks)} idle tasks, ${clock} clock: lateness p50 ${sig(floor.p50)} p99 ${sig(floor.p99)} µs`);
    }
  }
  return rows;
}

/** One in-memory step of `games` games on `clock`, as a row. */
async function memoryStep(engine: Child, plan: EnginePlan, games: number, clock: EngineClockKind, transport: "memory" | "memory-precise", counted: boolean, log: Log, timeoutMs = 120_000): Promise<EngineRow> {
  const r = await engine.request<StepResult>({ type: "step", games, rampMs: plan.rampMs, settleMs: plan.settleMs, measureMs: plan.measureMs, clock }, timeoutMs);
  const pass = (r.lateness.p99 ?? Infinity) <= LATENESS_LIMIT_US;
  const reasons = Object.entries(r.endReasons).map(([k, v]) => `${v}× "${k}"`).join(", ");
  const callbacks = `${count(Math.round((r.rounds * 1000) / r.wallMs))} timer callbacks/s`;
  const note = [callbacks, reasons ? `ended: ${reasons}` : "", counted ? "" : "the goal's games, after the stepping stopped (not counted for the maximum)"].filter(Boolean).join("; ");
  log(
    `  engine memory ${games} games, ${clock} clock${counted ? "" : " (goal step)"}: lateness p50 ${sig(r.lateness.p50)} p99 ${sig(r.lateness.p99)} µs, ${sig(r.cpuPerFrameUs)} µs CPU/frame, ` +
      `${sig(r.allocBytesPerFrame)} B allocated/frame, GC max ${sig(r.gc.maxMs)} ms, ${r.ended} lost, ${callbacks}`,
  );
  return { transport, clock, games, lateness: r.lateness, ticks: r.ticks, skipped: r.skipped, lost: r.ended, cpuPerFrameUs: r.cpuPerFrameUs, pass, note, gc: r.gc, longestBurstMs: r.longestBurstMs, allocBytesPerFrame: r.allocBytesPerFrame, counted };
}

/**
 * The capacity steps on `clock`, stepping up until a step misses p99 ≤ 2 ms; then, when the
 * stepping stopped below the goal's games, one step at the goal's games (not counted for the
 * maximum) so that the goals always have a figure. Returns the rows and, when the goal's step
 * failed, why (the engine process is then replaced: `replace` gives the fresh one).
 */
export async function measureMemorySteps(
  engine: Child,
  plan: EnginePlan,
  clock: EngineClockKind,
  transport: "memory" | "memory-precise",
  log: Log,
  replace: () => Promise<Child>,
): Promise<{ rows: EngineRow[]; goalMissing?: string; engine: Child }> {
  const rows: EngineRow[] = [];
  await stepGames(plan.memory, plan.memoryBelow, async (games) => {
    const row = await memoryStep(engine, plan, games, clock, transport, true, log);
    rows.push(row);
    return row.pass;
  });
  if (rows.some((r) => r.games === plan.goalGames)) return { rows, engine };
  try {
    rows.push(await memoryStep(engine, plan, plan.goalGames, clock, transport, false, log, GOAL_STEP_TIMEOUT_MS));
    return { rows, engine };
  } catch (err) {
    const why = `the ${count(plan.goalGames)}-game step on the ${clockName(clock)} clock failed: ${(err instanceof Error ? err.message : String(err)).split("\n")[0]}`;
    log(`  engine memory: ${why}`);
    // The process may still be ticking those games: the steps after this one get a fresh one.
    return { rows, goalMissing: why, engine: await replace() };
  }
}

/** The same games split over one worker-thread shard per core (`engine-shards.ts`). */
export async function measureSharded(engine: Child, plan: EnginePlan, log: Log): Promise<EngineRow[]> {
  const rows: EngineRow[] = [];
  const shards = Math.max(2, availableParallelism());
  await stepGames(plan.sharded, plan.shardedBelow, async (games) => {
    const r = await engine.request<ShardedStepResult>({ type: "sharded", shards, games, rampMs: plan.rampMs, settleMs: plan.settleMs, measureMs: plan.measureMs }, 180_000);
    const pass = (r.lateness.p99 ?? Infinity) <= LATENESS_LIMIT_US;
    const reasons = Object.entries(r.endReasons).map(([k, v]) => `${v}× "${k}"`).join(", ");
    rows.push({ transport: "sharded", games, lateness: r.lateness, ticks: r.ticks, skipped: r.skipped, lost: r.ended, cpuPerFrameUs: r.cpuPerFrameUs, pass, note: [`${shards} shards, worst shard's lateness and GC`, reasons ? `ended: ${reasons}` : ""].filter(Boolean).join("; "), gc: r.gc, allocBytesPerFrame: r.allocBytesPerFrame });
    log(
      `  engine sharded ${games} games (${shards} shards): worst shard p50 ${sig(r.lateness.p50)} p99 ${sig(r.lateness.p99)} µs, ${sig(r.cpuPerFrameUs)} µs CPU/frame, ` +
        `${sig(r.allocBytesPerFrame)} B allocated/frame, GC max ${sig(r.gc.maxMs)} ms, ${r.ended} lost`,
    );
    return pass;
  });
  return rows;
}

/**
 * Section 3a in one fresh engine process: baselines, timer floors, the capacity steps on the
 * server's clock and then on the precise one (unless that is the server's), each followed by the
 * goal's games when the stepping stopped below them, and the sharded steps.
 */
export async function measureInMemory(plan: EnginePlan, serverClock: EngineClockKind, log: Log): Promise<InMemoryResult> {
  let engine = await startEngine();
  const replace = async (): Promise<Child> => {
    await engine.stop();
    engine = await startEngine();
    return engine;
  };
  try {
    const baselines = await measureBaselines(engine, plan, log);
    const rows = await measureTimerFloors(engine, plan, log);
    const goalMissing: Partial<Record<EngineClockKind, string>> = {};
    const clocks: EngineClockKind[] = serverClock === "precise" ? ["precise"] : ["timers", "precise"];
    if (serverClock === "precise") goalMissing.timers = "the server's clock is the precise one here (FLAPLAB_ENGINE_CLOCK=precise): setTimeout's is not measured";
    for (const clock of clocks) {
      const steps = await measureMemorySteps(engine, plan, clock, clock === serverClock ? "memory" : "memory-precise", log, replace);
      engine = steps.engine;
      rows.push(...steps.rows);
      if (steps.goalMissing !== undefined) goalMissing[clock] = steps.goalMissing;
    }
    rows.push(...(await measureSharded(engine, plan, log)));
    return { baselines, rows, goalMissing };
  } finally {
    await engine.stop();
  }
}
