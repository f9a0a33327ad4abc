// Section 3a, sharded: the games split over worker threads, one shard per core, each with its own
// scheduler, table and handler (the design where a game lives on one shard and its frames never
// cross a thread). Measures all shards at once.
import { Worker } from "node:worker_threads";
import type { StepPlan, StepResult } from "./engine-harness.js";
import type { GcPauses } from "./gc.js";
import type { Percentiles } from "./hist.js";

export interface ShardedStepResult {
  readonly games: number;
  readonly shards: number;
  /** Per shard. */
  readonly perShard: readonly StepResult[];
  /** The worst shard's percentiles (the p99 of all ticks is at most the worst shard's p99). */
  readonly lateness: Percentiles;
  readonly ticks: number;
  readonly skipped: number;
  readonly frames: number;
  /** Process CPU (every thread) ÷ all shards' tick frames, µs. */
  readonly cpuPerFrameUs: number;
  readonly allocBytesPerFrame: number;
  readonly ended: number;
  readonly endReasons: Readonly<Record<string, number>>;
  /** The worst shard's GC pauses (each shard is its own heap and collects on its own). */
  readonly gc: GcPauses;
}

const WORKER = new URL("./engine-shard-worker.ts", import.meta.url).href;

function startWorker(): Promise<Worker> {
  // Worker threads do not inherit tsx's loader: register it first, then load the shard.
  const worker = new Worker(`import { register } from "tsx/esm/api"; register(); await import(${JSON.stringify(WORKER)});`, { eval: true });
  return new Promise((resolve, reject) => {
    const onMessage = (m: { ready?: boolean }) => {
      if (!m.ready) return;
      worker.off("message", onMessage);
      resolve(worker);
    };
    worker.on("message", onMessage);
    worker.once("error", reject);
  });
}

function runOn(worker: Worker, plan: StepPlan, timeoutMs: number): Promise<StepResult> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`shard step timed out after ${timeoutMs} ms`)), timeoutMs);
    worker.once("message", (m: { ok: boolean; result?: StepResult; error?: string }) => {
      clearTimeout(timer);
      if (m.ok && m.result) resolve(m.result);
      else reject(new Error(`shard: ${m.error}`));
    });
    worker.postMessage(plan);
  });
}

/** Runs `plan.games` games split over `shards` worker threads (fresh ones), all at once. */
export async function runShardedStep(plan: StepPlan, shards: number, timeoutMs = 120_000): Promise<ShardedStepResult> {
  const workers = await Promise.all(Array.from({ length: shards }, () => startWorker()));
  try {
    const shares = Array.from({ length: shards }, (_, i) => Math.floor(plan.games / shards) + (i < plan.games % shards ? 1 : 0));
    const perShard = await Promise.all(workers.map((w, i) => runOn(w, { ...plan, games: shares[i]! }, timeoutMs)));
    const worst = perShard.reduce((a, b) => ((b.lateness.p99 ?? 0) > (a.lateness.p99 ?? 0) ? b : a));
    const worstGc = perShard.reduce((a, b) => ((b.gc.maxMs ?? 0) > (a.gc.maxMs ?? 0) ? b : a)).gc;
    const frames = perShard.reduce((a, r) => a + r.frames, 0);
    // process.cpuUsage() in a worker is the whole process's: every shard measured nearly the same window.
    const cpuUs = perShard.reduce((a, r) => a + r.cpuUs, 0) / perShard.length;
    const endReasons: Record<string, number> = {};
    for (const r of perShard) for (const [k, v] of Object.entries(r.endReasons)) endReasons[k] = (endReasons[k] ?? 0) + v;
    return {
      games: plan.games,
      shards,
      perShard,
      lateness: worst.lateness,
      ticks: perShard.reduce((a, r) => a + r.ticks, 0),
      skipped: perShard.reduce((a, r) => a + r.skipped, 0),
      frames,
      cpuPerFrameUs: frames > 0 ? cpuUs / frames : 0,
      allocBytesPerFrame: frames > 0 ? perShard.reduce((a, r) => a + r.allocBytesPerFrame * r.frames, 0) / frames : 0,
      ended: perShard.reduce((a, r) => a + r.ended, 0),
      endReasons,
      gc: worstGc,
    };
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}
