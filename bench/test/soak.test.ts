import { describe, expect, it } from "vitest";
import { flat } from "../src/soak.js";

// The soak itself, in small, is in soak.slow.test.ts (the full tier).
describe("flat", () => {
  it("holds when every value is within ±10 % of the median, and names the widest deviation", () => {
    expect(flat([100, 105, 95, 109])).toMatchObject({ met: true, median: 100 });
    expect(flat([100, 100, 125])).toMatchObject({ met: false, deviation: 0.25 });
    expect(flat([]).met).toBe(false);
  });
});
