import { create } from "@bufbuild/protobuf";
import { currentCall, defineComponent, type CallContext } from "@flaplab/component";
import { MusicService } from "@flaplab/contracts/music/v1/music_pb";
import { WorldGenService, WorldSchema } from "@flaplab/contracts/worldgen/v1/worldgen_pb";
import { afterEach, describe, expect, it } from "vitest";
import { createRuntime, parseTopology, type Runtime } from "../src/index.js";

// What a component declares it calls: a component that calls nobody is served without a call
// context, and the runtime gives a component clients only of what it declares.
const all = ["auth", "worldgen", "engine", "initiator", "music", "score"];
const world = create(WorldSchema, { seed: 1n });

let runtime: Runtime | undefined;
afterEach(() => runtime?.close());

function oneGroup(): Runtime {
  runtime = createRuntime({
    topology: parseTopology({ name: "t", groups: { one: { components: all, address: "127.0.0.1:9000" } } }),
    group: "one",
    verifier: {
      verify: (token) => Promise.resolve({ username: "alice", token, expiresAt: new Date(Date.now() + 60_000), service: "initiator", callee: "worldgen" }),
    },
  });
  return runtime;
}

/** The call context the worldgen handler sees, under a definition that declares `calls`. */
async function contextSeen(calls: readonly ("engine" | "music")[] | undefined): Promise<CallContext | undefined> {
  const rt = oneGroup();
  const worldgen = defineComponent({ name: "worldgen", service: WorldGenService, internalMethods: ["GenerateWorld"], ...(calls ? { calls } : {}) });
  let seen: CallContext | undefined;
  rt.mount(worldgen, {
    generateWorld() {
      seen = currentCall();
      return { world };
    },
  });
  await rt.client(worldgen, "initiator").generateWorld({ gameId: "g-1" }, { headers: { authorization: "Bearer t0k3n" } });
  return seen;
}

describe("declared calls", () => {
  it("serves a component that calls nobody without a call context", async () => {
    expect(await contextSeen([])).toBeUndefined();
  });

  it("serves a component that calls others, or does not say, in its call context", async () => {
    expect(await contextSeen(["music"])).toMatchObject({ component: "worldgen", verb: "GenerateWorld", gameId: "g-1", principal: { username: "alice" } });
    expect(await contextSeen(undefined)).toMatchObject({ component: "worldgen", verb: "GenerateWorld" });
  });

  it("refuses a client of a component the caller does not declare, whether it is mounted before or after", () => {
    const music = defineComponent({ name: "music", service: MusicService, internalMethods: ["PlayMusic"] });
    const leaf = defineComponent({ name: "worldgen", service: WorldGenService, calls: [] });
    const rt = oneGroup();
    rt.mount(leaf, { generateWorld: () => ({ world }) });
    expect(() => rt.client(music, "worldgen")).toThrow("component worldgen is given a client of music, but its definition's calls are []");
    // The other order: the client first, the check when the caller is mounted.
    const later = oneGroup();
    later.client(music, "worldgen");
    expect(() => later.mount(leaf, { generateWorld: () => ({ world }) })).toThrow(/given a client of music/);
    // A declared callee, and callers that are no component, get their clients.
    const caller = defineComponent({ name: "worldgen", service: WorldGenService, calls: ["music"] });
    const ok = oneGroup();
    ok.mount(caller, { generateWorld: () => ({ world }) });
    expect(() => ok.client(music, "worldgen")).not.toThrow();
    expect(() => ok.client(music, "bench")).not.toThrow();
  });

  it("refuses a declaration that names no component", () => {
    expect(() => defineComponent({ name: "worldgen", service: WorldGenService, calls: ["printer" as "music"] })).toThrow(
      "component worldgen: calls printer, which is not a component",
    );
  });
});
