import type { Client } from "@connectrpc/connect";
import type { EngineService } from "@flaplab/contracts/engine/v1/engine_pb";
import { type EngineBeat, rendezvousRank } from "@flaplab/snapshots";
import { describe, expect, it } from "vitest";
import { type EngineTarget, rendezvousPlacement } from "../src/index.js";

// Placement only ranks targets; their clients are never called here.
const noClient = {} as Client<typeof EngineService>;
const targets: EngineTarget[] = ["engine-1", "engine-2", "engine-3"].map((name) => ({
  name,
  client: noClient,
  engineUrl: `https://${name}/game`,
  engineWsUrl: `ws://${name}/game`,
}));
const beat = (engine: string, extra: Partial<EngineBeat> = {}): EngineBeat => ({ engine, games: 0, maxGames: 100, draining: false, ...extra });
const names = (list: readonly EngineTarget[]) => list.map((t) => t.name);

describe("rendezvousPlacement", () => {
  it("ranks the live engines by rendezvous hashing of the game id", async () => {
    const place = rendezvousPlacement({ engines: targets, liveEngines: async () => targets.map((t) => beat(t.name)) });
    for (const id of ["a", "b", "c", "d"]) expect(names(await place(id, "start"))).toEqual(rendezvousRank(id, ["engine-1", "engine-2", "engine-3"]));
  });

  it("skips engines that are draining, full, unknown or without a heartbeat", async () => {
    const place = rendezvousPlacement({
      engines: targets,
      liveEngines: async () => [beat("engine-1", { draining: true }), beat("engine-2", { games: 100 }), beat("engine-3"), beat("engine-9")],
    });
    for (const id of ["a", "b", "c"]) expect(names(await place(id, "start"))).toEqual(["engine-3"]);
  });

  it("sends a resumed game back to the engine that holds it while that engine is up, and ranks the others after it", async () => {
    const beats = [beat("engine-1"), beat("engine-2", { draining: true }), beat("engine-3")];
    const holderOf = async (id: string) => (id === "held-by-2" ? "engine-2" : id === "held-by-dead" ? "engine-9" : "engine-3");
    const place = rendezvousPlacement({ engines: targets, liveEngines: async () => beats, holderOf });
    // Draining engine-2 still holds its game until it hands it over: the game goes back to it.
    expect(names(await place("held-by-2", "resume"))).toEqual(["engine-2", ...rendezvousRank("held-by-2", ["engine-1", "engine-3"])]);
    expect(names(await place("x", "resume"))[0]).toBe("engine-3");
    // A holder without a heartbeat (dead) is not tried first; a new game ignores holders.
    expect(names(await place("held-by-dead", "resume"))).toEqual(rendezvousRank("held-by-dead", ["engine-1", "engine-3"]));
    expect(names(await place("x", "start"))).toEqual(rendezvousRank("x", ["engine-1", "engine-3"]));
  });

  it("ranks every engine when none says it is up, or the heartbeats cannot be read", async () => {
    const errors: string[] = [];
    const none = rendezvousPlacement({ engines: targets, liveEngines: async () => [] });
    expect(names(await none("a", "start")).sort()).toEqual(["engine-1", "engine-2", "engine-3"]);
    const broken = rendezvousPlacement({
      engines: targets,
      liveEngines: async () => {
        throw new Error("store down");
      },
      onError: (err) => errors.push(err.message),
    });
    expect(names(await broken("a", "start"))).toEqual(rendezvousRank("a", ["engine-1", "engine-2", "engine-3"]));
    expect(errors).toEqual(["store down"]);
  });
});
