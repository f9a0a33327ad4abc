// What a game stream does in each phase, through the handler: the behaviours that hang on where
// the stream stands (waiting for re-sent presses, draining, handing over, over, closed).
import type { GameSnapshot } from "@flaplab/contracts/engine/v1/snapshot_pb";
import { GameStreamMessageSchema } from "@flaplab/contracts/engine/v1/stream_pb";
import { CloseCode } from "@flaplab/game-protocol";
import { MemoryStreamSession } from "@flaplab/game-protocol/testing";
import { MemorySnapshotStore } from "@flaplab/snapshots";
import { applyInputInPlace, createGame, tickInPlace } from "@flaplab/physics";
import { describe, expect, it } from "vitest";
import { GameTable, ManualTickClock, SnapshotKeeper, TickScheduler, courseOf, createGameSessionHandler } from "../src/index.js";
import { fakeMusic, fakeScore, flush, input, memoryLogger, principal } from "./fakes.js";
import { deadlyWorld, fairWorld, openWorld } from "./fixtures.js";

const alice = principal("alice");
const target = { engineUrl: "https://b", engineWsUrl: "wss://b", streamTicket: "t" };

/** A store whose snapshot batches wait for `release()`: a hand-over stays frozen until then. */
class GatedStore extends MemorySnapshotStore {
  private gate: Promise<void> | undefined;
  private open: (() => void) | undefined;
  hold(): void {
    this.gate = new Promise((resolve) => {
      this.open = resolve;
    });
  }
  release(): void {
    this.open?.();
    this.gate = undefined;
  }
  override async writeSnapshots(engine: string, snapshots: readonly GameSnapshot[]): Promise<string[]> {
    if (this.gate) await this.gate;
    return super.writeSnapshots(engine, snapshots);
  }
}

function engine(name = "engine-a", store = new GatedStore(), clock = new ManualTickClock(10_000), score = fakeScore()) {
  const games = new GameTable({ sweepIntervalMs: 0 });
  const keeper = new SnapshotKeeper({ store, engine: name, games });
  const logger = memoryLogger();
  const music = fakeMusic();
  const handler = createGameSessionHandler({
    games,
    scheduler: new TickScheduler({ clock }),
    music: music.client,
    score: score.client,
    logger,
    snapshots: keeper,
    recordRetryDelaysMs: [0],
  });
  return {
    store,
    clock,
    games,
    keeper,
    logger,
    music,
    handler,
    connect(id: string) {
      const session = new MemoryStreamSession({ gameId: id, principal: alice });
      handler(session);
      return session;
    },
    async ticks(n: number) {
      for (let i = 0; i < n; i++) {
        clock.advance(33);
        await flush();
      }
    },
  };
}

/** Game g1 on engine `a` over `world`, its stream open and its start input applied. */
async function startGame(a: ReturnType<typeof engine>, world: Parameters<typeof courseOf>[0]): Promise<MemoryStreamSession> {
  a.games.create({ id: "g1", owner: alice, course: courseOf(world) });
  const session = a.connect("g1");
  input(session, 1);
  await flush();
  return session;
}

const kinds = (s: MemoryStreamSession) => s.messages(GameStreamMessageSchema).map((m) => m.kind.case);
const ticksOf = (s: MemoryStreamSession) =>
  s.messages(GameStreamMessageSchema).flatMap((m) => (m.kind.case === "frame" ? [m.kind.value.tick] : []));

/** No transition was refused (an engine bug would log one). */
function noRefusals(logger: ReturnType<typeof memoryLogger>): void {
  expect(logger.lines.filter((l) => (l.obj as { event?: string }).event === "stream-phase-refused")).toEqual([]);
}

/** The tick at which the deadly world's game ends after its start press. */
function deadlyOverTick(): number {
  const state = createGame(courseOf(deadlyWorld()), { width: 34, height: 24 });
  applyInputInPlace(state);
  while (state.phase !== "over") tickInPlace(state);
  return state.tick;
}

