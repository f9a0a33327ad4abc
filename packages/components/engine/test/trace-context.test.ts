import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { runInCall } from "@flaplab/component";
import { StartGameRequestSchema } from "@flaplab/contracts/engine/v1/engine_pb";
import { GameStreamMessageSchema } from "@flaplab/contracts/engine/v1/stream_pb";
import { MemoryStreamSession } from "@flaplab/game-protocol/testing";
import { describe, expect, it } from "vitest";
import {
  courseOf,
  createEngine,
  createGameSessionHandler,
  GameTable,
  gameOf,
  ManualTickClock,
  originOf,
  type PendingRun,
  snapshotOf,
  TickScheduler,
} from "../src/index.js";
import { fakeMusic, fakeScore, flush, handlerContext, input, principal } from "./fakes.js";
import { deadlyWorld, easyWorld } from "./fixtures.js";

// With tracing on, the call context of StartGame carries its server span's traceparent: the game
// keeps it, and its own calls (PlayMusic, RecordRun) are made in that trace, wherever it is played.
const TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
const alice = principal("alice");

describe("a game's trace context", () => {
  it("is the traceparent of the StartGame call that created it, none without one", async () => {
    const games = new GameTable();
    const engine = createEngine({ games });
    const call = { component: "engine" as const, verb: "StartGame", principal: alice };
    await runInCall({ ...call, traceparent: TRACEPARENT }, () => engine.startGame(create(StartGameRequestSchema, { gameId: "traced", world: easyWorld() }), handlerContext("startGame", "alice")));
    await runInCall(call, () => engine.startGame(create(StartGameRequestSchema, { gameId: "untraced", world: easyWorld() }), handlerContext("startGame", "alice")));
    expect(games.get("traced")!.traceparent).toBe(TRACEPARENT);
    expect(games.get("untraced")!.traceparent).toBeUndefined();
  });

  it("is the context of the game's PlayMusic and RecordRun calls", async () => {
    const games = new GameTable();
    const clock = new ManualTickClock(10_000);
    const music = fakeMusic();
    const score = fakeScore();
    const handler = createGameSessionHandler({ games, scheduler: new TickScheduler({ clock }), music: music.client, score: score.client, recordRetryDelaysMs: [0] });
    games.create({ id: "g1", owner: alice, course: courseOf(deadlyWorld()), traceparent: TRACEPARENT });
    const session = new MemoryStreamSession({ gameId: "g1", principal: alice });
    handler(session);
    input(session, 1);
    await flush();
    for (let i = 0; i < 200 && !session.isClosed; i++) {
      clock.advance(33);
      await flush();
    }
    expect(session.messages(GameStreamMessageSchema).some((m) => m.kind.case === "summary")).toBe(true);
    expect(score.calls).toHaveLength(1);
    expect(score.calls[0]!.call).toMatchObject({ component: "engine", gameId: "g1", traceparent: TRACEPARENT });
    expect(music.calls.length).toBeGreaterThan(0);
    for (const c of music.calls) expect(c.call?.traceparent).toBe(TRACEPARENT);
  });

  it("goes with a run the score component could not take into the outbox, so its later RecordRun joins the trace", async () => {
    const games = new GameTable();
    const clock = new ManualTickClock(10_000);
    const kept: PendingRun[] = [];
    const score = fakeScore(() => Promise.reject(new ConnectError("down", Code.Unavailable)));
    const handler = createGameSessionHandler({
      games,
      scheduler: new TickScheduler({ clock }),
      music: fakeMusic().client,
      score: score.client,
      recordRetryDelaysMs: [0],
      outbox: { add: (run) => void kept.push(run) },
    });
    games.create({ id: "g1", owner: alice, course: courseOf(deadlyWorld()), traceparent: TRACEPARENT });
    const session = new MemoryStreamSession({ gameId: "g1", principal: alice });
    handler(session);
    input(session, 1);
    await flush();
    // RecordRun's retry waits on a real timer: tick until the session closes, within 5 s.
    const deadline = Date.now() + 5_000;
    while (!session.isClosed && Date.now() < deadline) {
      clock.advance(33);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    expect(session.isClosed).toBe(true);
    expect(kept).toHaveLength(1);
    expect(kept[0]).toMatchObject({ gameId: "g1", player: "alice", traceparent: TRACEPARENT });
  });

  it("moves with the game: to a shard (detach, adopt) and through the snapshot store (GameOrigin)", () => {
    const games = new GameTable();
    const game = games.create({ id: "g1", owner: alice, course: courseOf(easyWorld()), traceparent: TRACEPARENT });
    const detached = games.detach("g1")!;
    // What a shard gets is structured-cloned across the process boundary.
    const onShard = new GameTable().adopt(structuredClone(detached));
    expect(onShard.traceparent).toBe(TRACEPARENT);

    const stored = { origin: originOf(game), snapshot: snapshotOf(game, "engine-1", 10_000) };
    expect(stored.origin.traceparent).toBe(TRACEPARENT);
    expect(new GameTable().adopt(gameOf(stored, 10_000)).traceparent).toBe(TRACEPARENT);

    const untraced = new GameTable().create({ id: "g2", owner: alice, course: courseOf(easyWorld()) });
    const plain = { origin: originOf(untraced), snapshot: snapshotOf(untraced, "engine-1", 10_000) };
    expect(plain.origin.traceparent).toBe("");
    expect(gameOf(plain, 10_000).traceparent).toBeUndefined();
  });
});
