import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { create } from "@bufbuild/protobuf";
import { type Frame, FrameSchema, GameStreamMessageSchema, type InputAck, InputAckSchema } from "@flaplab/contracts/engine/v1/stream_pb";
import {
  type Course,
  FLAP_VELOCITY,
  type GameState,
  PIPE_WIDTH,
  applyInputInPlace,
  createGame,
  tickInPlace,
  viewOf,
} from "@flaplab/physics";
import { describe, expect, it } from "vitest";
import {
  type ClientView,
  DelimitedDecoder,
  FrameDecodeError,
  FrameDecoder,
  FrameEncoder,
  FrameFactsReader,
  type FrameSource,
  FrameWriter,
  encodeDelimited,
} from "../src/index.js";

const WORLDS = fileURLToPath(new URL("../../../test-data/flappygo/worlds/", import.meta.url));
const EASY_SEED = "6977347407732442987";
const HARD_SEED = "8525333463046388971";
/** The published easy trace: the ticks its flaps land before. Game over at tick 402, score 7. */
const EASY_FLAP_TICKS = [42, 53, 67, 85, 103, 128, 140, 204, 232, 266, 275, 292, 322, 349];
/** FlappyGo's frame on the wire, bytes. */
const FLAPPYGO_FRAME_BYTES = 190;

function loadWorld(seed: string): Course {
  const path = `${WORLDS}${seed}.json`;
  const go = JSON.parse(readFileSync(path, "utf8")) as {
    PipeSpacing: number;
    PipeSpecs: { GapStart: number; GapHeight: number }[];
  };
  return {
    pipeSpacing: go.PipeSpacing,
    pipes: go.PipeSpecs.map((p) => ({ gapStart: p.GapStart, gapHeight: p.GapHeight })),
    viewport: { width: 480, height: 640 },
  };
}

const easyWorld = loadWorld(EASY_SEED);
const hardWorld = loadWorld(HARD_SEED);

/** A course no bird can fail: gaps wider than anything reachable. */
function openCourse(pipes: number, pipeSpacing = 191): Course {
  return {
    pipeSpacing,
    viewport: { width: 480, height: 640 },
    pipes: Array.from({ length: pipes }, (_, i) => ({ gapStart: -1e9 - i, gapHeight: 2e9 + i / 3 })),
  };
}

function encoderFor(state: GameState): FrameEncoder {
  return new FrameEncoder({
    pipeSpacing: state.course.pipeSpacing,
    pipes: state.course.pipes,
    pipeWidth: PIPE_WIDTH,
    pipesInView: state.pipesInView,
  });
}

/** What the client must show for `state`: the physics view, in the client's terms. */
function expectedView(state: GameState, reflectedSeq: number): ClientView {
  const v = viewOf(state);
  return {
    tick: v.tick,
    birdY: v.birdY,
    score: v.score,
    reflectedSeq,
    pipes: v.pipes,
    pipeWidth: v.pipeWidth,
    gameOver: v.gameOver,
    courseEnd: v.courseEnd,
    ack: false,
  };
}

interface Played {
  readonly ticks: number;
  readonly score: number;
  readonly state: GameState;
  /** Sizes of the tick frames on the wire. */
  readonly wireBytes: number[];
  /** Sizes of the input-ack frames on the wire. */
  readonly ackBytes: number[];
}

const wrap = (frame: Frame) =>
  encodeDelimited(GameStreamMessageSchema, create(GameStreamMessageSchema, { kind: { case: "frame", value: frame } }));
const wrapAck = (ack: InputAck) => encodeDelimited(GameStreamMessageSchema, create(GameStreamMessageSchema, { kind: { case: "ack", value: ack } }));

/**
 * Plays `course` with inputs before `flapTicks`, encodes every tick and every input ack (sent as
 * the engine does, right after the input is applied), sends each frame through the wire format,
 * decodes it and checks the client's view against the physics' view.
 */
