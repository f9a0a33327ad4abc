import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { findGroup, groupOf, groupsOf, loadTopology, networkFor, parseTopology, TopologyError } from "../src/index.js";
import { topologySchemaText } from "../src/topology.js";

const repoTopologies = resolve(import.meta.dirname, "../../../../topologies");
const all = ["auth", "worldgen", "engine", "initiator", "music", "score"];

function minimal(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name: "t", groups: { one: { components: all, address: "127.0.0.1:9000" } }, ...extra };
}

describe("topology files", () => {
  it("loads the monolith by name: one group, direct calls", async () => {
    const t = await loadTopology("monolith", repoTopologies);
    expect(t.groups).toHaveLength(1);
    expect(t.groups[0]!.components).toHaveLength(6);
    expect(t.groups[0]!.inProcess).toBe("direct");
  });

  it("loads microservices: six groups on distinct loopback ports", async () => {
    const t = await loadTopology(join(repoTopologies, "microservices.json"));
    expect(t.groups.map((g) => g.components.length)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(new Set(t.groups.map((g) => g.address)).size).toBe(6);
    expect(groupOf(t, "engine")?.name).toBe("engine");
    expect(networkFor(t, "initiator", "worldgen")).toEqual({ protocol: "connect", format: "binary", httpVersion: "1.1" });
  });

  it("loads microservices-sharded: three engine groups, the first is the engine's default group", async () => {
    const t = await loadTopology("microservices-sharded", repoTopologies);
    expect(groupsOf(t, "engine").map((g) => g.name)).toEqual(["engine-1", "engine-2", "engine-3"]);
    expect(groupOf(t, "engine")?.name).toBe("engine-1");
    expect(groupsOf(t, "music").map((g) => g.name)).toEqual(["music"]);
  });

  it("fills defaults: zone, region, public URL, network", () => {
    const t = parseTopology(minimal());
    expect(t.groups[0]).toMatchObject({ region: "local", zone: "a", publicUrl: "http://127.0.0.1:9000", inProcess: "direct" });
    expect(t.network.protocol).toBe("connect");
  });

  it("applies per-edge network overrides", () => {
    const t = parseTopology(minimal({ edges: { "engine->music": { protocol: "grpc", httpVersion: "2" } } }));
    expect(networkFor(t, "engine", "music")).toEqual({ protocol: "grpc", format: "binary", httpVersion: "2" });
    expect(networkFor(t, "engine", "score").protocol).toBe("connect");
  });

  it.each([
    [{ groups: { one: { components: all } } }, /address/],
    [{ groups: { one: { components: [...all, "auth"], address: "h:1" } } }, /two groups/],
    [{ groups: { one: { components: all, address: "h:1" }, two: { components: ["music"], address: "h:2" } } }, /only engine may run in several/],
    [{ groups: { one: { components: all, address: "h:1" }, two: { components: ["engine", "music"], address: "h:2" } } }, /a second engine must run alone/],
    [{ groups: { one: { components: ["auth", "nope"], address: "h:1" } } }, /unknown component "nope"/],
    [{ groups: { one: { components: ["auth"], address: "h:1" } } }, /"worldgen" is not placed/],
    [{ groups: { one: { components: all, address: "no-port" } } }, /host:port/],
    [{ groups: { one: { components: all, address: "h:1" } }, network: { protocol: "grpc", httpVersion: "1.1" } }, /gRPC needs httpVersion "2"/],
    [{ groups: { one: { components: all, address: "h:1" } }, network: { protocl: "grpc" } }, /unknown key "protocl"/],
    [{ groups: { one: { components: all, address: "h:1" } }, edges: { "a->b": {} } }, /caller->callee/],
    [{ groups: { one: { components: all, address: "h:1" } }, inProcess: "teleport" }, /"direct" or "serialized"/],
    [{ groups: { One: { components: all, address: "h:1" } } }, /group name "One" must match/],
    [{ groups: { one: { components: all, address: "h:1", region: "" } } }, /group "one": "region" must be a non-empty string/],
    [{ groups: { one: { components: all, address: "h:1", callUrl: "nope" } } }, /group "one": callUrl "nope" is not a URL/],
    [{ groups: { one: { components: all, address: "h:1" } }, edges: { "engine->music": { zz: 1 } } }, /edge "engine->music": unknown key "zz"/],
    [{ groups: { one: { components: all, address: "h:1" } }, edges: { "engine->music": { protocol: "grpc", httpVersion: "2", format: "json" } } }, /edge "engine->music": gRPC is binary only/],
    [{ groups: { one: { components: all, address: "h:1" } }, web: { address: "nowhere" } }, /"web": address "nowhere" must be host:port/],
    [{ groups: [] }, /"groups" must be an object/],
  ])("rejects a bad topology with a clear message (%#)", (extra, message) => {
    expect(() => parseTopology({ name: "bad", ...extra }, "bad.json")).toThrow(message);
    expect(() => parseTopology({ name: "bad", ...extra }, "bad.json")).toThrow(TopologyError);
  });

  it("names the file in errors, and reports a missing file and broken JSON", async () => {
    const dir = await mkdtemp(join(tmpdir(), "flaplab-topo-"));
    await writeFile(join(dir, "broken.json"), "{ not json");
    await expect(loadTopology(join(dir, "broken.json"))).rejects.toThrow(/broken\.json is not valid JSON/);
    await expect(loadTopology("nowhere", dir)).rejects.toThrow(/no topology file at .*nowhere\.json/);
  });

  it("finds groups by name and lists the known ones otherwise", () => {
    const t = parseTopology(minimal());
    expect(findGroup(t, "one").address).toBe("127.0.0.1:9000");
    expect(() => findGroup(t, "two")).toThrow(/no group "two" \(groups: one\)/);
  });
});

describe("stream addresses", () => {
  it("default to the group's port + 1000 and an https URL", () => {
    const t = parseTopology(minimal());
    expect(t.groups[0]).toMatchObject({ streamAddress: "127.0.0.1:10000", streamPublicUrl: "https://127.0.0.1:10000" });
  });

  it("can be set, and may not collide with another group's address", () => {
    const t = parseTopology(minimal({ groups: { one: { components: all, address: "127.0.0.1:9000", streamAddress: "127.0.0.1:4433" } } }));
    expect(t.groups[0]!.streamAddress).toBe("127.0.0.1:4433");
    expect(() =>
      parseTopology({
        name: "clash",
        groups: {
          a: { components: ["auth"], address: "h:1", streamAddress: "h:2" },
          b: { components: all.slice(1), address: "h:2" },
        },
      }),
    ).toThrow(/address h:2 is used by another group/);
  });
});

describe("call URLs", () => {
  it("default to http://address and may name an https endpoint for calls from other regions", () => {
    expect(parseTopology(minimal()).groups[0]!.callUrl).toBe("http://127.0.0.1:9000");
    const t = parseTopology(minimal({ groups: { one: { components: all, address: "h:1", callUrl: "https://one.example.net/" } } }));
    expect(t.groups[0]!.callUrl).toBe("https://one.example.net");
    expect(() => parseTopology(minimal({ groups: { one: { components: all, address: "h:1", callUrl: "ftp://x" } } }))).toThrow(/http or https/);
  });
});

describe("topology JSON Schema", () => {
  it("topologies/topology.schema.json is the one generated from the schema (pnpm --filter @flaplab/runtime topology-schema)", async () => {
    expect(await readFile(join(repoTopologies, "topology.schema.json"), "utf8")).toBe(topologySchemaText());
  });

  it("is referenced by every topology file, and requires what the parser requires", async () => {
    for (const name of ["monolith", "microservices", "multiaz", "multiregion"]) {
      const json = JSON.parse(await readFile(join(repoTopologies, `${name}.json`), "utf8")) as Record<string, unknown>;
      expect(json["$schema"]).toBe("./topology.schema.json");
      expect((await loadTopology(name, repoTopologies)).name).toBe(name);
    }
    const schema = JSON.parse(topologySchemaText()) as {
      required: string[];
      properties: { groups: { additionalProperties: { required: string[] } } };
    };
    expect(schema.required).toEqual(["name", "groups"]);
    expect(schema.properties.groups.additionalProperties.required).toEqual(["components", "address"]);
  });
});

describe("a component in several groups", () => {
  it("is called in the group a client names, the first group by default, and never in a group that does not run it", async () => {
    const { createRuntime } = await import("../src/index.js");
    const t = await loadTopology("microservices-sharded", repoTopologies);
    const runtime = createRuntime({ topology: t, group: "initiator", verifier: { verify: () => Promise.reject(new Error("unused")) } });
    expect(runtime.plan("engine", "initiator").targetGroup.name).toBe("engine-1");
    expect(runtime.plan("engine", "initiator", "engine-3")).toMatchObject({ mode: "networked", targetGroup: { name: "engine-3", address: "127.0.0.1:7078" } });
    expect(() => runtime.plan("engine", "initiator", "music")).toThrow(/group music .* does not run engine/);
    expect(() => runtime.plan("engine", "initiator", "engine-9")).toThrow(/no group "engine-9"/);
    runtime.close();
  });
});
