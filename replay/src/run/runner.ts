import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { simulateTrace } from "@flaplab/simulator";
import { replayFlapOffsetsMs, replayFlapTicks } from "@flaplab/input-traces";
import type { GroupCpu } from "@flaplab/deployment";
import type { Page } from "playwright-core";
import { launch, nowEpochMs, pageState, waitUntil, type Browser, type PageGlobals } from "./play.js";
import type { LoadedTrace, ReplayOptions, StreamLink } from "./options.js";
import { deploymentFolder, ReplayUsageError } from "./options.js";

export interface RunFailure {
  readonly reason: string;
  readonly stage: "login" | "start" | "play" | "gameover";
}

export interface DispatchSample {
  readonly seq: number;
  /** ms after the start press, as the trace asks. */
  readonly intendedMs: number;
  /** ms after the start press at which the page sent the input. */
  readonly actualMs: number;
  readonly latenessMs: number;
}

/** summary.json of one run (format flaplab-run/1; see replay/README.md). */
export interface RunSummary {
  readonly format: "flaplab-run/1";
  readonly status: "ok" | "failed";
  readonly failure: RunFailure | null;
  readonly attempt: number;
  readonly retries: number;
  readonly deployment: { readonly name: string; readonly webUrl: string; readonly topology: string | null; readonly link: StreamLink };
  readonly seed: string;
  readonly trace: string;
  readonly gameId: string | null;
  readonly score: number | null;
  readonly ticks: number | null;
  readonly expected: { readonly score: number; readonly ticks: number };
  readonly latency: { readonly authMs: number | null; readonly startMs: number | null };
  readonly client: Record<string, unknown> | null;
  readonly engine: Record<string, unknown> | null;
  readonly dispatch: {
    readonly presses: number;
    readonly latenessMs: { readonly p50: number | null; readonly p99: number | null; readonly max: number | null };
    readonly samples: readonly DispatchSample[];
  };
  readonly browser: { readonly name: "chromium"; readonly version: string; readonly executable: string; readonly args: readonly string[] };
  readonly rpcRecords: number | null;
  /** The fault injected into this run's game, and what became of the game (null without one). */
  readonly fault: FaultOutcome | null;
  /** The server processes' CPU over the game (login to game over), when the runner knows them. */
  readonly serverCpu: ServerCpu | null;
  /** With `pnpm study --duet`: the deployment that played the same trace at the same time (null otherwise). */
  readonly duet: DuetInfo | null;
  readonly startedAt: string;
  readonly durationMs: number;
}

/** Each server process's CPU time (user + system) over one run's game window. */
export interface ServerCpu {
  /** The window: from the login to game over, ms. */
  readonly windowMs: number;
  /** The part of it from the game's start (its first input) to game over, ms; null when the game did not start. */
  readonly playWindowMs: number | null;
  /** A window before the browser starts, no game on the deployment: what the servers spend idle, ms. */
  readonly idleWindowMs: number | null;
  readonly groups: readonly {
    readonly group: string;
    readonly components: readonly string[];
    /** Login to game over. */
    readonly cpuUs: number | null;
    /** The game's start to game over: the play, without the login and StartGame. */
    readonly playCpuUs: number | null;
    /** Over the idle window: the process's background (timers, the stream stack's polling). */
    readonly idleCpuUs: number | null;
  }[];
}

/** A group's CPU sample taken at one moment (a deployment's `cpuTimes()`), with when it was taken. */
export interface CpuSample {
  readonly at: number;
  readonly groups: readonly GroupCpu[];
}

/** How long the runner watches a deployment's servers idle before each game (`serverCpu.idleWindowMs`). */
export const IDLE_WINDOW_MS = 1000;
/**
 * How long it lets them settle first: a deployment that played the run before (a duet's every run)
 * still ends that game (the score's record, the streams' close) in the second after game over.
 */
export const IDLE_SETTLE_MS = 1000;

/**
 * The CPU each group used between the samples (null where one could not be read); `atStart` splits
 * off the play; `idle` is a window with no game, before `before`.
 */
