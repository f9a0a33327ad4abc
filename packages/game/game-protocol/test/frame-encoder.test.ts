import { create } from "@bufbuild/protobuf";
import { GameStreamMessageSchema, type InputAck, InputAckSchema } from "@flaplab/contracts/engine/v1/stream_pb";
import { FLAP_VELOCITY, applyInputInPlace, createGame, tickInPlace } from "@flaplab/physics";
import { describe, expect, it } from "vitest";
import { FrameEncoder, type FrameSource, encodeDelimited } from "../src/index.js";
import { encoderFor, openCourse, wrapAck } from "./frame-fixtures.js";

describe("FrameEncoder", () => {

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

  it("rejects a pipes-in-view count that is not a positive integer", () => {
    expect(() => new FrameEncoder({ pipeSpacing: 191, pipes: [], pipeWidth: 72, pipesInView: 0 })).toThrow(RangeError);
  });
});
