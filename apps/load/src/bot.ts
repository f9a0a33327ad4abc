// One bot game, from its intended start to its end: log in, StartGame, both streams, presses —
// the autopilot's on the frames that decide them, or a trace's at its own times — and how it
// ended, with every latency measured from the intended time of what it measures.
import { Game, GameApi, type GameHooks, type Connector, type StreamLink } from "@flaplab/game-client";
import type { Transport } from "@connectrpc/connect";
import { FlapBot, simulate } from "@flaplab/simulator";
import type { WorkerMetrics } from "./metrics.js";
import type { GameRecord } from "./protocol.js";
import { errorReason, outcomeReason, SCORE_MISMATCH, UNFINISHED } from "./reasons.js";

/** What a bot plays: the autopilot's survival schedule for a seed, or a trace's presses. */
export type BotPlan = { readonly kind: "autopilot"; readonly seed: bigint; readonly flapTicks: readonly number[] } | { readonly kind: "trace"; readonly seed: bigint; readonly offsetsMs: readonly number[] };

export interface BotGameContext {
  readonly worker: number;
  readonly bot: number;
  readonly username: string;
  readonly password: string;
  /** Connect to auth and to the initiator (the same transport when they share a port), from the bot's address. */
  readonly auth: Transport;
  readonly initiator: Transport;
  readonly connector: Connector;
  readonly link: StreamLink;
  readonly plan: BotPlan;
  /**
   * The bot's session: the one its registration gave in the warm-up, or a new login (in the
   * game's start time) once a call was refused. A players bot keeps it from game to game, as a
   * player does; arrivals games share their pool account's.
   */
  readonly session: { token?: string };
  readonly metrics: WorkerMetrics;
  /** performance.now() of the run's start: intended times are ms after it. */
  readonly runStart: number;
  /** Resolves when the drain ends: a game still going then is ended and counted unfinished. */
  readonly drained: Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));

/** Plays one game meant to start `intendedMs` after the run's start; always resolves with its record. */
export async function playBotGame(ctx: BotGameContext, intendedMs: number): Promise<GameRecord> {
  const { metrics, plan } = ctx;
  const intended = ctx.runStart + intendedMs;
  let drainedNow = false;
  void ctx.drained.then(() => (drainedNow = true));
  await Promise.race([sleep(intended - performance.now()), ctx.drained]);
  const startedAt = performance.now();
  const base = { worker: ctx.worker, bot: ctx.bot, gameId: "", seed: plan.seed.toString(), intendedMs, startedMs: startedAt - ctx.runStart };
  const done = (rest: Partial<GameRecord> & Pick<GameRecord, "outcome" | "reason">): GameRecord => ({
    ...base,
    endedMs: performance.now() - ctx.runStart,
    score: null,
    ticks: null,
    simulatorScore: null,
    presses: 0,
    reconnections: 0,
    ...rest,
  });
  if (drainedNow) return done({ outcome: "unfinished", reason: `${UNFINISHED} (not started)` });
  metrics.record("bot-lateness", startedAt - intended);
  metrics.started++;
  metrics.inFlight++;
  try {
    return await play(ctx, intended, base, done, () => drainedNow);
  } finally {
    metrics.inFlight--;
  }
}

