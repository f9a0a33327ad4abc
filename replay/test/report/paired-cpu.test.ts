import { afterAll, describe, expect, it } from "vitest";
import { buildReport } from "../../src/report/aggregate.js";
import { cpuRows } from "../../src/report/cpu.js";
import { discoverRuns } from "../../src/report/load.js";
import { baselineOf, bootstrapMean, pairedPenalties } from "../../src/report/paired.js";
import { penaltyTable } from "../../src/report/tables.js";
import { roundOrder } from "../../src/study/study.js";
import { removeTempDirs, rttRows, tempDir, tickFrames, writeRun, type Row } from "./fixtures.js";

afterAll(removeTempDirs);

const SEED = "6977347407732442987";

/** A game whose every input's sound comes `audioMs` after it (15 inputs). */
function rowsWithAudio(audioMs: number): Row[] {
  const ticks = tickFrames(500, Array.from({ length: 400 }, () => 33));
  const rows: Row[] = [...rttRows(), ...ticks];
  for (let j = 1; j <= 15; j++) {
    const sent = ticks[20 * j]!.time + 5;
    rows.push({ type: "input", direction: "send", time: sent, seq: j, bytes: 12 });
    rows.push({ type: "audio", direction: "recv", time: sent + audioMs, seq: j, tick: 20 * j, sound: "flap", bytes: 30 });
  }
  return rows;
}

async function reportOf(runs: readonly { deployment: string; run: number; audioMs: number; serverCpu?: unknown; rpc?: { src: string; dst: string; dstVerb: string; durationNs: number; side?: "client" | "server" }[] }[]) {
  const root = await tempDir();
  for (const r of runs) {
    await writeRun(root, { deployment: r.deployment, seed: SEED, run: r.run, rows: rowsWithAudio(r.audioMs), ...(r.serverCpu === undefined ? {} : { serverCpu: r.serverCpu }), ...(r.rpc ? { rpc: r.rpc } : {}) });
  }
  const { runs: loaded, problems } = await discoverRuns(root);
  return buildReport(loaded, problems, [root]);
}

describe("the paired penalty", () => {
  it("is the mean of round-by-round differences, with an interval from a fixed seed", () => {
    const a = bootstrapMean([1, 2, 3, 4, 5]);
    expect(a.mean).toBe(3);
    expect(a.low).toBeGreaterThanOrEqual(1);
    expect(a.low).toBeLessThan(3);
    expect(a.high).toBeGreaterThan(3);
    expect(a.high).toBeLessThanOrEqual(5);
    expect(bootstrapMean([1, 2, 3, 4, 5])).toEqual(a);
    // All pairs equal: no spread.
    expect(bootstrapMean([2, 2, 2])).toEqual({ mean: 2, low: 2, high: 2 });
  });

  it("pairs run N with run N, says when the interval includes zero, and needs two pairs for one", async () => {
    const report = await reportOf([
      // The machine gets slower each round, by more than the penalty: pairing removes it.
      ...[1, 2, 3, 4].map((run) => ({ deployment: "monolith", run, audioMs: 2 + run * 3 })),
      ...[1, 2, 3, 4].map((run) => ({ deployment: "microservices", run, audioMs: 2 + run * 3 + 1.5 + (run % 2) * 0.2 })),
      ...[1, 2, 3].map((run) => ({ deployment: "multiaz", run, audioMs: 2 + run * 3 + (run === 2 ? 1 : -1) })),
      { deployment: "multiregion", run: 1, audioMs: 100 },
    ]);
    const audio = (d: string) => pairedPenalties(report.groups).find((p) => p.deployment === d && p.metric === "input_to_audio")!;
    expect(audio("microservices")).toMatchObject({ pairs: 4, includesZero: false });
    expect(audio("microservices").meanMs).toBeCloseTo(1.6, 1);
    expect(audio("microservices").lowMs).toBeGreaterThanOrEqual(1.5 - 0.01);
    expect(audio("microservices").highMs).toBeLessThanOrEqual(1.7 + 0.01);
    expect(audio("multiaz")).toMatchObject({ pairs: 3, includesZero: true });
    expect(audio("multiregion")).toMatchObject({ pairs: 1, lowMs: null, highMs: null, includesZero: null });
    const table = penaltyTable(report);
    expect(table.rows.find((r) => r[0] === "microservices" && r[2] === "input-to-audio")?.[6]).toBe("no");
    expect(table.rows.find((r) => r[0] === "multiaz" && r[2] === "input-to-audio")?.[6]).toBe("yes");
  });

  it("compares a deployment over another link with the monolith over that link", () => {
    expect(baselineOf("microservices")).toBe("monolith");
    expect(baselineOf("microservices+websocket")).toBe("monolith+websocket");
  });
});

