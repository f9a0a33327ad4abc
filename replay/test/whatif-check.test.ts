import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadTopology } from "@flaplab/runtime";
import { capacitySummary, fitLoadCpu, predictFromOtherLevels, predictGroupCpuUs, TOTAL_ROW, withTotals } from "../src/whatif/capacity-check.js";
import { capacityPlan } from "../src/whatif/capacity.js";
import { splitLayout } from "../src/whatif/placements.js";
import { compareCheck, planCheck, repositoryPlacements } from "../src/whatif/check.js";
import { runWhatifCli, TOPOLOGIES_DIR } from "../src/whatif/cli.js";
import { cpuByComponent } from "../src/whatif/cpu.js";
import { fitModel } from "../src/whatif/fit.js";
import { placementKey } from "../src/whatif/generate.js";
import { layoutOf } from "../src/whatif/layout.js";
import type { StudyRun } from "../src/whatif/study.js";
import { FIXTURE_STUDY, fixtureStudy } from "./whatif-fixture.js";

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe("pnpm whatif --validate: the placements it checks", () => {
  it("are the four deployments and generated ones that play as no repository topology, spread from the best to the worst", async () => {
    const { study, table } = await fixtureStudy();
    const model = fitModel(study, table);
    const dir = await mkdtemp(join(tmpdir(), "whatif-check-"));
    dirs.push(dir);
    const placements = await planCheck(model, table, { regions: ["us-east-1", "eu-west-1"], zones: ["a", "b"], browser: { region: "us-east-1", zone: "a" }, count: 4, dir, topologiesDir: TOPOLOGIES_DIR });
    expect(placements.map((p) => p.deployment)).toEqual(["monolith", "microservices", "multiaz", "multiregion", "whatif-check-1", "whatif-check-2", "whatif-check-3", "whatif-check-4"]);
    const repository = new Set((await repositoryPlacements(TOPOLOGIES_DIR)).map((r) => placementKey(r.placed, table)));
    const generated = placements.filter((p) => p.origin === "generated");
    for (const p of generated) {
      expect(p.inRepository).toBe(false);
      expect(repository.has(placementKey(p, table))).toBe(false);
      // The file runs as written: its placement is the predicted one.
      const t = await loadTopology(p.topology);
      expect(t.name).toBe(p.deployment);
      expect(placementKey({ layout: layoutOf(t), browser: t.browser }, table)).toBe(placementKey(p, table));
    }
    const audio = generated.map((p) => Object.values(p.predicted).reduce((s, x) => s + x.input_to_audio, 0));
    expect([...audio].sort((a, b) => a - b)).toEqual(audio);
    expect(audio.at(-1)! - audio[0]!).toBeGreaterThan(50);
  });

  it("sets each measured median beside its prediction, and compares with a study's runs without running one", async () => {
    const { study, table } = await fixtureStudy();
    const model = fitModel(study, table);
    const dir = await mkdtemp(join(tmpdir(), "whatif-check-"));
    dirs.push(dir);
    const placements = await planCheck(model, table, { regions: ["us-east-1"], zones: ["a"], browser: { region: "us-east-1", zone: "a" }, count: 1, dir, topologiesDir: TOPOLOGIES_DIR });
    const rows = compareCheck(placements, study, study.deployments);
    // The fixture ran the four deployments only: no row for the generated placement.
    expect(new Set(rows.map((r) => r.deployment))).toEqual(new Set(["monolith", "microservices", "multiaz", "multiregion"]));
    const mono = rows.find((r) => r.deployment === "monolith" && r.metric === "input_to_audio")!;
    expect(mono.errorMs).toBeCloseTo(mono.predictedMs! - mono.measuredMs, 9);

    const out: string[] = [];
    const code = await runWhatifCli(["--validate", "--study", FIXTURE_STUDY, "--measured", FIXTURE_STUDY, "--out", dir], { cwd: process.cwd(), out: (l) => out.push(l), err: (l) => out.push(l) });
    expect(code, out.join("\n")).toBe(0);
    expect(out.join("\n")).toMatch(/^\| multiregion +\| +\d+ \| +start game \|/m);
    const file = JSON.parse(await readFile(join(dir, "whatif.json"), "utf8")) as { placements: { deployment: string; origin: string }[] };
    expect(file.placements.map((p) => [p.deployment, p.origin])).toEqual(study.deployments.map((d) => [d, "standard"]));
  });
});