function playThroughStream(course: Course, flapTicks: readonly number[], maxTicks = 100_000): Played {
  const state = createGame(course);
  const encoder = encoderFor(state);
  // The engine's allocation-free path, checked byte for byte against the library's encoding.
  const twin = encoderFor(state);
  const writer = new FrameWriter(0);
  const wire = new DelimitedDecoder(GameStreamMessageSchema);
  const decoder = new FrameDecoder();
  const flaps = new Set(flapTicks);
  const wireBytes: number[] = [];
  const ackBytes: number[] = [];
  let seq = 1;
  let last: ClientView | undefined;
  // The counting client's reader, from the same bytes: the view's tick, score, seq and flags.
  const facts = new FrameFactsReader();
  const bodies = new DelimitedDecoder(GameStreamMessageSchema);
  const receive = (bytes: Uint8Array): ClientView => {
    const [msg] = wire.push(bytes);
    let isFrame: boolean | undefined;
    bodies.eachBody(bytes, (buffer, start, end) => (isFrame = facts.read(buffer, start, end)));
    expect(isFrame).toBe(msg?.kind.case === "frame");
    if (msg?.kind.case === "ack") {
      facts.acked(msg.kind.value.seq);
      return decoder.applyAck(msg.kind.value);
    }
    if (msg?.kind.case !== "frame") throw new Error("expected a frame or an ack on the wire");
    const view = decoder.apply(msg.kind.value);
    const { tick, score, reflectedSeq, gameOver, courseEnd } = view;
    expect(facts.facts).toEqual({ tick, score, reflectedSeq, gameOver, courseEnd, full: msg.kind.value.full });
    return view;
  };
  applyInputInPlace(state); // the start press, seq 1
  while (state.phase === "playing" && state.tick < maxTicks) {
    if (flaps.has(state.tick + 1)) {
      seq += 1;
      applyInputInPlace(state);
      const ack = encoder.ack(state, seq);
      // Before the full frame there is nothing to ack against: the full frame reflects the input.
      expect(ack === undefined).toBe(last === undefined);
      expect(twin.writeAck(state, seq, writer)).toBe(ack ? wrapAck(ack).length : 0);
      if (ack) {
        const bytes = wrapAck(ack);
        expect(writer.copy()).toEqual(bytes);
        ackBytes.push(bytes.length);
        const view = receive(bytes);
        // Nothing moved; only the reflected seq and the new velocity are news.
        expect(view).toEqual({ ...last, reflectedSeq: seq, ack: true, birdVelocity: state.birdVelocity });
        expect(Object.is(view.birdY, state.birdY)).toBe(true);
        expect(view.birdVelocity).toBe(-FLAP_VELOCITY);
      }
    }
    tickInPlace(state);
    const bytes = wrap(encoder.encode(state, seq));
    expect(twin.writeFrame(state, seq, writer)).toBe(bytes.length);
    expect(writer.copy()).toEqual(bytes);
    wireBytes.push(bytes.length);
    const view = receive(bytes);
    const expected = expectedView(state, seq);
    // toEqual alone would accept -0 for 0; compare the numbers bit for bit too.
    expect(view).toEqual(expected);
    expect(Object.is(view.birdY, expected.birdY)).toBe(true);
    view.pipes.forEach((p, i) => {
      expect(Object.is(p.x, expected.pipes[i]?.x)).toBe(true);
    });
    last = view;
  }
  return { ticks: state.tick, score: state.score, state, wireBytes, ackBytes };
}

const average = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

