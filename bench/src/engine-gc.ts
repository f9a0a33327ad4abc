// Section 3a, the GC goal: GC_GOAL_GAMES games, each time in a fresh process (no heap left from
// earlier steps), with the engine's Node flags (its small young generation, as the server runs
// it) and with V8's default young generation, alternately, GC_ROUNDS times: this machine's noise
// shows in the rounds.
import { ENGINE_NODE_FLAGS } from "@flaplab/component";
import { startChild } from "./child.js";
import type { StepResult } from "./engine-harness.js";
import { type EnginePlan, type EngineRow, GC_GOAL_GAMES, GC_ROUNDS, LATENESS_LIMIT_US, type Log } from "./engine-plan.js";
import { sig } from "./table.js";

export async function measureGcRuns(plan: EnginePlan, log: Log): Promise<EngineRow[]> {
  const rows: EngineRow[] = [];
  for (let round = 1; round <= GC_ROUNDS; round++) {
    for (const transport of ["gc-engine", "gc-v8-default"] as const) {
      const child = await startChild("engine-child.ts", ["--expose-gc", ...(transport === "gc-engine" ? ENGINE_NODE_FLAGS : [])]);
      try {
        const r = await child.request<StepResult>({ type: "step", games: GC_GOAL_GAMES, rampMs: plan.rampMs, settleMs: plan.settleMs, measureMs: plan.measureMs }, 120_000);
        rows.push({ transport, games: GC_GOAL_GAMES, lateness: r.lateness, ticks: r.ticks, skipped: r.skipped, lost: r.ended, cpuPerFrameUs: r.cpuPerFrameUs, pass: (r.lateness.p99 ?? Infinity) <= LATENESS_LIMIT_US, note: `round ${round}`, gc: r.gc, longestBurstMs: r.longestBurstMs, allocBytesPerFrame: r.allocBytesPerFrame, round });
        log(`  engine memory ${GC_GOAL_GAMES} games, fresh process, ${transport}, round ${round}: p99 ${sig(r.lateness.p99)} µs, ${sig(r.cpuPerFrameUs)} µs CPU/frame, GC ${r.gc.count} pauses, total ${sig(r.gc.totalMs)} ms, max ${sig(r.gc.maxMs)} ms`);
      } finally {
        await child.stop();
      }
    }
  }
  return rows;
}
