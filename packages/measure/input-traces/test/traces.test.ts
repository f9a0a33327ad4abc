import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  type Trace,
  TraceError,
  detectFormat,
  flapTicks,
  parseFlapLabTrace,
  parseFlappyGoCsv,
  parseInt64,
  parseTrace,
  replayFlapOffsetsMs,
  replayFlapTicks,
  seedFromFileName,
  serializeFlapLabTrace,
  serializeFlappyGoCsv,
  serializeTrace,
} from "../src/index.js";

const EASY_PATH = fileURLToPath(new URL("../../../../test-data/flappygo/traces/6977347407732442987.csv", import.meta.url));
const EASY_TICKS = [42, 53, 67, 85, 103, 128, 140, 204, 232, 266, 275, 292, 322, 349];

/** The TraceError a parse throws (fails the test when it does not throw one). */
function traceError(fn: () => unknown): TraceError {
  try {
    fn();
  } catch (err) {
    if (err instanceof TraceError) return err;
    throw err;
  }
  throw new Error("expected a TraceError");
}

describe("the easy FlappyGo trace (test-data/flappygo/traces)", () => {
  const text = readFileSync(EASY_PATH, "utf8");

  it("parses with the seed from its file name", () => {
    const t = parseTrace(text, { fileName: EASY_PATH });
    expect(t.format).toBe("flappygo-csv");
    expect(t.seed).toBe(6977347407732442987n);
    expect(t.fudgeS).toBe(0.011);
    expect(t.dropLastInput).toBe(true);
    expect(t.flapOffsetsMs).toHaveLength(15); // 16 presses: the start press and 15 flaps
    expect(t.startMs).toBe(13075867);
    expect(t.flapOffsetsMs.at(-1)).toBe(12511); // 12.511 s
  });

  it("replays FlappyGo's 14 flap ticks (the last press is never sent)", () => {
    const t = parseTrace(text, { fileName: "6977347407732442987.csv" });
    expect(replayFlapTicks(t)).toEqual(EASY_TICKS);
    expect(replayFlapOffsetsMs(t)).toEqual(t.flapOffsetsMs.slice(0, -1));
    // Every recorded flap, the last one included, would add tick 380.
    expect(flapTicks(t.flapOffsetsMs)).toEqual([...EASY_TICKS, 380]);
  });

  it("re-serializes to the same CSV, and to JSON with the same replay", () => {
    const t = parseTrace(text, { fileName: "6977347407732442987.csv" });
    expect(serializeFlappyGoCsv(t)).toBe(text);
    const json = serializeFlapLabTrace(t);
    const back = parseTrace(json);
    expect(back.format).toBe("flaplab-json");
    expect(back.seed).toBe(t.seed);
    expect(back.flapOffsetsMs).toEqual(t.flapOffsetsMs);
    expect(replayFlapTicks(back)).toEqual(EASY_TICKS);
  });
});

describe("flapTicks", () => {
  it("is floor(offset / tick) + 1", () => {
    expect(flapTicks([0, 32, 32.999, 33, 65, 66, 1354])).toEqual([1, 1, 1, 2, 2, 3, 42]);
    expect(flapTicks([100], 50)).toEqual([3]);
    expect(() => flapTicks([-1])).toThrow(RangeError);
    expect(() => flapTicks([1], 0)).toThrow(RangeError);
  });
});

describe("seeds", () => {
  it("reads int64 seeds from file names", () => {
    expect(seedFromFileName("/a/b/8525333463046388971.csv")).toBe(8525333463046388971n);
    expect(seedFromFileName("C:\\traces\\-5.csv")).toBe(-5n);
    expect(seedFromFileName("9223372036854775807.csv")).toBe(2n ** 63n - 1n);
    expect(seedFromFileName("9223372036854775808.csv")).toBeUndefined();
    expect(seedFromFileName("easy.csv")).toBeUndefined();
    expect(seedFromFileName("12.txt")).toBeUndefined();
  });

  it("parses int64 strictly", () => {
    expect(parseInt64("-9223372036854775808")).toBe(-(2n ** 63n));
    expect(parseInt64("-9223372036854775809")).toBeUndefined();
    expect(parseInt64("007")).toBeUndefined();
    expect(parseInt64("1e3")).toBeUndefined();
    expect(parseInt64("")).toBeUndefined();
  });
});

