// The engine's real tick path without a network: TickScheduler + GameTable + the game session
// handler (FrameEncoder, encodeDelimited) over in-memory sessions, kept alive by a flap schedule.
import { create } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import type { Principal } from "@flaplab/component";
import { GameStreamMessageSchema } from "@flaplab/contracts/engine/v1/stream_pb";
import { type MusicService, PlayMusicResponseSchema } from "@flaplab/contracts/music/v1/music_pb";
import { RecordRunResponseSchema, type ScoreService } from "@flaplab/contracts/score/v1/score_pb";
import {
  createGameSessionHandler,
  type Game,
  GameTable,
  type EngineClockKind,
  engineClockFromEnv,
  realTickClock,
  SingleTimerClock,
  SnapshotKeeper,
  snapshotWritesFor,
  type TickClock,
  TickScheduler,
} from "@flaplab/engine";
import { LATE_TICK_US } from "@flaplab/engine-shards";
import { MemorySnapshotStore } from "@flaplab/snapshots";
import { encodeDelimited, FrameEncoder, FrameWriter } from "@flaplab/game-protocol";
import { MemoryStreamSession } from "@flaplab/game-protocol/testing";
import { applyInputInPlace, createGame, PIPE_WIDTH, TICK_MS, tickInPlace } from "@flaplab/physics";
import { FlapBot, type SurvivalPlan } from "@flaplab/simulator";
import { AllocMeter } from "./alloc.js";
import { GcWatch, type GcPauses } from "./gc.js";
import { Hist } from "./hist.js";
import { startProfile, stopProfile } from "./inspector-profile.js";

/** A tick later than this, ms, counts as late: the lateness goal's line, as the engine shards count it. */
export const LATE_TICK_MS = LATE_TICK_US / 1000;

/**
 * A TickScheduler that records every tick's lateness (µs), the late ticks and skipped deadlines
 * (through the scheduler's `observe` hook: no closure of its own per task), how many timer
 * callbacks ran (rounds, and the parts of a round cut at its slice) and how long the longest one took.
 */
export class MeasuringScheduler extends TickScheduler {
  readonly lateness = new Hist();
  skipped = 0;
  ticks = 0;
  /** Ticks more than `LATE_TICK_MS` late. */
  lateTicks = 0;
  longestBurstMs = 0;
  /** Timer callbacks (rounds) since the last `resetStats`. */
  rounds = 0;

  /** `base`: the clock whose timers it measures (default: setTimeout's, `realTickClock`). */
  constructor(base: TickClock = realTickClock) {
    const timed: { self?: MeasuringScheduler } = {};
    const measured = (fn: () => void) => () => {
      const self = timed.self!;
      self.rounds++;
      const t = performance.now();
      fn();
      const ms = performance.now() - t;
      if (ms > self.longestBurstMs) self.longestBurstMs = ms;
    };
    const clock: TickClock = {
      now: () => performance.now(),
      setTimer: (fn, delayMs) => base.setTimer(measured(fn), delayMs),
      clearTimer: (handle) => base.clearTimer(handle),
      // A round cut at its slice goes on as it would on the base clock (each part a callback of its own).
      ...(base.defer ? { defer: (fn: () => void) => base.defer!(measured(fn)) } : {}),
    };
    super({
      clock,
      observe: (info) => {
        const self = timed.self!;
        self.lateness.record(info.latenessMs * 1000);
        self.skipped += info.skipped;
        self.ticks++;
        if (info.latenessMs > LATE_TICK_MS) self.lateTicks++;
      },
    });
    timed.self = this;
  }

  resetStats(): void {
    this.lateness.reset();
    this.skipped = 0;
    this.ticks = 0;
    this.lateTicks = 0;
    this.longestBurstMs = 0;
    this.rounds = 0;
  }
}

/**
 * A size-delimited `ClientInput { seq, client_time_ms: 0 }` in a few bytes of its own: what
 * `encodeDelimited` makes of it (the tests say so), without the message objects, so the in-memory
 * client (in the engine's process) adds little garbage to the engine's collections.
 */
