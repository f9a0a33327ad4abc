import { GameStreamMessageSchema } from "@flaplab/contracts/engine/v1/stream_pb";
import { MemoryStreamSession } from "@flaplab/game-protocol/testing";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type Game, GameTable, courseOf } from "../src/index.js";
import { DRAIN_TICK_WAIT_MS, type MoveTarget, type Movable, type PendingMove, drainStreams, handOver, moveAfterTick, movedMessage } from "../src/hand-over.js";
import { flush, memoryLogger, principal } from "./fakes.js";
import { openWorld } from "./fixtures.js";

const target: MoveTarget = { engineUrl: "https://b", engineWsUrl: "wss://b", streamTicket: "ticket" };
const games = new GameTable({ sweepIntervalMs: 0 });
let nextId = 0;

/** A stream whose answers the test sets, recording what the hand-over asked of it. */
class FakeStream implements Movable {
  readonly game: Game = games.create({ id: `g${nextId++}`, owner: principal("alice"), course: courseOf(openWorld()) });
  readonly calls: string[] = [];
  ticking = true;
  canFreeze = true;
  canMove = true;
  move: PendingMove | undefined;
  store: Promise<void> = Promise.resolve();

  waitForTick(move: PendingMove): boolean {
    this.calls.push("wait");
    if (this.ticking) this.move = move;
    return this.ticking;
  }
  freeze(): boolean {
    this.calls.push("freeze");
    return this.canFreeze;
  }
  stored(): Promise<void> {
    this.calls.push("stored");
    return this.store;
  }
  moveTo(to: MoveTarget): boolean {
    this.calls.push(`moveTo ${to.engineWsUrl}`);
    return this.canMove;
  }
  strand(): void {
    this.calls.push("strand");
  }
}

afterEach(() => {
  vi.useRealTimers();
});

describe("handOver", () => {
  it("freezes, waits for the snapshot, then moves", async () => {
    const stream = new FakeStream();
    let stored!: () => void;
    stream.store = new Promise((resolve) => {
      stored = resolve;
    });
    const outcome = handOver(stream, target);
    await flush();
    expect(stream.calls).toEqual(["freeze", "stored"]);
    stored();
    expect(await outcome).toBe("moved");
    expect(stream.calls).toEqual(["freeze", "stored", "moveTo wss://b"]);
  });

  it("strands a game with nowhere to go, or whose stream closed before it could be told", async () => {
    const nowhere = new FakeStream();
    expect(await handOver(nowhere, undefined)).toBe("stranded");
    expect(nowhere.calls).toEqual(["freeze", "stored", "strand"]);
    const gone = new FakeStream();
    gone.canMove = false;
    expect(await handOver(gone, target)).toBe("stranded");
    expect(gone.calls).toEqual(["freeze", "stored", "moveTo wss://b", "strand"]);
  });

  it("leaves a game that cannot be frozen (over, or its stream closed): ended", async () => {
    const stream = new FakeStream();
    stream.canFreeze = false;
    expect(await handOver(stream, target)).toBe("ended");
    expect(stream.calls).toEqual(["freeze"]);
  });
});

describe("moveAfterTick", () => {
  it("moves a game that is not ticking at once", async () => {
    const stream = new FakeStream();
    stream.ticking = false;
    expect(await moveAfterTick(stream, target)).toBe("moved");
    expect(stream.calls).toEqual(["wait", "freeze", "stored", "moveTo wss://b"]);
  });

  it("moves a ticking game when its tick says go, once", async () => {
    const stream = new FakeStream();
    const outcome = moveAfterTick(stream, target);
    await flush();
    expect(stream.calls).toEqual(["wait"]);
    stream.move!.go();
    stream.move!.go();
    stream.move!.end();
    expect(await outcome).toBe("moved");
    expect(stream.calls).toEqual(["wait", "freeze", "stored", "moveTo wss://b"]);
  });

  it("ends when the game ends at that tick instead", async () => {
    const stream = new FakeStream();
    const outcome = moveAfterTick(stream, target);
    stream.move!.end();
    stream.move!.go();
    expect(await outcome).toBe("ended");
    expect(stream.calls).toEqual(["wait"]);
  });

  it(`moves a game that does not tick within ${DRAIN_TICK_WAIT_MS} ms without waiting longer`, async () => {
    vi.useFakeTimers();
    const stream = new FakeStream();
    const outcome = moveAfterTick(stream, target);
    vi.advanceTimersByTime(DRAIN_TICK_WAIT_MS - 1);
    expect(stream.calls).toEqual(["wait"]);
    vi.advanceTimersByTime(1);
    expect(stream.calls).toEqual(["wait", "freeze", "stored"]);
    vi.useRealTimers();
    expect(await outcome).toBe("moved");
  });

  it("clears its wait once the tick moved it", async () => {
    vi.useFakeTimers();
    const stream = new FakeStream();
    const outcome = moveAfterTick(stream, target);
    stream.move!.go();
    vi.advanceTimersByTime(DRAIN_TICK_WAIT_MS * 2);
    vi.useRealTimers();
    expect(await outcome).toBe("moved");
    expect(stream.calls.filter((c) => c === "freeze")).toHaveLength(1);
  });
});

describe("drainStreams", () => {
  it("settles every target first, then moves each game; one with no target, or whose target failed, is stranded and logged", async () => {
    const a = new FakeStream();
    a.ticking = false;
    const b = new FakeStream();
    b.ticking = false;
    const c = new FakeStream();
    c.ticking = false;
    const logger = memoryLogger();
    const asked: string[] = [];
    const result = await drainStreams(
      [a, b, c],
      async (gameId) => {
        asked.push(gameId);
        if (gameId === b.game.id) return undefined;
        if (gameId === c.game.id) throw new Error("no engine up");
        expect(a.calls).toEqual([]);
        return target;
      },
      logger,
    );
    expect(asked).toEqual([a.game.id, b.game.id, c.game.id]);
    expect(result).toEqual({ moved: 1, stranded: 2 });
    expect(logger.lines).toEqual([{ level: "warn", obj: { gameId: c.game.id, err: "no engine up" }, msg: "no engine to move the game to" }]);
  });

  it("drains nothing to nothing", async () => {
    expect(await drainStreams([], async () => target, memoryLogger())).toEqual({ moved: 0, stranded: 0 });
  });
});

describe("movedMessage", () => {
  it("is a size-delimited Moved with the target and the tick", () => {
    const session = new MemoryStreamSession({ gameId: "g1", principal: principal("alice") });
    session.send(movedMessage(target, 42));
    const [message] = session.messages(GameStreamMessageSchema);
    expect(message?.kind.case).toBe("moved");
    expect(message?.kind.value).toMatchObject({ ...target, tick: 42 });
  });
});