export function cpuBetween(before: CpuSample, after: CpuSample, atStart?: CpuSample, idle?: { readonly from: CpuSample; readonly to: CpuSample }): ServerCpu {
  const used = (from: readonly GroupCpu[], a: GroupCpu): number | null => {
    const b = from.find((x) => x.group === a.group)?.cpuUs;
    return a.cpuUs === null || b === undefined || b === null ? null : Math.max(0, a.cpuUs - b);
  };
  return {
    windowMs: after.at - before.at,
    playWindowMs: atStart ? after.at - atStart.at : null,
    idleWindowMs: idle ? idle.to.at - idle.from.at : null,
    groups: after.groups.map((a) => {
      const idleEnd = idle?.to.groups.find((x) => x.group === a.group);
      return {
        group: a.group,
        components: [...a.components],
        cpuUs: used(before.groups, a),
        playCpuUs: atStart ? used(atStart.groups, a) : null,
        idleCpuUs: idle && idleEnd ? used(idle.from.groups, idleEnd) : null,
      };
    }),
  };
}

/** A run of a duet: two deployments playing the same trace at the same time, each in its own browser. */
export interface DuetInfo {
  /** The other deployment's folder name. */
  readonly partner: string;
  /** The deployment the pair's differences are taken against (the first of `--duet`). */
  readonly reference: string;
  /** This page's start (input 1) minus the partner's, ms; null when either did not start. */
  readonly startSkewMs: number | null;
}

export interface FaultOutcome {
  readonly kind: string;
  /** The tick asked for, and the game's tick when it was injected (null: the game ended first). */
  readonly tick: number;
  readonly injectedAtTick: number | null;
  /** What was done ("SIGKILL engine-2 (pid 4242)"). */
  readonly action: string | null;
  /** The longest wait between two frames of new ticks, ms: the pause the player saw. */
  readonly pauseMs: number | null;
  /** Times the page opened the game's stream again where the game continued, and inputs it re-sent. */
  readonly reconnections: number | null;
  readonly resentInputs: number | null;
  /** The game's score and ticks equal the simulator's for the same presses at the same ticks. */
  readonly scoreMatched: boolean;
  /** The score component stored the run. */
  readonly recorded: boolean;
}

export interface ReplayReport {
  runs: number;
  ok: number;
  failed: number;
  retried: number;
  folders: string[];
}

type Log = (line: string) => void;

interface PageGame {
  state: string;
  lastGame: {
    gameId: string;
    seed: string;
    score: number;
    ticks: number;
    recorded: boolean;
    error: string | null;
    reconnections?: number;
    resentInputs?: number;
  } | null;
  summary: Record<string, unknown> | null;
  csv: string;
  topology: string | null;
}

