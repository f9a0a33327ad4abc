import { Code, ConnectError } from "@connectrpc/connect";
import { type Frame, GameStreamMessageSchema, type GameSummary, type InputAck } from "@flaplab/contracts/engine/v1/stream_pb";
import { Sound } from "@flaplab/contracts/music/v1/music_pb";
import type { World } from "@flaplab/contracts/worldgen/v1/worldgen_pb";
import { CloseCode, type ClientView, FrameDecoder } from "@flaplab/game-protocol";
import { MemoryStreamSession } from "@flaplab/game-protocol/testing";
import { FLAP_VELOCITY, GRAVITY, applyInputInPlace, createGame, tickInPlace, viewOf } from "@flaplab/physics";
import { describe, expect, it } from "vitest";
import {
  GameTable,
  type GameSessionDeps,
  ManualTickClock,
  TickScheduler,
  courseOf,
  createGameSessionHandler,
  LATENESS_RANGE_US,
  LATENESS_SAMPLE_EVERY,
  type PendingRun,
} from "../src/index.js";
import { fakeMusic, fakeScore, flush, input, memoryLogger, principal } from "./fakes.js";
import { EASY_FLAP_TICKS, EASY_SEED, deadlyWorld, easyWorld, openWorld } from "./fixtures.js";

const alice = principal("alice");
const bob = principal("bob");

interface Setup {
  games: GameTable;
  clock: ManualTickClock;
  scheduler: TickScheduler;
  music: ReturnType<typeof fakeMusic>;
  score: ReturnType<typeof fakeScore>;
  logger: ReturnType<typeof memoryLogger>;
  handler: ReturnType<typeof createGameSessionHandler>;
  /** Creates game `id` owned by alice (as StartGame does). */
  addGame(id: string, world?: World): void;
  /** Opens a session for `id` as `who`. */
  connect(id: string, who?: typeof alice): MemoryStreamSession;
}

function setup(
  overrides: Omit<Partial<GameSessionDeps>, "music" | "score"> & { music?: ReturnType<typeof fakeMusic>; score?: ReturnType<typeof fakeScore> } = {},
): Setup {
  const games = new GameTable();
  const clock = new ManualTickClock(10_000);
  const scheduler = new TickScheduler({ clock });
  const music = overrides.music ?? fakeMusic();
  const score = overrides.score ?? fakeScore();
  const logger = memoryLogger();
  const handler = createGameSessionHandler({
    games,
    scheduler,
    logger,
    recordRetryDelaysMs: [0, 0, 0],
    ...overrides,
    music: music.client,
    score: score.client,
  });
  return {
    games,
    clock,
    scheduler,
    music,
    score,
    logger,
    handler,
    addGame(id, world = openWorld()) {
      games.create({
        id,
        owner: { username: alice.username, token: alice.token, expiresAt: alice.expiresAt },
        course: courseOf(world),
        seed: world.seed,
      });
    },
    connect(id, who = alice) {
      const session = new MemoryStreamSession({ gameId: id, principal: who });
      handler(session);
      return session;
    },
  };
}

/** The tick frames sent. */
function frames(session: MemoryStreamSession): Frame[] {
  return session.messages(GameStreamMessageSchema).flatMap((m) => (m.kind.case === "frame" ? [m.kind.value] : []));
}

/** The input acks sent. */
function acks(session: MemoryStreamSession): InputAck[] {
  return session.messages(GameStreamMessageSchema).flatMap((m) => (m.kind.case === "ack" ? [m.kind.value] : []));
}

/** [tick, is an ack, seq] of every tick frame (its reflected_seq) and input ack, in order. */
function sequence(session: MemoryStreamSession): [number, boolean, number | undefined][] {
  return session.messages(GameStreamMessageSchema).flatMap((m): [number, boolean, number | undefined][] =>
    m.kind.case === "frame" ? [[m.kind.value.tick, false, m.kind.value.reflectedSeq]] : m.kind.case === "ack" ? [[m.kind.value.tick, true, m.kind.value.seq]] : [],
  );
}

/** The client's view after every tick frame and input ack, in order. */
function views(session: MemoryStreamSession): ClientView[] {
  const decoder = new FrameDecoder();
  return session
    .messages(GameStreamMessageSchema)
    .flatMap((m) => (m.kind.case === "frame" ? [decoder.apply(m.kind.value)] : m.kind.case === "ack" ? [decoder.applyAck(m.kind.value)] : []));
}

function summaryOf(session: MemoryStreamSession): GameSummary | undefined {
  const last = session.messages(GameStreamMessageSchema).at(-1);
  return last?.kind.case === "summary" ? last.kind.value : undefined;
}

