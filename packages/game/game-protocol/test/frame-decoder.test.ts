import { create } from "@bufbuild/protobuf";
import { FrameSchema, type InputAck, InputAckSchema } from "@flaplab/contracts/engine/v1/stream_pb";
import { FLAP_VELOCITY, applyInputInPlace, createGame, tickInPlace } from "@flaplab/physics";
import { describe, expect, it } from "vitest";
import { FrameDecodeError, FrameDecoder } from "../src/index.js";
import { encoderFor, expectedView, openCourse } from "./frame-fixtures.js";

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
