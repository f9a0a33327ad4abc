import { describe, expect, it } from "vitest";
import { hexToRgb, PALETTE } from "../src/palette.js";

describe("palette", () => {
  it("has the colours the canvas pixel checks look for", () => {
    expect(PALETTE.sky).toBe("#70c5ce");
    expect(PALETTE.pipeBody).toBe("#3a9e41");
    expect(PALETTE.birdBody).toBe("#f7d51d");
    expect(PALETTE.scoreText).toBe("#ffffff");
  });

  it("keeps the main colours distinct from every decoration colour", () => {
    const main = new Set<string>([PALETTE.sky, PALETTE.pipeBody, PALETTE.birdBody, PALETTE.scoreText]);
    const others = Object.entries(PALETTE).filter(([k]) => !["sky", "pipeBody", "birdBody", "scoreText", "birdEyeWhite", "overlayText"].includes(k));
    for (const [, v] of others) expect(main.has(v)).toBe(false);
  });

  it("hexToRgb", () => {
    expect(hexToRgb(PALETTE.pipeBody)).toEqual([0x3a, 0x9e, 0x41]);
    expect(() => hexToRgb("green")).toThrow();
  });
});