/** Sends the start input and lets the handler read it. */
async function start(session: MemoryStreamSession): Promise<void> {
  input(session, 1);
  await flush();
}

/** The tick period with the handler's async work (reads, RecordRun) given time to run. */
async function tick(s: Setup, n = 1): Promise<void> {
  for (let i = 0; i < n; i++) {
    s.clock.advance(33);
    await flush();
  }
}

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

  it("does not wait for PlayMusic, and logs its failures", async () => {
    const music = fakeMusic((req) =>
      req.inputSeq === 2 ? new Promise<void>(() => {}) : Promise.reject(new ConnectError("no music stream for game g1", Code.NotFound)),
    );
    const s = setup({ music });
    s.addGame("g1");
    const session = s.connect("g1");
    await start(session);
    input(session, 2); // hangs forever
    input(session, 3); // fails
    await flush();
    await tick(s, 10);
    expect(frames(session)).toHaveLength(10);
    expect(s.logger.lines).toContainEqual(
      expect.objectContaining({ level: "warn", msg: "PlayMusic failed", obj: expect.objectContaining({ sound: "FLAP" }) }),
    );
  });

  it("closes a flood of inputs 4420, lets a steady fast player through, and keeps other games going", async () => {
    const s = setup({ maxInputBurst: 5 });
    s.addGame("flood");
    s.addGame("steady");
    const flood = s.connect("flood");
    const steady = s.connect("steady");
    await start(flood);
    await start(steady);
    await tick(s);
    // One input per tick, for 40 ticks: never more than a tick gives back.
    for (let i = 0; i < 40; i++) {
      input(steady, i + 2);
      await tick(s);
    }
    expect(steady.isClosed).toBe(false);
    expect(acks(steady)).toHaveLength(40);
    // The start input used one credit; a tick gave it back; five more go through, the sixth closes.
    for (let seq = 2; seq <= 8; seq++) input(flood, seq);
    await flush();
    expect(flood.end).toMatchObject({ code: CloseCode.TooManyInputs, reason: "too many inputs: more than 5 at once or one per tick" });
    expect(acks(flood)).toHaveLength(5);
    expect(s.games.has("flood")).toBe(false);
    await tick(s);
    expect(frames(steady).at(-1)?.tick).toBe(42);
  });

  it("closes a slow client 4429 without holding up another game", async () => {
    const s = setup({ maxBufferedBytes: 1000 });
    s.addGame("slow");
    s.addGame("fast");
    const slow = s.connect("slow");
    const fast = s.connect("fast");
    await start(slow);
    await start(fast);
    await tick(s, 3);
    slow.bufferedBytes = 5000;
    await tick(s, 30);
    expect(slow.end).toMatchObject({ code: CloseCode.TooSlow, reason: "client too slow" });
    expect(frames(slow)).toHaveLength(3);
    expect(s.games.has("slow")).toBe(false);
    expect(frames(fast).map((f) => f.tick)).toEqual(Array.from({ length: 33 }, (_, i) => i + 1));
    expect(fast.isClosed).toBe(false);
    expect(s.scheduler.size).toBe(1);
  });

  it("abandons a game whose client leaves: off the loop, out of the table, not recorded", async () => {
    const s = setup();
    s.addGame("g1");
    const session = s.connect("g1");
    await start(session);
    await tick(s, 5);
    session.leave();
    await flush();
    expect(s.scheduler.size).toBe(0);
    expect(s.games.has("g1")).toBe(false);
    await tick(s, 5);
    expect(frames(session)).toHaveLength(5);
    expect(s.score.calls).toHaveLength(0);
    expect(s.logger.lines).toContainEqual(
      expect.objectContaining({ level: "info", msg: "game abandoned: its stream ended before game over" }),
    );
  });

  it("retries RecordRun on Unavailable, then sends the summary", async () => {
    const delays: number[] = [];
    const score = fakeScore((_req, attempt) =>
      attempt < 3 ? Promise.reject(new ConnectError("score down", Code.Unavailable)) : Promise.resolve(),
    );
    const s = setup({
      score,
      recordRetryDelaysMs: [10, 20, 30],
      sleep: (ms) => {
        delays.push(ms);
        return Promise.resolve();
      },
    });
    s.addGame("g1", deadlyWorld());
    const session = s.connect("g1");
    await start(session);
    while (!session.isClosed) await tick(s);
    expect(score.calls).toHaveLength(3);
    expect(delays).toEqual([10, 20]);
    expect(score.calls.every((c) => c.call?.principal?.token === alice.token)).toBe(true);
    expect(summaryOf(session)).toMatchObject({ recorded: true, recordError: "" });
    expect(session.end?.code).toBe(CloseCode.Normal);
  });

  it("reports a run the score component refused, and gives up after the retries", async () => {
    for (const [code, calls, error] of [
      [Code.PermissionDenied, 1, "[permission_denied] nope"],
      [Code.Unavailable, 4, "[unavailable] nope"],
    ] as const) {
      const score = fakeScore(() => Promise.reject(new ConnectError("nope", code)));
      const s = setup({ score });
      s.addGame("g1", deadlyWorld());
      const session = s.connect("g1");
      await start(session);
      while (!session.isClosed) await tick(s);
      expect(score.calls).toHaveLength(calls);
      const summary = summaryOf(session);
      expect(summary?.recorded).toBe(false);
      expect(summary?.recordError).toBe(error);
      expect(session.end).toMatchObject({ code: CloseCode.Normal, reason: "game over" });
    }
  });

  it("keeps a run the score component could not take in the outbox, and says it is pending; a refused run is not kept", async () => {
    for (const [code, pending] of [
      [Code.Unavailable, true],
      [Code.DeadlineExceeded, true],
      [Code.PermissionDenied, false],
    ] as const) {
      const kept: PendingRun[] = [];
      const score = fakeScore(() => Promise.reject(new ConnectError("nope", code)));
      const s = setup({ score, outbox: { add: (run) => void kept.push(run) } });
      s.addGame("g1", deadlyWorld());
      const session = s.connect("g1");
      await start(session);
      while (!session.isClosed) await tick(s);
      const summary = summaryOf(session)!;
      expect({ recorded: summary.recorded, recordPending: summary.recordPending }).toEqual({ recorded: false, recordPending: pending });
      expect(kept).toEqual(pending ? [{ gameId: "g1", score: summary.score, ticks: summary.ticks, seed: deadlyWorld().seed.toString(), player: "alice" }] : []);
    }
  });

  it("says a run is lost when even the outbox cannot keep it", async () => {
    const score = fakeScore(() => Promise.reject(new ConnectError("down", Code.Unavailable)));
    const s = setup({
      score,
      outbox: {
        add: () => {
          throw new Error("disk full");
        },
      },
    });
    s.addGame("g1", deadlyWorld());
    const session = s.connect("g1");
    await start(session);
    while (!session.isClosed) await tick(s);
    expect(summaryOf(session)).toMatchObject({ recorded: false, recordPending: false, recordError: "[unavailable] down" });
    expect(s.logger.lines).toContainEqual(expect.objectContaining({ level: "error", msg: "run could not be kept in the outbox: lost" }));
  });

  it("counts an AlreadyExists after a lost attempt as recorded", async () => {
    const score = fakeScore((_req, attempt) =>
      Promise.reject(new ConnectError("x", attempt === 1 ? Code.Unavailable : Code.AlreadyExists)),
    );
    const s = setup({ score });
    s.addGame("g1", deadlyWorld());
    const session = s.connect("g1");
    await start(session);
    while (!session.isClosed) await tick(s);
    expect(summaryOf(session)?.recorded).toBe(true);
  });

  it("takes the summary's p50 lateness from the first tick and every 8th after it, and its max from every tick", async () => {
    const s = setup();
    s.addGame("g1", deadlyWorld());
    const session = s.connect("g1");
    await start(session);
    const t0 = s.clock.now();
    // Ticks 1, 9 and 17 (the sampled ones) 3 ms late, tick 5 7 ms late, the others on time.
    for (let k = 1; k <= 20; k++) {
      const late = (k - 1) % LATENESS_SAMPLE_EVERY === 0 ? 3 : k === 5 ? 7 : 0;
      s.clock.jump(t0 + 33 * k + late - s.clock.now());
      s.clock.runDue();
      await flush();
    }
    while (!session.isClosed) await tick(s);
    const summary = summaryOf(session) as GameSummary;
    // p50 at the histogram's 2 significant digits; the max exact.
    expect(summary.tickLatenessP50Us).toBeGreaterThanOrEqual(3000);
    expect(summary.tickLatenessP50Us).toBeLessThan(3030);
    expect(summary.tickLatenessMaxUs).toBe(7000);
    expect(summary.ticksSkipped).toBe(0);
  });

  it("counts sampled ticks later than LATENESS_RANGE_US as that in the p50, and keeps the exact max", async () => {
    const s = setup();
    s.addGame("g1", deadlyWorld());
    const session = s.connect("g1");
    await start(session);
    // Every wake-up 1.5 s after the one before: each tick runs 1.47–1.5 s late.
    for (let round = 0; round < 20; round++) {
      s.clock.jump(1500);
      s.clock.runDue();
      await flush();
    }
    while (!session.isClosed) await tick(s);
    const summary = summaryOf(session) as GameSummary;
    expect(summary.tickLatenessP50Us).toBeGreaterThanOrEqual(LATENESS_RANGE_US);
    expect(summary.tickLatenessP50Us).toBeLessThan(LATENESS_RANGE_US * 1.01);
    expect(summary.tickLatenessMaxUs).toBeGreaterThan(1_460_000);
    expect(summary.tickLatenessMaxUs).toBeLessThanOrEqual(1_500_000);
    expect(summary.ticksSkipped).toBeGreaterThan(0);
  });

  it("records tick lateness without allocating, however late the ticks run", async () => {
    // 200 games on one deadline; their sampled ticks run later and later (1, 3.1, 9.1, 30 ms), each
    // later than any before it. A histogram that grows on demand allocates a larger counts array
    // (an array buffer off the JS heap) for every game at each of those ticks: 13.5 KiB per game
    // over the four.
    const games = new GameTable({ maxGames: 500, maxGamesPerPlayer: 500 });
    const clock = new ManualTickClock(10_000);
    const scheduler = new TickScheduler({ clock });
    const handler = createGameSessionHandler({ games, scheduler, logger: memoryLogger(), music: fakeMusic().client, score: fakeScore().client });
    const sessions: MemoryStreamSession[] = [];
    for (let i = 0; i < 200; i++) {
      const id = `g${i}`;
      games.create({ id, owner: { username: alice.username, token: alice.token }, course: courseOf(openWorld()) });
      const session = new MemoryStreamSession({ gameId: id, principal: alice, keepSent: false });
      handler(session);
      input(session, 1);
      sessions.push(session);
    }
    await flush();
    const t0 = clock.now();
    const round = (k: number, lateMs: number) => {
      clock.jump(t0 + 33 * k + lateMs - clock.now());
      clock.runDue();
    };
    for (let k = 1; k <= 160; k++) round(k, 0);
    const buffersBefore = process.memoryUsage().arrayBuffers;
    const lateness = [1, 3.1, 9.1, 30];
    for (let k = 161; k <= 192; k++) round(k, (k - 1) % LATENESS_SAMPLE_EVERY === 0 ? (lateness[(k - 161) / LATENESS_SAMPLE_EVERY] as number) : 0);
    const buffersAfter = process.memoryUsage().arrayBuffers;
    expect(games.get("g0")?.state.tick).toBe(192);
    // Array-buffer bytes per game over its 32 measured ticks.
    expect((buffersAfter - buffersBefore) / 200).toBeLessThan(256);
    for (const session of sessions) expect(session.isClosed).toBe(false);
    scheduler.stop();
  });

  it("records tick lateness and skipped ticks in the summary", async () => {
    const s = setup();
    s.addGame("g1", deadlyWorld());
    const session = s.connect("g1");
    await start(session);
    s.clock.jump(33 + 5); // tick 1 5 ms late
    s.clock.runDue();
    await flush();
    s.clock.jump(33 * 3); // now at 137 ms: deadline 66 late by 71 → 99 skipped, 132 runs 5 ms late
    s.clock.runDue();
    await flush();
    while (!session.isClosed) await tick(s);
    const summary = summaryOf(session) as GameSummary;
    expect(summary.ticksSkipped).toBe(1);
    expect(summary.tickLatenessMaxUs).toBe(71_000);
    expect(summary.tickLatenessP50Us).toBe(0);
    expect(summary.framesSent).toBe(summary.ticks);
  });

  it("with real timers, sends 30 frames 33 ms apart on average", async () => {
    const games = new GameTable();
    games.create({ id: "rt", owner: { username: "alice", token: alice.token }, course: courseOf(openWorld()) });
    const handler = createGameSessionHandler({
      games,
      scheduler: new TickScheduler(),
      music: fakeMusic().client,
      score: fakeScore().client,
    });
    const session = new MemoryStreamSession({ gameId: "rt", principal: alice });
    handler(session);
    input(session, 1);
    while (session.sent.length < 30) await new Promise((r) => setTimeout(r, 5));
    session.leave();
    const at = session.sentAt;
    const period = (at[29]! - at[0]!) / 29;
    expect(period).toBeGreaterThan(32);
    expect(period).toBeLessThan(34);
    expect(frames(session).slice(0, 30).map((f) => f.tick)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
  });
});