export function clientInput(seq: number): Uint8Array {
  let n = seq >>> 0;
  if (n === 0) return Uint8Array.of(0); // every field at its default: an empty message
  const varint: number[] = [];
  do {
    let b = n & 0x7f;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    varint.push(b);
  } while (n > 0);
  // Field 1 (seq, varint); a zero double is the default and is not written.
  return Uint8Array.of(1 + varint.length, 0x08, ...varint);
}

/** `clientInput(seq)` for every seq asked so far, shared by all clients (the engine only reads them). */
const clientInputs: Uint8Array[] = [];

/**
 * `clientInput(seq)`, made once per seq for all in-memory clients: thousands of games press with
 * the same seqs, and their bytes are the same, so the client adds no garbage per press.
 */
export function sharedClientInput(seq: number): Uint8Array {
  let bytes = clientInputs[seq];
  if (bytes === undefined) {
    bytes = clientInput(seq);
    if (seq >= 0 && seq < 1 << 16) clientInputs[seq] = bytes;
  }
  return bytes;
}

/**
 * A music client that answers every PlayMusic at once, with one shared answer (it and
 * `idleScore` let the benchmark measure the engine alone).
 */
export function idleMusic(): Client<typeof MusicService> {
  const answer = Promise.resolve(create(PlayMusicResponseSchema, { bytesSent: 0 }));
  return { playMusic: () => answer };
}

export function idleScore(): Client<typeof ScoreService> {
  return {
    recordRun: () => Promise.resolve(create(RecordRunResponseSchema, {})),
    getScores: () => Promise.reject(new Error("not used")),
  };
}

export const silentLogger = { info() {}, warn() {}, error() {} };

/** Counters shared by all sessions of a run. */
export interface SendStats {
  frames: number;
  frameBytes: number;
  acks: number;
  /** Games that ended (game over or closed by the engine) before the benchmark closed them. */
  ended: number;
  /** Why they ended: close code and reason → count. */
  endReasons: Record<string, number>;
}

/**
 * An in-memory StreamSession whose client is `bot`: each time the frame of tick k is sent and
 * the bot presses on it (k + 1 is a flap tick), it writes the next ClientInput, as a real client
 * would on receiving that frame. It keeps nothing it is sent; `stats` counts it, and the games the engine
 * closed. `start()` writes the start press.
 */
export function flappingSession(
  gameId: string,
  principal: Principal,
  bot: FlapBot,
  tickOf: () => number,
  stats: SendStats,
): { session: MemoryStreamSession; start(): void } {
  let seq = 0;
  let lastTick = 0;
  const input = () => session.push(sharedClientInput(++seq));
  const session: MemoryStreamSession = new MemoryStreamSession({
    gameId,
    principal,
    keepSent: false,
    onSend: (_source, start, end) => {
      const tick = tickOf();
      if (tick > lastTick) {
        lastTick = tick;
        stats.frames++;
        stats.frameBytes += end - start;
        if (bot.pressOnFrame(tick)) input();
      } else {
        stats.acks++;
      }
    },
  });
  void session.closed.then(({ code, reason, by }) => {
    if (by !== "server") return;
    stats.ended++;
    const key = `${code} ${reason}`;
    stats.endReasons[key] = (stats.endReasons[key] ?? 0) + 1;
  });
  return {
    session,
    start() {
      if (!session.isClosed) input();
    },
  };
}

export interface StepResult {
  readonly games: number;
  /** Tick lateness, µs. */
  readonly lateness: ReturnType<Hist["summary"]>;
  readonly ticks: number;
  readonly skipped: number;
  readonly frames: number;
  readonly acks: number;
  readonly frameBytes: number;
  /** Process CPU (user + system) during the measurement, µs. */
  readonly cpuUs: number;
  readonly wallMs: number;
  readonly cpuPerFrameUs: number;
  /** Games that ended on their own during the step (should be 0). */
  readonly ended: number;
  readonly endReasons: Readonly<Record<string, number>>;
  /** Garbage-collection pauses during the measurement. */
  readonly gc: GcPauses;
  /** Longest scheduler timer callback during the measurement, ms. */
  readonly longestBurstMs: number;
  /** JS heap bytes allocated during the measurement ÷ tick frames (the in-memory client's included). */
  readonly allocBytesPerFrame: number;
  /** Timer callbacks of the scheduler during the measurement (each runs the ticks due then). */
  readonly rounds: number;
}