/** Fails fast, with no folder written, when the deployment's web page cannot be reached. */
export async function checkDeployment(url: string): Promise<{ topology: string | null }> {
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(5000) });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new ReplayUsageError(`cannot reach the deployment at ${url}: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
  }
  if (!res.ok) throw new ReplayUsageError(`the deployment at ${url} answered HTTP ${res.status}`);
  try {
    const config = (await (await fetch(new URL("/config.json", url), { signal: AbortSignal.timeout(5000) })).json()) as {
      topology?: string;
    };
    return { topology: config.topology ?? null };
  } catch {
    return { topology: null };
  }
}

/** Replays every trace `opts.runs` times and writes one folder per run (and per failed attempt). */
export async function replay(opts: ReplayOptions, log: Log): Promise<ReplayReport> {
  const { topology } = await checkDeployment(opts.url);
  const deployment = opts.deployment ?? deploymentFolder(topology ?? new URL(opts.url).host.replace(/[^a-z0-9.-]/gi, "_"), opts.link);
  const user = { name: `replay-${Date.now().toString(36)}`, password: "replay-password-1", registered: false };
  const report: ReplayReport = { runs: 0, ok: 0, failed: 0, retried: 0, folders: [] };
  const total = opts.traces.length * opts.runs;
  let index = 0;
  for (const trace of opts.traces) {
    const simulated = simulateTrace(trace.trace);
    const expected = { score: simulated.score, ticks: simulated.ticks };
    const seedDir = join(opts.out, deployment, trace.seed.toString());
    await mkdir(seedDir, { recursive: true });
    const first = await nextRunNumber(seedDir);
    for (let r = 0; r < opts.runs; r++) {
      index++;
      const runName = `run-${String(first + r).padStart(3, "0")}`;
      for (let attempt = 1; ; attempt++) {
        const started = Date.now();
        const summary = await oneRun(opts, trace, { deployment, topology, user, expected, attempt });
        const final = summary.status === "ok" || attempt > opts.retries;
        const folder = join(seedDir, final ? runName : `${runName}.attempt-${attempt}`);
        await writeRun(folder, summary, summary.status === "ok" || summary.gameId ? await gatherRpc(opts.rpcLogs, summary.gameId) : []);
        report.folders.push(folder);
        log(`run ${index}/${total}  ${runLine(summary, Date.now() - started)}`);
        if (final) {
          report.runs++;
          if (summary.status === "ok") report.ok++;
          else report.failed++;
          if (attempt > 1) report.retried++;
          break;
        }
      }
    }
  }
  return report;
}

/** One line on how a run went: seed, score against the simulator's, time, the page's press lateness. */
export function runLine(summary: RunSummary, durationMs: number): string {
  const lateness = summary.dispatch.latenessMs;
  return (
    `seed ${summary.seed}  score ${summary.score ?? "-"}/${summary.expected.score}  ` +
    `${summary.status === "ok" ? "ok" : `FAILED (${summary.failure?.reason})`}  ${(durationMs / 1000).toFixed(1)} s` +
    (lateness.p50 !== null ? `  dispatch lateness p50 ${lateness.p50.toFixed(2)} ms, max ${lateness.max!.toFixed(2)} ms` : "") +
    (summary.attempt > 1 ? `  [attempt ${summary.attempt}]` : "")
  );
}

export async function nextRunNumber(dir: string): Promise<number> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const used = names.map((n) => /^run-(\d+)/.exec(n)?.[1]).filter(Boolean).map(Number);
  return used.length ? Math.max(...used) + 1 : 1;
}

/** Writes a run folder under a temporary name and renames it at the end: no half-written run folders. */
export async function writeRun(folder: string, summary: RunSummary & { csv?: string }, rpc: string[]): Promise<void> {
  const partial = `${folder}.partial`;
  await rm(partial, { recursive: true, force: true });
  await mkdir(partial, { recursive: true });
  const { csv, ...rest } = summary;
  await writeFile(join(partial, "latency.csv"), csv ?? "");
  await writeFile(join(partial, "rpc.ndjson"), rpc.map((l) => `${l}\n`).join(""));
  await writeFile(join(partial, "summary.json"), `${JSON.stringify({ ...rest, rpcRecords: rpc.length }, null, 2)}\n`);
  await rm(folder, { recursive: true, force: true });
  await rename(partial, folder);
}

/** The call records of one game from the servers' call logs. */
export async function gatherRpc(dirs: readonly string[], gameId: string | null): Promise<string[]> {
  if (!gameId || dirs.length === 0) return [];
  await new Promise((r) => setTimeout(r, 200)); // the servers write their logs asynchronously
  const out: string[] = [];
  for (const dir of dirs) {
    const files = (await readdir(dir).catch(() => [] as string[])).filter((f) => f.startsWith("rpc-") && f.endsWith(".ndjson"));
    for (const f of files) {
      const text = await readFile(join(dir, f), "utf8").catch(() => "");
      for (const line of text.split("\n")) if (line.includes(gameId)) out.push(line);
    }
  }
  return out;
}

/**
 * Starts several pages' games together: each party calls `arrive()` once logged in (and waits), or
 * `leave()` when it will not start; the games start when every party has done one or the other.
 */
export class StartBarrier {
  private left: number;
  private open!: () => void;
  readonly opened = new Promise<void>((resolve) => {
    this.open = resolve;
  });
  constructor(parties: number) {
    this.left = parties;
  }
  arrive(): Promise<void> {
    this.count();
    return this.opened;
  }
  leave(): void {
    this.count();
  }
  private count(): void {
    if (--this.left <= 0) this.open();
  }
}

export interface RunContext {
  deployment: string;
  topology: string | null;
  user: { name: string; password: string; registered: boolean };
  expected: { score: number; ticks: number };
  attempt: number;
  /** Filled by `play` when it injected the fault. */
  injected?: { atTick: number | null; action: string | null };
  /** Duet runs: wait here, logged in, until the partner's page is too; filled with the start's epoch ms. */
  barrier?: StartBarrier;
  arrived?: boolean;
  startEpoch?: number;
  /** Called once when the game has started (its first input sent). */
  onGameStart?: () => void;
}

export async function oneRun(opts: ReplayOptions, trace: LoadedTrace, ctx: RunContext): Promise<RunSummary & { csv: string }> {
  const startedAt = new Date();
  const t0 = Date.now();
  const samples: DispatchSample[] = [];
  let browser: Browser | undefined;
  let failure: RunFailure | null = null;
  let game: PageGame | undefined;
  let version = "unknown";
  let args: readonly string[] = [];
  let serverCpu: ServerCpu | null = null;
  const sample = async (): Promise<CpuSample | undefined> => {
    const at = performance.now();
    const groups = await opts.serverCpu?.();
    return groups === undefined ? undefined : { at, groups };
  };
  try {
    // The servers' background, with no game on them (the browser not started yet either).
    if (opts.serverCpu) await new Promise((r) => setTimeout(r, IDLE_SETTLE_MS));
    const idleFrom = await sample();
    if (idleFrom !== undefined) await new Promise((r) => setTimeout(r, IDLE_WINDOW_MS));
    const idleTo = await sample();
    const idle = idleFrom !== undefined && idleTo !== undefined ? { from: idleFrom, to: idleTo } : undefined;
    browser = await launch(opts.chromium, { deploymentHost: new URL(opts.url).hostname, stockScheduling: opts.stockScheduling });
    version = browser.version;
    args = browser.args;
    const page = await browser.context.newPage();
    const crashed = new Promise<RunFailure>((resolve) => {
      page.on("crash", () => resolve({ reason: "browser page crashed", stage: "play" }));
      browser!.context.on("close", () => resolve({ reason: "browser closed", stage: "play" }));
    });
    const cpuBefore = await sample();
    // Sampled when the game starts, without holding up the presses that follow.
    let cpuAtStart: Promise<CpuSample | undefined> | undefined;
    ctx.onGameStart = () => {
      cpuAtStart = sample();
    };
    const played = play(page, opts, trace, ctx, samples);
    failure = await Promise.race([played, crashed]);
    const cpuAfter = await sample();
    if (cpuBefore !== undefined && cpuAfter !== undefined) serverCpu = cpuBetween(cpuBefore, cpuAfter, await cpuAtStart, idle);
    game = await readGame(page).catch(() => undefined);
  } catch (err) {
    failure = { reason: `browser: ${(err as Error).message.split("\n")[0]}`, stage: "login" };
  } finally {
    if (ctx.barrier && !ctx.arrived) ctx.barrier.leave();
    await browser?.close();
  }
  const last = game?.lastGame ?? null;
  if (!failure && last) {
    if (last.error) failure = { reason: last.error, stage: "play" };
    else if (last.score !== ctx.expected.score || last.ticks !== ctx.expected.ticks) {
      failure = {
        reason: `score ${last.score} at tick ${last.ticks} differs from the simulator's ${ctx.expected.score} at tick ${ctx.expected.ticks}`,
        stage: "gameover",
      };
    } else if (!last.recorded) failure = { reason: "the run was not recorded by the score component", stage: "gameover" };
  }
  const client = game?.summary ?? null;
  const engine = (client?.["engine"] as Record<string, unknown> | undefined) ?? null;
  const fault: FaultOutcome | null = opts.fault
    ? {
        kind: opts.fault.kind,
        tick: opts.fault.tick,
        injectedAtTick: ctx.injected?.atTick ?? null,
        action: ctx.injected?.action ?? null,
        pauseMs: longestFrameGapMs(game?.csv ?? ""),
        reconnections: last?.reconnections ?? null,
        resentInputs: last?.resentInputs ?? null,
        scoreMatched: last !== null && last.score === ctx.expected.score && last.ticks === ctx.expected.ticks,
        recorded: last?.recorded ?? false,
      }
    : null;
  const lateness = samples.map((s) => s.latenessMs).sort((a, b) => a - b);
  const pct = (p: number) => (lateness.length ? lateness[Math.min(lateness.length - 1, Math.ceil(p * lateness.length) - 1)]! : null);
  return {
    format: "flaplab-run/1",
    status: failure ? "failed" : "ok",
    failure,
    attempt: ctx.attempt,
    retries: ctx.attempt - 1,
    deployment: { name: ctx.deployment, webUrl: opts.url, topology: ctx.topology, link: opts.link },
    seed: trace.seed.toString(),
    trace: trace.path,
    gameId: last?.gameId ?? null,
    score: last?.score ?? null,
    ticks: last?.ticks ?? null,
    expected: ctx.expected,
    latency: {
      authMs: (client?.["authMs"] as number | null | undefined) ?? null,
      startMs: (client?.["startMs"] as number | null | undefined) ?? null,
    },
    client: client ? { ...client, engine: undefined } : null,
    engine,
    dispatch: { presses: samples.length, latenessMs: { p50: pct(0.5), p99: pct(0.99), max: pct(1) }, samples },
    browser: { name: "chromium", version, executable: opts.chromium, args },
    rpcRecords: null,
    fault,
    serverCpu,
    duet: null,
    startedAt: startedAt.toISOString(),
    durationMs: Date.now() - t0,
    csv: game?.csv ?? "",
  };
}

