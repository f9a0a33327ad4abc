import { GameStreamMessageSchema } from "@flaplab/contracts/engine/v1/stream_pb";
import { Sound } from "@flaplab/contracts/music/v1/music_pb";
import { CloseCode, type ClientView } from "@flaplab/game-protocol";
import type { MemoryStreamSession } from "@flaplab/game-protocol/testing";
import { FLAP_VELOCITY, GRAVITY, applyInputInPlace, createGame, tickInPlace, viewOf } from "@flaplab/physics";
import { describe, expect, it } from "vitest";
import { courseOf } from "../src/index.js";
import { fakeMusic, fakeScore, flush, input } from "./fakes.js";
import { EASY_FLAP_TICKS, EASY_SEED, deadlyWorld, easyWorld } from "./fixtures.js";
import { alice, bob, setup, frames, acks, sequence, views, summaryOf, start, tick } from "./stream-harness.js";

describe("game stream: refusals", () => {
  it("closes 4404 for an unknown game", () => {
    const s = setup();
    const session = s.connect("nope");
    expect(session.end).toEqual({ code: CloseCode.NotFound, reason: "unknown game nope", by: "server" });
  });

  it("closes 4403 for another player's game", () => {
    const s = setup();
    s.addGame("g1");
    const session = s.connect("g1", bob);
    expect(session.end).toMatchObject({ code: CloseCode.PermissionDenied, reason: "game g1 belongs to another player" });
    expect(s.games.has("g1")).toBe(true);
  });

  it("closes 4403 for the ticket of another game, and the owner's stream plays on", async () => {
    const s = setup();
    s.addGame("g1");
    const own = s.connect("g1");
    await start(own);
    // bob holds a valid ticket, for his own game g2, and opens alice's g1 with it.
    const foreign = s.connect("g1", { ...bob, gameId: "g2" });
    expect(foreign.end).toMatchObject({ code: CloseCode.PermissionDenied, reason: "the stream ticket is not for game g1" });
    // alice's own ticket for g1 does not open g2 either.
    s.addGame("g2");
    expect(s.connect("g2", { ...alice, gameId: "g1" }).end?.code).toBe(CloseCode.PermissionDenied);
    const before = frames(own).length;
    await tick(s, 3);
    expect(frames(own).length).toBe(before + 3);
    expect(own.end).toBeUndefined();
  });

  it("closes the second stream of a game 4409 and leaves the first one playing", async () => {
    const s = setup();
    s.addGame("g1");
    const first = s.connect("g1");
    await start(first);
    const second = s.connect("g1");
    expect(second.end).toMatchObject({ code: CloseCode.AlreadyConnected, reason: "game already has a stream" });
    await tick(s, 3);
    expect(first.isClosed).toBe(false);
    expect(frames(first).map((f) => f.tick)).toEqual([1, 2, 3]);
    expect(second.sent).toHaveLength(0);
  });

  it("closes 4400 with the decode error on garbage bytes, and drops the game", async () => {
    const s = setup();
    s.addGame("g1");
    const session = s.connect("g1");
    session.push(new Uint8Array([3, 0xff, 0xff, 0xff]));
    await flush();
    expect(session.end?.code).toBe(CloseCode.Malformed);
    expect(session.end?.reason).toMatch(/^cannot decode flaplab\.engine\.v1\.ClientInput: /);
    await flush();
    expect(s.games.has("g1")).toBe(false);
    expect(s.score.calls).toHaveLength(0);
  });

  it("closes 4413 on a message over the size limit", async () => {
    const s = setup({ maxInputBytes: 64 });
    s.addGame("g1");
    const session = s.connect("g1");
    session.push(new Uint8Array([0xe8, 0x07])); // announces 1000 bytes
    await flush();
    expect(session.end).toMatchObject({ code: CloseCode.TooLarge, reason: "message of 1000 bytes is over the limit of 64" });
  });

  it("closes 4400 when seq does not strictly increase", async () => {
    for (const seqs of [
      [1, 3, 2],
      [1, 2, 2],
      [0],
    ]) {
      const s = setup();
      s.addGame("g1");
      const session = s.connect("g1");
      for (const seq of seqs) input(session, seq);
      await flush();
      const bad = seqs.at(-1);
      const before = seqs.length > 1 ? seqs.at(-2) : 0;
      expect(session.end).toMatchObject({
        code: CloseCode.Malformed,
        reason: `input seq ${bad} is not after ${before}: seq must strictly increase`,
      });
    }
  });

  it("drops a press that crossed the game-over frame (the summary still comes), closes a flood after it, and refuses a new stream for a finished game", async () => {
    let releaseRecord: () => void = () => {};
    const score = fakeScore(() => new Promise<void>((resolve) => (releaseRecord = resolve)));
    const s = setup({ score, maxInputBurst: 3 });
    s.addGame("g1", deadlyWorld());
    const session = s.connect("g1");
    await start(session);
    while (!frames(session).at(-1)?.gameOver) await tick(s);
    expect(session.isClosed).toBe(false); // waiting for RecordRun
    const framesAtOver = frames(session).length;
    input(session, 2);
    await flush();
    expect(session.isClosed).toBe(false);
    releaseRecord();
    await flush();
    // The press changed nothing: no ack, no frame, and the run and its summary as they were.
    expect(frames(session)).toHaveLength(framesAtOver);
    expect(s.score.calls).toHaveLength(1);
    expect(summaryOf(session)).toMatchObject({ recorded: true });
    expect(session.end).toMatchObject({ code: CloseCode.Normal, reason: "game over" });
    const again = s.connect("g1");
    expect(again.end).toMatchObject({ code: CloseCode.GameOver, reason: "game g1 is over" });

    // No tick refills the input credit after game over: a client that keeps pressing is closed.
    s.addGame("g2", deadlyWorld());
    const flood = s.connect("g2");
    await start(flood);
    while (!frames(flood).at(-1)?.gameOver) await tick(s);
    for (let seq = 2; seq < 10; seq++) input(flood, seq);
    await flush();
    expect(flood.end).toMatchObject({ code: CloseCode.TooManyInputs });
  });

});

