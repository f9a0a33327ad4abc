import { afterAll, describe, expect, it } from "vitest";
import { buildReport } from "../../src/report/aggregate.js";
import { discoverRuns } from "../../src/report/load.js";
import { parseLatencyCsv, pressMetrics } from "../../src/report/metrics.js";
import { duetPenalties, pairedPenalties } from "../../src/report/paired.js";
import { duetTable } from "../../src/report/tables.js";
import { StartBarrier } from "../../src/run/runner.js";
import { parseStudyArgs } from "../../src/study/study.js";
import { latencyCsv, removeTempDirs, rttRows, tempDir, tickFrames, writeRun, type Row } from "./fixtures.js";

afterAll(removeTempDirs);

const SEED = "6977347407732442987";
const REPO = "/repo";

/** A game of 15 presses whose press j's sound comes `audioMs(j)` after it. */
function rows(audioMs: (seq: number) => number): Row[] {
  const ticks = tickFrames(500, Array.from({ length: 400 }, () => 33));
  const out: Row[] = [...rttRows(), ...ticks];
  for (let j = 1; j <= 15; j++) {
    const sent = ticks[20 * j]!.time + 5;
    out.push({ type: "input", direction: "send", time: sent, seq: j, bytes: 12 });
    out.push({ type: "audio", direction: "recv", time: sent + audioMs(j), seq: j, tick: 20 * j, sound: "flap", bytes: 30 });
  }
  return out;
}

describe("a press's own metrics", () => {
  it("are keyed by the press's seq, the first send of a seq counting", () => {
    const r = rows((j) => j);
    // A re-sent press 3 (after a reconnection) keeps its first send time.
    r.push({ type: "input", direction: "send", time: 99_999, seq: 3, bytes: 12 });
    const presses = pressMetrics(parseLatencyCsv(latencyCsv(r)));
    expect(presses.input_to_audio.size).toBe(15);
    expect(presses.input_to_audio.get(3)).toBe(3);
    expect(presses.input_to_audio.get(15)).toBe(15);
  });
});

describe("the duet's press-by-press penalty", () => {
  it("pairs press k of run N with press k of the run beside it, and takes its interval over runs", async () => {
    const root = await tempDir();
    const duet = (partner: string, skew: number) => ({ partner, reference: "monolith", startSkewMs: skew });
    for (const run of [1, 2, 3, 4]) {
      // The machine's moment moves both sides of a press alike (press k gets k ms slower in run N's
      // moments, and every run is slower than the last); microservices adds 1.5 ms to each press,
      // 1.7 in even runs.
      const moment = (j: number) => 2 + run * 4 + ((j * 7) % 5);
      await writeRun(root, { deployment: "monolith", seed: SEED, run, rows: rows(moment), duet: duet("microservices", -30) });
      await writeRun(root, {
        deployment: "microservices",
        seed: SEED,
        run,
        rows: rows((j) => moment(j) + 1.5 + (run % 2 === 0 ? 0.2 : 0)),
        duet: duet("monolith", 30 + run),
      });
    }
    // A run of another study (no duet) is not paired press by press.
    await writeRun(root, { deployment: "multiaz", seed: SEED, run: 1, rows: rows(() => 9) });
    const { runs, problems } = await discoverRuns(root);
    const report = buildReport(runs, problems, [root]);
    const penalties = duetPenalties(report.groups);
    expect(penalties.map((p) => `${p.deployment}/${p.metric}`)).toEqual(["microservices/input_to_audio", "microservices/input_to_effect"]);
    const audio = penalties[0]!;
    expect(audio).toMatchObject({ reference: "monolith", seed: SEED, pairs: 4, presses: 60, includesZero: false, startSkewMs: 32.5 });
    expect(audio.meanMs).toBeCloseTo(1.6, 6);
    expect(audio.lowMs).toBeGreaterThanOrEqual(1.5 - 1e-9);
    expect(audio.highMs).toBeLessThanOrEqual(1.7 + 1e-9);
    // The run-median pairing still works on the same runs.
    expect(pairedPenalties(report.groups).find((p) => p.deployment === "microservices" && p.metric === "input_to_audio")).toMatchObject({ pairs: 4 });
    const table = duetTable(report);
    expect(table.rows[0]!.slice(0, 6)).toEqual(["microservices", "monolith", SEED, "input-to-audio", "4", "60"]);
    expect(table.rows[0]![8]).toBe("no");
  });

  it("has no rows without duet runs", async () => {
    const root = await tempDir();
    await writeRun(root, { deployment: "monolith", seed: SEED, run: 1, rows: rows(() => 2) });
    await writeRun(root, { deployment: "microservices", seed: SEED, run: 1, rows: rows(() => 4) });
    const { runs, problems } = await discoverRuns(root);
    expect(duetTable(buildReport(runs, problems, [root])).rows).toEqual([]);
  });
});

describe("the start barrier", () => {
  it("opens when every party has arrived or left, not before", async () => {
    const barrier = new StartBarrier(3);
    let opened = false;
    void barrier.opened.then(() => {
      opened = true;
    });
    const a = barrier.arrive();
    barrier.leave();
    await new Promise((r) => setTimeout(r, 10));
    expect(opened).toBe(false);
    const c = barrier.arrive();
    await Promise.all([a, c]);
    expect(opened).toBe(true);
  });
});

describe("pnpm study --duet", () => {
  it("takes two different deployments, and refuses what cannot go with it", () => {
    expect(parseStudyArgs(["--duet", "monolith,microservices"], REPO, REPO)).toMatchObject({ duet: true, deployments: ["monolith", "microservices"] });
    expect(parseStudyArgs([], REPO, REPO)).toMatchObject({ duet: false, pressOnTicks: false });
    expect(parseStudyArgs(["--duet", "monolith,microservices", "--press-on-ticks"], REPO, REPO).pressOnTicks).toBe(true);
    expect(() => parseStudyArgs(["--duet", "monolith"], REPO, REPO)).toThrow(/two different deployments/);
    expect(() => parseStudyArgs(["--duet", "monolith,monolith"], REPO, REPO)).toThrow(/two different deployments/);
    expect(() => parseStudyArgs(["--duet", "a,b,c"], REPO, REPO)).toThrow(/two different deployments/);
    expect(() => parseStudyArgs(["--duet", "monolith,microservices", "--sequential"], REPO, REPO)).toThrow(/cannot go with --sequential/);
    expect(() => parseStudyArgs(["--duet", "monolith,microservices", "--deployments", "multiaz"], REPO, REPO)).toThrow(/cannot go with --deployments/);
    expect(() => parseStudyArgs(["--duet", "monolith,microservices", "--fault", "engine-kill@100"], REPO, REPO)).toThrow(/cannot go with --fault/);
  });
});