describe("frame delta encoding", () => {
  it("reproduces the physics view on every tick of the easy trace, in far fewer bytes", () => {
    const played = playThroughStream(easyWorld, EASY_FLAP_TICKS);
    expect(played.ticks).toBe(402);
    expect(played.score).toBe(7);
    expect(played.state.died).toBe(true);
    const avg = average(played.wireBytes);
    console.log(
      `easy trace: ${played.wireBytes.length} frames, ${played.wireBytes.reduce((a, b) => a + b, 0)} bytes, ` +
        `${avg.toFixed(2)} B/frame with the size prefix (first ${played.wireBytes[0]} B, max ${Math.max(...played.wireBytes)} B)`,
    );
    expect(avg).toBeLessThan(FLAPPYGO_FRAME_BYTES / 8);
    expect(played.ackBytes).toHaveLength(EASY_FLAP_TICKS.length);
    console.log(`easy trace: ${played.ackBytes.length} input acks, ${average(played.ackBytes).toFixed(2)} B/ack with the size prefix`);
  });

  it("reproduces a no-flap game on the hard seed (4 pipes in view)", () => {
    const played = playThroughStream(hardWorld, []);
    expect(played.ticks).toBe(34);
  });

  it("reproduces a game to the end of the course (speed ramp, every score, the short last frame)", () => {
    const played = playThroughStream(openCourse(30), []);
    expect(played.state.courseEnd).toBe(true);
    expect(played.score).toBe(26); // 30 pipes, 5 in view: the course ends when pipe 30 is needed
    expect(average(played.wireBytes)).toBeLessThan(20);
  });

  it("reproduces a course with fractional spacing and 4 pipes in view", () => {
    const played = playThroughStream(openCourse(12, 228.37), [3, 4, 90, 91, 92]);
    expect(played.state.pipesInView).toBe(4);
    expect(played.state.courseEnd).toBe(true);
    expect(played.ackBytes).toHaveLength(5);
  });

  it("acks no input before the full frame: the full frame reflects it", () => {
    const played = playThroughStream(openCourse(12), [1, 2]);
    expect(played.ackBytes).toHaveLength(1); // only the flap before tick 2
  });

  it("acks an input at the current tick; the next tick frame repeats the seq only if it changed", () => {
    const state = createGame(openCourse(20));
    const encoder = encoderFor(state);
    applyInputInPlace(state);
    tickInPlace(state);
    encoder.encode(state, 1);
    tickInPlace(state);
    const t2 = encoder.encode(state, 1);
    applyInputInPlace(state);
    const ack = encoder.ack(state, 2);
    expect(ack).toEqual(create(InputAckSchema, { tick: 2, seq: 2, birdY: t2.birdY, birdVelocity: -FLAP_VELOCITY }));
    // size prefix 1 + ack tag and length 2 + tick 2 + seq 2 + bird y 9 + velocity 9
    expect(wrapAck(ack as InputAck).length).toBe(25);
    tickInPlace(state);
    expect(encoder.encode(state, 2).reflectedSeq).toBeUndefined();
    // Two presses in one period: two acks; the tick frame after them reflects the last one.
    applyInputInPlace(state);
    expect(encoder.ack(state, 3)?.seq).toBe(3);
    applyInputInPlace(state);
    expect(encoder.ack(state, 4)?.seq).toBe(4);
    tickInPlace(state);
    expect(encoder.encode(state, 4).reflectedSeq).toBeUndefined();
    // An input the engine did not ack (e.g. applied outside the stream) shows on the tick frame.
    tickInPlace(state);
    expect(encoder.encode(state, 5).reflectedSeq).toBe(5);
    // An ack must carry the tick of the last frame.
    tickInPlace(state);
    expect(() => encoder.ack(state, 6)).toThrow("input ack at tick 6 after the frame of tick 5: acks carry the current tick");
    expect(encoder.encode(state, 5).tick).toBe(6);
    expect(encoder.encode({ ...state, tick: 7, phase: "over" }, 5).gameOver).toBe(true);
    expect(() => encoder.ack({ ...state, tick: 7 }, 6)).toThrow("the game-over frame was already encoded");
  });

  it("acks nothing before the full frame", () => {
    const state = createGame(openCourse(20));
    const encoder = encoderFor(state);
    applyInputInPlace(state);
    applyInputInPlace(state);
    expect(encoder.ack(state, 2)).toBeUndefined();
    tickInPlace(state);
    expect(encoder.encode(state, 2)).toMatchObject({ full: true, reflectedSeq: 2 });
  });

  it("sends the full state first, then only what changed", () => {
    const state = createGame(openCourse(20));
    const encoder = encoderFor(state);
    expect(encoder.isFirst).toBe(true);
    const first = encoder.encode(state, 0); // tick 0, Ready: the game as created
    expect(encoder.isFirst).toBe(false);
    expect(first).toMatchObject({
      full: true,
      tick: 0,
      birdY: 200,
      score: 0,
      reflectedSeq: 0,
      pipeSpeed: 2,
      pipeWindowX: -240,
      pipeSpacing: 191,
      pipeWidth: 72,
      gameOver: false,
    });
    expect(first.pipes.map((p) => p.index)).toEqual([0, 1, 2, 3, 4]);
    expect(first.pipes[3]).toMatchObject({ gapStart: -1e9 - 3, gapHeight: 2e9 + 1 });

    applyInputInPlace(state);
    tickInPlace(state);
    const second = encoder.encode(state, 1);
    expect(second.full).toBe(false);
    expect(second.reflectedSeq).toBe(1);
    expect(second.score).toBeUndefined();
    expect(second.pipeSpeed).toBe(2.5); // the ramp: score 0 is a multiple of 5
    expect(second.pipeWindowX).toBeUndefined();
    expect(second.pipeSpacing).toBeUndefined();
    expect(second.pipes).toEqual([]);

    // Ticks 2…6 finish the speed ramp (2 → 5); after that a frame is just tick and bird y.
    const later = [];
    for (let tick = 2; tick <= 12; tick++) {
      tickInPlace(state);
      later.push(encoder.encode(state, 1));
    }
    expect(later.map((f) => f.pipeSpeed)).toEqual([3, 3.5, 4, 4.5, 5, ...Array(6).fill(undefined)]);
    expect(later.every((f) => f.reflectedSeq === undefined && f.score === undefined && f.pipes.length === 0)).toBe(true);
    const steady = later[later.length - 1] as (typeof later)[number];
    expect(steady.tick).toBe(12);
    const bytes = encodeDelimited(GameStreamMessageSchema, create(GameStreamMessageSchema, { kind: { case: "frame", value: steady } }));
    // size prefix 1 + frame field tag and length 2 + tick 2 (tick < 128) + bird y 9
    expect(bytes.length).toBe(14);
  });

  it("refuses to skip or repeat a tick, or to go on after game over", () => {
    const state = createGame(openCourse(20));
    const encoder = encoderFor(state);
    applyInputInPlace(state);
    tickInPlace(state);
    encoder.encode(state, 1);
    expect(() => encoder.encode(state, 1)).toThrow(/tick 1 after tick 1/);
    tickInPlace(state);
    tickInPlace(state);
    expect(() => encoder.encode(state, 1)).toThrow(/tick 3 after tick 1: ticks must be consecutive/);
    const over: FrameSource = { ...state, tick: 2, phase: "over" };
    expect(encoder.encode(over, 1).gameOver).toBe(true);
    expect(() => encoder.encode({ ...over, tick: 3 }, 1)).toThrow(/game-over frame was already encoded/);
  });

  it("writes the library's bytes for every field: a negative score, −0, many pipes, a long body", () => {
    const pipes = Array.from({ length: 100 }, (_, i) => ({ gapStart: i === 0 ? 0 : -0.5 * i, gapHeight: 1e300 / (i + 1) }));
    const course = { pipeSpacing: 0.25, pipes, pipeWidth: 52, pipesInView: 100 };
    const library = new FrameEncoder(course);
    const written = new FrameEncoder(course);
    const writer = new FrameWriter(0);
    const base: FrameSource = {
      tick: 0,
      phase: "playing",
      birdY: -0,
      score: -7,
      pipeSpeed: 0,
      pipeWindowX: -0,
      closestPipe: 0,
      courseEnd: false,
    };
    const states: FrameSource[] = [
      base,
      { ...base, tick: 1, birdY: 0, score: -2147483648, pipeSpeed: -0 },
      { ...base, tick: 2, birdY: 1.5, score: 2147483647, pipeSpeed: -0, closestPipe: 1 },
      { ...base, tick: 3, birdY: 1e-300, score: 0, pipeSpeed: 3, phase: "over", courseEnd: true },
    ];
    let seq = 0;
    for (const state of states) {
      seq += 300;
      const bytes = wrap(library.encode(state, seq));
      expect(written.writeFrame(state, seq, writer)).toBe(bytes.length);
      expect(writer.copy()).toEqual(bytes);
      expect(writer.buffer.subarray(writer.start, writer.end)).toEqual(bytes);
      // The counting client's reader takes every field in stride, a negative score included.
      const reader = new FrameFactsReader();
      expect(reader.read(bytes, 1 + (bytes.length > 128 ? 1 : 0), bytes.length)).toBe(true);
      expect(reader.facts).toMatchObject({ tick: state.tick, score: state.score, reflectedSeq: seq, gameOver: state.phase === "over", courseEnd: state.courseEnd });
    }
    // The full frame of 100 pipes needs a two-byte length prefix and a grown buffer.
    expect(wrap(new FrameEncoder(course).encode(base, 1)).length).toBeGreaterThan(2000);
  });

  it("rejects a pipes-in-view count that is not a positive integer", () => {
    expect(() => new FrameEncoder({ pipeSpacing: 191, pipes: [], pipeWidth: 72, pipesInView: 0 })).toThrow(RangeError);
  });
});

