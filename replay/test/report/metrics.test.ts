import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { generateReport, parseLatencyCsv, tickFrameTimes, type Stats } from "../../src/report/index.js";
import { expectClose, latencyCsv, nearestRank, rttRows, removeTempDirs, tempDir, tickFrames, writeRun, type Row } from "./fixtures.js";

afterAll(removeTempDirs);

interface MetricsJson {
  groups: {
    deployment: string;
    seed: string;
    metrics: Record<string, Stats | null>;
    rpc: { label: string; stats: Stats }[];
    runs: { id: string; status: string; values: Record<string, number[] | null> | null }[];
  }[];
}

const readJson = async (dir: string): Promise<MetricsJson> => JSON.parse(await readFile(join(dir, "metrics.json"), "utf8")) as MetricsJson;

function expectStats(stats: Stats | null | undefined, samples: readonly number[]): void {
  expect(stats).toBeTruthy();
  const s = stats!;
  expect(s.samples).toBe(samples.length);
  expectClose(s.min, Math.min(...samples));
  expectClose(s.max, Math.max(...samples));
  expectClose(s.mean, samples.reduce((a, b) => a + b, 0) / samples.length);
  expectClose(s.p10, nearestRank(samples, 10));
  expectClose(s.median, nearestRank(samples, 50));
  expectClose(s.p90, nearestRank(samples, 90));
  expectClose(s.p99, nearestRank(samples, 99));
  expectClose(s.p99_9, nearestRank(samples, 99.9));
}

/**
 * 101 tick frames 1, 2, …, 100 ms apart. Input j (1…20) is sent 0.25 ms after tick 9+j; an ack
 * frame reflects it 0.5·j ms later, its flap sound arrives 20+j ms later, and the next tick comes
 * (10+j) − 0.25 ms later.
 */
function knownRun(): { rows: Row[]; effect: number[]; nextFrame: number[]; audio: number[] } {
  const gaps = Array.from({ length: 100 }, (_, i) => i + 1);
  const ticks = tickFrames(1000, gaps);
  const rows: Row[] = [...rttRows(12.5, 4.25)];
  const effect: number[] = [];
  const nextFrame: number[] = [];
  const audio: number[] = [];
  const acks: Row[] = [];
  for (let j = 1; j <= 20; j++) {
    const sent = ticks[9 + j]!.time + 0.25;
    rows.push({ type: "input", direction: "send", time: sent, seq: j, bytes: 12 });
    acks.push({ type: "frame", direction: "recv", time: sent + 0.5 * j, tick: 9 + j, reflectedSeq: j, bytes: 40, kind: "ack" });
    rows.push({ type: "audio", direction: "recv", time: sent + 20 + j, seq: j, tick: 10 + j, sound: "flap", bytes: 30 });
    effect.push(0.5 * j);
    nextFrame.push(10 + j - 0.25);
    audio.push(20 + j);
  }
  // A tick frame reflects every input acked before it.
  for (const t of ticks) t.reflectedSeq = acks.filter((a) => a.time <= t.time).length;
  rows.push({ type: "audio", direction: "recv", time: 1500, seq: 0, tick: 40, sound: "point", bytes: 30 });
  return { rows: [...rows, ...ticks, ...acks], effect, nextFrame, audio };
}

