// The coordinator of `pnpm load`: forks K bot workers, gives each its share of the schedule, holds
// the warm-up until every account is registered, starts the run on a shared clock, prints one
// progress line a second, and gathers every worker's histograms and games — or says which worker
// died and what it had started.
import { type ChildProcess, fork } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { readFile } from "node:fs/promises";
import { parseTrace, replayFlapOffsetsMs } from "@flaplab/input-traces";
import { LatencyHist } from "./hist.js";
import type { LoadOptions } from "./options.js";
import type { BotShare, FinalMessage, FromWorker, ProgressMessage, ToWorker, WireOptions } from "./protocol.js";
import { accountPool, intendedStarts, shareOut } from "./schedule.js";

/** Built (dist/*.js, as the image runs it) or from source (tsx): the workers run the same way. */
const BUILT = import.meta.url.endsWith(".js");
const WORKER = fileURLToPath(new URL(BUILT ? "./worker.js" : "./worker.ts", import.meta.url));
const WORKER_EXEC_ARGV = BUILT ? ["--conditions=built"] : ["--import", "tsx"];
/** The package's folder: the workers start there, so `--import tsx` finds this package's tsx. */
const PACKAGE_DIR = fileURLToPath(new URL("..", import.meta.url));
/** How long the warm-up (plans and registrations) may take before the run is given up. */
const WARMUP_TIMEOUT_MS = 180_000;
/** After the drain: how long workers have to send their figures before they are stopped. */
const REPORT_GRACE_MS = 10_000;

/** A worker that ended without its figures. */
export interface LostWorker {
  readonly worker: number;
  readonly why: string;
  /** Games it had started by its last progress message (none of them counted). */
  readonly started: number;
}

export interface RunResult {
  readonly options: LoadOptions;
  readonly runId: string;
  readonly scheduled: number;
  readonly finals: readonly FinalMessage[];
  readonly lost: readonly LostWorker[];
  /** Each second's progress, summed over the workers. */
  readonly seconds: readonly ProgressRow[];
  readonly warmupMs: number;
}

export interface ProgressRow {
  readonly t: number;
  readonly started: number;
  readonly finished: number;
  readonly failed: number;
  readonly inFlight: number;
  readonly inputs: number;
  readonly latenessP99Ms: number | null;
  readonly cpuPct: readonly number[];
}

export interface RunIo {
  /** Progress lines (stderr). */
  readonly progress: (line: string) => void;
  /** Called with each worker's process once forked (tests kill one). */
  readonly onWorker?: (worker: number, child: ChildProcess) => void;
}

function wire(options: LoadOptions): WireOptions {
  const { certSha256, ...rest } = options;
  return { ...rest, certSha256Hex: certSha256 ? Buffer.from(certSha256).toString("hex") : undefined };
}

/** How long one game lasts, ms (for the arrivals' account pools). */
async function gameMs(options: LoadOptions): Promise<number> {
  if (options.bot === "autopilot") return options.gameLengthMs + 3000;
  const offsets = replayFlapOffsetsMs(parseTrace(await readFile(options.trace!, "utf8")));
  return (offsets.at(-1) ?? 0) + 5000;
}