describe("CPU figures", () => {
  const run = (seconds: number, idleUsPerSecond: number, startUs: number, perSecondUs: number): StudyRun => {
    const playMs = seconds * 1000;
    const windowMs = playMs + 2000;
    const play = playMs * idleUsPerSecond / 1000 + 5000 + perSecondUs * seconds;
    return {
      dir: "",
      deployment: "microservices",
      seed: String(seconds),
      topology: undefined as never,
      ticks: seconds * 30,
      samples: { input_to_audio: [], input_to_effect: [], start_game: [] },
      calls: [],
      serverCpu: {
        windowMs,
        playWindowMs: playMs,
        idleWindowMs: 1000,
        groups: [{ group: "engine", components: ["engine"], cpuUs: play + startUs + 2 * idleUsPerSecond, playCpuUs: play, idleCpuUs: idleUsPerSecond }],
      },
    };
  };

  it("takes a run apart: the idle background, the start, and the play net of idle (once per game + per second)", () => {
    const [engine] = cpuByComponent([run(10, 20_000, 30_000, 40_000), run(60, 20_000, 30_000, 40_000)]);
    expect(engine!.idleUsPerSecond).toBeCloseTo(20_000, 6);
    expect(engine!.startUs).toBeCloseTo(30_000, 6);
    expect(engine!.perGameSecondUs).toBeCloseTo(40_000, 6);
    expect(engine!.perGameUs).toBeCloseTo(30_000 + 5000, 6);
  });

  it("predicts a process's CPU under bots: idle × window, auth's start per account, the others' per game, and the play", () => {
    const figures = [
      { component: "auth", runs: 1, idleUsPerSecond: 1, startUs: 500_000, perGameUs: 500_000, perGameSecondUs: 0, perCallUs: null, calls: "" },
      { component: "engine", runs: 1, idleUsPerSecond: 1, startUs: 10_000, perGameUs: 12_000, perGameSecondUs: 30_000, perCallUs: null, calls: "" },
    ];
    const work = { windowS: 40, idleUsPerSecond: 20_000, games: 30, accounts: 8, gameSeconds: 400 };
    expect(predictGroupCpuUs(figures, ["auth"], work)).toBe(40 * 20_000 + 8 * 500_000);
    expect(predictGroupCpuUs(figures, ["engine"], work)).toBe(40 * 20_000 + 30 * 12_000 + 400 * 30_000);
  });
});

describe("capacity from the other levels", () => {
  const row = (level: number, gameSeconds: number, measuredCpuS: number) => ({
    level, group: "engine", components: ["engine"], windowS: 40, games: level * 2, accounts: level, gameSeconds, idleCpuPerS: 0.001, predictedCpuS: 0, measuredCpuS, error: 0,
  });

  it("predicts each level from the line through the others: exact when the levels lie on one", () => {
    // CPU a second = 0.001 idle + 0.02 fixed + 0.01 per game-second a second.
    const at = (gs: number) => (0.001 + 0.02 + 0.01 * (gs / 40)) * 40;
    const rows = predictFromOtherLevels([row(4, 140, at(140)), row(8, 280, at(280)), row(16, 560, at(560))]);
    for (const r of rows) expect(r.fromLevelsError).toBeCloseTo(0, 9);
  });

  it("says nothing with one other level, and shows a level off the line", () => {
    expect(predictFromOtherLevels([row(4, 140, 2), row(8, 280, 3)]).map((r) => r.fromLevelsCpuS)).toEqual([null, null]);
    const rows = predictFromOtherLevels([row(4, 100, 1.04), row(8, 200, 2.04), row(16, 400, 8)]);
    // The line through levels 4 and 8 gives 4.04 s at 400 game-seconds: half what level 16 measured.
    expect(rows[2]!.fromLevelsCpuS).toBeCloseTo(4.04, 9);
    expect(rows[2]!.fromLevelsError).toBeCloseTo(4.04 / 8 - 1, 9);
  });
});