describe("metrics of a hand-made run", () => {
  it("keeps the callee's share of a networked call apart from the caller's whole call", async () => {
    const root = await tempDir();
    const out = await tempDir();
    const ms = (list: number[], src: string, side: "client" | "server") =>
      list.map((v) => ({ src, dst: src === "external" ? "auth" : "music", dstVerb: src === "external" ? "Login" : "PlayMusic", durationNs: v * 1e6, side }));
    await writeRun(root, {
      deployment: "microservices",
      seed: "6977347407732442987",
      run: 1,
      rows: knownRun().rows,
      rpc: [...ms([2, 3, 4], "engine", "client"), ...ms([0.5, 0.75, 1], "engine", "server"), ...ms([7], "external", "server")],
    });
    await generateReport({ inputs: [root], outDir: out });
    const g = (await readJson(out)).groups[0]!;
    expect(g.rpc.map((r) => r.label)).toEqual(["engine → music PlayMusic", "engine → music PlayMusic (callee)", "external → auth Login"]);
    expectStats(g.rpc[0]!.stats, [2, 3, 4]);
    expectStats(g.rpc[1]!.stats, [0.5, 0.75, 1]);
    expectStats(g.rpc[2]!.stats, [7]);
    const csv = await readFile(join(out, "metrics.csv"), "utf8");
    expect(csv).toContain("microservices,6977347407732442987,rpc:engine->music:PlayMusic,3,");
    expect(csv).toContain("microservices,6977347407732442987,rpc:engine->music:PlayMusic:callee,3,");
    expect(await readFile(join(out, "report.md"), "utf8")).toContain("| engine → music PlayMusic (callee) | 3 |");
  });

  it("reports the known percentiles of every metric", async () => {
    const root = await tempDir();
    const out = await tempDir();
    const run = knownRun();
    await writeRun(root, {
      deployment: "monolith",
      seed: "6977347407732442987",
      run: 1,
      rows: run.rows,
      rpc: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((ms) => ({ src: "engine", dst: "music", dstVerb: "PlaySound", durationNs: ms * 1e6 })),
    });
    await generateReport({ inputs: [root], outDir: out });
    const json = await readJson(out);
    expect(json.groups).toHaveLength(1);
    const g = json.groups[0]!;
    expect(g.deployment).toBe("monolith");
    expect(g.seed).toBe("6977347407732442987");

    const interArrival = Array.from({ length: 100 }, (_, i) => i + 1);
    expectStats(g.metrics["frame_inter_arrival"], interArrival);
    // The plain numbers, to within HdrHistogram's 3 significant digits.
    const ia = g.metrics["frame_inter_arrival"]!;
    expect(ia.samples).toBe(100);
    expect(ia.min).toBe(1);
    expect(ia.max).toBe(100);
    expect(ia.mean).toBe(50.5);
    expect(ia.p10).toBeCloseTo(10, 1);
    expect(ia.median).toBeCloseTo(50, 1);
    expect(ia.p90).toBeCloseTo(90, 1);
    expect(ia.p99).toBeCloseTo(99, 1);

    expectStats(g.metrics["input_to_effect"], run.effect);
    expectClose(g.metrics["input_to_effect"]!.median, 5);
    expectStats(g.metrics["input_to_next_frame"], run.nextFrame);
    expectStats(g.metrics["input_to_audio"], run.audio);
    expectStats(g.metrics["auth"], [12.5]);
    expectStats(g.metrics["start_game"], [4.25]);

    expect(g.rpc.map((r) => r.label)).toEqual(["engine → music PlaySound"]);
    expectStats(g.rpc[0]!.stats, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);

    // Raw per-run values are kept.
    expect(g.runs[0]!.values!["frame_inter_arrival"]).toEqual(interArrival);
    expect(g.runs[0]!.values!["input_to_effect"]).toEqual(run.effect);

    const csv = await readFile(join(out, "metrics.csv"), "utf8");
    expect(csv.split("\n")[0]).toBe("deployment,seed,metric,samples,min,p10,median,mean,p90,p99,p99_9,max");
    const line = csv.split("\n").find((l) => l.startsWith("monolith,6977347407732442987,frame_inter_arrival,"))!;
    const cells = line.split(",");
    expect(cells[3]).toBe("100");
    expect(Number(cells[6])).toBeCloseTo(50, 1);
    expect(csv).toContain("monolith,6977347407732442987,rpc:engine->music:PlaySound,10,");

    const md = await readFile(join(out, "report.md"), "utf8");
    expect(md).toContain("| metric | samples | min | p10 | median | mean | p90 | p99 | p99.9 | max |");
    expect(md).toMatch(/\| frame inter-arrival \| 100 \| 1\.00 \| 10\.0 \| 50\.0 \| 50\.5 \| 90\.0 \| 99\.0 \| 100 \| 100 \|/);
  });

  it("treats every frame as a tick frame when the log has no kind column", () => {
    const csv = latencyCsv([
      { type: "frame", direction: "recv", time: 0, tick: 0, reflectedSeq: 0 },
      { type: "frame", direction: "recv", time: 10, tick: 0, reflectedSeq: 1, kind: "ack" },
      { type: "frame", direction: "recv", time: 33, tick: 1, reflectedSeq: 1 },
    ]);
    expect(tickFrameTimes(parseLatencyCsv(csv))).toEqual([0, 33]);
    const withoutKind = csv
      .split("\n")
      .map((l) => l.split(",").slice(0, 10).join(","))
      .join("\n");
    expect(tickFrameTimes(parseLatencyCsv(withoutKind))).toEqual([0, 10, 33]);
  });

  it("names the line of a malformed latency.csv", () => {
    expect(() => parseLatencyCsv("type,direction,time\ninput,send,12.5\nframe,recv,abc\n")).toThrow(/line 3: time "abc" is not a number/);
    expect(() => parseLatencyCsv("type,time\ninput,1\n")).toThrow(/header lacks direction/);
  });
});

