// The games a shard plays keep their snapshots as the group's own games do: in the group's store,
// as the group's engine, at the group's cadence. A group (a game table, a snapshot keeper, one
// shard, the WebSocket link that hands games over) on a loopback port, and a player over ws.
import { fork } from "node:child_process";
import { createServer } from "node:http";
import { connect } from "node:net";
import { fileURLToPath } from "node:url";
import { create } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import { PlayState } from "@flaplab/contracts/engine/v1/engine_pb";
import { ClientInputSchema, GameStreamMessageSchema } from "@flaplab/contracts/engine/v1/stream_pb";
import { type MusicService, PlayMusicResponseSchema } from "@flaplab/contracts/music/v1/music_pb";
import { GetScoresResponseSchema, RecordRunResponseSchema, type ScoreService } from "@flaplab/contracts/score/v1/score_pb";
import { GameTable, SnapshotKeeper, type SnapshotWrites, snapshotWritesFor } from "@flaplab/engine";
import { DelimitedDecoder, encodeDelimited, FrameDecoder } from "@flaplab/game-protocol";
import { applyInputInPlace, type Course, createGame, tickInPlace } from "@flaplab/physics";
import { freePort } from "@flaplab/ports";
import { MemorySnapshotStore, RedisSnapshotStore, SNAPSHOT_STORE_ENV, type SnapshotStore, startRedisServer } from "@flaplab/snapshots";
import { createWebSocketStreams } from "@flaplab/stream-servers";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { type EngineShards, startEngineShards } from "../src/index.js";

const ENGINE = "engine-7";
const PATH = "/engine/v1/game";
const PLAYER = "ada";
/** 100 pipes whose gaps are the whole viewport: the bird meets no pipe, only the ground (≈ tick 60 without a flap). */
const COURSE: Course = {
  pipeSpacing: 191,
  viewport: { width: 480, height: 640 },
  pipes: Array.from({ length: 100 }, () => ({ gapStart: 0, gapHeight: 640 })),
};

const music: Client<typeof MusicService> = { playMusic: async () => create(PlayMusicResponseSchema, {}) };
const score: Client<typeof ScoreService> = {
  recordRun: async () => create(RecordRunResponseSchema, {}),
  getScores: async () => create(GetScoresResponseSchema, {}),
};

