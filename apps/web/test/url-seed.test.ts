import { describe, expect, it } from "vitest";
import { seedFromUrl } from "../src/url-seed.js";

describe("seed from the page URL", () => {
  it("reads a Go int64 seed, beyond 2^53", () => {
    expect(seedFromUrl("?seed=6977347407732442987")).toBe(6977347407732442987n);
    expect(seedFromUrl("?x=1&seed=-5")).toBe(-5n);
  });

  it("ignores a missing, malformed or out-of-range seed", () => {
    expect(seedFromUrl("")).toBeUndefined();
    expect(seedFromUrl("?seed=abc")).toBeUndefined();
    expect(seedFromUrl("?seed=9223372036854775808")).toBeUndefined();
  });
});