describe("FlappyGo CSV", () => {
  it("accepts a header without fudge, CRLF, a BOM and blank lines", () => {
    const t = parseFlappyGoCsv("\uFEFFcode,time\r\n57,1000\r\n\r\n57,1033.5\r\n57,1033.5\r\n");
    expect(t.fudgeS).toBeUndefined();
    expect(t.seed).toBeUndefined();
    expect(t.startMs).toBe(1000);
    expect(t.flapOffsetsMs).toEqual([33.5, 33.5]);
  });

  it("a trace with only the start press has no flaps", () => {
    const t = parseFlappyGoCsv("code,time,0.011\n57,5\n");
    expect(t.flapOffsetsMs).toEqual([]);
    expect(replayFlapTicks(t)).toEqual([]);
  });

  it.each([
    ["", /empty trace file/, undefined],
    ["  \n\n", /empty trace file/, undefined],
    ["time,code\n57,1\n", /header must be/, 1],
    ["code,time,0.011,x\n57,1\n", /header must be/, 1],
    ["code,time,abc\n57,1\n", /fudge/, 1],
    ["code,time\n", /no key presses/, undefined],
    ["code,time\n57,1\n58,2\n", /key code must be 57/, 3],
    ["code,time\n57,1\nx,2\n", /key code must be an integer/, 3],
    ["code,time\n57,1\n57,abc\n", /time must be a non-negative number/, 3],
    ["code,time\n57,1\n57,-4\n", /time must be a non-negative number/, 3],
    ["code,time\n57,10\n\n57,9\n", /must not decrease: 9 after 10/, 4],
    ["code,time\n57,1,2\n", /expected "code,time"/, 2],
    ["code,time\n57\n", /expected "code,time"/, 2],
  ])("rejects %j", (text, message, line) => {
    const err = traceError(() => parseTrace(text, { fileName: "x.csv" }));
    expect(err.message).toMatch(message);
    expect(err.line).toBe(line);
    expect(err.fileName).toBe("x.csv");
    expect(err.message.startsWith(line !== undefined ? `x.csv: line ${line}: ` : "x.csv: ")).toBe(true);
  });

  it("rejects absurd sizes", () => {
    const rows = (n: number): string => `code,time\n${Array.from({ length: n }, (_, i) => `57,${i}`).join("\n")}\n`;
    expect(traceError(() => parseTrace(rows(11), { limits: { maxInputs: 10 } })).message).toMatch(/more than 10 key presses/);
    expect(parseTrace(rows(10), { limits: { maxInputs: 10 } }).flapOffsetsMs).toHaveLength(9);
    expect(traceError(() => parseTrace(rows(10), { limits: { maxChars: 20 } })).message).toMatch(/too large/);
    expect(traceError(() => parseTrace("code,time\n57,0\n57,100001\n", { limits: { maxDurationMs: 100_000 } })).line).toBe(3);
  });
});

