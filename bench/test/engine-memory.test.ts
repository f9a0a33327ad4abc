import { describe, expect, it } from "vitest";
import type { Child } from "../src/child.js";
import type { StepResult } from "../src/engine-harness.js";
import { measureMemorySteps } from "../src/engine-memory.js";
import { type EnginePlan, planOf } from "../src/engine-plan.js";

/** A step result with lateness p99 `p99Us`. */
function stepResult(games: number, p99Us: number): StepResult {
  return {
    games,
    lateness: { samples: 1000, p50: 100, p99: p99Us, p999: p99Us, max: p99Us, mean: 100 },
    ticks: 1000,
    skipped: 0,
    frames: 1000,
    acks: 0,
    frameBytes: 16_000,
    cpuUs: 5000,
    wallMs: 6000,
    cpuPerFrameUs: 5,
    ended: 0,
    endReasons: {},
    gc: { count: 0, minor: 0, totalMs: 0, p50Ms: null, maxMs: null, over2Ms: 0 },
    longestBurstMs: 1,
    allocBytesPerFrame: 80,
    rounds: 5000,
  };
}

/** An engine child that answers steps from `answer` and records what it was asked. */
function fakeEngine(answer: (games: number) => Promise<StepResult>): Child & { asked: number[]; stopped: boolean } {
  const fake = {
    pid: 0,
    asked: [] as number[],
    stopped: false,
    request<T>(body: object): Promise<T> {
      const games = (body as { games: number }).games;
      fake.asked.push(games);
      return answer(games) as Promise<T>;
    },
    async stop() {
      fake.stopped = true;
    },
  };
  return fake;
}

const plan: EnginePlan = { ...planOf(false), memory: [1000, 1500, 2000], memoryBelow: [500], goalGames: 6000 };
const quiet = () => {};

describe("measureMemorySteps", () => {
  it("steps up until a step misses 2 ms, then runs the goal's games once, not counted for the maximum", async () => {
    const engine = fakeEngine(async (games) => stepResult(games, games <= 1000 ? 1500 : 2500));
    const replace = async () => {
      throw new Error("not replaced when the goal step answers");
    };
    const r = await measureMemorySteps(engine, plan, "timers", "memory", quiet, replace);
    expect(engine.asked).toEqual([1000, 1500, 6000]);
    expect(r.rows.map((x) => [x.games, x.pass, x.counted, x.clock])).toEqual([
      [1000, true, true, "timers"],
      [1500, false, true, "timers"],
      [6000, false, false, "timers"],
    ]);
    expect(r.goalMissing).toBeUndefined();
    expect(r.engine).toBe(engine);
  });

  it("runs no extra step when the stepping reached the goal's games", async () => {
    const engine = fakeEngine(async (games) => stepResult(games, 1000));
    const r = await measureMemorySteps(engine, { ...plan, memory: [1000, 6000, 8000] }, "precise", "memory-precise", quiet, async () => engine);
    expect(engine.asked).toEqual([1000, 6000, 8000]);
    expect(r.rows.every((x) => x.counted)).toBe(true);
  });

  it("when the goal's step fails, says why and hands back a fresh engine for the steps after it", async () => {
    const engine = fakeEngine(async (games) => {
      if (games === 6000) throw new Error("engine-child.ts: no answer to {\"type\":\"step\"} within 90000 ms\n    at stack");
      return stepResult(games, 3000);
    });
    const fresh = fakeEngine(async (games) => stepResult(games, 1000));
    let replaced = 0;
    const r = await measureMemorySteps(engine, plan, "timers", "memory", quiet, async () => {
      replaced++;
      return fresh;
    });
    // 1000 failed, so 500 was tried (and failed too), then the goal's games.
    expect(engine.asked).toEqual([1000, 500, 6000]);
    expect(r.rows.map((x) => x.games)).toEqual([1000, 500]);
    expect(r.goalMissing).toBe('the 6,000-game step on the setTimeout clock failed: engine-child.ts: no answer to {"type":"step"} within 90000 ms');
    expect(replaced).toBe(1);
    expect(r.engine).toBe(fresh);
  });
});