/** A duet's run waits, logged in, for its partner's page before pressing Space (others go on at once). */
async function startTogether(ctx: RunContext): Promise<void> {
  if (!ctx.barrier) return;
  ctx.arrived = true;
  await ctx.barrier.arrive();
}

/**
 * A run on the game's tick clock (`--press-on-ticks`, and every run with a fault): the page presses
 * at the trace's flap ticks itself, so the game is the simulator's whatever the machine's timing;
 * a fault goes in once the game reaches its tick; the run waits for game over.
 */
async function playOnTicks(page: Page, opts: ReplayOptions, fault: ReplayOptions["fault"], trace: LoadedTrace, ctx: RunContext): Promise<RunFailure | null> {
  const ticks = replayFlapTicks(trace.trace);
  try {
    await page.evaluate((t) => (globalThis as unknown as PageGlobals).flaplab!.pressAtTicks(t), ticks);
    await startTogether(ctx);
    await page.keyboard.press("Space");
    const gameId = await page.waitForFunction(
      () => {
        const f = (globalThis as unknown as PageGlobals).flaplab!;
        if (f.state === "over") return "-";
        return f.log().find((r) => r.type === "start")?.note ?? "";
      },
      null,
      { timeout: 20_000 },
    );
    const id = (await gameId.jsonValue()) as string;
    if (id === "-") return { reason: "the game ended before it started (streams could not be opened)", stage: "start" };
    ctx.startEpoch = await page.evaluate(() => {
      const start = (globalThis as unknown as PageGlobals).flaplab!.log().find((r) => r.type === "start");
      return start ? performance.timeOrigin + start.time : undefined;
    });
    ctx.onGameStart?.();
    const tickMs = 1000 / 30;
    if (fault === undefined) {
      await page.waitForFunction(() => (globalThis as unknown as PageGlobals).flaplab?.state === "over", null, {
        timeout: ctx.expected.ticks * tickMs + opts.slackMs,
      });
      return null;
    }
    await page.waitForFunction(
      (at) => {
        const f = (globalThis as unknown as PageGlobals).flaplab!;
        return f.state === "over" || (f.tick() ?? 0) >= at;
      },
      fault.tick,
      { timeout: fault.tick * tickMs + 20_000, polling: 5 },
    );
    const atTick = await page.evaluate(() => {
      const f = (globalThis as unknown as PageGlobals).flaplab!;
      return f.state === "over" ? null : f.tick();
    });
    ctx.injected = { atTick, action: atTick === null ? null : await fault.inject(id) };
    const left = Math.max(0, (ctx.expected.ticks - (atTick ?? 0)) * tickMs);
    await page.waitForFunction(() => (globalThis as unknown as PageGlobals).flaplab?.state === "over", null, {
      timeout: left + opts.slackMs,
    });
    return null;
  } catch (err) {
    const state = await pageState(page).catch(() => "unknown");
    return { reason: `${(err as Error).message.split("\n")[0]} (page state: ${state})`, stage: state === "playing" ? "gameover" : "play" };
  }
}

