// One shard of section 3a's sharded run: a worker thread with its own GameTable, TickScheduler and
// game session handler (runEngineStep), ticking its share of the games; nothing crosses threads
// while it runs.
import { parentPort } from "node:worker_threads";
import { planSurvival } from "@flaplab/simulator";
import { EASY_SEED } from "./seed.js";
import { runEngineStep, type StepPlan } from "./engine-harness.js";

const schedule = planSurvival(EASY_SEED);
parentPort?.on("message", (plan: StepPlan) => {
  (globalThis as { gc?: () => void }).gc?.();
  runEngineStep(schedule, plan).then(
    (result) => parentPort?.postMessage({ ok: true, result }),
    (err: unknown) => parentPort?.postMessage({ ok: false, error: err instanceof Error ? err.message : String(err) }),
  );
});
parentPort?.postMessage({ ready: true });
