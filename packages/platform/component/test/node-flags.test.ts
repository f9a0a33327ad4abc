import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { COMPONENT_NAMES, ENGINE_NODE_FLAGS, nodeFlagsFor } from "../src/index.js";

/**
 * The largest the young generation's space got in a Node process started with `flags` that keeps
 * allocating objects and holding some of them (what makes V8 grow that space), bytes: both of
 * its semi-spaces, as V8 reports it.
 */
function largestYoungSpace(flags: readonly string[]): number {
  const program = `
    const v8 = require("node:v8");
    const kept = [];
    let largest = 0;
    for (let round = 0; round < 400; round++) {
      for (let i = 0; i < 20000; i++) {
        const o = { round, i, text: "x" + i };
        if (i % 4 === 0) kept.push(o);
      }
      if (kept.length > 200000) kept.length = 0;
      const young = v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space");
      largest = Math.max(largest, young.space_size);
    }
    process.stdout.write(String(largest));
  `;
  return Number(execFileSync(process.execPath, [...flags, "-e", program], { encoding: "utf8", env: { ...process.env, NODE_OPTIONS: "" } }));
}

describe("nodeFlagsFor", () => {
  it("gives the engine's flags to a process hosting the engine, alone or with others, and none to the rest", () => {
    expect(nodeFlagsFor(["engine"])).toEqual(ENGINE_NODE_FLAGS);
    expect(nodeFlagsFor([...COMPONENT_NAMES])).toEqual(ENGINE_NODE_FLAGS);
    expect(nodeFlagsFor(COMPONENT_NAMES.filter((c) => c !== "engine"))).toEqual([]);
  });

  it("caps each half of the young generation at 2 MiB, where V8's default lets it grow past that", () => {
    // V8 reports the young generation's space as both of its semi-spaces.
    const MiB = 1024 * 1024;
    expect(largestYoungSpace(ENGINE_NODE_FLAGS)).toBeLessThanOrEqual(2 * 2 * MiB);
    expect(largestYoungSpace([])).toBeGreaterThan(2 * 2 * MiB);
  }, 60_000);
});
