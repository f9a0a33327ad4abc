import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { PlayState, ResumeGameRequestSchema } from "@flaplab/contracts/engine/v1/engine_pb";
import { type Frame, GameStreamMessageSchema, type Moved } from "@flaplab/contracts/engine/v1/stream_pb";
import { CloseCode } from "@flaplab/game-protocol";
import { MemoryStreamSession } from "@flaplab/game-protocol/testing";
import { MemorySnapshotStore } from "@flaplab/snapshots";
import { describe, expect, it } from "vitest";
import {
  GameTable,
  ManualTickClock,
  SnapshotKeeper,
  type SnapshotWrites,
  TickScheduler,
  courseOf,
  createEngine,
  createGameSessionHandler,
  snapshotWritesFor,
} from "../src/index.js";
import { fakeMusic, fakeScore, flush, handlerContext, input, memoryLogger, principal, rejection } from "./fakes.js";
import { EASY_FLAP_TICKS, EASY_SEED, easyWorld } from "./fixtures.js";

const alice = principal("alice");
const bob = principal("bob");

/** One engine of a deployment whose engines share `store`; all engines share `clock`. */
function engine(name: string, store: MemorySnapshotStore, clock: ManualTickClock, writes: SnapshotWrites = "every-round") {
  const games = new GameTable({ sweepIntervalMs: 0 });
  const scheduler = new TickScheduler({ clock });
  const keeper = new SnapshotKeeper({ store, engine: name, games, writes });
  const score = fakeScore();
  const handler = createGameSessionHandler({
    games,
    scheduler,
    music: fakeMusic().client,
    score: score.client,
    logger: memoryLogger(),
    snapshots: keeper,
    recordRetryDelaysMs: [0],
  });
  return {
    games,
    keeper,
    score,
    handler,
    rpc: createEngine({ games, snapshots: keeper }),
    connect(id: string, who = alice) {
      const session = new MemoryStreamSession({ gameId: id, principal: who });
      handler(session);
      return session;
    },
  };
}

/**
 * Engines A and B sharing one store and clock, with `ids` created on A (the easy world, alice's),
 * their streams opened and started.
 */
async function twoEngines(ids: readonly string[]) {
  const store = new MemorySnapshotStore();
  const clock = new ManualTickClock(10_000);
  const a = engine("engine-a", store, clock);
  const b = engine("engine-b", store, clock);
  const sessions = new Map<string, MemoryStreamSession>();
  for (const id of ids) {
    a.games.create({ id, owner: alice, course: courseOf(easyWorld()), seed: EASY_SEED });
    const session = a.connect(id);
    input(session, 1);
    sessions.set(id, session);
  }
  await flush();
  return { store, clock, a, b, sessions };
}

/** Drains engine `a` to `target`: its games move right after their next tick, which `clock` runs. */
async function drainAfterTick(a: { handler: ReturnType<typeof createGameSessionHandler> }, clock: ManualTickClock, target = { engineUrl: "u", engineWsUrl: "w", streamTicket: "t" }) {
  const drained = a.handler.drain(async () => target);
  await flush();
  await ticks(clock, 1);
  return drained;
}

const framesOf = (s: MemoryStreamSession): Frame[] =>
  s.messages(GameStreamMessageSchema).flatMap((m) => (m.kind.case === "frame" ? [m.kind.value] : []));
const movedOf = (s: MemoryStreamSession): Moved | undefined =>
  s.messages(GameStreamMessageSchema).flatMap((m) => (m.kind.case === "moved" ? [m.kind.value] : []))[0];

async function ticks(clock: ManualTickClock, n: number, each?: () => void): Promise<void> {
  for (let i = 0; i < n; i++) {
    each?.();
    clock.advance(33);
    await flush();
  }
}