describe("FrameDecoder", () => {
  function fullFrame() {
    const state = createGame(openCourse(20));
    const encoder = encoderFor(state);
    applyInputInPlace(state);
    tickInPlace(state);
    return { state, encoder, frame: encoder.encode(state, 1) };
  }

  it("throws a clear error on a delta frame before any full frame", () => {
    const decoder = new FrameDecoder();
    const delta = create(FrameSchema, { tick: 5, birdY: 1 });
    expect(() => decoder.apply(delta)).toThrow(FrameDecodeError);
    expect(() => decoder.apply(delta)).toThrow("delta frame for tick 5 before any full frame");
  });

  it("throws on a full frame without its fields", () => {
    const decoder = new FrameDecoder();
    expect(() => decoder.apply(create(FrameSchema, { tick: 1, full: true, score: 0, pipeSpeed: 2 }))).toThrow(
      "full frame for tick 1 lacks pipeWindowX, pipeSpacing, pipeWidth",
    );
  });

  it("throws on a missing tick and on a frame after game over", () => {
    const { state, encoder, frame } = fullFrame();
    const decoder = new FrameDecoder();
    decoder.apply(frame);
    tickInPlace(state);
    tickInPlace(state);
    expect(() => decoder.apply(create(FrameSchema, { tick: 3, birdY: state.birdY }))).toThrow(
      "frame for tick 3 after tick 1: frames must be consecutive",
    );
    const last = encoder.encode({ ...state, tick: 2, phase: "over" }, 1);
    expect(decoder.apply(last).gameOver).toBe(true);
    expect(() => decoder.apply(create(FrameSchema, { tick: 3 }))).toThrow("after the game-over frame");
  });

  it("throws when a pipe in view was never sent", () => {
    const { frame } = fullFrame();
    frame.pipes.splice(2, 1);
    expect(() => new FrameDecoder().apply(frame)).toThrow("tick 1: pipe 2 is in view but was never sent");
  });

  it("applies an input ack without advancing the tick", () => {
    const { state, encoder, frame } = fullFrame();
    const decoder = new FrameDecoder();
    const before = decoder.apply(frame);
    applyInputInPlace(state);
    const view = decoder.applyAck(encoder.ack(state, 2) as InputAck);
    expect(view).toEqual({ ...before, reflectedSeq: 2, ack: true, birdVelocity: -FLAP_VELOCITY });
    tickInPlace(state);
    const next = decoder.apply(encoder.encode(state, 2));
    expect(next).toEqual(expectedView(state, 2)); // the seq carried over from the ack
  });

  it("throws on an input ack before any full frame, for another tick, without a seq, or after game over", () => {
    const ack = (init: Omit<Partial<InputAck>, "$typeName">) => create(InputAckSchema, { tick: 1, birdY: 200.25, seq: 2, birdVelocity: -4.6, ...init });
    expect(() => new FrameDecoder().applyAck(ack({}))).toThrow(FrameDecodeError);
    expect(() => new FrameDecoder().applyAck(ack({}))).toThrow("input ack for tick 1 before any full frame");
    const { state, encoder, frame } = fullFrame();
    const decoder = new FrameDecoder();
    decoder.apply(frame);
    expect(() => decoder.applyAck(ack({ tick: 2 }))).toThrow("input ack for tick 2 during tick 1: an ack carries the current tick");
    expect(() => decoder.applyAck(ack({ tick: 0 }))).toThrow(FrameDecodeError);
    expect(() => decoder.applyAck(ack({ seq: 0 }))).toThrow("input ack for tick 1 lacks its input's seq");
    // None of these changed the decoder: the next tick still applies.
    tickInPlace(state);
    expect(decoder.apply(encoder.encode(state, 1))).toEqual(expectedView(state, 1));
    const last = encoder.encode({ ...state, tick: 3, phase: "over" }, 1);
    decoder.apply(last);
    expect(() => decoder.applyAck(ack({ tick: 3 }))).toThrow("input ack for tick 3 after the game-over frame");
  });

  it("starts over on a new full frame", () => {
    const a = fullFrame();
    const decoder = new FrameDecoder();
    decoder.apply(a.frame);
    const b = fullFrame();
    const view = decoder.apply(b.frame);
    expect(view.tick).toBe(1);
    expect(view).toEqual(expectedView(b.state, 1));
  });
});
