import { describe, expect, it } from "vitest";
import { groupOfComponent } from "../src/whatif/layout.js";
import { enumerateLayouts } from "../src/whatif/placements.js";

const count = (it: Iterable<unknown>) => {
  let n = 0;
  for (const _ of it) n++;
  return n;
};
/** Ways to put six components on six different places out of n. */
const distinct = (n: number) => n * (n - 1) * (n - 2) * (n - 3) * (n - 4) * (n - 5);

describe("placements", () => {
  it("counts every placement: places^6 split, and a merged one wherever two components share a place", () => {
    expect(count(enumerateLayouts({ regions: ["us-east-1", "eu-west-1"], zones: ["a"], processes: "split", engines: 1 }))).toBe(2 ** 6);
    // With two places every assignment puts two components together: each has a merged twin.
    expect(count(enumerateLayouts({ regions: ["us-east-1", "eu-west-1"], zones: ["a"], processes: "both", engines: 1 }))).toBe(2 * 2 ** 6);
    const seven = ["us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-northeast-1", "ap-southeast-1", "sa-east-1"];
    expect(count(enumerateLayouts({ regions: seven, zones: ["a"], processes: "both", engines: 1 }))).toBe(2 * 7 ** 6 - distinct(7));
    expect(count(enumerateLayouts({ regions: ["us-east-1"], zones: ["a", "b", "c"], processes: "merged", engines: 1 }))).toBe(3 ** 6);
  });

  it("keeps several engines in the initiator's region, each alone in its process", () => {
    const options = { regions: ["us-east-1", "eu-west-1", "ap-northeast-1"], zones: ["a", "b"], processes: "both" as const, engines: 4 };
    let n = 0;
    for (const layout of enumerateLayouts(options)) {
      n++;
      const engine = groupOfComponent(layout, "engine");
      expect(engine.region).toBe(groupOfComponent(layout, "initiator").region);
      expect(engine.components).toEqual(["engine"]);
    }
    // 6 places; the engine: 2 zones of the initiator's region; the other five: anywhere. Merged
    // twins: every assignment but those with the other five on five different places.
    const split = 6 ** 5 * 2;
    const fiveDistinct = 6 * 5 * 4 * 3 * 2 * 2; // the initiator's place times the other four's, times the engine's zone
    expect(n).toBe(split + (split - fiveDistinct));
  });
});
