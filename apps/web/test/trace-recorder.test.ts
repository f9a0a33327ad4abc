import { describe, expect, it } from "vitest";
import { FLAPLAB_TRACE_FORMAT, parseTrace, replayFlapTicks } from "@flaplab/input-traces";
import { TraceRecorder } from "../src/trace-recorder.js";

describe("TraceRecorder", () => {
  it("writes a flaplab-trace/1 document that parseTrace accepts, with reflected ticks", () => {
    const rec = new TraceRecorder(6977347407732442987n);
    rec.start(5000.25); // seq 1, t = 0
    rec.reflected(1, 1);
    rec.input(2, 6354.75);
    rec.reflected(1, 41);
    rec.reflected(2, 42);
    rec.input(3, 6726.125);
    rec.input(4, 6730.5); // same tick as 3
    rec.reflected(4, 53);
    rec.input(5, 7000); // sent as the game ended: never reflected
    const json = rec.toJson(new Date("2026-11-21T10:20:00Z"));

    const doc = JSON.parse(json) as Record<string, unknown>;
    expect(doc["format"]).toBe(FLAPLAB_TRACE_FORMAT);
    expect(doc["seed"]).toBe("6977347407732442987");

    const trace = parseTrace(json);
    expect(trace.format).toBe("flaplab-json");
    expect(trace.seed).toBe(6977347407732442987n);
    expect(trace.viewport).toEqual({ width: 480, height: 640 });
    expect(trace.bird).toEqual({ width: 34, height: 24 });
    expect(trace.flapOffsetsMs).toEqual([1354.5, 1725.875, 1730.25]);
    expect(trace.recordedTicks).toEqual([42, 53, 53]);
    expect(trace.dropLastInput).toBe(false);
    expect(trace.recordedAt).toBe("2026-11-21T10:20:00.000Z");
    expect(replayFlapTicks(trace)).toEqual([42, 53, 53]);
  });

  it("a game without flaps is a valid trace with no inputs", () => {
    const rec = new TraceRecorder(-5n);
    rec.start(10);
    rec.reflected(1, 1);
    const trace = parseTrace(rec.toJson());
    expect(trace.seed).toBe(-5n);
    expect(trace.flapOffsetsMs).toEqual([]);
  });

  it("ignores inputs before the start input", () => {
    const rec = new TraceRecorder(1n);
    rec.input(2, 5);
    expect(rec.inputCount).toBe(0);
  });
});
