import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { GroupCpu } from "@flaplab/deployment";
import { runLoad } from "@flaplab/load/src/coordinator.js";
import { levelLoadOptions } from "../study/load-levels.js";
import { startStudyDeployment } from "../study/deployment.js";
import { WhatifInputError } from "./errors.js";
import { nonNegativeLeastSquares } from "./least-squares.js";
import { median } from "./study.js";
import type { ComponentCpu, WhatifModel } from "./model.js";

// `pnpm whatif --check-capacity`: the model's CPU figures against a deployment's measured CPU at
// several numbers of bot players. Per level: the servers watched idle (their background now, on
// this machine), then the bots' run; each process's CPU over the run against idle × the run's
// length + each game's start and end + each second of play, counted from the games the bots
// played. Each bot's account is registered (one login) as the run begins: auth's start is counted
// per bot, the other components' per game.

export interface CapacityCheckOptions {
  readonly topology: string;
  readonly levels: readonly number[];
  /** How long the bots start games at each level, ms. */
  readonly durationMs: number;
  readonly dataDir: string;
  readonly log: (line: string) => void;
  /** Figures under load from an earlier check, to predict this one's levels with. */
  readonly loadCpu?: readonly LoadCpu[];
  /** Each level's game length, s (one per level); default: the study's mean game at every level. */
  readonly gameLengthsS?: readonly number[];
}

export interface CapacityCheckRow {
  readonly level: number;
  readonly group: string;
  readonly components: readonly string[];
  readonly windowS: number;
  readonly games: number;
  /** Bot accounts registered (one login each) as the level began. */
  readonly accounts: number;
  readonly gameSeconds: number;
  /** The process's idle background measured before the level, CPU s a second. */
  readonly idleCpuPerS: number;
  /** From the study's games, one at a time: idle + starts + play. */
  readonly predictedCpuS: number;
  readonly measuredCpuS: number;
  /** predicted ÷ measured − 1. */
  readonly error: number;
  /** From the other levels: idle + a line in the game-seconds a second (null with fewer than two other levels). */
  readonly fromLevelsCpuS: number | null;
  readonly fromLevelsError: number | null;
  /** From an earlier check's figures under load (--cpu), null without them. */
  readonly fromLoadCpuS: number | null;
  readonly fromLoadError: number | null;
}

/** A component's CPU as measured under bot players: what `--players-online` sizes with, given `--cpu`. */
export interface LoadCpu {
  readonly component: string;
  /** Idle background, µs a second (the mean of the levels' idle windows). */
  readonly idleUsPerSecond: number;
  /** What the process spends a second while it has any game at all, beyond idle, µs. */
  readonly activeUsPerSecond: number;
  /** Each game-second beyond that, µs. */
  readonly perGameSecondUs: number;
  /** A game's start (auth: a login), µs. */
  readonly startUs: number;
  /**
   * Where startUs comes from: "load", fitted on these levels (their games were of different
   * lengths, so starts and game-seconds part); "study", the study's single games (levels whose
   * games were all of one length cannot tell a start from its game's seconds). Absent in files
   * written before it was recorded: "study".
   */
  readonly startFrom?: "load" | "study";
  /** The levels it was fitted on. */
  readonly levels: readonly number[];
}

type MeasuredRow = Omit<CapacityCheckRow, "fromLevelsCpuS" | "fromLevelsError" | "fromLoadCpuS" | "fromLoadError">;

/** A row's starts: auth logs each account in once, the others start each game. */
const startsOf = (r: { readonly accounts: number; readonly games: number }, component: string): number => (component === "auth" ? r.accounts : r.games);

/** Whether the rows' games differ in length enough (longest mean ≥ 1.3 × the shortest) to tell a start from game-seconds. */
function lengthsDiffer(rows: readonly MeasuredRow[], component: string): boolean {
  const means = rows.filter((r) => startsOf(r, component) > 0).map((r) => r.gameSeconds / startsOf(r, component));
  return means.length >= 3 && Math.max(...means) >= 1.3 * Math.min(...means);
}

/**
 * Each single-component process's CPU under load, from every level of a check: CPU − idle =
 * activity × window + start × starts + per game-second × game-seconds, least squares with every
 * figure ≥ 0. Where the levels' games were all of one length, the start is the study's and the
 * other two are fitted.
 */
