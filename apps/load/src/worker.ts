// A bot worker: one process (child_process.fork) playing its share of the schedule. It registers
// its accounts first (warm-up, outside the figures), waits for the coordinator's start, plays,
// reports every second, and sends its histograms and game records at the end.
import { readFile } from "node:fs/promises";
import { Code, ConnectError, type Transport } from "@connectrpc/connect";
import { AuthService } from "@flaplab/contracts/auth/v1/auth_pb";
import { createClient } from "@connectrpc/connect";
import { parseTrace, replayFlapOffsetsMs } from "@flaplab/input-traces";
import { planSurvival } from "@flaplab/simulator";
import type { Connector } from "@flaplab/game-client";
import { pino } from "pino";
import { type BotPlan, playBotGame } from "./bot.js";
import { botConnector, connectTransport, sourceAddress, webTransportLink } from "./links.js";
import { WorkerMetrics } from "./metrics.js";
import { type FromWorker, type GameRecord, type InitMessage, METRICS, type ToWorker } from "./protocol.js";
import { errorReason } from "./reasons.js";

/** The seeds autopilot bots play, in turn: the study's easy and hard worlds. */
export const AUTOPILOT_SEEDS = [6977347407732442987n, 8525333463046388971n] as const;
export const BOT_PASSWORD = "load bot password, long enough";
const TICK_MS = 33;
/** Registrations refused for a moment (the password hash gate) are tried again for this long. */
const WARMUP_RETRY_MS = 120_000;
/** A players bot whose game failed waits this long before its next. */
const RETRY_AFTER_FAILURE_MS = 1000;

/** Structured logs on stderr, each with the worker's number (its one argument). */
const logger = pino({ base: { worker: Number(process.argv[2]) } }, pino.destination(2));

export function username(runId: string, index: number): string {
  return `ld-${runId}-${index}`;
}

function send(msg: FromWorker): Promise<void> {
  return new Promise((resolve) => {
    if (!process.send) return resolve();
    process.send(msg, undefined, {}, () => resolve());
  });
}

/** The plans of this run's bots, made once: a survival schedule per seed, or the trace's presses. */
async function plans(init: InitMessage): Promise<BotPlan[]> {
  const { options } = init;
  if (options.bot === "trace") {
    const trace = parseTrace(await readFile(options.trace!, "utf8"));
    if (trace.seed === undefined) throw new Error(`the trace ${options.trace} names no seed (a FlappyGo file is named <seed>.csv)`);
    return [{ kind: "trace", seed: trace.seed, offsetsMs: replayFlapOffsetsMs(trace) }];
  }
  const minTicks = Math.max(1, Math.ceil(options.gameLengthMs / TICK_MS));
  return AUTOPILOT_SEEDS.map((seed) => ({ kind: "autopilot", seed, flapTicks: planSurvival(seed, { minTicks }).flapTicks }));
}