describe("game stream phases", () => {
  it("live → draining → handing-over → moved: the game moves right after its next tick, with that tick in Moved", async () => {
    const a = engine();
    const session = await startGame(a, openWorld());
    await a.ticks(3);
    const drained = a.handler.drain(async () => target);
    await flush();
    expect(session.isClosed).toBe(false);
    await a.ticks(1);
    expect(await drained).toEqual({ moved: 1, stranded: 0 });
    expect(kinds(session).slice(-2)).toEqual(["frame", "moved"]);
    expect(session.end?.code).toBe(CloseCode.Moved);
    expect(a.games.has("g1")).toBe(false);
    noRefusals(a.logger);
  });

  it("handing-over drops the client's presses (not applied, not acked, no sound) until the game has moved", async () => {
    const a = engine();
    const session = await startGame(a, openWorld());
    await a.ticks(2);
    a.store.hold();
    const drained = a.handler.drain(async () => target);
    await flush();
    await a.ticks(1);
    // Frozen at tick 3, its snapshot on its way: a press now is dropped, and no tick runs.
    const before = session.messages(GameStreamMessageSchema).length;
    input(session, 2);
    await flush();
    await a.ticks(2);
    expect(session.messages(GameStreamMessageSchema)).toHaveLength(before);
    expect(a.games.get("g1")?.lastInputSeq).toBe(1);
    expect(a.music.calls.filter((c) => c.request.inputSeq === 2)).toEqual([]);
    a.store.release();
    expect(await drained).toEqual({ moved: 1, stranded: 0 });
    expect(session.messages(GameStreamMessageSchema).at(-1)?.kind).toMatchObject({ case: "moved", value: { tick: 3 } });
    noRefusals(a.logger);
  });

  it("awaiting-resend → draining: the re-sent presses still restart the tick clock, and the game moves right after that tick", async () => {
    const store = new GatedStore();
    const clock = new ManualTickClock(10_000);
    const a = engine("engine-a", store, clock);
    const b = engine("engine-b", store, clock);
    // A world StartGame accepts: a continued game's world is checked as a new one.
    a.games.create({ id: "g1", owner: alice, course: courseOf(fairWorld()) });
    const first = a.connect("g1");
    input(first, 1);
    await flush();
    await a.ticks(5);
    const toB = a.handler.drain(async () => target);
    await flush();
    await a.ticks(1);
    expect(await toB).toEqual({ moved: 1, stranded: 0 });
    // On B: a full frame of tick 6 at once; B drains before the client's re-sent presses come.
    const second = b.connect("g1");
    await flush();
    expect(ticksOf(second)).toEqual([6]);
    const away = b.handler.drain(async () => ({ ...target, engineWsUrl: "wss://c" }));
    await flush();
    clock.advance(5);
    await flush();
    expect(ticksOf(second)).toEqual([6]);
    // The re-sent press (applied on A: dropped) is in: tick 7 runs at once, then the game moves.
    input(second, 1);
    await flush();
    clock.advance(0);
    await flush();
    expect(await away).toEqual({ moved: 1, stranded: 0 });
    expect(ticksOf(second)).toEqual([6, 7]);
    expect(second.messages(GameStreamMessageSchema).at(-1)?.kind).toMatchObject({ case: "moved", value: { tick: 7, engineWsUrl: "wss://c" } });
    noRefusals(b.logger);
  });

  it("draining → over: a game that ends at the tick its move waited for is not moved; it is recorded and closed 0", async () => {
    const a = engine();
    const session = await startGame(a, deadlyWorld());
    const overTick = deadlyOverTick();
    await a.ticks(overTick - 1);
    const drained = a.handler.drain(async () => target);
    await flush();
    await a.ticks(1);
    expect(await drained).toEqual({ moved: 0, stranded: 0 });
    await a.ticks(1);
    expect(kinds(session).includes("moved")).toBe(false);
    expect(kinds(session).at(-1)).toBe("summary");
    expect(session.end?.code).toBe(CloseCode.Normal);
    noRefusals(a.logger);
  });

  it("draining → abandoned: a stream that closes while its game waits to move settles as neither moved nor stranded", async () => {
    const a = engine();
    const session = await startGame(a, openWorld());
    await a.ticks(2);
    const drained = a.handler.drain(async () => target);
    await flush();
    session.close(1001, "tab closed");
    await flush();
    await a.ticks(1);
    // The wait for a tick that never comes ends after 100 ms of real time.
    expect(await drained).toEqual({ moved: 0, stranded: 0 });
    expect(a.games.has("g1")).toBe(false);
    expect(a.logger.lines.some((l) => l.msg === "game abandoned: its stream ended before game over")).toBe(true);
    noRefusals(a.logger);
  });

  it("over: a press while the run is being recorded is dropped, and a drain leaves the game to finish", async () => {
    let recorded!: () => void;
    const score = fakeScore(
      () =>
        new Promise<void>((resolve) => {
          recorded = resolve;
        }),
    );
    const a = engine("engine-a", new GatedStore(), new ManualTickClock(10_000), score);
    const session = await startGame(a, deadlyWorld());
    await a.ticks(deadlyOverTick());
    // The game-over frame is out and RecordRun has not answered: the stream is over, not closed.
    expect(score.calls).toHaveLength(1);
    expect(session.isClosed).toBe(false);
    input(session, 2);
    await flush();
    expect(kinds(session).filter((k) => k === "ack")).toEqual([]);
    expect(a.music.calls.filter((c) => c.request.inputSeq === 2)).toEqual([]);
    expect(await a.handler.drain(async () => target)).toEqual({ moved: 0, stranded: 0 });
    expect(kinds(session).includes("moved")).toBe(false);
    recorded();
    await flush();
    expect(kinds(session).at(-1)).toBe("summary");
    expect(session.end?.code).toBe(CloseCode.Normal);
    noRefusals(a.logger);
  });

  it("a second drain while the first waits takes the move over: the game moves once", async () => {
    const a = engine();
    const session = await startGame(a, openWorld());
    await a.ticks(2);
    const first = a.handler.drain(async () => target);
    await flush();
    const second = a.handler.drain(async () => ({ ...target, engineWsUrl: "wss://c" }));
    await flush();
    await a.ticks(1);
    expect(await first).toEqual({ moved: 0, stranded: 0 });
    expect(await second).toEqual({ moved: 1, stranded: 0 });
    expect(kinds(session).filter((k) => k === "moved")).toHaveLength(1);
    expect(session.messages(GameStreamMessageSchema).at(-1)?.kind).toMatchObject({ case: "moved", value: { engineWsUrl: "wss://c" } });
    noRefusals(a.logger);
  });
});