describe("group order", () => {
  it("lists the study's deployments nearest first, then any other by name, within each seed", async () => {
    const root = await tempDir();
    const out = await tempDir();
    for (const deployment of ["zeta", "multiregion", "alpha", "microservices", "multiaz", "monolith"]) {
      await writeRun(root, { deployment, seed: "1", run: 1, rows: [...rttRows(), ...tickFrames(100, [10, 10])] });
    }
    await generateReport({ inputs: [root], outDir: out });
    const groups = (await readJson(out)).groups as { deployment: string }[];
    expect(groups.map((g) => g.deployment)).toEqual(["monolith", "microservices", "multiaz", "multiregion", "alpha", "zeta"]);
  });
});

describe("pooling runs", () => {
  it("takes the median of the pooled samples, not the mean of per-run medians", async () => {
    const root = await tempDir();
    const out = await tempDir();
    // Run 1: seven gaps of 10 ms (median 10). Run 2: four gaps of 50 ms (median 50).
    // Pooled: 7 × 10 and 4 × 50, so median 10 and p90 50; the mean of the medians would be 30.
    await writeRun(root, { deployment: "monolith", seed: "1", run: 1, rows: [...rttRows(), ...tickFrames(100, Array(7).fill(10))] });
    await writeRun(root, { deployment: "monolith", seed: "1", run: 2, rows: [...rttRows(20, 6), ...tickFrames(100, Array(4).fill(50))] });
    await generateReport({ inputs: [root], outDir: out });
    const g = (await readJson(out)).groups[0]!;
    const ia = g.metrics["frame_inter_arrival"]!;
    expect(ia.samples).toBe(11);
    expectClose(ia.median, 10);
    expect(Math.abs(ia.median! - 30)).toBeGreaterThan(1);
    expectClose(ia.p90, 50);
    expectClose(ia.mean, (7 * 10 + 4 * 50) / 11);
    // Auth: one sample per run, pooled.
    expect(g.metrics["auth"]!.samples).toBe(2);
    expect(g.metrics["auth"]!.max).toBe(20);
    expect(g.runs.map((r) => r.values!["frame_inter_arrival"]!.length)).toEqual([7, 4]);
  });

  it("pools only ok runs and lists failed runs with their reason", async () => {
    const root = await tempDir();
    const out = await tempDir();
    await writeRun(root, { deployment: "monolith", seed: "1", run: 1, rows: tickFrames(0, [33, 33]) });
    await writeRun(root, {
      deployment: "monolith",
      seed: "1",
      run: 2,
      status: "failed",
      failure: { reason: "score 3 differs from the simulator's 7", stage: "gameover" },
      score: 3,
      rows: tickFrames(0, [500, 500]),
    });
    const { report } = await generateReport({ inputs: [root], outDir: out });
    const g = report.groups[0]!;
    expect(g.pooled.map((r) => r.id)).toEqual(["run-001"]);
    expect(g.metrics.frame_inter_arrival!.max).toBe(33);
    const html = await readFile(join(out, "report.html"), "utf8");
    expect(html).toContain("score 3 differs from the simulator's 7");
    const md = await readFile(join(out, "report.md"), "utf8");
    expect(md).toContain("| run-002 | failed | gameover | score 3 differs from the simulator's 7 |");
    expect(md).toContain("| run-002 | failed | 3 | 7 | 402 | 0 | 0.400 / 3.00 |");
  });
});