/** Registers `name` and returns its session's token, trying again while a limit says "in a moment", until the warm-up's time is up. */
async function register(transport: Transport, name: string, deadline: number, retried: () => void): Promise<string | undefined> {
  const auth = createClient(AuthService, transport);
  for (;;) {
    try {
      return (await auth.register({ username: name, password: BOT_PASSWORD })).session?.token;
    } catch (err) {
      const e = ConnectError.from(err);
      if (e.code === Code.AlreadyExists) return undefined;
      const wait = Number(e.metadata.get("retry-after") ?? "1") * 1000;
      if (e.code !== Code.ResourceExhausted || performance.now() + wait > deadline) throw new Error(`registering ${name}: ${errorReason("register", e)}: ${e.rawMessage}`);
      retried();
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}

async function main(init: InitMessage): Promise<void> {
  const { options, worker, runId } = init;
  const transports = new Map<string, Transport>();
  const addressOf = (index: number) => (options.spreadAddresses ? sourceAddress(index) : undefined);
  const transportOf = (index: number, url = options.url) => {
    const key = `${url} ${addressOf(index) ?? ""}`;
    let t = transports.get(key);
    if (!t) transports.set(key, (t = connectTransport(url, addressOf(index))));
    return t;
  };
  const botPlans = await plans(init);
  // Warm-up: every account registered, and so logged in, before the measured window: the
  // password hash gate (a few hashes at once) would refuse a crowd of logins by design.
  const sessions = new Map<number, { token?: string }>();
  const deadline = performance.now() + WARMUP_RETRY_MS;
  let registered = 0;
  let retries = 0;
  const report = () => void send({ type: "warmup", worker, registered, accounts: init.accounts.length, retries });
  const tick = setInterval(report, 1000);
  try {
    for (const index of init.accounts) {
      const token = await register(transportOf(index), username(runId, index), deadline, () => retries++);
      sessions.set(index, token === undefined ? {} : { token });
      registered++;
    }
  } finally {
    clearInterval(tick);
  }
  report();
  const webTransport: Connector | undefined = options.link === "webtransport" ? webTransportLink(options.certSha256Hex ? Uint8Array.from(Buffer.from(options.certSha256Hex, "hex")) : undefined) : undefined;
  const connectors = new Map<string, Connector>();
  const connectorOf = (index: number) => {
    const key = addressOf(index) ?? "";
    let c = connectors.get(key);
    if (!c) connectors.set(key, (c = botConnector(options.link, addressOf(index), webTransport)));
    return c;
  };
  void send({ type: "ready", worker });
  const go = await new Promise<number>((resolve) => process.on("message", (m: ToWorker) => m.type === "go" && resolve(m.startAt)));

  const runStart = go - performance.timeOrigin;
  const metrics = new WorkerMetrics();
  let endDrain!: () => void;
  const drained = new Promise<void>((r) => (endDrain = r));
  const drainTimer = setTimeout(() => endDrain(), Math.max(0, runStart + options.durationMs + options.drainMs - performance.now()));
  const durationEnd = runStart + options.durationMs;
  let cpu = process.cpuUsage();
  const cpuAtStart = { usage: cpu, at: performance.now() };
  let lastAt = performance.now();
  const progress = setInterval(() => {
    const now = performance.now();
    const used = process.cpuUsage(cpu);
    cpu = process.cpuUsage();
    const cpuPct = ((used.user + used.system) / 1000 / (now - lastAt)) * 100;
    lastAt = now;
    void send({ type: "progress", worker, started: metrics.started, finished: metrics.finished, failed: metrics.failed, inFlight: metrics.inFlight, inputs: metrics.secondInputs, lateness: metrics.secondLateness.encode(), cpuPct });
    metrics.secondInputs = 0;
    metrics.secondLateness.reset();
  }, 1000);
  // The CPU figures count from the run's start (the bots' timers are set before it).
  setTimeout(() => {
    lastAt = performance.now();
    cpu = process.cpuUsage();
    cpuAtStart.usage = cpu;
    cpuAtStart.at = lastAt;
  }, Math.max(0, runStart - performance.now()));

  const planOf = (index: number) => botPlans[index % botPlans.length]!;
  const context = (bot: number, account: number, session: { token?: string }) => ({
    worker,
    bot,
    username: username(runId, account),
    password: BOT_PASSWORD,
    auth: transportOf(account),
    initiator: transportOf(account, options.initiatorUrl),
    connector: connectorOf(account),
    link: options.link,
    plan: planOf(bot),
    session,
    metrics,
    runStart,
    drained,
  });
  const keep = (g: GameRecord) => {
    metrics.games.push(g);
    return g;
  };
  let bots: Promise<unknown>[];
  if (options.shape.kind === "players") {
    bots = init.bots.map(async (share) => {
      // One game after another: the next is meant to start when the previous ends.
      // One game after another: the next is meant to start when the previous ends (a second
      // later after a failure, and with a new login after a refused call).
      const session = sessions.get(share.index) ?? {};
      let intendedMs = share.startMs;
      while (intendedMs < options.durationMs) {
        const game = keep(await playBotGame(context(share.index, share.index, session), intendedMs));
        if (performance.now() >= durationEnd) break;
        intendedMs = performance.now() - runStart;
        if (game.outcome === "failed") {
          intendedMs += RETRY_AFTER_FAILURE_MS;
          if (/login|start-game|refused/.test(game.reason)) delete session.token;
        }
      }
    });
  } else {
    bots = init.bots.map((share, k) => {
      const account = init.accounts[k % init.accounts.length]!;
      return playBotGame(context(share.index, account, sessions.get(account) ?? {}), share.startMs).then(keep);
    });
  }
  await Promise.all(bots);
  clearTimeout(drainTimer);
  clearInterval(progress);
  const used = process.cpuUsage(cpuAtStart.usage);
  const wall = performance.now() - cpuAtStart.at;
  await send({
    type: "final",
    worker,
    hists: Object.fromEntries(METRICS.map((m) => [m, metrics.hists[m].encode()])) as Extract<FromWorker, { type: "final" }>["hists"],
    games: metrics.games,
    inputs: metrics.inputs,
    cpuPct: wall > 0 ? ((used.user + used.system) / 1000 / wall) * 100 : 0,
    addresses: options.spreadAddresses ? [...new Set(init.accounts.map((i) => sourceAddress(i)))] : ["127.0.0.1"],
  });
}

process.once("message", (m: ToWorker) => {
  if (m.type !== "init") return;
  main(m).then(
    () => process.exit(0),
    async (err: Error) => {
      logger.error({ event: "worker-failed", err }, "worker failed");
      await send({ type: "fatal", worker: m.worker, error: err.message });
      process.exit(1);
    },
  );
});
