import { existsSync } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import { basename, dirname, join, relative } from "node:path";
import type { CallRecord } from "@flaplab/runtime";
import { parseCsv } from "./csv.js";
import {
  flapLabMetrics,
  flappyGoMetrics,
  parseFlappyGoLatencyCsv,
  parseLatencyCsv,
  pressMetrics,
  tickFrameTimes,
  type MetricValues,
  type PressValues,
} from "./metrics.js";

export const RUN_FORMAT = "flaplab-run/1";

/** One RPC duration, labelled by caller, callee and method. */
export interface RpcSample {
  readonly src: string;
  /** The caller's verb (the call it was serving when it made this one). */
  readonly srcVerb: string;
  readonly dst: string;
  readonly verb: string;
  readonly gameId: string;
  /** "caller": the caller's whole call; "callee": the callee's share of a networked call from a component. */
  readonly side: RpcSide;
  readonly ms: number;
  /** The call ended well (code "ok"). */
  readonly ok: boolean;
  /** When the record was written (the call's end), epoch ms; null when the line has no time. */
  readonly endMs: number | null;
}

export type RpcSide = "caller" | "callee";

export type RunStatus = "ok" | "failed" | "unreadable";
export type RunSource = "flaplab" | "flappygo";

/** One run as the report sees it, whatever its source. */
export interface RunData {
  readonly source: RunSource;
  /** Absolute path of the run folder. */
  readonly dir: string;
  /** The folder name (run-001, client_seed_…_run_1). */
  readonly id: string;
  readonly deployment: string;
  readonly seed: string;
  status: RunStatus;
  /** Why the run failed or could not be read. */
  reason: string | null;
  readonly stage: string | null;
  readonly score: number | null;
  readonly expected: { readonly score: number | null; readonly ticks: number | null } | null;
  readonly ticks: number | null;
  readonly attempt: number | null;
  readonly retries: number | null;
  readonly dispatchLateness: { readonly p50: number | null; readonly max: number | null } | null;
  readonly gameId: string | null;
  /** The fault injected into the run's game and what became of the game (`pnpm study --fault`). */
  readonly fault: FaultView | null;
  /** Each server process's CPU over the run's game window; null when the run did not record it. */
  readonly serverCpu: ServerCpuView | null;
  /** With `pnpm study --duet`: the deployment that played at the same time, and the pair's reference. */
  readonly duet: DuetView | null;
  /** The engine's own account of its ticks in this game (its GameSummary); null when the run has none. */
  readonly engineTicks: EngineTicksView | null;
  /** Metric samples; null when the run has no readable latency log. */
  values: MetricValues | null;
  /** Each press's input-to-effect and input-to-audio by seq (FlapLab runs with a readable log). */
  presses: PressValues | null;
  /** Tick-frame receive times (ms, page clock), for the inter-arrival plot. */
  frameTimes: number[];
  rpc: RpcSample[];
  /** Things worth knowing that did not make the run unusable. */
  readonly notes: string[];
}

/** A run's `duet` (see RunSummary). */
/** How late the engine's ticks ran in one game (from its GameSummary), ms. */
export interface EngineTicksView {
  readonly latenessP50Ms: number | null;
  readonly latenessMaxMs: number | null;
  readonly skipped: number | null;
}

export interface DuetView {
  readonly partner: string;
  readonly reference: string;
  readonly startSkewMs: number | null;
}

/** A run's `serverCpu` (see RunSummary): the window, and each group process's CPU in it. */
export interface ServerCpuView {
  readonly windowMs: number;
  /** From the game's start (first input) to game over; null in runs that did not split it off. */
  readonly playWindowMs: number | null;
  /** A window with no game before the browser starts; null in runs that did not watch one. */
  readonly idleWindowMs: number | null;
  readonly groups: readonly {
    readonly group: string;
    readonly components: readonly string[];
    readonly cpuUs: number;
    readonly playCpuUs: number | null;
    readonly idleCpuUs: number | null;
  }[];
}

export interface FaultView {
  readonly kind: string;
  readonly tick: number | null;
  readonly injectedAtTick: number | null;
  readonly action: string | null;
  readonly pauseMs: number | null;
  readonly reconnections: number | null;
  readonly resentInputs: number | null;
  readonly scoreMatched: boolean | null;
  readonly recorded: boolean | null;
}