describe("server CPU per component", () => {
  const cpu = (groups: { group: string; components: string[]; cpuUs: number | null }[]) => ({ windowMs: 14_000, groups });

  it("gives CPU per game-second, per call, per frame, per sound and games per core, from the runs' sums", async () => {
    // 402 ticks = 13.4 game-seconds per run; two runs.
    const rpc = [
      ...Array.from({ length: 14 }, () => ({ src: "engine", dst: "music", dstVerb: "PlayMusic", durationNs: 3e6 })),
      ...Array.from({ length: 14 }, () => ({ src: "engine", dst: "music", dstVerb: "PlayMusic", durationNs: 1e6, side: "server" as const })),
      { src: "engine", dst: "score", dstVerb: "RecordRun", durationNs: 5e6 },
      { src: "initiator", dst: "engine", dstVerb: "StartGame", durationNs: 2e6 },
    ];
    const report = await reportOf([1, 2].map((run) => ({
      deployment: "microservices",
      run,
      audioMs: 5,
      rpc,
      serverCpu: cpu([
        { group: "engine", components: ["engine"], cpuUs: 134_000 * run },
        { group: "music", components: ["music"], cpuUs: 70_000 },
        { group: "score", components: ["score"], cpuUs: null },
      ]),
    })));
    const rows = cpuRows(report.groups[0]!);
    expect(rows.map((r) => r.group)).toEqual(["engine", "music", "all"]);
    const [engine, music, all] = rows;
    expect(engine!.usPerGameSecond).toBeCloseTo((134_000 * 3) / 26.8, 6);
    expect(engine!.usPerFrame).toBeCloseTo((134_000 * 3) / 804, 6);
    expect(engine!.gamesPerCore).toBeCloseTo(1e6 / ((134_000 * 3) / 26.8), 6);
    expect(engine!.msPerGame).toBe(201);
    // The engine's work is its ticks, not its calls; the sum of processes has no per-call figure either.
    expect(engine!.calls).toBe("StartGame ×2");
    expect(engine!.usPerCall).toBeNull();
    expect(all!.usPerCall).toBeNull();
    // The callee's own records (side server) are not second calls.
    expect(music!.usPerCall).toBeCloseTo(140_000 / 28, 6);
    expect(music!.usPerSound).toBeCloseTo(140_000 / 28, 6);
    expect(music!.calls).toBe("PlayMusic ×28");
    expect(all!.usPerGameSecond).toBeCloseTo((134_000 * 3 + 140_000) / 26.8, 6);
    expect(all!.usPerFrame).toBeNull();
  });

  it("splits each game's start (login, StartGame) off its play: per game-second and games per core count the play", async () => {
    const split = (run: number) =>
      ({
        windowMs: 14_000,
        playWindowMs: 13_400,
        idleWindowMs: 1000,
        groups: [
          { group: "engine", components: ["engine"], cpuUs: 134_000 + 6_000 * run, playCpuUs: 134_000, idleCpuUs: 1_000 * run },
          { group: "auth", components: ["auth"], cpuUs: 600_000, playCpuUs: 0, idleCpuUs: 0 },
        ],
      }) as const;
    const report = await reportOf([1, 2].map((run) => ({ deployment: "microservices", run, audioMs: 5, serverCpu: split(run) })));
    const [auth, engine, all] = cpuRows(report.groups[0]!);
    expect(engine).toMatchObject({ msPerGame: 143, startMsPerGame: 9 });
    expect(engine!.usPerGameSecond).toBeCloseTo((134_000 * 2) / 26.8, 6);
    expect(engine!.usPerFrame).toBeCloseTo((134_000 * 2) / 804, 6);
    // Idle 1,000 and 2,000 µs over two 1 s windows: 1,500 µs/s of background, not the game's.
    expect(engine!.idleUsPerSecond).toBeCloseTo(1500, 6);
    expect(engine!.netUsPerGameSecond).toBeCloseTo((134_000 * 2) / 26.8 - 1500, 6);
    expect(engine!.gamesPerCore).toBeCloseTo(1e6 / ((134_000 * 2) / 26.8 - 1500), 6);
    expect(auth).toMatchObject({ msPerGame: 600, startMsPerGame: 600, usPerGameSecond: 0, idleUsPerSecond: 0, gamesPerCore: null });
    expect(all).toMatchObject({ msPerGame: 743, startMsPerGame: 609 });
    expect(all!.gamesPerCore).toBeCloseTo(1e6 / ((134_000 * 2) / 26.8 - 1500), 6);
    // A run without the split (recorded before it existed) makes the row fall back to login-to-game-over.
    const mixed = await reportOf([
      { deployment: "microservices", run: 1, audioMs: 5, serverCpu: split(1) },
      { deployment: "microservices", run: 2, audioMs: 5, serverCpu: { windowMs: 14_000, groups: [{ group: "engine", components: ["engine"], cpuUs: 140_000 }] } },
    ]);
    const [old] = cpuRows(mixed.groups[0]!).filter((r) => r.group === "engine");
    expect(old).toMatchObject({ startMsPerGame: null, idleUsPerSecond: null, netUsPerGameSecond: null });
    expect(old!.usPerGameSecond).toBeCloseTo((140_000 + 140_000) / 26.8, 6);
  });

  it("has no rows for runs that recorded no CPU, and ignores a malformed record", async () => {
    const report = await reportOf([
      { deployment: "monolith", run: 1, audioMs: 3 },
      { deployment: "monolith", run: 2, audioMs: 3, serverCpu: { windowMs: "soon", groups: [] } },
    ]);
    expect(cpuRows(report.groups[0]!)).toEqual([]);
  });
});

describe("the study's rounds", () => {
  it("rotate the order by one each round", () => {
    expect([0, 1, 2, 3].map((r) => roundOrder(["a", "b", "c"], r).join(""))).toEqual(["abc", "bca", "cab", "abc"]);
  });
});