export interface StepPlan {
  readonly games: number;
  /** Games are started evenly over this long, so their tick phases spread over the period. */
  readonly rampMs: number;
  readonly settleMs: number;
  readonly measureMs: number;
  /** Write a CPU profile of the measurement window here. */
  readonly profileFile?: string;
  /** The scheduler's timers, as FLAPLAB_ENGINE_CLOCK chooses them in the server (default: as the server). */
  readonly clock?: EngineClockKind;
}

/**
 * A MeasuringScheduler on the timers of `kind`, and how to let go of them. Without a kind, the
 * clock the server would run: FLAPLAB_ENGINE_CLOCK, else the engine's default.
 */
export function measuringScheduler(kind?: EngineClockKind): { scheduler: MeasuringScheduler; close(): Promise<void> } {
  const { clock, close } = engineClockFromEnv(kind === undefined ? process.env : { FLAPLAB_ENGINE_CLOCK: kind });
  return { scheduler: new MeasuringScheduler(clock), close };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** After the full collection that ends a step's settling: the ticks it delayed run before the measurement. */
const PROMOTION_DRAIN_MS = 200;

/** The one player every in-memory bench game belongs to. */
export function benchPlayer(): Principal {
  return { username: "bench", token: "bench-token", expiresAt: new Date(Date.now() + 3600_000) };
}

/**
 * Creates `count` games of `schedule`'s course for `player`, started evenly over `rampMs` (so their
 * tick phases spread over the period), and hands each to `start`. It yields before every game, so
 * the games already started keep ticking and reading their inputs meanwhile.
 */
export async function rampGames(
  games: GameTable,
  schedule: SurvivalPlan,
  player: Principal,
  count: number,
  rampMs: number,
  start: (id: string, game: Game) => void,
): Promise<void> {
  const startAt = performance.now();
  for (let i = 0; i < count; i++) {
    const wait = startAt + (i * rampMs) / count - performance.now();
    await (wait > 1 ? sleep(wait) : new Promise((r) => setImmediate(r)));
    const id = `g${i}`;
    start(id, games.create({ id, owner: { username: player.username, token: player.token }, course: schedule.course, seed: schedule.seed }));
  }
}

/** Runs `plan.games` games on one scheduler in this process and measures the engine's ticks. */
export async function runEngineStep(schedule: SurvivalPlan, plan: StepPlan): Promise<StepResult> {
  // Every game is the one bench player's: lift the per-player limit.
  const games = new GameTable({ maxGames: plan.games + 10, maxGamesPerPlayer: plan.games + 10, idleTtlMs: 3600_000 });
  const { scheduler, close } = measuringScheduler(plan.clock);
  // As the server runs one engine: its snapshot store in memory, written when a game leaves.
  const store = new MemorySnapshotStore();
  const snapshots = new SnapshotKeeper({ store, engine: "bench", games, writes: snapshotWritesFor(store) });
  const handler = createGameSessionHandler({ games, scheduler, music: idleMusic(), score: idleScore(), logger: silentLogger, snapshots });
  const stats: SendStats = { frames: 0, frameBytes: 0, acks: 0, ended: 0, endReasons: {} };
  const bot = new FlapBot(schedule.flapTicks);
  const principal = benchPlayer();
  const sessions: MemoryStreamSession[] = [];
  await rampGames(games, schedule, principal, plan.games, plan.rampMs, (id, game) => {
    const { session, start } = flappingSession(id, principal, bot, () => game.state.tick, stats);
    sessions.push(session);
    handler(session);
    start();
  });
  await sleep(plan.settleMs);
  // The ramp made every game within a second: their objects outlive the next young-generation
  // collections, and promoting them all in one or two scavenges (5–16 ms here at 500 games) is
  // the ramp's cost, not the steady state's. A server's games start spread out, so one full
  // collection (it promotes what lives in the young generation) takes that burst out of the
  // measurement; the ticks it delays run before the measurement starts. Needs --expose-gc.
  const collect = (globalThis as { gc?: () => void }).gc;
  if (collect) {
    collect();
    await sleep(PROMOTION_DRAIN_MS);
  }
  if (plan.profileFile) await startProfile();
  scheduler.resetStats();
  const gc = new GcWatch();
  gc.start();
  const alloc = new AllocMeter();
  alloc.start();
  const before = { frames: stats.frames, acks: stats.acks, bytes: stats.frameBytes, ended: stats.ended };
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await sleep(plan.measureMs);
  const cpu = process.cpuUsage(cpu0);
  const wallMs = performance.now() - t0;
  const allocated = alloc.stop();
  const gcPauses = gc.stop();
  if (plan.profileFile) await stopProfile(plan.profileFile);
  const frames = stats.frames - before.frames;
  const result: StepResult = {
    games: plan.games,
    lateness: scheduler.lateness.summary(),
    ticks: scheduler.ticks,
    skipped: scheduler.skipped,
    frames,
    acks: stats.acks - before.acks,
    frameBytes: stats.frameBytes - before.bytes,
    cpuUs: cpu.user + cpu.system,
    wallMs,
    cpuPerFrameUs: frames > 0 ? (cpu.user + cpu.system) / frames : 0,
    ended: stats.ended,
    endReasons: { ...stats.endReasons },
    gc: gcPauses,
    longestBurstMs: scheduler.longestBurstMs,
    rounds: scheduler.rounds,
    allocBytesPerFrame: frames > 0 ? allocated.bytes / frames : 0,
  };
  for (const s of sessions) s.leave();
  await sleep(10);
  scheduler.stop();
  await close();
  return result;
}

/** How the core loop encodes a frame. */
export type FramePath = "writer" | "library";

/** The cost of one frame in the core loop. */
export interface CoreCost {
  readonly nsPerFrame: number;
  /** JS heap bytes allocated per frame. */
  readonly bytesPerFrame: number;
}

/**
 * The work of one frame with nothing around it, in a tight loop: a physics tick, the delta frame,
 * the stream message and its size-delimited bytes. Replays `schedule` from the start. `writer` is
 * the engine's path (`FrameEncoder.writeFrame` into a reused `FrameWriter`, plus the copy the
 * transport is handed); `library` is `encode` + `create(GameStreamMessageSchema)` +
 * `encodeDelimited` (the library's `sizeDelimitedEncode`).
 */
export function coreFrameCost(schedule: SurvivalPlan, frames: number, path: FramePath = "writer"): CoreCost {
  const bot = new FlapBot(schedule.flapTicks);
  const writer = new FrameWriter();
  const fresh = () => {
    const state = createGame(schedule.course);
    const encoder = new FrameEncoder({ pipeSpacing: schedule.course.pipeSpacing, pipes: schedule.course.pipes, pipeWidth: PIPE_WIDTH, pipesInView: state.pipesInView });
    applyInputInPlace(state);
    return { state, encoder };
  };
  let { state, encoder } = fresh();
  let bytes = 0;
  const alloc = new AllocMeter();
  alloc.start();
  const t0 = performance.now();
  for (let i = 0; i < frames; i++) {
    if (state.phase !== "playing" || state.tick >= schedule.ticks - 1) ({ state, encoder } = fresh());
    if (bot.flapsBefore(state.tick + 1)) applyInputInPlace(state);
    tickInPlace(state);
    if (path === "writer") {
      encoder.writeFrame(state, 0, writer);
      bytes += writer.copy().byteLength;
    } else {
      const frame = encoder.encode(state, 0);
      bytes += encodeDelimited(GameStreamMessageSchema, create(GameStreamMessageSchema, { kind: { case: "frame", value: frame } })).byteLength;
    }
  }
  const ns = ((performance.now() - t0) * 1e6) / frames;
  const allocated = alloc.stop();
  if (bytes === 0) throw new Error("no bytes encoded");
  return { nsPerFrame: ns, bytesPerFrame: allocated.bytes / frames };
}

/** The engine path's ns per frame (see `coreFrameCost`). */
export function coreFrameCostNs(schedule: SurvivalPlan, frames: number): number {
  return coreFrameCost(schedule, frames).nsPerFrame;
}

/**
 * Heap bytes the engine's tick path allocates per frame, with nothing else running: `games` games
 * on the real handler, TickScheduler and GameTable, driven by a clock that allocates nothing
 * (`SingleTimerClock`), on a course no bird can fail (no inputs needed) and wide enough that no pipe is
 * passed while measuring (a point calls PlayMusic, whose request and promise are the music call's
 * cost, not the tick's), into in-memory sessions that only count. Best of `rounds` rounds of 30
 * ticks after 60 ticks of warm-up.
 */
export async function tickPathAllocation(
  games = 1000,
  rounds = 5,
  withSnapshots = false,
): Promise<{ bytesPerFrame: number; cpuPerFrameUs: number; frames: number }> {
  const clock = new SingleTimerClock();
  const scheduler = new TickScheduler({ clock });
  const table = new GameTable({ maxGames: games + 10, maxGamesPerPlayer: games + 10, idleTtlMs: 3600_000, sweepIntervalMs: 0 });
  const snapshots = withSnapshots ? new SnapshotKeeper({ store: new MemorySnapshotStore(), engine: "bench", games: table }) : undefined;
  const handler = createGameSessionHandler({
    games: table,
    scheduler,
    music: idleMusic(),
    score: idleScore(),
    logger: silentLogger,
    ...(snapshots ? { snapshots } : {}),
  });
  // 3 pipes in view, the first ≈ 6,000 ticks away: the measurement passes none.
  const course = {
    pipeSpacing: 60_000,
    viewport: { width: 65_536, height: 640 },
    pipes: Array.from({ length: 20 }, (_, i) => ({ gapStart: -1e9 - i, gapHeight: 2e9 + i / 3 })),
  };
  const principal = benchPlayer();
  const stats: SendStats = { frames: 0, frameBytes: 0, acks: 0, ended: 0, endReasons: {} };
  const none = new FlapBot([]);
  const sessions: MemoryStreamSession[] = [];
  const flush = () => new Promise((r) => setImmediate(r));
  for (let i = 0; i < games; i++) {
    const id = `a${i}`;
    const game = table.create({ id, owner: { username: principal.username, token: principal.token }, course });
    const { session, start } = flappingSession(id, principal, none, () => game.state.tick, stats);
    sessions.push(session);
    handler(session);
    start();
    // Phases spread over the period, in whole ms.
    if ((i + 1) % Math.ceil(games / TICK_MS) === 0) clock.advance(1);
  }
  await flush();
  for (let t = 0; t < 60; t++) clock.advance(TICK_MS);
  let best = Infinity;
  let bestCpu = Infinity;
  let frames = 0;
  for (let r = 0; r < rounds; r++) {
    const f0 = stats.frames;
    const meter = new AllocMeter();
    meter.start();
    const cpu0 = process.cpuUsage();
    // 30 tick periods in 1 ms rounds, as the scheduler's timer runs them; with the snapshot keeper,
    // each round's microtasks (its batch) done before the next.
    for (let t = 0; t < 30 * TICK_MS; t++) {
      clock.advance(1);
      if (withSnapshots) await flush();
    }
    const cpu = process.cpuUsage(cpu0);
    const bytes = meter.stop().bytes;
    const n = stats.frames - f0;
    frames += n;
    if (n > 0) {
      best = Math.min(best, bytes / n);
      bestCpu = Math.min(bestCpu, (cpu.user + cpu.system) / n);
    }
  }
  if (stats.ended > 0) throw new Error(`${stats.ended} games ended during the allocation run`);
  for (const s of sessions) s.leave();
  scheduler.stop();
  return { bytesPerFrame: best, cpuPerFrameUs: bestCpu, frames };
}

/** Games one core could tick at 30 frames per second if each frame cost `nsPerFrame`. */
export function gamesPerCore(nsPerFrame: number): number {
  return 1e9 / nsPerFrame / (1000 / TICK_MS);
}

/** The lateness of `tasks` tasks that do nothing, phases spread over the period: what timers alone cost here. */
export async function timerFloor(measureMs: number, tasks = 100, kind?: EngineClockKind): Promise<ReturnType<Hist["summary"]>> {
  const { scheduler, close } = measuringScheduler(kind);
  const start = performance.now();
  for (let i = 0; i < tasks; i++) scheduler.schedule(() => true, start + (i * scheduler.periodMs) / tasks);
  await sleep(scheduler.periodMs * 2);
  scheduler.resetStats();
  await sleep(measureMs);
  scheduler.stop();
  await close();
  return scheduler.lateness.summary();
}
