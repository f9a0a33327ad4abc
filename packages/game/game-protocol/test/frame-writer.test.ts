import { describe, expect, it } from "vitest";
import { FrameEncoder, FrameFactsReader, type FrameSource, FrameWriter } from "../src/index.js";
import { wrap } from "./frame-fixtures.js";

describe("FrameWriter", () => {

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
});
