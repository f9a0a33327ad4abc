// Child process for section 3a: engine capacity with in-memory sessions.
import { planSurvival } from "@flaplab/simulator";
import { EASY_SEED } from "./seed.js";
import { runShardedStep } from "./engine-shards.js";
import { serveRequests } from "./child.js";
import type { EngineClockKind } from "@flaplab/engine";
import { coreFrameCost, runEngineStep, tickPathAllocation, timerFloor, type StepPlan } from "./engine-harness.js";

export type EngineChildRequest =
  | { type: "core"; frames: number }
  | { type: "floor"; measureMs: number; clock?: EngineClockKind; /** Idle tasks (default 100). */ tasks?: number }
  | { type: "tickpath"; snapshots?: boolean }
  | ({ type: "sharded"; shards: number } & StepPlan)
  | ({ type: "step" } & StepPlan);

const schedule = planSurvival(EASY_SEED);

serveRequests(async (req: EngineChildRequest) => {
  if (req.type === "core") {
    const best = (path: "writer" | "library") => {
      coreFrameCost(schedule, Math.min(20_000, req.frames), path); // warm the JIT
      // The intrinsic cost: the best of three rounds (a shared machine only ever adds time).
      const rounds = [0, 1, 2].map(() => coreFrameCost(schedule, Math.ceil(req.frames / 3), path));
      return { nsPerFrame: Math.min(...rounds.map((r) => r.nsPerFrame)), bytesPerFrame: Math.min(...rounds.map((r) => r.bytesPerFrame)) };
    };
    const writer = best("writer");
    const library = best("library");
    return { nsPerFrame: writer.nsPerFrame, bytesPerFrame: writer.bytesPerFrame, library, survivesTicks: schedule.ticks, flaps: schedule.flapTicks.length };
  }
  (globalThis as { gc?: () => void }).gc?.();
  if (req.type === "tickpath") return tickPathAllocation(1000, 5, req.snapshots === true);
  if (req.type === "sharded") return runShardedStep(req, req.shards);
  if (req.type === "floor") return timerFloor(req.measureMs, req.tasks ?? 100, req.clock);
  return runEngineStep(schedule, req);
});
