// Load as a study dimension: the levels of `pnpm study --load 0,100,400`, and one deployment's
// Chromium runs played while `@flaplab/load`'s bots play on the same deployment.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { runLoad, type RunResult } from "@flaplab/load/src/coordinator.js";
import type { LoadOptions } from "@flaplab/load/src/options.js";
import { mergeRun, writeOut } from "@flaplab/load/src/summary.js";
import { replayFlapOffsetsMs } from "@flaplab/input-traces";
import { LEVEL_FORMAT, type LevelCpu, type LevelRecord } from "../report/levels.js";
import { ReplayUsageError, type LoadedTrace } from "../run/options.js";
import type { RunningDeployment } from "./deployment.js";

/** Bots start over this long (the load's --ramp), ms. */
export const LOAD_RAMP_MS = 5_000;
/** After its duration, how long the bots' running games may go on (the load's --drain), ms. */
export const LOAD_DRAIN_MS = 10_000;
/** How long after its last press a trace's game is expected to last, with the browser's start and login, ms. */
const PER_RUN_OVERHEAD_MS = 12_000;
/** The expected Chromium time is stretched by this, and this margin added, so the bots outlast every measured run. */
const DURATION_FACTOR = 1.5;
const DURATION_MARGIN_MS = 20_000;
/** Upper bound on the load's warm-up and ramp before the study gives the level up, ms. */
const RAMP_TIMEOUT_MS = 240_000;

/** The levels of `--load`: bot players, whole numbers ≥ 0, strictly increasing. */
export function parseLoadLevels(text: string): number[] {
  const parts = text.split(",").map((p) => p.trim());
  if (parts.some((p) => p === "")) throw new ReplayUsageError(`--load takes levels separated by commas, such as --load 0,100,400; got "${text}"`);
  const levels = parts.map((p) => {
    if (!/^\d+$/.test(p) || !Number.isSafeInteger(Number(p))) throw new ReplayUsageError(`--load levels are whole numbers of bot players ≥ 0, such as --load 0,100,400; "${p}" is not one`);
    return Number(p);
  });
  for (let i = 1; i < levels.length; i++) {
    if (levels[i]! <= levels[i - 1]!) throw new ReplayUsageError(`--load levels must be strictly increasing, such as --load 0,100,400; got ${levels[i - 1]} then ${levels[i]}`);
  }
  if (levels.at(-1)! > 10_000) throw new ReplayUsageError(`--load levels go up to 10000 players; got ${levels.at(-1)}`);
  return levels;
}

/** The name a deployment's runs at `level` are filed under: level 0 keeps the plain name. */
export function levelFolder(folder: string, level: number): string {
  return level === 0 ? folder : `${folder}@${level}`;
}

/** How long a trace plays: its last flap's time after the start, ms. */
export function traceLengthMs(trace: LoadedTrace): number {
  return replayFlapOffsetsMs(trace.trace).at(-1) ?? 0;
}

/** What a deployment's Chromium runs are expected to take: every trace × runs, from the traces' lengths, ms. */
export function expectedPlayMs(traces: readonly LoadedTrace[], runs: number): number {
  const perRound = traces.reduce((sum, t) => sum + traceLengthMs(t) + PER_RUN_OVERHEAD_MS, 0);
  return perRound * runs;
}

/** How long the bots start games for so that they play through the Chromium runs: ramp + stretched expectation + margin, ms. */
export function loadDurationMs(expectedMs: number): number {
  return Math.round(LOAD_RAMP_MS + expectedMs * DURATION_FACTOR + DURATION_MARGIN_MS);
}

/** Where a player's browser calls `component`: through the emulated links where the deployment has some, as the page does. */
function playerUrl(deployment: RunningDeployment, component: "auth" | "initiator"): string {
  return (deployment.emulation?.browserUrl(component) ?? deployment.urlOf(component)).replace(/\/+$/, "");
}

/** The bots' options for one level against one running deployment. */
export function levelLoadOptions(deployment: RunningDeployment, players: number, workers: number, durationMs: number): LoadOptions {
  return {
    url: playerUrl(deployment, "auth"),
    initiatorUrl: playerUrl(deployment, "initiator"),
    shape: { kind: "players", players, rampMs: LOAD_RAMP_MS },
    durationMs,
    drainMs: LOAD_DRAIN_MS,
    link: "websocket",
    certSha256: undefined,
    bot: "autopilot",
    trace: undefined,
    gameLengthMs: 30_000,
    workers,
    seed: 1,
    out: undefined,
    spreadAddresses: true,
  };
}

/** The load could not start or ramp up: the level's Chromium runs were not played. */
export class LoadStartError extends Error {
  override readonly name = "LoadStartError";
}

