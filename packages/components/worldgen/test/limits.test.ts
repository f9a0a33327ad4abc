import { describe, expect, it } from "vitest";
import {
  MAX_PIPES_PER_WORLD,
  MAX_VIEWPORT_SIZE,
  MIN_VIEWPORT_HEIGHT,
  MIN_VIEWPORT_WIDTH,
  PIPES_PER_WORLD,
  WORLD_LIMITS,
  generateWorld,
} from "../src/index.js";

describe("WORLD_LIMITS", () => {
  it("are the generator's and the service's bounds", () => {
    expect(MAX_PIPES_PER_WORLD).toBe(PIPES_PER_WORLD);
    expect(WORLD_LIMITS).toMatchObject({
      maxPipes: 100,
      minViewportWidth: MIN_VIEWPORT_WIDTH,
      minViewportHeight: MIN_VIEWPORT_HEIGHT,
      maxViewportSize: MAX_VIEWPORT_SIZE,
      maxSpacingPerWidth: 0.5,
    });
    expect(Object.isFrozen(WORLD_LIMITS)).toBe(true);
  });

  it("hold for every world generated, from the smallest viewport to the largest", () => {
    const violations: string[] = [];
    let worlds = 0;
    const sizes = [MIN_VIEWPORT_WIDTH, MIN_VIEWPORT_HEIGHT, 20, 64, 480, 640, 1999, 4096, MAX_VIEWPORT_SIZE];
    for (const width of sizes) {
      for (const height of sizes) {
        if (height < MIN_VIEWPORT_HEIGHT) continue;
        for (let s = 1n; s <= 30n; s++) {
          worlds++;
          const world = generateWorld(s * 1_000_003n + BigInt(width * height), { width, height });
          const where = `seed ${world.seed} in ${width}x${height}`;
          if (world.pipes.length > WORLD_LIMITS.maxPipes) violations.push(`${where}: ${world.pipes.length} pipes`);
          if (world.pipeSpacing < 0 || world.pipeSpacing > width * WORLD_LIMITS.maxSpacingPerWidth) {
            violations.push(`${where}: spacing ${world.pipeSpacing}`);
          }
          for (const { gapStart, gapHeight } of world.pipes) {
            if (gapStart < 0 || gapHeight <= 0 || gapStart + gapHeight > height) {
              violations.push(`${where}: gap ${gapStart}+${gapHeight}`);
            }
          }
        }
      }
    }
    expect(worlds).toBeGreaterThan(2000);
    expect(violations).toEqual([]);
  });
});