/** Runs the load; resolves when every worker has reported or been given up on. */
export async function runLoad(options: LoadOptions, io: RunIo): Promise<RunResult> {
  const runId = randomBytes(4).toString("hex");
  const starts = intendedStarts(options.shape, options.durationMs, options.seed);
  const workers = Math.max(1, Math.min(options.workers, starts.length));
  const shares = shareOut(starts, workers);
  const perGame = await gameMs(options);
  const accounts: number[][] = shares.map((share, w) => {
    if (options.shape.kind === "players") return share.map((b) => b.index);
    const pool = accountPool(share.length, options.shape.rate / workers, perGame);
    return Array.from({ length: pool }, (_, k) => w + k * workers);
  });

  const finals: FinalMessage[] = [];
  const lost: LostWorker[] = [];
  const latest = new Map<number, ProgressMessage>();
  const warm = new Map<number, { registered: number; accounts: number; retries: number }>();
  const ready = new Set<number>();
  const children: ChildProcess[] = [];
  const settled = new Set<number>();
  let fatal: string | undefined;
  let onChange: () => void = () => undefined;
  const changed = () => onChange();

  for (let w = 0; w < workers; w++) {
    const child = fork(WORKER, [String(w)], {
      execArgv: WORKER_EXEC_ARGV,
      cwd: PACKAGE_DIR,
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    children.push(child);
    io.onWorker?.(w, child);
    child.on("message", (m: FromWorker) => {
      switch (m.type) {
        case "warmup":
          warm.set(m.worker, m);
          break;
        case "ready":
          ready.add(m.worker);
          break;
        case "fatal":
          fatal ??= `worker ${m.worker}: ${m.error}`;
          break;
        case "progress":
          latest.set(m.worker, m);
          break;
        case "final":
          finals.push(m);
          settled.add(m.worker);
          break;
      }
      changed();
    });
    child.on("exit", (code, signal) => {
      if (!settled.has(w)) {
        settled.add(w);
        lost.push({ worker: w, why: signal ? `killed by ${signal}` : `exited with code ${code}`, started: latest.get(w)?.started ?? 0 });
      }
      changed();
    });
    child.on("error", () => undefined);
    const init: ToWorker = { type: "init", worker: w, runId, options: wire(options), bots: shares[w] as BotShare[], accounts: accounts[w]! };
    child.send(init);
  }
  const stopAll = () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  };
  const waitFor = (cond: () => boolean, ms: number) =>
    new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(cond()), ms);
      onChange = () => {
        if (cond()) {
          clearTimeout(timer);
          resolve(true);
        }
      };
      onChange();
    });

  // Warm-up: plans and accounts, with its own progress line.
  const warmStart = performance.now();
  const warmLine = setInterval(() => {
    const reg = [...warm.values()].reduce((a, w) => a + w.registered, 0);
    const all = accounts.reduce((a, l) => a + l.length, 0);
    const retries = [...warm.values()].reduce((a, w) => a + w.retries, 0);
    io.progress(`warm-up ${((performance.now() - warmStart) / 1000).toFixed(0)}s: accounts registered ${reg}/${all}, retried ${retries}, workers ready ${ready.size}/${workers}`);
  }, 1000);
  const allReady = await waitFor(() => ready.size === workers || fatal !== undefined || lost.length > 0, WARMUP_TIMEOUT_MS);
  clearInterval(warmLine);
  const warmupMs = performance.now() - warmStart;
  if (!allReady || fatal !== undefined || lost.length > 0) {
    stopAll();
    const why = fatal ?? (lost[0] ? `worker ${lost[0].worker} ${lost[0].why} during the warm-up` : `the warm-up took longer than ${WARMUP_TIMEOUT_MS / 1000} s`);
    throw new Error(`the warm-up failed: ${why}`);
  }

  // The run, on the clock the workers share (performance.timeOrigin + now()).
  const startAt = performance.timeOrigin + performance.now() + 200;
  for (const c of children) if (c.connected) c.send({ type: "go", startAt } satisfies ToWorker);
  const seconds: ProgressRow[] = [];
  const startPerf = startAt - performance.timeOrigin;
  const line = setInterval(() => {
    const t = Math.round((performance.now() - startPerf) / 1000);
    const rows = [...latest.values()];
    const lateness = new LatencyHist();
    for (const r of rows) lateness.merge(r.lateness);
    const sum = (k: "started" | "finished" | "failed" | "inFlight" | "inputs") => rows.reduce((a, r) => a + r[k], 0);
    const row: ProgressRow = {
      t,
      started: sum("started"),
      finished: sum("finished"),
      failed: sum("failed"),
      inFlight: sum("inFlight"),
      inputs: sum("inputs"),
      latenessP99Ms: lateness.atMs(99),
      cpuPct: Array.from({ length: workers }, (_, w) => latest.get(w)?.cpuPct ?? 0),
    };
    seconds.push(row);
    const p99 = row.latenessP99Ms === null ? "–" : `${row.latenessP99Ms.toFixed(2)} ms`;
    io.progress(
      `t=${t}s games started/finished/failed ${row.started}/${row.finished}/${row.failed}, in flight ${row.inFlight}, inputs/s ${row.inputs}, bot lateness p99 ${p99}, worker CPU ${row.cpuPct.map((c) => `${c.toFixed(0)}%`).join(" ")}`,
    );
  }, 1000);
  const bound = options.durationMs + options.drainMs + REPORT_GRACE_MS + 200;
  const all = await waitFor(() => settled.size === workers, bound);
  clearInterval(line);
  if (!all) {
    for (let w = 0; w < workers; w++) {
      if (!settled.has(w)) lost.push({ worker: w, why: `sent no figures within ${REPORT_GRACE_MS / 1000} s of the drain's end (stopped)`, started: latest.get(w)?.started ?? 0 });
    }
    stopAll();
  }
  return { options, runId, scheduled: starts.length, finals, lost, seconds, warmupMs };
}
