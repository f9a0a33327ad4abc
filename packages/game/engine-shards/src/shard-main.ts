// An engine shard: a child process of the group's process that plays the games handed to it. Its
// own GameTable, TickScheduler and game session handler; the WebSocket of each game arrives as a
// socket handle with the game, and from then on every input, ack and frame of that game stays in
// this process. Calls to music and score go to the parent, which makes them as the engine. With the
// group's snapshot setup (its fifth argument), a SnapshotKeeper keeps the games' snapshots here as
// the group's keeper does its own: the same engine name, cadence and store.
import { readdirSync } from "node:fs";
import type { Socket } from "node:net";
import { PerformanceObserver } from "node:perf_hooks";
import { create } from "@bufbuild/protobuf";
import { type CallOptions, type Client, Code, ConnectError } from "@connectrpc/connect";
import { currentCall } from "@flaplab/component";
import { type MusicService, PlayMusicResponseSchema } from "@flaplab/contracts/music/v1/music_pb";
import { RecordRunResponseSchema, type ScoreService } from "@flaplab/contracts/score/v1/score_pb";
import { createGameSessionHandler, engineClockFromEnv, GameTable, gameTableOptionsFromEnv, SnapshotKeeper, TickScheduler } from "@flaplab/engine";
import { openSnapshotStore, type SnapshotStore } from "@flaplab/snapshots";
import { createWebSocketStreams, streamLimitsFromEnv } from "@flaplab/stream-servers";
import { pino } from "pino";
import { ExactHistogram } from "@flaplab/report-kit/histogram";
import { GroupSnapshotStore } from "./group-store.js";
import { type CallResult, type FromShard, LATE_TICK_US, type ShardCall, type ShardSample, type ShardSnapshotSetup, type ToShard } from "./protocol.js";
import { AdoptedSessions } from "./sessions.js";

// argv: the shard's index, the engine's game stream path, the group's log level and its snapshot
// setup (JSON; empty: no snapshots), which the group's process passes.
const index = Number(process.argv[2] ?? "0");
const path = process.argv[3] ?? "/engine/v1/game";
const logger = pino({ base: { pid: process.pid, shard: index }, level: process.argv[4] ?? "info" });
const snapshotSetup = process.argv[5] ? (JSON.parse(process.argv[5]) as ShardSnapshotSetup) : undefined;
/** Longest wait for the games' last snapshots once the group is gone. */
const LAST_WRITE_TIMEOUT_MS = 1000;

if (!process.send) {
  logger.fatal("an engine shard runs as a child process of a server group (no IPC channel)");
  process.exit(2);
}

/** A send that fails (the group went away meanwhile) is as one not made: the disconnect follows. */
const unsent = (err: Error | null): void => {
  if (err) logger.debug({ event: "shard-send-failed", err: err.message }, "could not reach the group");
};
const send = (message: FromShard): boolean => {
  if (!process.connected) return false;
  process.send!(message, undefined, undefined, unsent);
  return true;
};

let nextCall = 1;
const pending = new Map<number, { resolve: () => void; reject: (err: ConnectError) => void; timer: NodeJS.Timeout | undefined }>();

function call(method: ShardCall["method"], request: unknown, options?: CallOptions, wait = true): Promise<void> {
  const id = wait ? nextCall++ : 0;
  send({ type: "call", id, method, context: currentCall(), request, ...(options?.timeoutMs ? { timeoutMs: options.timeoutMs } : {}) });
  if (!wait) return Promise.resolve();
  return new Promise((resolve, reject) => {
    // The parent enforces the deadline; this one only guards against a parent that never answers.
    const timer = options?.timeoutMs ? setTimeout(() => settle({ type: "result", id, error: { code: Code.DeadlineExceeded, message: "the engine's parent did not answer in time" } }), options.timeoutMs + 1000) : undefined;
    pending.set(id, { resolve, reject, timer });
  });
}