describe("snapshots", () => {
  it("are written every tick, every game of a round in one batch", async () => {
    const { store, clock, a } = await twoEngines(["g1", "g2", "g3"]);
    const before = a.keeper.batches;
    await ticks(clock, 10);
    // Ten ticks of three games: ten batches of three (a batch per round, not per game).
    expect(a.keeper.batches - before).toBe(10);
    const stored = await store.read("g2");
    expect(stored?.snapshot).toMatchObject({ tick: 10, engine: "engine-a", phase: PlayState.PLAYING, lastInputSeq: 1 });
    expect(stored?.snapshot.birdY).toBe(a.games.get("g2")!.state.birdY);
    expect(stored?.origin.owner).toBe("alice");
  });

  it("let a drained game continue on another engine from the same tick, each input applied once, to the simulator's result", async () => {
    const { store, clock, a, b, sessions } = await twoEngines(["easy"]);
    const flaps = new Set(EASY_FLAP_TICKS);
    let seq = 1;
    let session = sessions.get("easy")!;
    // Flap before the tick that EASY_FLAP_TICKS names, as the simulator does.
    const play = () => {
      const last = framesOf(session).at(-1)?.tick ?? 0;
      if (flaps.has(last + 1) && !sent.has(last + 1)) {
        sent.add(last + 1);
        input(session, ++seq);
      }
    };
    const sent = new Set<number>();
    await ticks(clock, 150, play);
    const lastOnA = framesOf(session).at(-1)!.tick;
    expect(lastOnA).toBe(150);

    // An input the engine never reflected in a frame: the client will re-send it after the move.
    input(session, ++seq);
    await flush();
    const drained = await drainAfterTick(a, clock, { engineUrl: "https://b/engine", engineWsUrl: "ws://b/engine", streamTicket: "t-b" });
    expect(drained).toEqual({ moved: 1, stranded: 0 });
    // It moved right after its next tick (whose frame reflects that input, acked before it).
    expect(framesOf(session).at(-1)?.tick).toBe(151);
    expect(movedOf(session)).toMatchObject({ engineWsUrl: "ws://b/engine", streamTicket: "t-b", tick: 151 });
    expect(session.end).toMatchObject({ code: CloseCode.Moved });
    expect(a.games.has("easy")).toBe(false);
    expect(a.score.calls).toHaveLength(0);

    // The client opens the stream at B and re-sends what no frame reflected.
    session = b.connect("easy");
    input(session, seq); // applied on A before the drain (its snapshot says so): dropped
    await flush();
    expect(b.games.get("easy")?.state.tick).toBe(151);
    expect(b.games.get("easy")?.lastInputSeq).toBe(seq);
    await ticks(clock, 400, play);
    const frames = framesOf(session);
    expect(frames[0]).toMatchObject({ tick: 151, full: true });
    expect(frames[1]).toMatchObject({ tick: 152, full: false });
    const end = frames.at(-1)!;
    expect(end).toMatchObject({ gameOver: true });
    expect(b.score.calls).toHaveLength(1);
    expect(await store.read("easy")).toBeUndefined();
  });

  it("continue the easy seed to 7 at tick 402 when the drain falls between two flaps", async () => {
    const { clock, a, b, sessions } = await twoEngines(["easy"]);
    const flaps = new Set(EASY_FLAP_TICKS);
    let seq = 1;
    let session = sessions.get("easy")!;
    const play = () => {
      const last = framesOf(session).at(-1)?.tick ?? 0;
      if (flaps.has(last + 1)) input(session, ++seq);
    };
    await ticks(clock, 200, play);
    play();
    await drainAfterTick(a, clock);
    session = b.connect("easy");
    await flush();
    await ticks(clock, 260, play);
    const last = framesOf(session).at(-1)!;
    expect(last).toMatchObject({ tick: 402, gameOver: true });
    expect(b.score.calls.map((c) => c.request)).toEqual([expect.objectContaining({ gameId: "easy", score: 7, ticks: 402 })]);
  });

  it("moves a game whose holder's heartbeat is fresh only through ResumeGame, which the initiator sends after the holder failed it", async () => {
    const { store, clock, b } = await twoEngines(["g1"]);
    await ticks(clock, 30);
    // Engine A was just killed: its last heartbeat has not expired yet.
    await store.heartbeat({ engine: "engine-a", games: 1, maxGames: 100, draining: false }, 60_000);
    // A stream opened at B on its own does not take the game from an engine that says it is up.
    expect(await rejection(() => b.keeper.resume("g1", "alice"))).toMatchObject({ code: Code.Unavailable });
    // The initiator's ResumeGame (it called the holder first, and that call failed) moves it at once.
    const resumed = await b.rpc.resumeGame(create(ResumeGameRequestSchema, { gameId: "g1" }), handlerContext("resumeGame", "alice"));
    expect(resumed).toMatchObject({ gameId: "g1", tick: 30 });
  });

  it("resume a game whose engine died (ResumeGame), from its last tick, for its player only", async () => {
    const { clock, b } = await twoEngines(["g1"]);
    await ticks(clock, 30);
    // Engine A is gone (nothing more comes from it); B takes the game over.
    const resume = (gameId: string, who: string) => b.rpc.resumeGame(create(ResumeGameRequestSchema, { gameId }), handlerContext("resumeGame", who));
    expect(await rejection(() => resume("g1", "bob"))).toMatchObject({ code: Code.PermissionDenied });
    expect(await rejection(() => resume("nope", "alice"))).toMatchObject({ code: Code.NotFound });
    expect(await resume("g1", "alice")).toMatchObject({ gameId: "g1", tick: 30 });
    // Twice is the same game (a retried call).
    expect(await resume("g1", "alice")).toMatchObject({ tick: 30 });
    const session = b.connect("g1");
    await ticks(clock, 2);
    // The tick it stands at, in full at once, then the next ticks.
    expect(framesOf(session).map((f) => [f.tick, f.full])).toEqual([
      [30, true],
      [31, false],
      [32, false],
    ]);
    expect(b.connect("g1", bob).end).toMatchObject({ code: CloseCode.PermissionDenied });
  });

  it("count a continued game against its player's limit here, on ResumeGame and on a stream opened here; a refused game stays its holder's", async () => {
    const { clock, a, b } = await twoEngines(["g1", "g2"]);
    // Alice plays 3 games on B already.
    const onB = ["b1", "b2", "b3"].map((id) => {
      b.games.create({ id, owner: alice, course: courseOf(easyWorld()), seed: EASY_SEED });
      const session = b.connect(id);
      input(session, 1);
      return session;
    });
    await ticks(clock, 3);
    const resume = (gameId: string) => b.rpc.resumeGame(create(ResumeGameRequestSchema, { gameId }), handlerContext("resumeGame", "alice"));
    expect(await rejection(() => resume("g1"))).toMatchObject({ code: Code.ResourceExhausted });
    const opened = b.connect("g2");
    await flush();
    expect(opened.end).toMatchObject({ code: CloseCode.LimitReached, reason: expect.stringMatching(/player alice already has 3 games/) });
    // Nothing was claimed: A still plays both, its snapshots written.
    await ticks(clock, 2);
    expect(a.games.has("g1") && a.games.has("g2")).toBe(true);
    expect(b.games.has("g1") || b.games.has("g2")).toBe(false);
    // One of B's games is abandoned: now one resume fits, and a second replaces the first (nobody plays it).
    onB[0]!.leave();
    await flush();
    expect(await resume("g1")).toMatchObject({ gameId: "g1" });
    expect(await resume("g2")).toMatchObject({ gameId: "g2" });
    expect([...b.games].map((g) => g.id).sort()).toEqual(["b2", "b3", "g2"]);
  });

  it("tick a continued game as soon as the client's re-sent presses are in, or one period after its full frame", async () => {
    const { clock, a, b } = await twoEngines(["g1", "g2"]);
    await ticks(clock, 5);
    await drainAfterTick(a, clock);
    // g1's client re-sends its latest press (applied before the move: dropped): tick 7 at once.
    const g1 = b.connect("g1");
    await flush();
    input(g1, 1);
    await flush();
    clock.advance(0);
    await flush();
    expect(framesOf(g1).map((f) => f.tick)).toEqual([6, 7]);
    // g2's client says nothing: tick 7 one period after the full frame.
    const g2 = b.connect("g2");
    await flush();
    clock.advance(32);
    await flush();
    expect(framesOf(g2).map((f) => f.tick)).toEqual([6]);
    clock.advance(1);
    await flush();
    expect(framesOf(g2).map((f) => f.tick)).toEqual([6, 7]);
    expect(b.games.get("g1")?.lastInputSeq).toBe(1);
  });

  it("stop a game on an engine that still plays it once another engine resumed it (a partition): only one plays on", async () => {
    const { clock, a, b, sessions } = await twoEngines(["g1"]);
    await ticks(clock, 20);
    // The page lost engine A (its stream looks alive to A) and resumed the game on B.
    const resumed = await b.rpc.resumeGame(create(ResumeGameRequestSchema, { gameId: "g1" }), handlerContext("resumeGame", "alice"));
    expect(resumed.tick).toBe(20);
    const onB = b.connect("g1");
    await ticks(clock, 2);
    // A's next snapshot of g1 is refused: A stops the game and closes its stream.
    expect(sessions.get("g1")!.end).toMatchObject({ code: CloseCode.AlreadyConnected, reason: "the game continues on another engine" });
    expect(a.games.has("g1")).toBe(false);
    expect(framesOf(onB).map((f) => f.tick)).toEqual([20, 21, 22]);
    await ticks(clock, 3);
    expect(framesOf(onB).at(-1)!.tick).toBe(25);
  });

  describe("written on leave (the store in the engine's own process)", () => {
    /** One engine on an in-process store, as a one-engine deployment runs it, with game g1 started. */
    async function alone() {
      const store = new MemorySnapshotStore();
      const clock = new ManualTickClock(10_000);
      const a = engine("engine-a", store, clock, snapshotWritesFor(store));
      a.games.create({ id: "g1", owner: alice, course: courseOf(easyWorld()), seed: EASY_SEED });
      const session = a.connect("g1");
      input(session, 1);
      await flush();
      return { store, clock, a, session };
    }

    it("is what an in-process store gets; any other store is written every round", () => {
      expect(snapshotWritesFor(new MemorySnapshotStore())).toBe("on-leave");
      const shared = Object.assign(Object.create(MemorySnapshotStore.prototype) as MemorySnapshotStore, { kind: "redis" });
      expect(snapshotWritesFor(shared)).toBe("every-round");
    });

    it("writes nothing while the game plays, then the tick it stands at when its stream ends: its player resumes from there", async () => {
      const { store, clock, a, session } = await alone();
      await ticks(clock, 20);
      expect(a.keeper.batches).toBe(0);
      expect(await store.read("g1")).toBeUndefined();
      session.leave();
      await flush();
      expect(a.games.has("g1")).toBe(false);
      expect((await store.read("g1"))?.snapshot).toMatchObject({ tick: 20, phase: PlayState.PLAYING, engine: "engine-a" });
      // The same engine continues it for its player, at that tick.
      const resumed = await a.rpc.resumeGame(create(ResumeGameRequestSchema, { gameId: "g1" }), handlerContext("resumeGame", "alice"));
      expect(resumed).toMatchObject({ gameId: "g1", tick: 20 });
      const again = a.connect("g1");
      await ticks(clock, 2);
      expect(framesOf(again).map((f) => [f.tick, f.full])).toEqual([
        [20, true],
        [21, false],
        [22, false],
      ]);
    });

    it("still writes a drained game before it moves", async () => {
      const { store, clock, a, session } = await alone();
      await ticks(clock, 10);
      expect(await drainAfterTick(a, clock)).toEqual({ moved: 1, stranded: 0 });
      expect(movedOf(session)).toMatchObject({ tick: 11 });
      expect((await store.read("g1"))?.snapshot).toMatchObject({ tick: 11 });
    });

    it("removes an ended game from the store, as every-round does", async () => {
      const { store, clock, a, session } = await alone();
      await ticks(clock, 1000);
      expect(session.end).toMatchObject({ code: CloseCode.Normal });
      expect(a.keeper.batches).toBe(0);
      expect(await store.read("g1")).toBeUndefined();
    });
  });

  it("let go of a game handed to another process of the engine (a shard keeps it from then on), writing and removing nothing", async () => {
    const { store, clock, a, sessions } = await twoEngines(["g1", "g2"]);
    await ticks(clock, 3);
    expect(a.keeper.size).toBe(2);
    const batches = a.keeper.batches;
    // A press changes g1 in the round it is handed off: its pending snapshot is not written.
    a.games.input("g1", "alice", { seq: 2, clientTimeMs: 0 });
    a.keeper.changed(a.games.get("g1")!);
    a.keeper.changed(a.games.get("g2")!);
    a.keeper.handOff("g1");
    expect(a.keeper.size).toBe(1);
    await flush();
    expect(a.keeper.batches).toBe(batches + 1);
    // Nor is it removed: the store keeps its latest snapshot before the hand-off.
    expect((await store.read("g1"))?.snapshot).toMatchObject({ tick: 3, lastInputSeq: 1 });
    sessions.get("g2")!.leave();
    await flush();
    expect(a.keeper.size).toBe(0);
  });

  it("refuse new and resumed games on a draining engine (the initiator tries another)", async () => {
    const b = engine("engine-b", new MemorySnapshotStore(), new ManualTickClock(0));
    await b.keeper.startDraining();
    expect(await rejection(() => b.rpc.resumeGame(create(ResumeGameRequestSchema, { gameId: "g1" }), handlerContext("resumeGame", "alice")))).toMatchObject({
      code: Code.Unavailable,
    });
  });
});