/**
 * The longest wait between two tick frames of increasing ticks, ms, from a page's latency CSV
 * (columns `type,…,time,…,tick,…,kind`): the pause a player saw. Null without two such frames.
 */
export function longestFrameGapMs(csv: string): number | null {
  const [header, ...lines] = csv.trim().split("\n");
  if (!header) return null;
  const cols = header.split(",");
  const at = (name: string) => cols.indexOf(name);
  const [type, time, tick, kind] = [at("type"), at("time"), at("tick"), at("kind")];
  if (type < 0 || time < 0 || tick < 0) return null;
  let lastTick = Number.NEGATIVE_INFINITY;
  let lastTime: number | undefined;
  let longest: number | null = null;
  for (const line of lines) {
    const cells = line.split(",");
    if (cells[type] !== "frame" || (kind >= 0 && cells[kind] === "ack")) continue;
    const t = Number(cells[time]);
    const k = Number(cells[tick]);
    if (!(k > lastTick)) continue;
    if (lastTime !== undefined) longest = Math.max(longest ?? 0, t - lastTime);
    lastTick = k;
    lastTime = t;
  }
  return longest === null ? null : Math.round(longest * 1000) / 1000;
}

async function readGame(page: Page): Promise<PageGame> {
  return page.evaluate(() => {
    const f = (globalThis as unknown as PageGlobals).flaplab!;
    return { state: f.state, lastGame: f.lastGame, summary: f.summary(), csv: f.csv(), topology: null };
  });
}

