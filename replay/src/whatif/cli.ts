import { mkdir, writeFile } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { DEFAULT_RTT_FILE, loadRttTable, type RttTable } from "@flaplab/netem";
import { type CapacityPlan, capacityPlan } from "./capacity.js";
import { WhatifInputError } from "./errors.js";
import { capacityCheckTable, capacityTable, cpuTable, loadCpuTable, criticalPath, placementTable, rankingTable, summaryTable, validationTable } from "./format.js";
import { fitModel } from "./fit.js";
import type { LoadCpu } from "./capacity-check.js";
import type { WhatifModel } from "./model.js";
import { checkRegions, parseOptions, type WhatifOptions } from "./options.js";
import { describeLayout, enumerateLayouts, PLACEMENT_RULES, splitLayout } from "./placements.js";
import { comparePredictions, type PlacementPrediction, predictPlacement } from "./predict.js";
import { type CheckedPlacement, compareCheck, placementsOfStudy, planCheck, predictionsFile } from "./check.js";
import { WHATIF_FILE, writePredictionsFile } from "./predictions-file.js";
import { loadStudy, type Study } from "./study.js";
import { topologyFile } from "./topology-file.js";
import { validate, validationSummary } from "./validate.js";

export const TOPOLOGIES_DIR = resolve(import.meta.dirname, "../../../topologies");

export const USAGE = `usage: pnpm whatif --study <dir> --players <region=share,…> [--regions <r,…>] [--zones a,b,c]
                   [--processes split|merged|both] [--top 5] [--out <dir>] [--model-out <file>]
                   [--players-online <n> [--target-cpu 0.7] [--cpu <capacity-check.json>]] [--rtt topologies/rtt.json]
       pnpm whatif --validate --study <dir> [--runs 3] [--trace <file> …] [--placements 4] [--out <dir>]
                   [--measured <study dir> | --leave-one-out]
       pnpm whatif --check-capacity --study <dir> [--deployment microservices] [--load 4,8,16]
                   [--seconds 30] [--game-lengths <s,…>] [--cpu <capacity-check.json>] [--out <dir>]

Fits a model of one game's player-visible paths on a study's runs (pnpm study), predicts the median
input → audio, input → effect and start game of every placement of the six components over the
regions (and zones), ranks them by the players' weighted input → audio, then start game, prints the
best with their critical paths and writes each as a topology file into --out. --players-online
adds the vCPUs, Fargate tasks and hourly cost of the best placement (--cpu: with CPU figures
measured under load). --validate predicts the four deployments and --placements generated ones,
runs them with pnpm study (or reads --measured; --leave-one-out runs nothing) and prints predicted
against measured. --check-capacity runs bot players on a deployment at each --load level (games as
long as the study's, or --game-lengths, one per level) and sets each process's CPU against the
prediction. Exit codes: 0 done, 2 bad input, 1 anything else.`;

export interface Io {
  readonly cwd: string;
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
}