async function play(
  ctx: BotGameContext,
  intended: number,
  base: { gameId: string },
  done: (rest: Partial<GameRecord> & Pick<GameRecord, "outcome" | "reason">) => GameRecord,
  drainedNow: () => boolean,
): Promise<GameRecord> {
  const { metrics, plan } = ctx;
  const session = ctx.session;
  const api = new GameApi({ auth: ctx.auth, initiator: ctx.initiator, token: () => session.token });
  let step: "login" | "start-game" = "login";
  let start: Awaited<ReturnType<GameApi["startGame"]>>;
  try {
    const answered = Promise.race([
      (async () => {
        session.token ??= (await api.login(ctx.username, ctx.password)).token;
        step = "start-game";
        return api.startGame({ seed: plan.seed });
      })(),
      ctx.drained.then(() => undefined),
    ]);
    const s = await answered;
    if (!s) return done({ outcome: "unfinished", reason: `${UNFINISHED} (during ${step})` });
    start = s;
  } catch (err) {
    return done({ outcome: "failed", reason: errorReason(step, err) });
  }
  metrics.record("start-game", performance.now() - intended);
  base.gameId = start.gameId;

  // Intended time of each input by seq (the start input is seq 1), and what the bot pressed.
  const intendedAt: number[] = [];
  const audioSeen = new Set<number>();
  const pressedTicks: number[] = [];
  let pending: { at: number; tick: number } | undefined;
  let lastFrame: number | undefined;
  let startSent: (time: number) => void = () => undefined;
  const started = new Promise<number>((r) => (startSent = r));

  const hooks: GameHooks = {
    inputSent(seq, time) {
      metrics.inputSent();
      if (seq === 1) {
        intendedAt[1] = time;
        startSent(time);
        return;
      }
      if (!pending) return;
      intendedAt[seq] = pending.at;
      metrics.record("bot-lateness", time - pending.at);
      pressedTicks.push(pending.tick);
      pending = undefined;
    },
    frame(_frame, _view, time) {
      if (lastFrame !== undefined) metrics.record("frame-interarrival", time - lastFrame);
      lastFrame = time;
    },
    effect(seq, _tick, time) {
      const at = intendedAt[seq];
      if (seq > 1 && at !== undefined) metrics.record("input-effect", time - at);
    },
    audio(clip, time) {
      const seq = clip.inputSeq;
      const at = intendedAt[seq];
      if (seq > 1 && at !== undefined && !audioSeen.has(seq)) {
        audioSeen.add(seq);
        metrics.record("input-audio", time - at);
      }
    },
  };
  let pressBefore: ((tick: number) => boolean) | undefined;
  if (plan.kind === "autopilot") {
    const bot = new FlapBot([...plan.flapTicks]);
    // The frame that decides a press is the one just read: the press is meant for that moment.
    pressBefore = (tick) => {
      if (!bot.flapsBefore(tick) || lastFrame === undefined) return false;
      pending = { at: lastFrame, tick };
      return true;
    };
  }
  const game = new Game({
    start,
    link: ctx.link,
    connect: ctx.connector,
    resume: (gameId) => api.resumeGame(gameId),
    views: false,
    hooks,
    ...(pressBefore ? { pressBefore } : {}),
  });
  let unfinished = false;
  void ctx.drained.then(() => {
    unfinished = true;
    game.abort(UNFINISHED);
  });
  if (drainedNow()) unfinished = true;
  if (plan.kind === "trace") void pressTrace(game, plan.offsetsMs, started, (at) => (pending = { at, tick: 0 }));
  let result: Awaited<Game["finished"]>;
  try {
    result = await game.play();
  } catch (err) {
    return done({ outcome: unfinished ? "unfinished" : "failed", reason: unfinished ? UNFINISHED : errorReason("open", err) });
  }
  const figures = { score: result.score, ticks: result.ticks, presses: pressedTicks.length, reconnections: result.reconnections };
  if (!result.completed) {
    return done({ ...figures, outcome: unfinished ? "unfinished" : "failed", reason: unfinished ? UNFINISHED : outcomeReason(result.error ?? "") });
  }
  if (plan.kind === "autopilot") {
    const simulatorScore = simulate({ seed: plan.seed, flapTicks: pressedTicks }).score;
    if (simulatorScore !== result.score) return done({ ...figures, simulatorScore, outcome: "failed", reason: SCORE_MISMATCH });
    return done({ ...figures, simulatorScore, outcome: "completed", reason: "" });
  }
  return done({ ...figures, outcome: "completed", reason: "" });
}

/** Presses at a trace's times after the start input, until the game takes no more inputs. */
async function pressTrace(game: Game, offsetsMs: readonly number[], started: Promise<number>, intend: (at: number) => void): Promise<void> {
  const t0 = await started;
  for (const offset of offsetsMs) {
    const at = t0 + offset;
    await sleep(at - performance.now());
    if (game.stream.isOver) return;
    intend(at);
    if (!game.flap()) return;
  }
}