describe("game stream: play", () => {
  it("plays the easy trace to score 7 at tick 402, frame by frame as the physics", async () => {
    // How many messages the session had sent when each PlayMusic call was made.
    let session: MemoryStreamSession | undefined;
    const sentAtMusic: number[] = [];
    const recordingMusic = fakeMusic(() => {
      sentAtMusic.push(session?.sent.length ?? 0);
      return Promise.resolve();
    });
    const s = setup({ music: recordingMusic });
    const world = easyWorld();
    s.addGame("easy", world);
    session = s.connect("easy");
    const flaps = new Set(EASY_FLAP_TICKS);

    // The same game, straight through the physics, as the reference: each flap's ack view
    // (the previous tick's view with the new seq and velocity), then each tick's view.
    const reference = createGame(courseOf(world));
    applyInputInPlace(reference);
    const expected: ClientView[] = [];
    const pointTicks: number[] = [];
    let seq = 1;
    while (reference.phase === "playing") {
      if (flaps.has(reference.tick + 1)) {
        seq++;
        applyInputInPlace(reference);
        expected.push({ ...(expected.at(-1) as ClientView), reflectedSeq: seq, ack: true, birdVelocity: reference.birdVelocity });
      }
      const events = tickInPlace(reference);
      if (events.scored) pointTicks.push(reference.tick);
      const v = viewOf(reference);
      expected.push({
        tick: v.tick,
        birdY: v.birdY,
        score: v.score,
        reflectedSeq: seq,
        pipes: v.pipes,
        pipeWidth: v.pipeWidth,
        gameOver: v.gameOver,
        courseEnd: v.courseEnd,
        ack: false,
      });
    }

    const startedAt = s.clock.now();
    await start(session);
    seq = 1;
    for (let k = 1; !session.isClosed && k < 1000; k++) {
      if (flaps.has(k)) {
        const before = session.sent.length;
        input(session, ++seq, k * 1000);
        await flush();
        // The ack goes out as soon as the input is applied, for the current tick, before any tick.
        expect(session.sent).toHaveLength(before + 1);
        expect(session.messages(GameStreamMessageSchema).at(-1)?.kind).toMatchObject({
          case: "ack",
          value: { tick: k - 1, seq, birdVelocity: -FLAP_VELOCITY },
        });
        expect(s.clock.now()).toBe(startedAt + 33 * (k - 1));
      }
      await tick(s);
      expect(frames(session).at(-1)?.tick).toBe(k);
      expect(s.clock.now()).toBe(startedAt + 33 * k);
    }
    await flush();

    const got = frames(session);
    expect(got).toHaveLength(402);
    expect(sequence(session)).toHaveLength(402 + 14);
    expect(views(session)).toEqual(expected);
    expect(got[0]?.full).toBe(true);
    expect(got.at(-1)).toMatchObject({ tick: 402, gameOver: true, courseEnd: false });
    const acked = acks(session);
    expect(acked.map((a) => [a.tick, a.seq])).toEqual(EASY_FLAP_TICKS.map((t, i) => [t - 1, i + 2]));
    // The tick frame after an ack does not repeat the seq.
    expect(got.every((f) => f.full || f.reflectedSeq === undefined)).toBe(true);

    // Summary, then the normal close. Frame counts are tick frames only; acks are counted apart.
    const messages = session.messages(GameStreamMessageSchema);
    const sizes = session.sent.map((b, i) => ({ bytes: b.length, msg: messages[i]! }));
    const bytesOf = (ack: boolean) =>
      sizes.filter((x) => x.msg.kind.case === (ack ? "ack" : "frame")).reduce((n, x) => n + x.bytes, 0);
    const frameBytes = bytesOf(false);
    const ackBytes = bytesOf(true);
    expect(summaryOf(session)).toMatchObject({
      score: 7,
      ticks: 402,
      recorded: true,
      recordError: "",
      framesSent: 402,
      frameBytes: BigInt(frameBytes),
      framesUnder1kb: 402,
      tickLatenessP50Us: 0,
      tickLatenessMaxUs: 0,
      ticksSkipped: 0,
      acksSent: 14,
      ackBytes: BigInt(ackBytes),
    });
    expect(session.sent).toHaveLength(402 + 14 + 1);
    expect(session.end).toEqual({ code: CloseCode.Normal, reason: "game over", by: "server" });
    console.log(
      `engine stream, easy trace: ${(frameBytes / 402).toFixed(2)} B/frame over 402 frames, ${(ackBytes / 14).toFixed(2)} B/ack over 14 acks`,
    );

    // RecordRun once, as the owner, from the tick.
    expect(s.score.calls).toHaveLength(1);
    const record = s.score.calls[0]!;
    expect(record.request).toMatchObject({ gameId: "easy", score: 7, ticks: 402, seed: EASY_SEED });
    expect(record.call).toEqual({ component: "engine", verb: "Tick", principal: alice, gameId: "easy" });
    expect(record.options?.timeoutMs).toBe(5000);

    // Music: a FLAP per flap input (its seq and the tick it lands before), a POINT per point, one DIE.
    const music = s.music.calls.map((c) => ({ ...c.request, verb: c.call?.verb, token: c.call?.principal?.token }));
    expect(music.filter((m) => m.sound === Sound.FLAP)).toEqual(
      EASY_FLAP_TICKS.map((t, i) =>
        expect.objectContaining({ gameId: "easy", inputSeq: i + 2, tick: t, verb: "HandleInput", token: alice.token }),
      ),
    );
    expect(pointTicks).toHaveLength(7);
    expect(music.filter((m) => m.sound === Sound.POINT)).toEqual(
      pointTicks.map((t) => expect.objectContaining({ inputSeq: 0, tick: t, verb: "Tick", token: alice.token })),
    );
    expect(music.filter((m) => m.sound === Sound.DIE)).toEqual([
      expect.objectContaining({ inputSeq: 0, tick: 402, verb: "Tick", token: alice.token }),
    ]);
    expect(music).toHaveLength(14 + 7 + 1);
    // Each FLAP call came after its ack had been sent.
    s.music.calls.forEach((c, i) => {
      if (c.request.sound !== Sound.FLAP) return;
      const sent = session!.messages(GameStreamMessageSchema).slice(0, sentAtMusic[i]);
      expect(sent.at(-1)?.kind).toMatchObject({ case: "ack", value: { seq: c.request.inputSeq } });
    });

    // The finished game stays in the table and is off the loop.
    expect(s.games.get("easy")?.state.phase).toBe("over");
    expect(s.scheduler.size).toBe(0);
  });

  it("starts on the first input: no frame before it, tick 1 one period after it", async () => {
    const s = setup();
    s.addGame("g1");
    const session = s.connect("g1");
    await tick(s, 5);
    expect(session.sent).toHaveLength(0);
    s.clock.advance(10); // the start input arrives off the tick grid
    await start(session);
    s.clock.advance(32);
    await flush();
    expect(session.sent).toHaveLength(0);
    s.clock.advance(1);
    await flush();
    const [first] = frames(session);
    expect(first).toMatchObject({ tick: 1, full: true, reflectedSeq: 1, birdY: 200.25 });
  });

  it("ticks a game started by the HandleInput RPC once its stream attaches, continuing its seqs and dropping re-sent ones", async () => {
    const s = setup();
    s.addGame("g1");
    s.games.input("g1", "alice", { seq: 4, clientTimeMs: 0 });
    const session = s.connect("g1");
    await tick(s, 2);
    expect(frames(session).map((f) => [f.tick, f.reflectedSeq])).toEqual([
      [1, 4],
      [2, undefined],
    ]);
    // A seq the game applied before this stream opened is a re-send (after a move): dropped, once.
    input(session, 4);
    input(session, 3);
    await flush();
    expect(session.end).toBeUndefined();
    expect(acks(session)).toEqual([]);
    input(session, 5);
    await flush();
    expect(acks(session).map((a) => a.seq)).toEqual([5]);
    // Going back within the stream still breaks the protocol.
    input(session, 5);
    await flush();
    expect(session.end?.reason).toBe("input seq 5 is not after 5: seq must strictly increase");
  });

  it("applies a flap at once, acks it at the current tick, and moves the bird at the next tick", async () => {
    const s = setup();
    s.addGame("g1");
    const session = s.connect("g1");
    await start(session);
    await tick(s, 2);
    input(session, 7);
    input(session, 9); // two presses in one period: one flap, each acked
    await flush();
    expect(acks(session)).toEqual([
      expect.objectContaining({ tick: 2, seq: 7, birdVelocity: -FLAP_VELOCITY, birdY: frames(session)[1]!.birdY }),
      expect.objectContaining({ tick: 2, seq: 9, birdVelocity: -FLAP_VELOCITY }),
    ]);
    await tick(s, 2);
    expect(sequence(session)).toEqual([
      [1, false, 1],
      [2, false, undefined],
      [2, true, 7],
      [2, true, 9],
      [3, false, undefined], // already acked
      [4, false, undefined],
    ]);
    const seen = views(session);
    expect(seen[4]).toMatchObject({ tick: 3, reflectedSeq: 9, ack: false });
    expect(seen[4]!.birdY).toBe(seen[1]!.birdY - FLAP_VELOCITY + GRAVITY); // going up after the flap
    expect(s.music.calls.map((c) => [c.request.sound, c.request.inputSeq, c.request.tick])).toEqual([
      [Sound.FLAP, 7, 3],
      [Sound.FLAP, 9, 3],
    ]);
  });

  it("does not ack a flap that comes before the first frame: the first frame reflects it", async () => {
    const s = setup();
    s.addGame("g1");
    const session = s.connect("g1");
    await start(session);
    input(session, 2);
    await flush();
    expect(session.sent).toHaveLength(0);
    await tick(s, 2);
    expect(sequence(session)).toEqual([
      [1, false, 2],
      [2, false, undefined],
    ]);
    expect(frames(session)[0]?.full).toBe(true);
    expect(s.music.calls.map((c) => c.request.inputSeq)).toEqual([2]);
  });
});
