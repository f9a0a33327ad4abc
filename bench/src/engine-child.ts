// Child process for section 3a: engine capacity with in-memory sessions.
import { findFlapSchedule } from "./autopilot.js";
import { serveRequests } from "./child.js";
import { coreFrameCostNs, runEngineStep, type StepPlan } from "./engine-harness.js";

export type EngineChildRequest = { type: "core"; frames: number } | ({ type: "step" } & StepPlan);

const schedule = findFlapSchedule();

serveRequests(async (req: EngineChildRequest) => {
  if (req.type === "core") {
    coreFrameCostNs(schedule, Math.min(20_000, req.frames)); // warm the JIT
    return { nsPerFrame: coreFrameCostNs(schedule, req.frames), survivesTicks: schedule.survivesTicks, flaps: schedule.flapTicks.length };
  }
  (globalThis as { gc?: () => void }).gc?.();
  return runEngineStep(schedule, req);
});