describe("FlapLab JSON", () => {
  const valid = {
    format: "flaplab-trace/1",
    seed: "8525333463046388971",
    viewport: { width: 480, height: 640 },
    inputs: [{ t: 0 }, { t: 40.5 }, { t: 1000 }],
    recordedAt: "2026-11-21T10:20:00.123Z",
    source: "flaplab client",
  };

  it("parses a valid trace; every input is replayed", () => {
    const t = parseTrace(JSON.stringify(valid));
    expect(t).toEqual({
      format: "flaplab-json",
      seed: 8525333463046388971n,
      viewport: { width: 480, height: 640 },
      startMs: 0,
      flapOffsetsMs: [0, 40.5, 1000],
      dropLastInput: false,
      recordedAt: "2026-11-21T10:20:00.123Z",
      source: "flaplab client",
    });
    expect(replayFlapTicks(t)).toEqual([1, 2, 31]);
  });

  it("replays recorded ticks when the trace has them", () => {
    const t = parseTrace(JSON.stringify({ ...valid, inputs: [{ t: 0, tick: 2 }, { t: 40, tick: 3 }] }));
    expect(t.recordedTicks).toEqual([2, 3]);
    expect(replayFlapTicks(t)).toEqual([2, 3]);
    expect(parseTrace(serializeFlapLabTrace(t))).toEqual(t);
  });

  it("round-trips through serialization", () => {
    const t = parseTrace(JSON.stringify({ ...valid, bird: { width: 30, height: 20 }, dropLastInput: true }));
    const text = serializeTrace(t);
    expect(detectFormat(text)).toBe("flaplab-json");
    expect(parseTrace(text)).toEqual(t);
    expect(text.split("\n").filter((l) => l.includes('"t"'))).toHaveLength(3);
    const empty: Trace = { format: "flaplab-json", seed: 1n, startMs: 0, flapOffsetsMs: [], dropLastInput: false };
    expect(parseTrace(serializeTrace(empty))).toEqual(empty);
  });

  it("a trace whose last input counts keeps it through FlappyGo's CSV", () => {
    const t = parseTrace(JSON.stringify(valid));
    const csv = parseTrace(serializeTrace(t, "flappygo-csv"));
    expect(replayFlapTicks(csv)).toEqual(replayFlapTicks(t));
  });

  it("needs a seed to be written", () => {
    const t = parseFlappyGoCsv("code,time\n57,1\n");
    expect(() => serializeFlapLabTrace(t)).toThrow(TraceError);
  });

  it("reports the line of a syntax error", () => {
    const err = traceError(() => parseFlapLabTrace('{\n  "format": "flaplab-trace/1",\n  "seed": "1",,\n}', { fileName: "t.json" }));
    expect(err.message).toMatch(/invalid JSON/);
    expect(err.line).toBe(3);
  });

  it.each([
    [[], "$", /must be a JSON object/],
    [{ ...valid, format: "flaplab-trace/2" }, "$.format", /format must be "flaplab-trace\/1"/],
    // biome-ignore lint/correctness/noPrecisionLoss: a seed written as a JSON number loses precision, which is why the reader refuses it
    [{ ...valid, seed: 8525333463046388971 }, "$.seed", /string/],
    [{ ...valid, seed: "9223372036854775808" }, "$.seed", /int64/],
    [{ ...valid, seed: undefined }, "$.seed", /seed/],
    [{ ...valid, input: [] }, "$", /unknown field "input"/],
    [{ ...valid, inputs: { t: 1 } }, "$.inputs", /array/],
    [{ ...valid, inputs: [{ t: 1 }, 5] }, "$.inputs[1]", /object/],
    [{ ...valid, inputs: [{ t: -1 }] }, "$.inputs[0].t", /≥ 0/],
    [{ ...valid, inputs: [{ t: "1" }] }, "$.inputs[0].t", /number/],
    [{ ...valid, inputs: [{ t: 5 }, { t: 4 }] }, "$.inputs[1].t", /must not decrease/],
    [{ ...valid, inputs: [{ t: 5, x: 1 }] }, "$.inputs[0]", /unknown field "x"/],
    [{ ...valid, inputs: [{ t: 5, tick: 1 }, { t: 6 }] }, "$.inputs[1]", /every input or for none/],
    [{ ...valid, inputs: [{ t: 5 }, { t: 6, tick: 1 }] }, "$.inputs[1].tick", /every input or for none/],
    [{ ...valid, inputs: [{ t: 5, tick: 0 }] }, "$.inputs[0].tick", /integer ≥ 1/],
    [{ ...valid, inputs: [{ t: 5, tick: 3 }, { t: 6, tick: 2 }] }, "$.inputs[1].tick", /must not decrease/],
    [{ ...valid, viewport: { width: 480 } }, "$.viewport.height", /whole number/],
    [{ ...valid, bird: { width: 1.5, height: 2 } }, "$.bird.width", /whole number/],
    [{ ...valid, dropLastInput: "yes" }, "$.dropLastInput", /boolean/],
    [{ ...valid, recordedAt: "yesterday" }, "$.recordedAt", /ISO 8601/],
    [{ ...valid, recordedAt: "2026-13-45T99:00:00Z" }, "$.recordedAt", /ISO 8601/],
    [{ ...valid, source: "x".repeat(1001) }, "$.source", /at most 1000/],
  ])("rejects %j", (doc, path, message) => {
    const err = traceError(() => parseTrace(JSON.stringify(doc)));
    expect(err.path).toBe(path);
    expect(err.message).toMatch(message);
  });

  it("rejects absurd sizes", () => {
    const doc = { ...valid, inputs: Array.from({ length: 10 }, (_, i) => ({ t: i })) };
    expect(traceError(() => parseTrace(JSON.stringify(doc), { limits: { maxInputs: 10 } })).message).toMatch(/more than 10/);
    expect(parseTrace(JSON.stringify(doc), { limits: { maxInputs: 11 } }).flapOffsetsMs).toHaveLength(10);
    const long = { ...valid, inputs: [{ t: 100_001 }] };
    expect(traceError(() => parseTrace(JSON.stringify(long), { limits: { maxDurationMs: 100_000 } })).path).toBe("$.inputs[0].t");
  });
});