interface Group {
  readonly games: GameTable;
  readonly keeper: SnapshotKeeper;
  readonly shards: EngineShards;
  readonly url: (gameId: string) => string;
  readonly port: number;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A group with one shard, its keeper writing `store` at `writes`; `env`: set while its shard starts (it inherits it). */
async function startGroup(store: SnapshotStore, writes: SnapshotWrites, env: Readonly<Record<string, string>> = {}): Promise<Group> {
  const logger = pino({ level: "silent" });
  const games = new GameTable({ sweepIntervalMs: 0 });
  const keeper = new SnapshotKeeper({ store, engine: ENGINE, games, writes });
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  let shards: EngineShards;
  try {
    shards = await startEngineShards({ count: 1, games, music, score, playedHere: () => false, logger, path: PATH, snapshots: keeper });
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
  const streams = createWebSocketStreams({
    // Every game here is handed to the shard; one that is not has nowhere to play.
    routes: { [PATH]: { kind: "engine", handler: (session) => session.close(4500, "not played here") } },
    authorize: async (query) => ({ username: PLAYER, token: "t", expiresAt: new Date(Date.now() + 3_600_000), gameId: query.get("gameId") ?? undefined }),
    logger,
    handoff: shards.handoff,
  });
  const server = createServer();
  server.on("upgrade", streams.handleUpgrade);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  cleanups.push(async () => {
    await streams.close();
    // Not awaited: a server that sent sockets to a child process waits, on close, for that process
    // to report them closed, which a shard gone already never does.
    server.close();
    await shards.close();
    games.close();
  });
  return { games, keeper, shards, port, url: (gameId) => `ws://127.0.0.1:${port}${PATH}?gameId=${gameId}` };
}

/** A player's stream: every tick it was sent, in order. */
interface Player {
  readonly ws: WebSocket;
  readonly ticks: number[];
  /** Whether each frame was a full one (a continued game's first is). */
  readonly full: boolean[];
  readonly closed: Promise<{ code: number; reason: string }>;
}

async function join(url: string): Promise<Player> {
  const ws = new WebSocket(url);
  const ticks: number[] = [];
  const full: boolean[] = [];
  const messages = new DelimitedDecoder(GameStreamMessageSchema);
  const view = new FrameDecoder();
  ws.on("message", (data: Buffer) => {
    for (const m of messages.push(data)) {
      if (m.kind.case !== "frame") continue;
      full.push(m.kind.value.full);
      ticks.push(view.apply(m.kind.value).tick);
    }
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.once("close", (code, reason) => resolve({ code, reason: reason.toString() })));
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  return { ws, ticks, full, closed };
}

const press = (seq: number) => encodeDelimited(ClientInputSchema, create(ClientInputSchema, { seq, clientTimeMs: Date.now() }));

async function waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, ms = 5000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The game as the physics has it after the start press and `ticks` ticks. */
function simulated(ticks: number) {
  const state = createGame(COURSE);
  applyInputInPlace(state);
  for (let i = 0; i < ticks; i++) tickInPlace(state);
  return state;
}

/** The stored snapshot's physics fields next to the simulator's at its tick. */
function expectSimulated(snapshot: { tick: number; birdY: number; birdVelocity: number; pipeSpeed: number; pipeWindowX: number; closestPipe: number; score: number }): void {
  const want = simulated(snapshot.tick);
  const { birdY, birdVelocity, pipeSpeed, pipeWindowX, closestPipe, score } = snapshot;
  expect({ birdY, birdVelocity, pipeSpeed, pipeWindowX, closestPipe, score }).toEqual({
    birdY: want.birdY,
    birdVelocity: want.birdVelocity,
    pipeSpeed: want.pipeSpeed,
    pipeWindowX: want.pipeWindowX,
    closestPipe: want.closestPipe,
    score: want.score,
  });
}

const newGame = (games: GameTable, id: string) => games.create({ id, owner: { username: PLAYER, token: "t" }, course: COURSE });

describe("snapshots of the games a shard plays", () => {
  it("are in the group's in-process store every round, as the group's engine's, with the state the simulator gives", async () => {
    const store = new MemorySnapshotStore();
    const group = await startGroup(store, "every-round");
    newGame(group.games, "g-1");
    const player = await join(group.url("g-1"));
    player.ws.send(press(1));
    const stored = await waitFor("a snapshot at tick 10", async () => {
      const s = await store.read("g-1");
      return s && s.snapshot.tick >= 10 ? s : undefined;
    });
    expect(group.shards.stats()[0]!.games).toBe(1);
    expect(stored.origin).toMatchObject({ gameId: "g-1", owner: PLAYER, world: { pipeSpacing: 191, viewport: { width: 480, height: 640 } } });
    expect(stored.origin.world!.pipes).toHaveLength(100);
    expect(stored.snapshot).toMatchObject({ gameId: "g-1", engine: ENGINE, phase: PlayState.PLAYING, lastInputSeq: 1, reflectedSeq: 1 });
    expectSimulated(stored.snapshot);
    // Rewritten every round: a later read stands at a later tick.
    await waitFor("a later snapshot", async () => ((await store.read("g-1"))!.snapshot.tick > stored.snapshot.tick ? true : undefined));
    // The shard's keeper wrote them, through the group; the group's keeper keeps nothing of the game.
    expect(group.keeper.snapshotsWritten).toBe(0);
    expect(group.keeper.size).toBe(0);
    expect((await group.shards.sample()).map((s) => s.keptGames)).toEqual([1]);
  }, 30_000);

  it("written on leave to the group's in-process store: the tick the game stands at when its stream ends, resumed from there by the group and played on in the shard", async () => {
    const store = new MemorySnapshotStore();
    const group = await startGroup(store, snapshotWritesFor(store));
    expect(group.keeper.writes).toBe("on-leave");
    newGame(group.games, "g-2");
    const first = await join(group.url("g-2"));
    first.ws.send(press(1));
    await waitFor("tick 8", () => (first.ticks.length >= 8 ? true : undefined));
    // Nothing but the origin while it plays.
    expect(await store.read("g-2")).toBeUndefined();
    first.ws.close(1000, "leaving");
    await first.closed;
    await waitFor("the game's end to reach the group", () => (group.shards.stats()[0]!.games === 0 && !group.games.isDetached("g-2") ? true : undefined));
    const left = await waitFor("the snapshot the game left with", () => store.read("g-2"));
    expect(left.snapshot.tick).toBeGreaterThanOrEqual(first.ticks.at(-1)!);
    expect(left.snapshot).toMatchObject({ engine: ENGINE, phase: PlayState.PLAYING, lastInputSeq: 1 });
    expectSimulated(left.snapshot);
    expect((await group.shards.sample()).map((s) => s.keptGames)).toEqual([0]);

    // The player comes back: the group continues the game from the store, and a shard plays it on.
    const resumed = await group.keeper.resume("g-2", PLAYER, { holderTried: true });
    expect(resumed.state.tick).toBe(left.snapshot.tick);
    expect(group.keeper.size).toBe(1);
    const second = await join(group.url("g-2"));
    await waitFor("the continued game's first frame", () => (second.ticks.length > 0 ? true : undefined));
    expect({ tick: second.ticks[0], full: second.full[0] }).toEqual({ tick: left.snapshot.tick, full: true });
    expect(group.shards.stats()[0]).toMatchObject({ games: 1, handed: 2 });
    // Handed to the shard, whose keeper has it now: the group's keeper let it go.
    expect(group.keeper.size).toBe(0);
    expect((await group.shards.sample()).map((s) => s.keptGames)).toEqual([1]);
    second.ws.close(1000, "leaving");
    await second.closed;
  }, 30_000);

  it("go to a shared store over the shard's own connection, and hold the last tick its player saw when the group goes away", async () => {
    const redis = await startRedisServer({ port: await freePort() });
    cleanups.push(() => redis.stop());
    const store = new RedisSnapshotStore({ url: redis.url });
    await store.connect();
    cleanups.push(() => store.close());
    const group = await startGroup(store, snapshotWritesFor(store), { [SNAPSHOT_STORE_ENV]: redis.url });
    expect(group.keeper.writes).toBe("every-round");
    newGame(group.games, "g-3");
    const player = await join(group.url("g-3"));
    player.ws.send(press(1));
    const stored = await waitFor("a snapshot at tick 5", async () => {
      const s = await store.read("g-3");
      return s && s.snapshot.tick >= 5 ? s : undefined;
    });
    expect(stored.snapshot).toMatchObject({ engine: ENGINE, phase: PlayState.PLAYING });
    expectSimulated(stored.snapshot);
    expect(group.keeper.snapshotsWritten).toBe(0);
    // The group's channel closes (as when it is killed): the shard stops the game, writes its last
    // tick, then closes the stream for the player to resume it.
    await group.shards.close();
    expect((await player.closed).code).toBe(4500);
    const last = (await store.read("g-3"))!.snapshot;
    expect(last.tick).toBe(player.ticks.at(-1));
    expectSimulated(last);
  }, 30_000);

  it("in a shared store outlive a shard killed alone: the group continues the game from its last round, and a new shard plays it on", async () => {
    const redis = await startRedisServer({ port: await freePort() });
    cleanups.push(() => redis.stop());
    const store = new RedisSnapshotStore({ url: redis.url });
    await store.connect();
    cleanups.push(() => store.close());
    const group = await startGroup(store, snapshotWritesFor(store), { [SNAPSHOT_STORE_ENV]: redis.url });
    newGame(group.games, "g-5");
    const first = await join(group.url("g-5"));
    first.ws.send(press(1));
    await waitFor("tick 8", () => (first.ticks.length >= 8 ? true : undefined));
    const victim = group.shards.stats()[0]!;
    process.kill(victim.pid!, "SIGKILL");
    expect((await first.closed).code).toBe(1006);
    await waitFor("the shard to start again", () => {
      const s = group.shards.stats()[0]!;
      return s.restarts === 1 && s.pid !== victim.pid && s.ready ? true : undefined;
    }, 20_000);
    expect(group.games.isDetached("g-5")).toBe(false);
    // Killed between two rounds at worst: the store stands at the last tick its player saw, or the one before.
    const resumed = await group.keeper.resume("g-5", PLAYER, { holderTried: true });
    expect(resumed.state.tick).toBeGreaterThanOrEqual(first.ticks.at(-1)! - 1);
    expectSimulated((await store.read("g-5"))!.snapshot);
    const second = await join(group.url("g-5"));
    await waitFor("the continued game's first frames", () => (second.ticks.length >= 3 ? true : undefined));
    expect({ tick: second.ticks[0], full: second.full[0] }).toEqual({ tick: resumed.state.tick, full: true });
    expect(group.keeper.size).toBe(0);
    second.ws.close(1000, "leaving");
    await second.closed;
  }, 40_000);

  it("do not keep a shard alive whose group went away while it started (its store connection open): it exits", async () => {
    const redis = await startRedisServer({ port: await freePort() });
    cleanups.push(() => redis.stop());
    const setup = { engine: ENGINE, writes: "every-round", store: "shared" };
    const shard = fork(fileURLToPath(new URL("../src/shard-main.ts", import.meta.url)), ["0", PATH, "silent", JSON.stringify(setup)], {
      execArgv: ["--import", "tsx"],
      env: { ...process.env, [SNAPSHOT_STORE_ENV]: redis.url },
      serialization: "advanced",
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    const exited = new Promise<number | null>((resolve) => shard.once("exit", (code) => resolve(code)));
    cleanups.push(async () => {
      if (shard.exitCode === null && shard.signalCode === null) shard.kill("SIGKILL");
    });
    // Gone before the shard has even loaded: no disconnect event reaches it.
    shard.disconnect();
    const code = await Promise.race([exited, new Promise<string>((resolve) => setTimeout(() => resolve("still running after 15 s"), 15_000))]);
    expect(code).toBe(0);
  }, 30_000);

  it("leave nothing behind for a game whose socket closes before the shard answers its upgrade: the group releases it", async () => {
    const store = new MemorySnapshotStore();
    const group = await startGroup(store, "every-round");
    newGame(group.games, "g-4");
    expect(group.games.unfinishedCount(PLAYER)).toBe(1);
    // An upgrade the group admits and hands over, which the shard's WebSocket server refuses (no key).
    const socket = connect(group.port, "127.0.0.1");
    socket.on("error", () => undefined);
    const reply = new Promise<string>((resolve) => {
      let text = "";
      socket.on("data", (d) => (text += d.toString()));
      socket.on("close", () => resolve(text));
    });
    socket.write(`GET ${PATH}?gameId=g-4 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`);
    expect(await reply).toMatch(/^HTTP\/1\.1 400/);
    expect(group.shards.stats()[0]!.handed).toBe(1);
    await waitFor("the game's end to reach the group", () => {
      const s = group.shards.stats()[0]!;
      return s.games === 0 && s.sessions === 0 ? true : undefined;
    });
    expect(group.games.isDetached("g-4")).toBe(false);
    expect(group.games.unfinishedCount(PLAYER)).toBe(0);
    expect((await group.shards.sample()).map((s) => ({ games: s.games, sessions: s.sessions, kept: s.keptGames }))).toEqual([{ games: 0, sessions: 0, kept: 0 }]);
  }, 30_000);
});
