import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadStageTopology, STAGES, stageTopology } from "../src/index.js";

describe("stages", () => {
  it("maps each stage to its topology file, named like the stage", async () => {
    expect([...STAGES]).toEqual(["monolith", "microservices", "multiaz", "multiregion", "microservices-sharded"]);
    for (const stage of STAGES) {
      const path = stageTopology(stage);
      expect(path).toMatch(new RegExp(`/topologies/${stage}\\.json$`));
      expect(existsSync(path)).toBe(true);
      expect((await loadStageTopology(stage)).name).toBe(stage);
    }
  });

  it("rejects unknown stages, naming the known ones", () => {
    expect(() => stageTopology("production")).toThrow(/unknown stage "production" \(stages: monolith, microservices/);
  });

  it("gives every group of the new topologies its own loopback address and places the browser", async () => {
    for (const stage of ["multiaz", "multiregion"]) {
      const t = await loadStageTopology(stage);
      expect(t.groups).toHaveLength(6);
      const addresses = t.groups.map((g) => g.address);
      expect(new Set(addresses).size).toBe(6);
      for (const a of addresses) expect(a).toMatch(/^127\.0\.0\.1:71\d\d$/);
      expect(t.browser.region).not.toBe("local");
    }
  });
});