/** Logs in, starts the game and presses Space at the trace's times. Returns a failure, or null. */
async function play(
  page: Page,
  opts: ReplayOptions,
  trace: LoadedTrace,
  ctx: RunContext,
  samples: DispatchSample[],
): Promise<RunFailure | null> {
  const url = new URL(opts.url);
  url.searchParams.set("seed", trace.seed.toString());
  url.searchParams.set("link", opts.link);
  try {
    await page.goto(url.toString(), { timeout: 15_000 });
    // Every run has a new browser profile, so storage starts empty and auth is measured each time.
    await page.waitForFunction(() => (globalThis as unknown as PageGlobals).flaplab !== undefined, null, { timeout: 15_000 });
    await page.waitForSelector("#username", { timeout: 15_000 });
    await page.fill("#username", ctx.user.name);
    await page.fill("#password", ctx.user.password);
    await page.click(ctx.user.registered ? "#login" : "#register");
    await page.waitForFunction(
      () => {
        const g = globalThis as unknown as PageGlobals;
        const err = g.document.querySelector("#auth-error")?.textContent ?? "";
        const f = g.flaplab;
        return f?.state === "ready" || err.trim() !== "";
      },
      null,
      { timeout: 15_000 },
    );
    if ((await pageState(page)) !== "ready") {
      const err = await page.textContent("#auth-error");
      return { reason: `login failed: ${err?.trim()}`, stage: "login" };
    }
    ctx.user.registered = true;
  } catch (err) {
    return { reason: `login: ${(err as Error).message.split("\n")[0]}`, stage: "login" };
  }

  const offsets = replayFlapOffsetsMs(trace.trace);
  if (opts.fault || opts.pressOnTicks) return playOnTicks(page, opts, opts.fault, trace, ctx);
  await startTogether(ctx);
  try {
    await page.keyboard.press("Space");
    // The game starts when the page sends input 1 (after StartGame and opening both streams).
    const startHandle = await page.waitForFunction(
      () => {
        const f = (globalThis as unknown as PageGlobals).flaplab!;
        const start = f.log().find((r) => r.type === "input" && r.seq === 1);
        if (start) return performance.timeOrigin + start.time;
        return f.state === "over" ? -1 : 0;
      },
      null,
      { timeout: 20_000 },
    );
    const startEpoch = (await startHandle.jsonValue()) as number;
    if (startEpoch < 0) return { reason: "the game ended before it started (streams could not be opened)", stage: "start" };
    ctx.startEpoch = startEpoch;
    ctx.onGameStart?.();
    for (const offset of offsets) {
      await waitUntil(startEpoch + offset - 3);
      if ((await pageState(page)) !== "playing") break; // game over early: stop pressing
      await waitUntil(startEpoch + offset);
      await page.keyboard.press("Space");
    }
    const inputs = (await page.evaluate(() =>
      (globalThis as unknown as PageGlobals).flaplab!
        .log()
        .filter((r) => r.type === "input" && (r.seq ?? 0) > 1)
        .map((r) => ({ seq: r.seq!, epoch: performance.timeOrigin + r.time })),
    )) as Array<{ seq: number; epoch: number }>;
    inputs.forEach((input, i) => {
      const intended = offsets[i];
      if (intended === undefined) return;
      const actual = input.epoch - startEpoch;
      samples.push({ seq: input.seq, intendedMs: round3(intended), actualMs: round3(actual), latenessMs: round3(actual - intended) });
    });
    const lastOffset = offsets.at(-1) ?? 0;
    const deadline = nowEpochMs() + Math.max(0, startEpoch + lastOffset - nowEpochMs()) + opts.slackMs;
    await page.waitForFunction(() => (globalThis as unknown as PageGlobals).flaplab?.state === "over", null, {
      timeout: Math.max(1000, deadline - nowEpochMs()),
    });
  } catch (err) {
    const state = await pageState(page).catch(() => "unknown");
    return { reason: `no game over (page state ${state}): ${(err as Error).message.split("\n")[0]}`, stage: "play" };
  }
  return null;
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