/** The run's start on the epoch clock, from its first progress line ("t=1s …" comes about 1 s after it). */
function progressSeconds(line: string): number | null {
  const m = /^t=(\d+)s /.exec(line);
  return m ? Number(m[1]) : null;
}

/**
 * Plays `play` (the deployment's Chromium runs) while `players` bots play on the same deployment:
 * starts the load, waits until its warm-up is over and its bots have ramped up, runs `play`, reads
 * every server process's CPU over that window, waits for the load to end, and writes the bots'
 * summary.json and CSVs and the study's level.json into `dir`.
 */
export async function playUnderLoad(
  args: {
    readonly deployment: RunningDeployment;
    readonly folder: string;
    readonly runFolders: readonly string[];
    readonly level: number;
    readonly workers: number;
    readonly durationMs: number;
    readonly dir: string;
    readonly log: (line: string) => void;
  },
  play: () => Promise<void>,
): Promise<LevelRecord> {
  const { deployment, folder, level, log } = args;
  const options = levelLoadOptions(deployment, level, args.workers, args.durationMs);
  let startedAt: number | null = null;
  let onRamped: () => void = () => undefined;
  const ramped = new Promise<void>((resolve) => {
    onRamped = resolve;
  });
  const load: Promise<RunResult> = runLoad(options, {
    progress: (line) => {
      const t = progressSeconds(line);
      if (t !== null && startedAt === null) startedAt = Date.now() - t * 1000;
      if (t !== null && t * 1000 >= LOAD_RAMP_MS + 1000) onRamped();
      // One line in ten: the load prints one a second, in its warm-up and in its run.
      const warm = /^warm-up (\d+)s/.exec(line);
      const s = t ?? (warm ? Number(warm[1]) : null);
      if (s === null || s % 10 === 0 || s === 1) log(`load: ${line}`);
    },
  });
  // Awaited below; a rejection before then must not go unhandled.
  load.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new LoadStartError(`the load of ${level} players on ${folder} did not warm up and ramp within ${RAMP_TIMEOUT_MS / 1000} s`)), RAMP_TIMEOUT_MS);
  });
  try {
    // The load failing in its warm-up rejects here, before any Chromium run of the level.
    await Promise.race([
      ramped,
      load.then(
        () => Promise.reject(new LoadStartError(`the load of ${level} players on ${folder} ended before its bots had ramped up`)),
        (err: unknown) => Promise.reject(new LoadStartError(`the load of ${level} players on ${folder} did not start: ${(err as Error).message}`)),
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
  log(`load: ${level} players ramped up on ${folder}; the Chromium runs start`);
  const before = await deployment.cpuTimes();
  const windowStartedAt = Date.now();
  const t0 = performance.now();
  try {
    await play();
  } catch (err) {
    // The bots end on their own (duration + drain); wait for them so no worker outlives the study.
    await load.catch(() => undefined);
    throw err;
  }
  const windowMs = performance.now() - t0;
  const after = await deployment.cpuTimes();
  const windowEndedAt = Date.now();
  const run = await load;
  const merged = mergeRun(run);
  await writeOut(args.dir, run, merged);

  const loadStartedAt = startedAt ?? windowStartedAt;
  const loadEndsAt = loadStartedAt + options.durationMs;
  const fromStart = (at: number) => (at - loadStartedAt) / 1000;
  const inWindow = run.seconds.filter((s) => s.t >= fromStart(windowStartedAt) && s.t <= fromStart(windowEndedAt));
  const cpu: LevelCpu[] = after.map((a) => {
    const b = before.find((g) => g.group === a.group);
    const used = a.cpuUs !== null && b?.cpuUs != null ? a.cpuUs - b.cpuUs : null;
    return { group: a.group, components: [...a.components], cpuUs: used, pct: used === null || windowMs <= 0 ? null : (used / 1000 / windowMs) * 100 };
  });
  const record: LevelRecord = {
    format: LEVEL_FORMAT,
    deployment: folder,
    runFolders: args.runFolders,
    level,
    workers: args.workers,
    loadDurationMs: options.durationMs,
    loadStartedAt,
    loadEndsAt,
    windowStartedAt,
    windowEndedAt,
    covered: windowEndedAt <= loadEndsAt,
    minInFlight: inWindow.length === 0 ? null : Math.min(...inWindow.map((s) => s.inFlight)),
    cpu,
  };
  await mkdir(args.dir, { recursive: true });
  await writeFile(join(args.dir, "level.json"), `${JSON.stringify(record, null, 2)}\n`);
  if (!record.covered) log(`load: the bots stopped starting games ${((windowEndedAt - loadEndsAt) / 1000).toFixed(1)} s before the last Chromium run on ${folder} ended`);
  log(`load: ${merged.summary.verdict}`);
  return record;
}