describe("CPU under load", () => {
  // Engine: 0.002 idle + 0.02 active + 0.008 a game-second; each game's start 5 ms. Auth: logins of 600 ms per account.
  const level = (players: number) => {
    const windowS = 40;
    const gameSeconds = players * 30;
    const games = players * 2;
    return [
      { level: players, group: "engine", components: ["engine"], windowS, games, accounts: players, gameSeconds, idleCpuPerS: 0.002, predictedCpuS: 0, measuredCpuS: (0.002 + 0.02 + 0.008 * (gameSeconds / windowS)) * windowS + games * 0.005, error: 0 },
      { level: players, group: "auth", components: ["auth"], windowS, games, accounts: players, gameSeconds, idleCpuPerS: 0, predictedCpuS: 0, measuredCpuS: players * 0.6, error: 0 },
    ];
  };
  const rows = [4, 8, 16].flatMap(level);
  const starts = [{ component: "engine", startUs: 5_000 }, { component: "auth", startUs: 600_000 }];

  it("fits each process's activity and cost per game-second net of idle and starts (auth's per account)", () => {
    const fit = fitLoadCpu(rows, starts);
    const engine = fit.find((f) => f.component === "engine")!;
    expect(engine.idleUsPerSecond).toBeCloseTo(2_000, 6);
    expect(engine.activeUsPerSecond).toBeCloseTo(20_000, 6);
    expect(engine.perGameSecondUs).toBeCloseTo(8_000, 6);
    expect(engine.levels).toEqual([4, 8, 16]);
    const auth = fit.find((f) => f.component === "auth")!;
    expect(auth.activeUsPerSecond).toBeCloseTo(0, 6);
    expect(auth.perGameSecondUs).toBeCloseTo(0, 6);
    // An earlier check's figures predict these levels exactly.
    for (const r of predictFromOtherLevels(rows, fit)) expect(r.fromLoadError).toBeCloseTo(0, 9);
  });

  it("fits a start under load where the levels' games differ in length, and keeps the study's where they do not", () => {
    // Worldgen: 4 ms a game and nothing a game-second; the study says 9 ms (a cold process). Games of 8, 17 and 34 s.
    const varied = [[4, 8], [12, 17], [24, 34]].map(([players, length]) => {
      const windowS = 45;
      const games = Math.round((players! * windowS) / length!);
      return { level: players!, group: "worldgen", components: ["worldgen"], windowS, games, accounts: players!, gameSeconds: games * length!, idleCpuPerS: 0.001, predictedCpuS: 0, measuredCpuS: 0.001 * windowS + games * 0.004, error: 0 };
    });
    const [fitted] = fitLoadCpu(varied, [{ component: "worldgen", startUs: 9_000 }]);
    expect(fitted).toMatchObject({ component: "worldgen", startFrom: "load" });
    expect(fitted!.startUs).toBeCloseTo(4_000, 3);
    expect(fitted!.perGameSecondUs).toBeCloseTo(0, 3);
    expect(fitted!.activeUsPerSecond).toBeCloseTo(0, 3);
    // The same process with every game 17 s long: the start is the study's, the rest fitted around it.
    const even = varied.map((r) => ({ ...r, gameSeconds: r.games * 17 }));
    const [kept] = fitLoadCpu(even, [{ component: "worldgen", startUs: 9_000 }]);
    expect(kept).toMatchObject({ startUs: 9_000, startFrom: "study", activeUsPerSecond: 0, perGameSecondUs: 0 });
    // And the engine of the rows above (games of one length): the study's 5 ms start, activity and game-seconds fitted.
    expect(fitLoadCpu(rows, starts).find((f) => f.component === "engine")).toMatchObject({ startUs: 5_000, startFrom: "study" });
  });

  it("sums a prediction's errors up as --validate does: the median absolute error and the rows within ± 15 %", () => {
    const row = (error: number | null) => ({ ...rows[0]!, fromLevelsCpuS: null, fromLevelsError: null, fromLoadCpuS: error === null ? null : 1, fromLoadError: error });
    const errs = [0.05, -0.12, 0.4, -0.2, null, 0.01];
    expect(capacitySummary(errs.map(row), (r) => r.fromLoadError)).toEqual({ medianAbs: 0.12, within: 3, rows: 5 });
    expect(capacitySummary([row(null)], (r) => r.fromLoadError)).toEqual({ medianAbs: null, within: 0, rows: 0 });
  });

  it("adds each level's processes up in a row of its own", () => {
    const checked = withTotals(predictFromOtherLevels(rows, fitLoadCpu(rows, starts)));
    expect(checked.map((r) => `${r.level} ${r.group}`)).toEqual(["4 engine", "4 auth", `4 ${TOTAL_ROW}`, "8 engine", "8 auth", `8 ${TOTAL_ROW}`, "16 engine", "16 auth", `16 ${TOTAL_ROW}`]);
    const total = checked[5]!;
    expect(total.measuredCpuS).toBeCloseTo(checked[3]!.measuredCpuS + checked[4]!.measuredCpuS, 9);
    expect(total.fromLoadError).toBeCloseTo(0, 9);
  });

  it("sizes with them: each task's idle and activity, each player's game-seconds, each start", () => {
    const fit = fitLoadCpu(rows, starts);
    const here = { region: "us-east-1", zone: "a" };
    const layout = splitLayout({ auth: here, worldgen: here, engine: here, initiator: here, music: here, score: here });
    const model = { format: "flaplab-whatif-model/1" as const, study: "", fittedOn: [], seeds: ["1"], gameSeconds: { "1": 50 }, actions: [], metrics: {},
      cpu: ["auth", "worldgen", "engine", "initiator", "music", "score"].map((component) => ({ component, runs: 1, idleUsPerSecond: 0, startUs: 0, perGameUs: 1_000, perGameSecondUs: 1_000, perCallUs: null, calls: "" })) };
    const row = capacityPlan(model, layout, 1000, 0.5, fit).rows.find((r) => r.group === "engine")!;
    // 1000 players × 8 ms + 20 starts a second × 5 ms = 8.1 cores of work; n tasks of 1 vCPU at 50 % hold 8.1 + 0.022 n ≤ 0.5 n from n = 17.
    expect(row.tasks).toBe(17);
    expect(row.cores).toBeCloseTo(8.1 + 17 * 0.022, 9);
  });
});