export function fitLoadCpu(rows: readonly MeasuredRow[], starts: readonly { component: string; startUs: number | null }[]): LoadCpu[] {
  const groups = [...new Set(rows.filter((r) => r.components.length === 1).map((r) => r.group))];
  return groups.map((group) => {
    const of = rows.filter((r) => r.group === group);
    const component = of[0]!.components[0]!;
    const idleUsPerSecond = (of.reduce((s, r) => s + r.idleCpuPerS, 0) / of.length) * 1e6;
    const net = of.map((r) => r.measuredCpuS - r.idleCpuPerS * r.windowS);
    const window = of.map((r) => r.windowS);
    const gameSeconds = of.map((r) => r.gameSeconds);
    const levels = of.map((r) => r.level);
    if (lengthsDiffer(of, component)) {
      const [active, start, perGameSecond] = nonNegativeLeastSquares([window, of.map((r) => startsOf(r, component)), gameSeconds], net);
      return { component, idleUsPerSecond, activeUsPerSecond: active! * 1e6, perGameSecondUs: perGameSecond! * 1e6, startUs: start! * 1e6, startFrom: "load" as const, levels };
    }
    const startUs = starts.find((s) => s.component === component)?.startUs ?? 0;
    const [active, perGameSecond] = nonNegativeLeastSquares([window, gameSeconds], net.map((y, i) => y - (startsOf(of[i]!, component) * startUs) / 1e6));
    return { component, idleUsPerSecond, activeUsPerSecond: active! * 1e6, perGameSecondUs: perGameSecond! * 1e6, startUs, startFrom: "study" as const, levels };
  });
}

/** A row's CPU from figures under load: its idle now, the figures' activity and game-seconds, its starts, s. */
function fromLoad(r: MeasuredRow, figures: readonly LoadCpu[]): number | null {
  let s = r.idleCpuPerS * r.windowS;
  for (const c of r.components) {
    const f = figures.find((x) => x.component === c);
    if (f === undefined) return null;
    s += (f.activeUsPerSecond * r.windowS + f.perGameSecondUs * r.gameSeconds + f.startUs * startsOf(r, c)) / 1e6;
  }
  return s;
}

/**
 * Each row's CPU predicted from the other levels of its process: (CPU − idle) a second = fixed +
 * per game-second × game-seconds a second, the line through the other levels (least squares).
 */
export function predictFromOtherLevels(rows: readonly MeasuredRow[], loadCpu?: readonly LoadCpu[]): CapacityCheckRow[] {
  return rows.map((row) => {
    const others = rows.filter((r) => r.group === row.group && r.level !== row.level);
    const load = loadCpu === undefined ? null : fromLoad(row, loadCpu);
    const fromEarlier = { fromLoadCpuS: load, fromLoadError: load === null ? null : load / row.measuredCpuS - 1 };
    if (others.length < 2) return { ...row, ...fromEarlier, fromLevelsCpuS: null, fromLevelsError: null };
    const x = others.map((r) => r.gameSeconds / r.windowS);
    const y = others.map((r) => r.measuredCpuS / r.windowS - r.idleCpuPerS);
    const n = x.length;
    const mx = x.reduce((a, b) => a + b, 0) / n;
    const my = y.reduce((a, b) => a + b, 0) / n;
    const sxx = x.reduce((s, v) => s + (v - mx) ** 2, 0);
    const slope = sxx > 0 ? x.reduce((s, v, i) => s + (v - mx) * (y[i]! - my), 0) / sxx : 0;
    const perS = row.idleCpuPerS + my + slope * (row.gameSeconds / row.windowS - mx);
    const cpuS = Math.max(0, perS) * row.windowS;
    return { ...row, ...fromEarlier, fromLevelsCpuS: cpuS, fromLevelsError: cpuS / row.measuredCpuS - 1 };
  });
}

/** The name of each level's row that adds up its processes. */
export const TOTAL_ROW = "all processes";

/** Each level's rows, then one that adds them up (a prediction only where every process has one). */
export function withTotals(rows: readonly CapacityCheckRow[]): CapacityCheckRow[] {
  const out: CapacityCheckRow[] = [];
  for (const level of [...new Set(rows.map((r) => r.level))]) {
    const of = rows.filter((r) => r.level === level);
    out.push(...of);
    const sum = (f: (r: CapacityCheckRow) => number | null): number | null => (of.some((r) => f(r) === null) ? null : of.reduce((s, r) => s + f(r)!, 0));
    const measured = sum((r) => r.measuredCpuS)!;
    const predicted = sum((r) => r.predictedCpuS)!;
    const fromLevels = sum((r) => r.fromLevelsCpuS);
    const fromLoad = sum((r) => r.fromLoadCpuS);
    out.push({
      ...of[0]!,
      group: TOTAL_ROW,
      components: [...new Set(of.flatMap((r) => r.components))],
      idleCpuPerS: of.reduce((s, r) => s + r.idleCpuPerS, 0),
      measuredCpuS: measured,
      predictedCpuS: predicted,
      error: predicted / measured - 1,
      fromLevelsCpuS: fromLevels,
      fromLevelsError: fromLevels === null ? null : fromLevels / measured - 1,
      fromLoadCpuS: fromLoad,
      fromLoadError: fromLoad === null ? null : fromLoad / measured - 1,
    });
  }
  return out;
}

