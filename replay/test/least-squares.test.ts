import { describe, expect, it } from "vitest";
import { nonNegativeLeastSquares } from "../src/whatif/least-squares.js";

describe("least squares with every coefficient ≥ 0", () => {
  it("recovers exact coefficients of three terms", () => {
    const x1 = [1, 1, 1, 1];
    const x2 = [1, 2, 3, 5];
    const x3 = [4, 1, 7, 2];
    const y = x1.map((_, i) => 0.5 * x1[i]! + 2 * x2[i]! + 3 * x3[i]!);
    const c = nonNegativeLeastSquares([x1, x2, x3], y);
    expect(c[0]).toBeCloseTo(0.5, 9);
    expect(c[1]).toBeCloseTo(2, 9);
    expect(c[2]).toBeCloseTo(3, 9);
  });

  it("holds a term at 0 where the free fit would make it negative, and fits the rest without it", () => {
    // y = 3 x − 1: the free line has intercept −1; with both ≥ 0 the best is through the origin.
    const ones = [1, 1, 1];
    const x = [1, 2, 3];
    const y = [2, 5, 8];
    const [a, b] = nonNegativeLeastSquares([ones, x], y);
    expect(a).toBe(0);
    expect(b).toBeCloseTo((2 + 10 + 24) / 14, 9);
  });

  it("gives 0 to a term no row moves, and all 0 for data no non-negative term explains", () => {
    expect(nonNegativeLeastSquares([[0, 0, 0], [1, 2, 3]], [2, 4, 6])).toEqual([0, expect.closeTo(2, 9)]);
    expect(nonNegativeLeastSquares([[1, 2, 3]], [-1, -2, -3])).toEqual([0]);
  });

  it("splits dependent columns one way, without NaN", () => {
    const c = nonNegativeLeastSquares([[1, 2, 3], [2, 4, 6]], [2, 4, 6]);
    expect(c.every(Number.isFinite)).toBe(true);
    expect(c[0]! + 2 * c[1]!).toBeCloseTo(2, 9);
  });
});
