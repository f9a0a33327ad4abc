import * as hdr from "hdr-histogram-js";
import { describe, expect, it } from "vitest";
import { buildIntegerHistogram } from "../src/histogram.js";

/** A small deterministic generator: the same values every run. */
function generator(seed: number) {
  return () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
}

describe("buildIntegerHistogram", () => {
  const shapes = [
    { bitBucketSize: 32, numberOfSignificantValueDigits: 2, lowestDiscernibleValue: 1 },
    { bitBucketSize: 64, numberOfSignificantValueDigits: 3, lowestDiscernibleValue: 1 },
    { bitBucketSize: 64, numberOfSignificantValueDigits: 3, lowestDiscernibleValue: 1000, highestTrackableValue: 2000 },
    { bitBucketSize: 32, numberOfSignificantValueDigits: 5, lowestDiscernibleValue: 7, highestTrackableValue: 14 },
  ] as const;

  for (const shape of shapes) {
    it(`indexes, counts and ranks integers as hdr.build's histogram does (${shape.bitBucketSize}-bit, ${shape.numberOfSignificantValueDigits} digits, lowest ${shape.lowestDiscernibleValue})`, () => {
      const fast = buildIntegerHistogram(shape);
      const reference = hdr.build({ ...shape, autoResize: true, useWebAssembly: false });
      const random = generator(7);
      const values = [0, 1, 2, 127, 128, 255, 256, 1023, 1024, 2 ** 20, 2 ** 31 - 1, 2 ** 31, 2 ** 40 + 3, 2.5, 1e6 + 0.25];
      // Every magnitude from 1 to 2^36, a few values in each.
      for (let bits = 0; bits < 36; bits++) for (let i = 0; i < 20; i++) values.push(Math.floor(random() * 2 ** bits));
      for (const v of values) {
        fast.recordValue(v);
        reference.recordValue(v);
      }
      expect(fast.totalCount).toBe(reference.totalCount);
      expect(fast.maxValue).toBe(reference.maxValue);
      expect(fast.minNonZeroValue).toBe(reference.minNonZeroValue);
      for (const p of [0, 1, 10, 25, 50, 75, 90, 99, 99.9, 100]) {
        expect(fast.getValueAtPercentile(p)).toBe(reference.getValueAtPercentile(p));
      }
      // The same counts array, index by index.
      expect(hdr.encodeIntoCompressedBase64(fast)).toBe(hdr.encodeIntoCompressedBase64(reference));
    });
  }

  it("refuses a negative value as the library does", () => {
    const fast = buildIntegerHistogram({ bitBucketSize: 32, numberOfSignificantValueDigits: 2 });
    expect(() => fast.recordValue(-1)).toThrow(/negative/);
  });
});
