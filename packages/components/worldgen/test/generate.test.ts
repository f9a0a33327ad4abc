import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PIPES_PER_WORLD, generateWorld, randomSeed } from "../src/index.js";

// FlappyGo's browser viewport.
const VIEWPORT = { width: 480, height: 640 };

// FlappyGo's own worlds (test-data/flappygo/README.md).
const WORLDS = path.resolve(import.meta.dirname, "../../../../test-data/flappygo/worlds");

interface GoWorld {
  PipeSpacing: number;
  PipeSpecs: { GapStart: number; GapHeight: number }[];
}

describe("worlds recorded from Go (test-data/flappygo/worlds)", () => {
  const files = readdirSync(WORLDS).filter((f) => f.endsWith(".json"));

  it("has the two recorded worlds", () => {
    expect(files.length).toBe(2);
  });

  for (const file of files) {
    const seed = BigInt(path.basename(file, ".json"));
    it(`seed ${seed}`, () => {
      const go = JSON.parse(readFileSync(path.join(WORLDS, file), "utf8")) as GoWorld;
      const world = generateWorld(seed, VIEWPORT);
      expect(world.pipeSpacing).toBe(go.PipeSpacing);
      expect(world.pipes).toEqual(go.PipeSpecs.map((p) => ({ gapStart: p.GapStart, gapHeight: p.GapHeight })));
    });
  }
});

describe("FlappyGo's published worlds", () => {
  const table = [
    {
      seed: 6977347407732442987n,
      spacing: 191,
      first10: [[274, 291], [176, 186], [86, 186], [256, 299], [223, 306], [214, 174], [100, 261], [209, 121], [109, 149], [272, 295]],
      last: [192, 200],
      checksum: 25466154,
    },
    {
      seed: 8525333463046388971n,
      spacing: 228,
      first10: [[177, 118], [162, 232], [244, 295], [302, 228], [193, 133], [229, 297], [284, 256], [275, 265], [430, 174], [366, 197]],
      last: [342, 242],
      checksum: 28766848,
    },
  ];
  for (const row of table) {
    it(`seed ${row.seed}`, () => {
      const world = generateWorld(row.seed, VIEWPORT);
      expect(world.seed).toBe(row.seed);
      expect(world.viewport).toEqual(VIEWPORT);
      expect(world.pipeSpacing).toBe(row.spacing);
      expect(world.pipes).toHaveLength(100);
      expect(world.pipes.slice(0, 10).map((p) => [p.gapStart, p.gapHeight])).toEqual(row.first10);
      const p99 = world.pipes[99]!;
      expect([p99.gapStart, p99.gapHeight]).toEqual(row.last);
      expect(world.pipes.reduce((s, p) => s + 1000 * p.gapStart + p.gapHeight, 0)).toBe(row.checksum);
    });
  }
});

describe("generateWorld", () => {
  it("is a pure function of seed and viewport", () => {
    expect(generateWorld(12345n, VIEWPORT)).toEqual(generateWorld(12345n, VIEWPORT));
    expect(generateWorld(12345n, VIEWPORT)).not.toEqual(generateWorld(12346n, VIEWPORT));
    expect(generateWorld(12345n, VIEWPORT).pipes).not.toEqual(generateWorld(12345n, { width: 480, height: 700 }).pipes);
  });

  it("keeps every gap inside the viewport, as integers (FlappyGo ranges for 480x640)", () => {
    const bad: string[] = [];
    for (let s = 0n; s < 200n; s++) {
      const world = generateWorld(s * 7919n - 500n, VIEWPORT);
      expect(world.pipes).toHaveLength(PIPES_PER_WORLD);
      if (world.pipeSpacing < 120 || world.pipeSpacing > 239) bad.push(`seed ${world.seed}: spacing ${world.pipeSpacing}`);
      world.pipes.forEach((p, i) => {
        const ok =
          Number.isInteger(p.gapStart) &&
          Number.isInteger(p.gapHeight) &&
          p.gapStart >= 71 &&
          p.gapHeight > 0 &&
          p.gapStart + p.gapHeight < 640;
        if (!ok) bad.push(`seed ${world.seed} pipe ${i}: ${p.gapStart},${p.gapHeight}`);
      });
    }
    expect(bad).toEqual([]);
  });

  it("generates for every seed once height >= 19 and width >= 4", () => {
    for (let h = 19; h <= 60; h++) {
      for (let s = 1n; s <= 30n; s++) {
        expect(() => generateWorld(s, { width: 4, height: h })).not.toThrow();
      }
    }
  });

  it("throws a RangeError where Go would panic or the input is not int32", () => {
    expect(() => generateWorld(1n, { width: 3, height: 640 })).toThrow(/too small/);
    expect(() => generateWorld(1n, { width: 480, height: 2 })).toThrow(RangeError);
    expect(() => generateWorld(1n, { width: 480.5, height: 640 })).toThrow(RangeError);
    expect(() => generateWorld(1n << 63n, VIEWPORT)).toThrow(RangeError);
  });
});

describe("randomSeed", () => {
  it("draws distinct positive int64 values", () => {
    const seeds = Array.from({ length: 100 }, () => randomSeed());
    for (const s of seeds) expect(s > 0n && s < 1n << 63n).toBe(true);
    expect(new Set(seeds).size).toBe(100);
  });
});
