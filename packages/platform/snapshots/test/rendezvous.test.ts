import { describe, expect, it } from "vitest";
import { rendezvousRank } from "../src/index.js";

const engines = ["engine-1", "engine-2", "engine-3"];
const ids = Array.from({ length: 3000 }, (_, i) => `game-${i}`);

describe("rendezvousRank", () => {
  it("ranks every candidate once, the same way every time", () => {
    const rank = rendezvousRank("game-1", engines);
    expect([...rank].sort()).toEqual(engines);
    expect(rendezvousRank("game-1", [...engines].reverse())).toEqual(rank);
  });

  it("spreads keys about evenly over the candidates", () => {
    const counts = new Map<string, number>();
    for (const id of ids) {
      const first = rendezvousRank(id, engines)[0]!;
      counts.set(first, (counts.get(first) ?? 0) + 1);
    }
    for (const e of engines) expect(counts.get(e)).toBeGreaterThan(850);
  });

  it("moves only the keys of a removed candidate, each to its second choice", () => {
    for (const id of ids.slice(0, 500)) {
      const all = rendezvousRank(id, engines);
      const without = rendezvousRank(id, engines.filter((e) => e !== "engine-2"));
      expect(without).toEqual(all.filter((e) => e !== "engine-2"));
    }
  });
});