/** A file the report could not use that is not a run of its own. */
export interface Problem {
  readonly path: string;
  readonly reason: string;
}

export interface Discovery {
  readonly runs: RunData[];
  readonly problems: Problem[];
}

const SKIP_DIRS = new Set(["node_modules", ".git"]);
const FLAPPYGO_RUN = /^client_seed_(.+)_run_(\d+)$/;

/** An error the CLI turns into exit code 2 (with the usage text when `showUsage`). */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly showUsage = false,
  ) {
    super(message);
  }
}

/**
 * Finds every run under `root` (the folder itself or any folder below it): FlapLab run folders
 * (a summary.json) and FlappyGo run folders (client_seed_<seed>_run_<n>). `flappyGoRoot` is the
 * folder FlappyGo deployments are named from; it defaults to `root`.
 */
export async function discoverRuns(root: string, flappyGoRoot: string = root): Promise<Discovery> {
  const info = await stat(root).catch(() => null);
  if (!info) throw new UsageError(`no such folder: ${root}`);
  if (!info.isDirectory()) throw new UsageError(`not a folder: ${root}`);
  const flapLabDirs: string[] = [];
  const flappyGoDirs: string[] = [];
  await walk(root, flapLabDirs, flappyGoDirs);
  const runs: RunData[] = [];
  const problems: Problem[] = [];
  for (const dir of flapLabDirs) {
    const run = await loadFlapLabRun(dir);
    if (run) runs.push(run);
    else problems.push({ path: join(dir, "summary.json"), reason: `not a ${RUN_FORMAT} summary; skipped` });
  }
  if (flappyGoDirs.length > 0) {
    const fg = await loadFlappyGoRuns(flappyGoDirs, flappyGoRoot);
    runs.push(...fg.runs);
    problems.push(...fg.problems);
  }
  return { runs, problems };
}