/** Within ± this share of the measured CPU. */
export const CAPACITY_GOAL = 0.15;

/**
 * One prediction's errors over some rows, as --validate judges its metrics: the median absolute
 * error (null without any prediction) and how many rows are within the goal.
 */
export function capacitySummary(rows: readonly CapacityCheckRow[], error: (r: CapacityCheckRow) => number | null): { medianAbs: number | null; within: number; rows: number } {
  const errors = rows.map(error).filter((e): e is number => e !== null);
  return { medianAbs: errors.length === 0 ? null : median(errors.map(Math.abs)), within: errors.filter((e) => Math.abs(e) <= CAPACITY_GOAL).length, rows: errors.length };
}
const IDLE_SETTLE_MS = 2_000;
const IDLE_WINDOW_MS = 4_000;
const DRAIN_MS = 10_000;
const WARMUP_PLAYERS = 2;
const WARMUP_MS = 5_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const used = (a: readonly GroupCpu[], b: readonly GroupCpu[], group: string): number | null => {
  const x = a.find((g) => g.group === group)?.cpuUs;
  const y = b.find((g) => g.group === group)?.cpuUs;
  return x == null || y == null ? null : y - x;
};

/** A group's predicted CPU over a window, µs. */
export function predictGroupCpuUs(
  figures: readonly ComponentCpu[],
  components: readonly string[],
  work: { readonly windowS: number; readonly idleUsPerSecond: number; readonly games: number; readonly accounts: number; readonly gameSeconds: number },
): number {
  let us = work.idleUsPerSecond * work.windowS;
  for (const c of components) {
    const f = figures.find((x) => x.component === c);
    if (f === undefined) throw new Error(`the model has no CPU figures for ${c}`);
    const start = f.startUs ?? 0;
    us += startsOf(work, c) * start + work.games * (f.perGameUs - start) + work.gameSeconds * f.perGameSecondUs;
  }
  return us;
}

export const CAPACITY_CHECK_FILE = "capacity-check.json";
const CAPACITY_CHECK_FORMAT = "flaplab-whatif-capacity-check/1";

export interface CapacityCheckFile {
  readonly format: typeof CAPACITY_CHECK_FORMAT;
  readonly topology: string;
  readonly rows: readonly CapacityCheckRow[];
  readonly loadCpu: readonly LoadCpu[];
}

/** The CPU under load an earlier --check-capacity wrote (its capacity-check.json). */
export async function readLoadCpu(path: string): Promise<LoadCpu[]> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(path, "utf8"));
  } catch (err) {
    throw new WhatifInputError(`--cpu ${path}: ${(err as Error).message}`);
  }
  const f = json as Partial<CapacityCheckFile>;
  if (f.format !== CAPACITY_CHECK_FORMAT || !Array.isArray(f.loadCpu)) throw new WhatifInputError(`--cpu ${path}: not a ${CAPACITY_CHECK_FILE} of pnpm whatif --check-capacity (format ${CAPACITY_CHECK_FORMAT})`);
  for (const [i, c] of f.loadCpu.entries()) {
    for (const k of ["idleUsPerSecond", "activeUsPerSecond", "perGameSecondUs", "startUs"] as const) {
      if (typeof c?.[k] !== "number" || !Number.isFinite(c[k]) || c[k] < 0) throw new WhatifInputError(`--cpu ${path}: loadCpu[${i}].${k} is not a number ≥ 0`);
    }
    if (c.startFrom !== undefined && c.startFrom !== "load" && c.startFrom !== "study") throw new WhatifInputError(`--cpu ${path}: loadCpu[${i}].startFrom is neither "load" nor "study"`);
    if (typeof c.component !== "string") throw new WhatifInputError(`--cpu ${path}: loadCpu[${i}].component is not a string`);
  }
  return f.loadCpu;
}