export async function runWhatifCli(argv: readonly string[], io: Io): Promise<number> {
  try {
    const options = parseOptions(argv);
    if (options.help) {
      io.out(USAGE);
      return 0;
    }
    await run(options, io);
    return 0;
  } catch (err) {
    if (err instanceof WhatifInputError) {
      io.err(`whatif: ${err.message}`);
      return 2;
    }
    io.err(`whatif: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}

async function run(options: WhatifOptions, io: Io): Promise<void> {
  const rttFile = options.rtt === undefined ? DEFAULT_RTT_FILE : resolve(io.cwd, options.rtt);
  const table = await loadRttTable(rttFile).catch((err: Error) => {
    throw new WhatifInputError(err.message);
  });
  checkRegions(options.players.map((p) => p.region), table, "--players");
  checkRegions(options.regions, table, "--regions");
  const study = await loadStudy(resolve(io.cwd, options.study), TOPOLOGIES_DIR);
  if (options.checkCapacity) {
    await capacityCheck(study, table, options, io);
    return;
  }
  if (options.validate && !options.leaveOneOut) {
    await check(study, table, options, io);
    return;
  }
  if (options.validate) {
    const rows = validate(study, table);
    io.out(`Leave-one-out: each deployment predicted from a model fitted on the others (${study.runs.length} runs of ${study.deployments.join(", ")}).`);
    io.out(validationTable(rows));
    io.out("");
    io.out(`Goal: |error| ≤ max(10 %, 3 ms).`);
    io.out(summaryTable(validationSummary(rows)));
    if (options.modelOut !== undefined) await writeModel(fitModel(study, table), resolve(io.cwd, options.modelOut), io);
    return;
  }
  const model = fitModel(study, table);
  if (options.modelOut !== undefined) await writeModel(model, resolve(io.cwd, options.modelOut), io);
  const loadCpu = options.cpu === undefined ? undefined : await (await import("./capacity-check.js")).readLoadCpu(resolve(io.cwd, options.cpu));
  const engines = options.playersOnline === undefined ? 1 : enginesNeeded(model, options, loadCpu);
  const ranked = rank(model, options, table, engines);
  io.out(`Model: ${study.runs.length} runs of ${study.deployments.join(", ")}; seeds ${study.seeds.join(", ")} (each placement's figures are the seeds' mean).`);
  io.out(`Players: ${options.players.map((p) => `${p.region} ${(p.weight * 100).toFixed(0)} %`).join(", ")}; regions ${options.regions.join(", ")}; zones ${options.zones.join(", ")}; processes ${options.processes}.`);
  io.out(`Rules: ${PLACEMENT_RULES.join("; ")}.${engines > 1 ? ` ${engines} engines are needed for ${options.playersOnline} players online, so the engine-region rule applies.` : ""}`);
  io.out(`Placements: ${ranked.count} enumerated. The best ${ranked.best.length}, by weighted median (ms):`);
  io.out(rankingTable(ranked.best));
  const heaviest = [...options.players].sort((a, b) => b.weight - a.weight)[0]!;
  for (const [i, p] of ranked.best.entries()) {
    const region = p.perRegion.find((r) => r.region === heaviest.region)!;
    io.out("");
    io.out(`#${i + 1} ${describeLayout(p.layout)}, for a player in ${heaviest.region}`);
    io.out(criticalPath("input → audio", region.metrics.input_to_audio));
    io.out(criticalPath("start game", region.metrics.start_game));
  }
  if (options.out !== undefined) await writeTopologies(ranked.best, options, heaviest.region, resolve(io.cwd, options.out), io);
  if (options.playersOnline !== undefined && ranked.best.length > 0) {
    const plan: CapacityPlan = capacityPlan(model, ranked.best[0]!.layout, options.playersOnline, options.targetCpu, loadCpu);
    io.out("");
    io.out(
      loadCpu === undefined
        ? `Capacity of #1 (CPU per game and per game-second from the study's processes of one component, one game at a time; infra's task sizes and us-east-1 prices):`
        : `Capacity of #1 (CPU under load from ${options.cpu}: each task's idle and activity, each game-second and each start; infra's task sizes and us-east-1 prices):`,
    );
    io.out(capacityTable(plan));
  }
}

/** Engine processes the players need (the engine's vCPU over its task size), in any placement. */
function enginesNeeded(model: WhatifModel, options: WhatifOptions, loadCpu: readonly LoadCpu[] | undefined): number {
  const region = options.regions[0]!;
  const split = splitLayout(Object.fromEntries(["auth", "worldgen", "engine", "initiator", "music", "score"].map((c) => [c, { region, zone: "a" }])) as Parameters<typeof splitLayout>[0]);
  return capacityPlan(model, split, options.playersOnline!, options.targetCpu, loadCpu).engines;
}

function rank(model: WhatifModel, options: WhatifOptions, table: RttTable, engines: number): { count: number; best: PlacementPrediction[] } {
  let count = 0;
  const best: PlacementPrediction[] = [];
  for (const layout of enumerateLayouts({ regions: options.regions, zones: options.zones, processes: options.processes, engines })) {
    count++;
    const p = predictPlacement(model, layout, options.players, table);
    if (best.length === options.top && comparePredictions(p, best[best.length - 1]!) >= 0) continue;
    // Placements that differ only where no predicted path goes (auth, score) keep the simplest.
    const same = best.findIndex((b) => figuresKey(b) === figuresKey(p));
    if (same >= 0) {
      if (comparePredictions(p, best[same]!) >= 0) continue;
      best.splice(same, 1);
    }
    best.push(p);
    best.sort(comparePredictions);
    if (best.length > options.top) best.pop();
  }
  return { count, best };
}

/** A placement's predicted figures, rounded to 0.01 ms, as one string. */
function figuresKey(p: PlacementPrediction): string {
  return p.perRegion.map((r) => Object.values(r.metrics).map((m) => m.ms.toFixed(2)).join("/")).join(" ");
}

async function writeModel(model: WhatifModel, path: string, io: Io): Promise<void> {
  await mkdir(resolve(path, ".."), { recursive: true });
  await writeFile(path, `${JSON.stringify(model, null, 2)}\n`);
  io.out(`Model written to ${path}`);
}

async function writeTopologies(best: readonly PlacementPrediction[], options: WhatifOptions, browserRegion: string, dir: string, io: Io): Promise<void> {
  await mkdir(dir, { recursive: true });
  const schemaRef = relative(dir, join(TOPOLOGIES_DIR, "topology.schema.json"));
  for (const [i, p] of best.entries()) {
    const name = `whatif-${i + 1}`;
    const file = topologyFile(p.layout, {
      name,
      description: `pnpm whatif #${i + 1} for players ${options.players.map((x) => `${x.region}=${x.weight.toFixed(2)}`).join(",")}: predicted input → audio ${p.weighted.input_to_audio.toFixed(1)} ms, start game ${p.weighted.start_game.toFixed(0)} ms (player-weighted medians). ${describeLayout(p.layout)}.`,
      browser: { region: browserRegion, zone: "a" },
      basePort: 7200 + 10 * i,
      schemaRef,
    });
    const path = join(dir, `${name}.json`);
    await writeFile(path, `${JSON.stringify(file, null, 2)}\n`);
    io.out(`Wrote ${path}`);
  }
}

/** The trace `--validate` plays by default: the study's short game (its three runs take a minute per placement). */
const CHECK_TRACE = "replay/traces/6977347407732442987.csv";
const REPO = resolve(import.meta.dirname, "../../..");

/** --validate: predicts the four deployments and generated placements, writes the predictions, runs the study (or reads --measured), compares. */
async function check(study: Study, table: RttTable, options: WhatifOptions, io: Io): Promise<void> {
  const model = fitModel(study, table);
  if (options.modelOut !== undefined) await writeModel(model, resolve(io.cwd, options.modelOut), io);
  io.out(`Model: fitted on ${study.runs.length} runs of ${study.deployments.join(", ")} in ${study.dir}.`);
  let measuredDir: string;
  let placements: CheckedPlacement[];
  if (options.measured !== undefined) {
    measuredDir = resolve(io.cwd, options.measured);
    const measured = await loadStudy(measuredDir, TOPOLOGIES_DIR);
    placements = await placementsOfStudy(model, table, measured, TOPOLOGIES_DIR);
    io.out(`Measured: the ${measured.runs.length} runs in ${measuredDir} (nothing run).`);
  } else {
    measuredDir = resolve(io.cwd, options.out ?? "results/whatif-validate");
    const browser = { region: options.players[0]!.region, zone: "a" };
    placements = await planCheck(model, table, { regions: options.regions, zones: options.zones, browser, count: options.placements, dir: join(measuredDir, "topologies"), topologiesDir: TOPOLOGIES_DIR });
    const fresh = placements.filter((p) => !p.inRepository).length;
    io.out(`Placements: the repository's ${placements.filter((p) => p.origin === "standard").length} and ${placements.length - 4} generated over ${options.regions.join(", ")} × zones ${options.zones.join(", ")} for a player in ${browser.region}${browser.zone} (${fresh} in no repository topology):`);
    io.out(placementTable(placements));
  }
  // Beside the runs, for the study's report: where the study runs now, or where --out says.
  const predictionsDir = options.measured === undefined ? measuredDir : options.out === undefined ? null : resolve(io.cwd, options.out);
  if (predictionsDir !== null) {
    await writePredictionsFile(join(predictionsDir, WHATIF_FILE), predictionsFile(model, placements));
    io.out(`Predictions written to ${join(predictionsDir, WHATIF_FILE)}${options.measured === undefined ? " before any run" : ""}.`);
  }
  if (options.measured === undefined) {
    const { parseStudyArgs, runStudy } = await import("../study/study.js");
    const traces = options.traces.length > 0 ? options.traces.map((t) => resolve(io.cwd, t)) : [join(REPO, CHECK_TRACE)];
    const args = ["--deployments", placements.map((p) => p.topology).join(","), "--runs", String(options.runs), "--retries", "1", "--out", measuredDir, ...traces.flatMap((t) => ["--trace", t])];
    io.out(`Running: pnpm study ${args.join(" ")}`);
    const result = await runStudy(parseStudyArgs(args, io.cwd, REPO), (line) => io.out(line));
    if (result.failed > 0) io.out(`${result.failed} runs failed; their placements are compared on the runs that did not.`);
  }
  const measured = await loadStudy(measuredDir, TOPOLOGIES_DIR);
  const rows = compareCheck(placements, measured, study.deployments);
  io.out("");
  io.out(`Predicted (model fitted on ${study.dir}) against measured (${measuredDir}), every placement, seed and metric:`);
  const origin = new Map(placements.map((p) => [p.deployment, p.inRepository ? p.origin : `${p.origin}, new`]));
  io.out(validationTable(rows, { header: "placement", value: (r) => origin.get(r.deployment) ?? "" }));
  io.out("");
  io.out(`Goal: median |error| ≤ max(10 %, 3 ms). All placements:`);
  io.out(summaryTable(validationSummary(rows)));
  const fresh = new Set(placements.filter((p) => !p.inRepository).map((p) => p.deployment));
  if (fresh.size > 0) {
    io.out(`Placements in no repository topology (${[...fresh].join(", ")}):`);
    io.out(summaryTable(validationSummary(rows.filter((r) => fresh.has(r.deployment)))));
  }
}

/** --check-capacity: the model's CPU against a deployment's under bot players, at each level. */
async function capacityCheck(study: Study, table: RttTable, options: WhatifOptions, io: Io): Promise<void> {
  const model = fitModel(study, table);
  const { capacitySummary, checkCapacity, CAPACITY_CHECK_FILE, CAPACITY_GOAL, readLoadCpu, TOTAL_ROW } = await import("./capacity-check.js");
  const loadCpu = options.cpu === undefined ? undefined : await readLoadCpu(resolve(io.cwd, options.cpu));
  const dataDir = resolve(io.cwd, options.out ?? "results/whatif-capacity");
  io.out(`CPU figures: from ${study.runs.length} runs in ${study.dir} (processes of one component, net of their idle background).`);
  io.out(cpuTable(model));
  if (loadCpu !== undefined) {
    io.out(`And under load, from ${options.cpu}:`);
    io.out(loadCpuTable(loadCpu));
  }
  const { rows, loadCpu: fitted } = await checkCapacity(model, { topology: options.deployment, levels: options.loadLevels, durationMs: options.loadSeconds * 1000, dataDir, log: io.out, ...(loadCpu ? { loadCpu } : {}), ...(options.gameLengths.length > 0 ? { gameLengthsS: options.gameLengths } : {}) });
  io.out("");
  io.out(`Predicted against measured CPU, per process and level (goal ± ${CAPACITY_GOAL * 100} %); written to ${join(dataDir, CAPACITY_CHECK_FILE)}:`);
  io.out(capacityCheckTable(rows, CAPACITY_GOAL));
  // As --validate judges a metric: the median absolute error over the rows, and the rows within the goal.
  const count = (error: (r: (typeof rows)[number]) => number | null, total: boolean) => {
    const { medianAbs, within, rows: n } = capacitySummary(rows.filter((r) => (r.group === TOTAL_ROW) === total), error);
    return `${within}/${n}${medianAbs === null ? "" : ` (median |error| ${(medianAbs * 100).toFixed(1)} %${medianAbs <= CAPACITY_GOAL ? "" : ", MISS"})`}`;
  };
  for (const total of [false, true]) {
    io.out(
      `Within ± ${CAPACITY_GOAL * 100} %, ${total ? "the deployment's total a level" : "processes × levels"}: ${count((r) => r.error, total)} from the study's single games; ${count((r) => r.fromLevelsError, total)} from the other levels` +
        `${loadCpu ? `; ${count((r) => r.fromLoadError, total)} from ${options.cpu}` : ""}.`,
    );
  }
  io.out("");
  io.out(`CPU under load fitted on these levels (pnpm whatif --players-online … --cpu ${join(dataDir, CAPACITY_CHECK_FILE)} sizes with it):`);
  io.out(loadCpuTable(fitted));
}
