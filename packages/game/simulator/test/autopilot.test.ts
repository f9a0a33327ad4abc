import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DEFAULT_VIEWPORT, applyInputInPlace, createGame, stepInPlace } from "@flaplab/physics";
import { flapTicks, parseTrace, replayFlapTicks } from "@flaplab/input-traces";
import { generateWorld } from "@flaplab/worldgen";
import { afterAll, describe, expect, it } from "vitest";
import {
  type GamePlan,
  checkPlan,
  jitterSurvival,
  planGame,
  runAutopilotCli,
  simulate,
  simulateTrace,
  traceFromPlan,
} from "../src/index.js";

const EASY = 6977347407732442987n;
const HARD = 8525333463046388971n;
const REPO_ROOT = fileURLToPath(new URL("../../../..", import.meta.url));
const PACKAGE_DIR = fileURLToPath(new URL("..", import.meta.url));
const HARD_TRACE = join(REPO_ROOT, "replay", "traces", `${HARD}.json`);

const tmp = mkdtempSync(join(tmpdir(), "flaplab-autopilot-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

// Planning takes a second or so per seed: plan each once.
const plans = new Map<bigint, GamePlan>();
function planned(seed: bigint): GamePlan {
  let plan = plans.get(seed);
  if (plan === undefined) {
    plan = planGame(seed);
    plans.set(seed, plan);
  }
  return plan;
}

describe.each([
  ["easy", EASY],
  ["hard", HARD],
])("planGame on the %s seed", (_name, seed) => {
  it("reaches the default target of 30 and then dies at the next pipe", { timeout: 30_000 }, () => {
    const plan = planned(seed);
    expect(plan).toMatchObject({ score: 30, targetScore: 30, died: true, courseEnd: false, robustTicks: 2 });
    expect(plan.flapTicks.length).toBeGreaterThan(0);
    expect([...plan.flapTicks].sort((a, b) => a - b)).toEqual(plan.flapTicks);
    expect(new Set(plan.flapTicks).size).toBe(plan.flapTicks.length);
    // The physics agrees, and no flap comes after the target score.
    const { seed: _s, ...outcome } = simulate({ seed, flapTicks: plan.flapTicks });
    expect(outcome).toEqual({ score: plan.score, ticks: plan.ticks, died: true, courseEnd: false });
    const game = createGame(generateWorld(seed, DEFAULT_VIEWPORT));
    applyInputInPlace(game);
    while (game.score < 30) stepInPlace(game, plan.flapTicks.includes(game.tick + 1));
    expect(plan.flapTicks[plan.flapTicks.length - 1]).toBeLessThanOrEqual(game.tick);
  });

  it("survives every flap moved by ±1 or ±2 ticks, one at a time", { timeout: 30_000 }, () => {
    const plan = planned(seed);
    for (let i = 0; i < plan.flapTicks.length; i++) {
      for (const shift of [-2, -1, 1, 2]) {
        const moved = plan.flapTicks.map((k, j) => (j === i ? k + shift : k));
        const out = simulate({ seed, flapTicks: moved });
        expect({ flap: i, shift, score: out.score, ticks: out.ticks }).toEqual({ flap: i, shift, score: 30, ticks: plan.ticks });
      }
    }
    expect(plan.minMargin).toBeGreaterThan(0);
    const check = checkPlan(seed, plan.flapTicks);
    expect(check.robust).toBe(true);
    expect(check.shifts).toHaveLength(4 * plan.flapTicks.length);
    expect(check.minMargin).toBe(plan.minMargin);
  });
});

describe("planGame options", () => {
  it("with target 0 plans no flap: the bird falls into the first pipe", () => {
    expect(planGame(HARD, { targetScore: 0 })).toMatchObject({ flapTicks: [], score: 0, ticks: 34, died: true });
  });

  it("plans a lower target", () => {
    const plan = planGame(HARD, { targetScore: 3 });
    expect(plan).toMatchObject({ score: 3, targetScore: 3, died: true });
    expect(simulate({ seed: HARD, flapTicks: plan.flapTicks })).toMatchObject({ score: 3, ticks: plan.ticks });
  });

  it("lowers the target to what fits in maxTicks", { timeout: 30_000 }, () => {
    const plan = planGame(EASY, { maxTicks: 600 });
    expect(plan.ticks).toBeLessThanOrEqual(600);
    expect(plan.score).toBe(plan.targetScore);
    expect(plan.score).toBeGreaterThan(5);
    expect(plan.score).toBeLessThan(30);
    expect(simulate({ seed: EASY, flapTicks: plan.flapTicks })).toMatchObject({ score: plan.score, ticks: plan.ticks });
  });

  it("with robustTicks 0 only the nominal game counts", () => {
    const plan = planGame(HARD, { targetScore: 5, robustTicks: 0 });
    expect(plan).toMatchObject({ score: 5, robustTicks: 0 });
    expect(checkPlan(HARD, plan.flapTicks, { robustTicks: 0 }).shifts).toEqual([]);
  });

  it("rejects bad options", () => {
    expect(() => planGame(HARD, { targetScore: -1 })).toThrow(RangeError);
    expect(() => planGame(HARD, { targetScore: 2.5 })).toThrow(RangeError);
    expect(() => planGame(HARD, { robustTicks: -1 })).toThrow(RangeError);
    expect(() => planGame(HARD, { maxTicks: 0 })).toThrow(RangeError);
    expect(() => planGame(HARD, { maxTicks: 10 })).toThrow(/no game fits in 10 ticks/);
    expect(() => planGame(HARD, { viewport: { width: 2, height: 2 } })).toThrow(RangeError);
  });
});

describe("checkPlan", () => {
  it("reports a negative margin exactly for the shifts that change the outcome", { timeout: 30_000 }, () => {
    const plan = planned(HARD);
    // Moving flaps further than planned for breaks some games.
    const check = checkPlan(HARD, plan.flapTicks, { robustTicks: 6 });
    expect(check.robust).toBe(false);
    expect(check.minMargin).toBeLessThan(0);
    let changed = 0;
    for (const s of check.shifts) {
      const same = s.score === plan.score && s.ticks === plan.ticks;
      if (!same) changed++;
      if (s.margin > 0) expect(same).toBe(true);
      if (s.margin < 0) expect(same).toBe(false);
    }
    expect(changed).toBeGreaterThan(0);
  });

  it("measures jitter on all flaps at once, repeatably", { timeout: 30_000 }, () => {
    const plan = planned(HARD);
    const none = jitterSurvival(HARD, plan.flapTicks, { maxShift: 0, trials: 5 });
    expect(none).toEqual({ trials: 5, same: 5, rate: 1 });
    const a = jitterSurvival(HARD, plan.flapTicks, { maxShift: 1, trials: 100, rngSeed: 7 });
    expect(a).toEqual(jitterSurvival(HARD, plan.flapTicks, { maxShift: 1, trials: 100, rngSeed: 7 }));
    expect(a.rate).toBeGreaterThan(0.5);
  });
});

describe("traceFromPlan", () => {
  it("writes a FlapLab trace that replays to the plan's score and ticks", { timeout: 30_000 }, () => {
    const plan = planned(EASY);
    const text = traceFromPlan(EASY, plan);
    const trace = parseTrace(text);
    expect(trace).toMatchObject({
      format: "flaplab-json",
      seed: EASY,
      viewport: { width: 480, height: 640 },
      bird: { width: 34, height: 24 },
      dropLastInput: false,
      source: "autopilot",
      recordedTicks: plan.flapTicks,
    });
    expect(JSON.parse(text)).toMatchObject({ format: "flaplab-trace/1", seed: String(EASY), dropLastInput: false });
    // Each press lands in the middle of the tick period before its tick.
    expect(trace.flapOffsetsMs).toEqual(plan.flapTicks.map((k) => (k - 1) * 33 + 16));
    expect(flapTicks(trace.flapOffsetsMs)).toEqual(plan.flapTicks);
    expect(replayFlapTicks(trace)).toEqual(plan.flapTicks);
    expect(simulateTrace(trace)).toEqual({ seed: EASY, score: plan.score, ticks: plan.ticks, died: true, courseEnd: false });
    // Without the recorded ticks the times alone give the same game.
    const { recordedTicks: _r, ...timesOnly } = trace;
    expect(simulateTrace(timesOnly)).toMatchObject({ score: plan.score, ticks: plan.ticks });
  });

  it("honours another tick period", () => {
    const trace = parseTrace(traceFromPlan(HARD, { flapTicks: [3, 1, 3] }, { tickMs: 40 }));
    expect(trace.flapOffsetsMs).toEqual([20, 100]);
    expect(trace.recordedTicks).toEqual([1, 3]);
    expect(flapTicks(trace.flapOffsetsMs, 40)).toEqual([1, 3]);
    expect(() => traceFromPlan(HARD, { flapTicks: [0] })).toThrow(RangeError);
  });

  it.skipIf(!existsSync(HARD_TRACE))("the committed hard-seed trace scores 30 and stands ±2 ticks per flap", () => {
    const trace = parseTrace(readFileSync(HARD_TRACE, "utf8"), { fileName: HARD_TRACE });
    expect(trace).toMatchObject({ seed: HARD, source: "autopilot", dropLastInput: false });
    const result = simulateTrace(trace);
    expect(result).toMatchObject({ score: 30, died: true });
    expect(flapTicks(trace.flapOffsetsMs)).toEqual(trace.recordedTicks);
    const check = checkPlan(HARD, replayFlapTicks(trace));
    expect(check).toMatchObject({ score: 30, ticks: result.ticks, robust: true });
    expect(check.minMargin).toBeGreaterThan(0);
  });
});

describe("runAutopilotCli", () => {
  async function run(args: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runAutopilotCli(args, { stdout: (l) => out.push(l), stderr: (l) => err.push(l), cwd: tmp });
    return { code, out, err };
  }

  it("plans, writes the trace to a path relative to its directory and prints one line", { timeout: 30_000 }, async () => {
    const r = await run(["--seed", String(HARD), "--score", "4", "--robust", "1", "--out", "hard-4.json"]);
    expect(r.err).toEqual([]);
    expect(r.code).toBe(0);
    expect(r.out).toHaveLength(1);
    const line = JSON.parse(r.out[0] as string) as Record<string, unknown>;
    expect(Object.keys(line)).toEqual(["seed", "score", "ticks", "flaps", "minMargin", "out"]);
    expect(line).toMatchObject({ seed: String(HARD), score: 4, out: join(tmp, "hard-4.json") });
    const trace = parseTrace(readFileSync(join(tmp, "hard-4.json"), "utf8"));
    expect(trace.flapOffsetsMs).toHaveLength(line.flaps as number);
    expect(simulateTrace(trace)).toMatchObject({ score: 4, ticks: line.ticks });
    expect(checkPlan(HARD, replayFlapTicks(trace), { robustTicks: 1 }).robust).toBe(true);
  });

  it.each([
    [[], /missing --seed/],
    [["--seed"], /--seed/],
    [["--seed", "12x", "--out", "a.json"], /--seed must be a decimal int64, got "12x"/],
    [["--seed", "9223372036854775808", "--out", "a.json"], /--seed must be a decimal int64/],
    [["--seed", "1"], /missing --out/],
    [["--seed", "1", "--out", "a.json", "--score=-3"], /--score must be a whole number in 0…1000, got "-3"/],
    [["--seed", "1", "--out", "a.json", "--score", "-3"], /--score/],
    [["--seed", "1", "--out", "a.json", "--score", "2.5"], /--score must be a whole number/],
    [["--seed", "1", "--out", "a.json", "--robust", "11"], /--robust must be a whole number in 0…10, got "11"/],
    [["--seed", "1", "--out", "a.json", "--frobnicate"], /frobnicate/],
    [["--seed", "1", "--out", "a.json", "extra"], /positional/i],
    [["--seed", "1", "--score", "0", "--out", "no-such-dir/a.json"], /cannot write .*no-such-dir\/a\.json \(ENOENT\)/],
  ])("exits 2 for %j", async (args, message) => {
    const r = await run(args);
    expect(r.code).toBe(2);
    expect(r.out).toEqual([]);
    expect(r.err[0]).toMatch(message);
    expect(r.err[1]).toMatch(/^usage: pnpm autopilot/);
  });
});

describe("the autopilot CLI", () => {
  it("exits 2 with the message and usage on stderr", async () => {
    const r = await new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
      execFile(process.execPath, ["--import", "tsx", "bin/autopilot.ts", "--seed", "x", "--out", "a.json"], { cwd: PACKAGE_DIR, timeout: 30_000 }, (err, stdout, stderr) => {
        done({ code: err === null ? 0 : typeof err.code === "number" ? err.code : -1, stdout, stderr });
      });
    });
    expect(r).toEqual({
      code: 2,
      stdout: "",
      stderr: 'autopilot: --seed must be a decimal int64, got "x"\nusage: pnpm autopilot --seed <int64> [--score N] [--robust N] --out <file.json>\n',
    });
  }, 30_000);
});
