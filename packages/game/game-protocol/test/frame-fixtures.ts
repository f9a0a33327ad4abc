// Shared by the frame tests: FlappyGo's worlds, courses no bird can fail, and a game played
// through the whole stream path (encode, write, frame, decode) against the physics.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { create } from "@bufbuild/protobuf";
import { type Frame, GameStreamMessageSchema, type InputAck } from "@flaplab/contracts/engine/v1/stream_pb";
import { type Course, FLAP_VELOCITY, type GameState, PIPE_WIDTH, applyInputInPlace, createGame, tickInPlace, viewOf } from "@flaplab/physics";
import { expect } from "vitest";
import { type ClientView, DelimitedDecoder, FrameDecoder, FrameEncoder, FrameFactsReader, FrameWriter, encodeDelimited } from "../src/index.js";

export const WORLDS = fileURLToPath(new URL("../../../../test-data/flappygo/worlds/", import.meta.url));
export const EASY_SEED = "6977347407732442987";
export const HARD_SEED = "8525333463046388971";
/** The published easy trace: the ticks its flaps land before. Game over at tick 402, score 7. */
export const EASY_FLAP_TICKS = [42, 53, 67, 85, 103, 128, 140, 204, 232, 266, 275, 292, 322, 349];
/** FlappyGo's frame on the wire, bytes. */
export const FLAPPYGO_FRAME_BYTES = 190;

export function loadWorld(seed: string): Course {
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

export const easyWorld = loadWorld(EASY_SEED);
export const hardWorld = loadWorld(HARD_SEED);

/** A course no bird can fail: gaps wider than anything reachable. */
export function openCourse(pipes: number, pipeSpacing = 191): Course {
  return {
    pipeSpacing,
    viewport: { width: 480, height: 640 },
    pipes: Array.from({ length: pipes }, (_, i) => ({ gapStart: -1e9 - i, gapHeight: 2e9 + i / 3 })),
  };
}

export function encoderFor(state: GameState): FrameEncoder {
  return new FrameEncoder({
    pipeSpacing: state.course.pipeSpacing,
    pipes: state.course.pipes,
    pipeWidth: PIPE_WIDTH,
    pipesInView: state.pipesInView,
  });
}

/** What the client must show for `state`: the physics view, in the client's terms. */
export function expectedView(state: GameState, reflectedSeq: number): ClientView {
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

export interface Played {
  readonly ticks: number;
  readonly score: number;
  readonly state: GameState;
  /** Sizes of the tick frames on the wire. */
  readonly wireBytes: number[];
  /** Sizes of the input-ack frames on the wire. */
  readonly ackBytes: number[];
}

export const wrap = (frame: Frame) =>
  encodeDelimited(GameStreamMessageSchema, create(GameStreamMessageSchema, { kind: { case: "frame", value: frame } }));
export const wrapAck = (ack: InputAck) => encodeDelimited(GameStreamMessageSchema, create(GameStreamMessageSchema, { kind: { case: "ack", value: ack } }));

/**
 * Plays `course` with inputs before `flapTicks`, encodes every tick and every input ack (sent as
 * the engine does, right after the input is applied), sends each frame through the wire format,
 * decodes it and checks the client's view against the physics' view.
 */
export function playThroughStream(course: Course, flapTicks: readonly number[], maxTicks = 100_000): Played {
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

export const average = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
