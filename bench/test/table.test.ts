import { describe, expect, it } from "vitest";
import { count, ratio, sig } from "../src/table.js";

describe("number formatting", () => {
  it("keeps 3 significant digits, whole numbers with separators from 1000, and a dash for missing values", () => {
    expect(sig(0.11734)).toBe("0.117");
    expect(sig(22.149)).toBe("22.1");
    expect(sig(313.4)).toBe("313");
    expect(sig(1293.4)).toBe("1,293");
    expect(sig(0)).toBe("0");
    expect(sig(null)).toBe("–");
    expect(sig(Number.NaN)).toBe("–");
    expect(ratio(45, 15)).toBe("3.00×");
    expect(ratio(1, 0)).toBe("–");
    expect(count(12345.6)).toBe("12,346");
  });
});