function settle(result: CallResult): void {
  const p = pending.get(result.id);
  if (!p) return;
  pending.delete(result.id);
  clearTimeout(p.timer);
  if (result.error) p.reject(new ConnectError(result.error.message, result.error.code));
  else p.resolve();
}

// PlayMusic is fire-and-forget for the engine: no answer is awaited across the process boundary.
const music: Client<typeof MusicService> = {
  playMusic: (request, options) => call("playMusic", request, options, false).then(() => create(PlayMusicResponseSchema, {})),
};
const score: Client<typeof ScoreService> = {
  recordRun: (request, options) => call("recordRun", request, options).then(() => create(RecordRunResponseSchema, {})),
  getScores: () => Promise.reject(new ConnectError("an engine shard does not read scores", Code.Unimplemented)),
};

const games = new GameTable({ ...gameTableOptionsFromEnv(process.env), logger });
// The group's in-process store, through the group; or this shard's own connection to the shared store.
const groupStore = snapshotSetup?.store === "group" ? new GroupSnapshotStore((call) => send(call)) : undefined;
const store: SnapshotStore | undefined = groupStore ?? (snapshotSetup ? await openSharedStore() : undefined);
// No heartbeat and no resume here: the group beats for the engine and resumes its games.
const snapshots =
  snapshotSetup && store ? new SnapshotKeeper({ store, engine: snapshotSetup.engine, games, logger, writes: snapshotSetup.writes }) : undefined;
// Every tick's lateness, for `sample`: an HdrHistogram records without allocating.
const lateness = new ExactHistogram();
let ticks = 0;
let lateTicks = 0;
let gcMaxMs: number | null = null;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) if (gcMaxMs === null || entry.duration > gcMaxMs) gcMaxMs = entry.duration;
}).observe({ entryTypes: ["gc"] });
let since = { cpu: process.cpuUsage(), at: performance.now() };
const scheduler = new TickScheduler({
  clock: engineClockFromEnv(process.env).clock,
  observe: (info) => {
    ticks++;
    const latenessUs = info.latenessMs > 0 ? info.latenessMs * 1000 : 0;
    if (latenessUs > LATE_TICK_US) lateTicks++;
    lateness.record(latenessUs);
  },
});
const play = createGameSessionHandler({ games, scheduler, music, score, logger, ...(snapshots ? { snapshots } : {}) });
/**
 * Game `gameId`'s session here has closed, or never opened: nothing can reach the game here any
 * more (a new stream for it goes to the group, which releases it now), so it leaves the table at
 * once, finished or not (a shard holds the games it plays, not the last minute's), and the group
 * is told.
 */
const end = (gameId: string): void => {
  const over = games.get(gameId)?.state.phase === "over";
  games.delete(gameId);
  send({ type: "ended", gameId, over });
};
const streams = createWebSocketStreams({
  routes: {
    [path]: {
      kind: "engine",
      handler: (session) => {
        play(session);
        void session.closed.then(() => end(session.gameId));
      },
    },
  },
  // Every session here was admitted by the parent (`adopt`); nothing reaches admission.
  authorize: () => Promise.reject(new ConnectError("engine shards take no upgrades of their own", Code.Unauthenticated)),
  logger,
  limits: streamLimitsFromEnv(process.env),
});
// The sessions handed here, by the parent's id: the parent counts each until it is reported closed.
const adopted = new AdoptedSessions((session) => send({ type: "session-closed", session }));