async function walk(dir: string, flapLab: string[], flappyGo: string[]): Promise<void> {
  // The runner writes <run>.partial and renames it when complete.
  if (dir.endsWith(".partial")) return;
  const entries = await readdir(dir, { withFileTypes: true });
  const names = new Set(entries.filter((e) => e.isFile()).map((e) => e.name));
  // A load level of a study (`pnpm study --load`): the bots' summary.json, not a run.
  if (names.has("level.json")) return;
  if (names.has("summary.json")) {
    flapLab.push(dir);
    return;
  }
  if (FLAPPYGO_RUN.test(basename(dir)) && (names.has("latency_data.csv") || names.has("extra_data.json"))) {
    flappyGo.push(dir);
    return;
  }
  const subdirs = entries
    .filter((e) => e.isDirectory() && !SKIP_DIRS.has(e.name) && !e.name.startsWith("."))
    .map((e) => e.name)
    .sort();
  for (const name of subdirs) await walk(join(dir, name), flapLab, flappyGo);
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const numOrNull = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
const strOrNull = (v: unknown): string | null => (typeof v === "string" ? v : typeof v === "number" || typeof v === "bigint" ? String(v) : null);

function emptyRun(source: RunSource, dir: string, deployment: string, seed: string): RunData {
  return {
    source,
    dir,
    id: basename(dir),
    deployment,
    seed,
    status: "unreadable",
    reason: null,
    stage: null,
    score: null,
    expected: null,
    ticks: null,
    attempt: null,
    retries: null,
    dispatchLateness: null,
    gameId: null,
    fault: null,
    serverCpu: null,
    duet: null,
    engineTicks: null,
    values: null,
    presses: null,
    frameTimes: [],
    rpc: [],
    notes: [],
  };
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Reads one FlapLab run folder. Returns null for a summary.json of another format (not a run).
 * A run whose files cannot be read comes back with status "unreadable" and the reason.
 */
export async function loadFlapLabRun(dir: string): Promise<RunData | null> {
  // <out>/<deployment>/<seed>/run-NNN: the path names the group when summary.json cannot.
  const pathSeed = basename(dirname(dir));
  const pathDeployment = basename(dirname(dirname(dir)));
  const unreadable = (reason: string, deployment = pathDeployment, seed = pathSeed): RunData => ({
    ...emptyRun("flaplab", dir, deployment, seed),
    reason,
  });

  let summary: unknown;
  try {
    summary = JSON.parse(await readFile(join(dir, "summary.json"), "utf8"));
  } catch (err) {
    return unreadable(`summary.json: ${errorText(err)}`);
  }
  if (!isObject(summary)) return unreadable("summary.json: not a JSON object");
  if (summary["format"] !== RUN_FORMAT) {
    if (summary["format"] === undefined && ("status" in summary || "deployment" in summary)) {
      return unreadable(`summary.json: no "format" (expected ${RUN_FORMAT})`);
    }
    return null;
  }
  const deploymentObj = summary["deployment"];
  const deployment = isObject(deploymentObj) ? strOrNull(deploymentObj["name"]) : null;
  const seed = strOrNull(summary["seed"]);
  if (deployment === null || deployment === "") return unreadable("summary.json: deployment.name missing", pathDeployment, seed ?? pathSeed);
  if (seed === null || seed === "") return unreadable("summary.json: seed missing", deployment);
  const status = summary["status"];
  if (status !== "ok" && status !== "failed") {
    return unreadable(`summary.json: status ${JSON.stringify(status)} is neither "ok" nor "failed"`, deployment, seed);
  }

  const failure = isObject(summary["failure"]) ? summary["failure"] : null;
  const expected = isObject(summary["expected"]) ? summary["expected"] : null;
  const dispatch = isObject(summary["dispatch"]) ? summary["dispatch"] : null;
  const lateness = dispatch && isObject(dispatch["latenessMs"]) ? dispatch["latenessMs"] : null;
  const latency = isObject(summary["latency"]) ? summary["latency"] : null;
  const run: RunData = {
    ...emptyRun("flaplab", dir, deployment, seed),
    status,
    reason: status === "failed" ? (failure ? strOrNull(failure["reason"]) : null) ?? "failed (no reason given)" : null,
    stage: failure ? strOrNull(failure["stage"]) : null,
    score: numOrNull(summary["score"]),
    expected: expected ? { score: numOrNull(expected["score"]), ticks: numOrNull(expected["ticks"]) } : null,
    ticks: numOrNull(summary["ticks"]),
    attempt: numOrNull(summary["attempt"]),
    retries: numOrNull(summary["retries"]),
    dispatchLateness: lateness ? { p50: numOrNull(lateness["p50"]), max: numOrNull(lateness["max"]) } : null,
    gameId: strOrNull(summary["gameId"]),
    fault: faultOf(summary["fault"]),
    serverCpu: serverCpuOf(summary["serverCpu"]),
    duet: duetOf(summary["duet"]),
    engineTicks: engineTicksOf(summary["engine"]),
  };

  // A failed run keeps its failure as the reason; its files only add notes.
  const fail = (reason: string): RunData => {
    if (run.status === "ok") {
      run.status = "unreadable";
      run.reason = reason;
      run.values = null;
    } else run.notes.push(reason);
    return run;
  };

  const csvPath = join(dir, "latency.csv");
  if (!existsSync(csvPath)) return fail("latency.csv missing");
  try {
    const rows = parseLatencyCsv(await readFile(csvPath, "utf8"));
    run.values = flapLabMetrics(rows, {
      authMs: latency ? numOrNull(latency["authMs"]) : null,
      startMs: latency ? numOrNull(latency["startMs"]) : null,
    });
    run.frameTimes = tickFrameTimes(rows);
    run.presses = pressMetrics(rows);
  } catch (err) {
    return fail(`latency.csv ${errorText(err)}`);
  }

  const rpcPath = join(dir, "rpc.ndjson");
  if (!existsSync(rpcPath)) {
    run.notes.push("no rpc.ndjson");
    return run;
  }
  try {
    run.rpc = parseRpcNdjson(await readFile(rpcPath, "utf8"));
  } catch (err) {
    return fail(`rpc.ndjson ${errorText(err)}`);
  }
  return run;
}

function engineTicksOf(v: unknown): EngineTicksView | null {
  if (!isObject(v)) return null;
  const us = (k: string): number | null => {
    const n = numOrNull(v[k]);
    return n === null ? null : n / 1000;
  };
  const view = { latenessP50Ms: us("tickLatenessP50Us"), latenessMaxMs: us("tickLatenessMaxUs"), skipped: numOrNull(v["ticksSkipped"]) };
  return view.latenessP50Ms === null && view.latenessMaxMs === null && view.skipped === null ? null : view;
}

function duetOf(v: unknown): DuetView | null {
  if (!isObject(v)) return null;
  const partner = strOrNull(v["partner"]);
  const reference = strOrNull(v["reference"]);
  return partner && reference ? { partner, reference, startSkewMs: numOrNull(v["startSkewMs"]) } : null;
}

/** RPC samples from call-log NDJSON (records with a numeric durationNs). */
export function parseRpcNdjson(text: string): RpcSample[] {
  const out: RpcSample[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === "") continue;
    let rec: unknown;
    try {
      rec = JSON.parse(line);
    } catch {
      throw new Error(`line ${i + 1}: not JSON: ${line.slice(0, 60)}`);
    }
    if (!isObject(rec)) throw new Error(`line ${i + 1}: not a JSON object`);
    if (rec["msg"] !== undefined && rec["msg"] !== "rpc") continue;
    const r = rec as Partial<Record<keyof CallRecord, unknown>>;
    const duration = numOrNull(r.durationNs);
    if (duration === null) continue;
    const src = String(r.src ?? "?");
    // A callee's record of a call another component made (that component logs the whole call).
    const side: RpcSide = r.side === "server" && src !== "external" ? "callee" : "caller";
    out.push({
      src,
      srcVerb: String(r.srcVerb ?? "?"),
      dst: String(r.dst ?? "?"),
      verb: String(r.dstVerb ?? "?"),
      gameId: String(r.gameId ?? ""),
      side,
      ms: duration / 1e6,
      ok: r.code === undefined || r.code === "ok",
      endMs: numOrNull(rec["time"]),
    });
  }
  return out;
}

/** Reads FlappyGo run folders plus the remote stats.csv files beside them. */
async function loadFlappyGoRuns(dirs: readonly string[], root: string): Promise<Discovery> {
  const runs: RunData[] = [];
  const problems: Problem[] = [];
  const byCollection = new Map<string, RunData[]>();
  for (const dir of dirs) {
    const collected = dirname(dir);
    const deployment = `flappygo:${await flappyGoDeploymentName(collected, root)}`;
    const run = await loadFlappyGoRun(dir, deployment);
    runs.push(run);
    const list = byCollection.get(collected) ?? [];
    list.push(run);
    byCollection.set(collected, list);
  }
  for (const [collected, list] of byCollection) {
    const byGame = new Map<string, RunData>();
    for (const r of list) if (r.gameId && r.status !== "unreadable") byGame.set(r.gameId, r);
    const remote = join(collected, "remote");
    const services = existsSync(remote)
      ? (await readdir(remote, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name).sort()
      : [];
    for (const svc of services) {
      // stats_old.csv may repeat stats.csv's rows (it is a copy taken before a seed change):
      // its games count only when stats.csv does not have them.
      const current = await readStatsCsv(join(remote, svc, "stats.csv"), problems);
      const old = await readStatsCsv(join(remote, svc, "stats_old.csv"), problems);
      const currentGames = new Set(current.map((r) => r.gameId));
      for (const row of [...current, ...old.filter((r) => !currentGames.has(r.gameId))]) {
        byGame.get(row.gameId)?.rpc.push(row.sample);
      }
    }
  }
  return { runs, problems };
}

async function readStatsCsv(path: string, problems: Problem[]): Promise<{ gameId: string; sample: RpcSample }[]> {
  if (!existsSync(path)) return [];
  try {
    const table = parseCsv(await readFile(path, "utf8"), ["SrcSvcName", "DestSvcName", "DestSvcVerb", "GameId", "ReqTime"]);
    const out: { gameId: string; sample: RpcSample }[] = [];
    for (const { line, cells } of table.rows) {
      const ns = Number(cells["ReqTime"]);
      if (!Number.isFinite(ns)) throw new Error(`line ${line}: ReqTime "${cells["ReqTime"]}" is not a number`);
      const gameId = cells["GameId"]!.trim();
      if (gameId === "") continue;
      out.push({ gameId, sample: { src: cells["SrcSvcName"]!, srcVerb: "?", dst: cells["DestSvcName"]!, verb: cells["DestSvcVerb"]!, gameId, side: "caller", ms: ns / 1e6, ok: true, endMs: null } });
    }
    return out;
  } catch (err) {
    problems.push({ path, reason: errorText(err) });
    return [];
  }
}

/** The nearest `deploy_type` file from `from` up to `root`'s parent, else `root`'s name. */
async function flappyGoDeploymentName(from: string, root: string): Promise<string> {
  const stop = dirname(root);
  let dir = from;
  for (;;) {
    const file = join(dir, "deploy_type");
    if (existsSync(file)) {
      const text = (await readFile(file, "utf8")).trim();
      if (text !== "") return text;
    }
    if (dir === stop || relative(stop, dir).startsWith("..") || dirname(dir) === dir) break;
    dir = dirname(dir);
  }
  return basename(root);
}

async function loadFlappyGoRun(dir: string, deployment: string): Promise<RunData> {
  const folderSeed = FLAPPYGO_RUN.exec(basename(dir))?.[1] ?? "?";
  const run = emptyRun("flappygo", dir, deployment, folderSeed);
  let extra: Json;
  try {
    const parsed: unknown = JSON.parse(await readFile(join(dir, "extra_data.json"), "utf8"));
    if (!isObject(parsed)) throw new Error("not a JSON object");
    extra = parsed;
  } catch (err) {
    return { ...run, reason: `extra_data.json: ${errorText(err)}` };
  }
  const seed = (strOrNull(extra["seed"]) ?? folderSeed).replace(/\.csv$/, "");
  const ms = (v: unknown): number | null => {
    const n = typeof v === "string" ? Number(v) : numOrNull(v);
    return n !== null && Number.isFinite(n) ? n : null;
  };
  const base: RunData = {
    ...emptyRun("flappygo", dir, deployment, seed),
    score: numOrNull(extra["score"]),
    gameId: strOrNull(extra["game_id"]),
  };
  try {
    const rows = parseFlappyGoLatencyCsv(await readFile(join(dir, "latency_data.csv"), "utf8"));
    base.values = flappyGoMetrics(rows, { authMs: ms(extra["auth_latency"]), startMs: ms(extra["initiator_latency"]) });
    base.frameTimes = rows.filter((r) => r.type === "frame" && r.direction === "recv").map((r) => r.time).sort((a, b) => a - b);
    base.status = "ok";
  } catch (err) {
    base.reason = `latency_data.csv ${errorText(err)}`;
  }
  return base;
}

/** A summary's serverCpu, keeping the groups whose CPU was read; null when absent or malformed. */
function serverCpuOf(value: unknown): ServerCpuView | null {
  if (!isObject(value) || !Array.isArray(value["groups"])) return null;
  const windowMs = numOrNull(value["windowMs"]);
  if (windowMs === null || windowMs <= 0) return null;
  const groups: ServerCpuView["groups"][number][] = [];
  for (const g of value["groups"] as unknown[]) {
    if (!isObject(g) || typeof g["group"] !== "string" || !Array.isArray(g["components"])) return null;
    const cpuUs = numOrNull(g["cpuUs"]);
    if (cpuUs === null || cpuUs < 0) continue;
    const play = numOrNull(g["playCpuUs"]);
    const idle = numOrNull(g["idleCpuUs"]);
    groups.push({
      group: g["group"],
      components: (g["components"] as unknown[]).map(String),
      cpuUs,
      playCpuUs: play !== null && play >= 0 && play <= cpuUs ? play : null,
      idleCpuUs: idle !== null && idle >= 0 ? idle : null,
    });
  }
  const idleWindowMs = numOrNull(value["idleWindowMs"]);
  return { windowMs, playWindowMs: numOrNull(value["playWindowMs"]), idleWindowMs: idleWindowMs !== null && idleWindowMs > 0 ? idleWindowMs : null, groups };
}

function faultOf(value: unknown): FaultView | null {
  if (!isObject(value) || typeof value["kind"] !== "string") return null;
  const bool = (v: unknown) => (typeof v === "boolean" ? v : null);
  return {
    kind: value["kind"],
    tick: numOrNull(value["tick"]),
    injectedAtTick: numOrNull(value["injectedAtTick"]),
    action: strOrNull(value["action"]),
    pauseMs: numOrNull(value["pauseMs"]),
    reconnections: numOrNull(value["reconnections"]),
    resentInputs: numOrNull(value["resentInputs"]),
    scoreMatched: bool(value["scoreMatched"]),
    recorded: bool(value["recorded"]),
  };
}