export async function checkCapacity(model: WhatifModel, options: CapacityCheckOptions): Promise<{ rows: CapacityCheckRow[]; loadCpu: LoadCpu[] }> {
  const missing = model.cpu.filter((c) => c.idleUsPerSecond === null).map((c) => c.component);
  if (model.cpu.length === 0 || missing.length > 0) {
    throw new Error(`the study's runs did not watch ${missing.length > 0 ? missing.join(", ") : "any process"} idle: run the model's study with this version of pnpm study`);
  }
  const seconds = Object.values(model.gameSeconds);
  const studyGameMs = Math.round((seconds.reduce((a, b) => a + b, 0) / seconds.length) * 1000);
  if (options.gameLengthsS !== undefined && options.gameLengthsS.length !== options.levels.length) {
    throw new WhatifInputError(`--game-lengths names ${options.gameLengthsS.length} lengths for ${options.levels.length} levels: one per level`);
  }
  const deployment = await startStudyDeployment(options.topology, options.dataDir);
  const rows: MeasuredRow[] = [];
  try {
    // As the study's warm-up game: the first level should not pay for connections being opened and code compiled.
    options.log(`capacity: warming up ${options.topology}: ${WARMUP_PLAYERS} players for ${WARMUP_MS / 1000} s, not measured`);
    await runLoad({ ...levelLoadOptions(deployment, WARMUP_PLAYERS, 1, WARMUP_MS), link: "webtransport", gameLengthMs: studyGameMs, drainMs: DRAIN_MS }, { progress: () => undefined });
    for (const [i, level] of options.levels.entries()) {
      const gameLengthMs = options.gameLengthsS === undefined ? studyGameMs : Math.round(options.gameLengthsS[i]! * 1000);
      await sleep(IDLE_SETTLE_MS);
      const i0 = await deployment.cpuTimes();
      const it = performance.now();
      await sleep(IDLE_WINDOW_MS);
      const i1 = await deployment.cpuTimes();
      const idleS = (performance.now() - it) / 1000;
      const c0 = await deployment.cpuTimes();
      const t0 = performance.now();
      options.log(`capacity: ${level} players on ${options.topology} for ${options.durationMs / 1000} s (games of about ${(gameLengthMs / 1000).toFixed(1)} s, over WebTransport as the study's browser${options.gameLengthsS === undefined ? ", as long as the study's" : ""})`);
      const run = await runLoad(
        { ...levelLoadOptions(deployment, level, 1, options.durationMs), link: "webtransport", gameLengthMs, drainMs: DRAIN_MS },
        { progress: (line) => (/^t=\d*0s /.test(line) ? options.log(`capacity:   ${line}`) : undefined) },
      );
      const c1 = await deployment.cpuTimes();
      const windowS = (performance.now() - t0) / 1000;
      const games = run.finals.flatMap((f) => f.games);
      const gameSeconds = games.reduce((s, g) => s + (g.ticks !== null ? g.ticks / 30 : Math.max(0, g.endedMs - g.startedMs) / 1000), 0);
      options.log(`capacity:   ${games.length} games (${games.filter((g) => g.outcome === "completed").length} completed), ${gameSeconds.toFixed(0)} game-seconds in ${windowS.toFixed(1)} s`);
      for (const g of c1) {
        const measured = used(c0, c1, g.group);
        const idle = used(i0, i1, g.group);
        if (measured === null || idle === null || measured <= 0) continue;
        const predicted = predictGroupCpuUs(model.cpu, g.components, { windowS, idleUsPerSecond: idle / idleS, games: games.length, accounts: level, gameSeconds });
        rows.push({ level, group: g.group, components: [...g.components], windowS, games: games.length, accounts: level, gameSeconds, idleCpuPerS: idle / idleS / 1e6, predictedCpuS: predicted / 1e6, measuredCpuS: measured / 1e6, error: predicted / measured - 1 });
      }
    }
  } finally {
    await deployment.stop();
  }
  const checked = withTotals(predictFromOtherLevels(rows, options.loadCpu));
  const fit = fitLoadCpu(rows, model.cpu);
  await mkdir(options.dataDir, { recursive: true });
  const file: CapacityCheckFile = { format: CAPACITY_CHECK_FORMAT, topology: options.topology, rows: checked, loadCpu: fit };
  await writeFile(join(options.dataDir, CAPACITY_CHECK_FILE), `${JSON.stringify(file, null, 2)}\n`);
  return { rows: checked, loadCpu: fit };
}