process.on("message", (message: ToShard, handle?: Socket) => {
  if (message.type === "result") return settle(message);
  if (message.type === "store-result") return void groupStore?.settle(message);
  if (message.type === "close-session") {
    if (adopted.close(message.session, message.code, message.reason)) {
      logger.info({ event: "stream-closed-by-group", session: message.session, code: message.code, reason: message.reason }, "closing a session the group asked to close");
    }
    return;
  }
  if (message.type === "sample") {
    const cpu = process.cpuUsage(since.cpu);
    const memory = process.memoryUsage();
    const sample: ShardSample = {
      index,
      pid: process.pid,
      ticks,
      latenessUs: { p50: lateness.percentile(50), p99: lateness.percentile(99), p999: lateness.percentile(99.9), max: lateness.max },
      lateTicks,
      gcMaxMs,
      cpuUs: cpu.user + cpu.system,
      wallMs: performance.now() - since.at,
      games: games.size,
      sessions: streams.openSessions,
      keptGames: snapshots?.size ?? null,
      rssBytes: memory.rss,
      heapUsedBytes: memory.heapUsed,
      fds: openFileDescriptors(),
    };
    lateness.reset();
    ticks = 0;
    lateTicks = 0;
    gcMaxMs = null;
    since = { cpu: process.cpuUsage(), at: performance.now() };
    return send({ type: "sample", id: message.id, sample });
  }
  if (message.type !== "play") return;
  const { game, principal, upgrade, session } = message;
  if (!handle) {
    logger.error({ event: "shard-game-without-socket", gameId: game.id }, "a game came without its socket");
    send({ type: "session-closed", session });
    return send({ type: "ended", gameId: game.id, over: false });
  }
  try {
    games.adopt(game);
  } catch (err) {
    logger.warn({ event: "shard-game-refused", gameId: game.id, err: (err as Error).message }, "could not take the game");
    handle.destroy();
    send({ type: "session-closed", session });
    return send({ type: "ended", gameId: game.id, over: false });
  }
  const opening = streams.adopt(upgrade, handle, Buffer.from(message.head), { path: message.path, gameId: game.id, principal });
  adopted.track(session, opening);
  // Its socket closed before the upgrade was answered (or this shard is closing): the game never played here.
  void opening.then((served) => {
    if (!served) end(game.id);
  });
});

// The parent is gone (even if killed): so is this shard. Its games stop, their latest ticks go to
// the store (a shared one: the group's in-process store is gone with it), and only then do their
// streams close (4500), so that a player who resumes the game at once continues from the tick
// their page last saw.
const leave = (): void => {
  scheduler.stop();
  groupStore?.disconnected();
  void within(snapshots?.flush(), LAST_WRITE_TIMEOUT_MS)
    .then(() => streams.close())
    .finally(() => process.exit(0));
};
process.once("disconnect", leave);
// The group went away before this shard listened for it (while it loaded, or opened its store):
// no event will come, so it leaves now.
if (!process.connected) leave();

logger.info({ event: "engine-shard-ready", shard: index }, "engine shard ready");
send({ type: "ready" });

/** The deployment's shared snapshot store, named in the environment this shard inherited from its group. */
async function openSharedStore(): Promise<SnapshotStore> {
  let lastLogMs = Number.NEGATIVE_INFINITY;
  let shared: SnapshotStore;
  try {
    shared = await openSnapshotStore(process.env, {
      engines: 1,
      topology: "",
      onError: (err) => {
        // The client reconnects by itself; say so at most every few seconds.
        if (Date.now() - lastLogMs < 5000) return;
        lastLogMs = Date.now();
        logger.warn({ event: "snapshot-store-error", err: err.message }, "snapshot store connection failed; reconnecting");
      },
    });
  } catch (err) {
    logger.fatal({ event: "engine-shard-no-store", err: (err as Error).message }, "an engine shard cannot open its group's snapshot store");
    process.exit(2);
  }
  if (shared.kind === "memory") {
    logger.fatal({ event: "engine-shard-no-store" }, "the group's snapshot store is shared, but this shard's environment names none (FLAPLAB_SNAPSHOT_STORE)");
    process.exit(2);
  }
  return shared;
}

/** Waits for `work` (when there is any), at most `ms`; never rejects. */
function within(work: Promise<unknown> | undefined, ms: number): Promise<void> {
  if (work === undefined) return Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([work.then(noop, noop), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]).finally(() => clearTimeout(timer));
}

function noop(): void {}

function openFileDescriptors(): number | null {
  try {
    return readdirSync("/proc/self/fd").length;
  } catch {
    return null;
  }
}
