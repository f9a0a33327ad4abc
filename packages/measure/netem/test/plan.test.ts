import { join, resolve } from "node:path";
import { loadTopology, parseTopology } from "@flaplab/runtime";
import { describe, expect, it } from "vitest";
import { edgeRtt, loadRttTable, oneWayDelays, planEdges } from "../src/index.js";

const TOPOLOGIES = resolve(import.meta.dirname, "../../../../topologies");
const all = ["auth", "worldgen", "engine", "initiator", "music", "score"];

describe("RTT table and edges", () => {
  it("reads the dated table and gives region, zone and same-host RTTs", async () => {
    const table = await loadRttTable();
    expect(table.source).toMatch(/cloudping/);
    expect(edgeRtt(table, { region: "eu-west-1", zone: "a" }, { region: "eu-central-1", zone: "b" })).toMatchObject({ kind: "cross-region", rttMs: 27 });
    expect(edgeRtt(table, { region: "us-east-1", zone: "a" }, { region: "us-east-1", zone: "b" })).toMatchObject({ kind: "cross-zone", rttMs: 1 });
    expect(edgeRtt(table, { region: "us-east-1", zone: "a" }, { region: "us-east-1", zone: "a" })).toMatchObject({ kind: "same-zone", rttMs: 0.3 });
    expect(edgeRtt(table, { region: "local", zone: "a" }, { region: "us-east-1", zone: "a" }).kind).toBe("same-host");
  });

  it("splits an RTT into whole-ms one-way delays that add up to it", () => {
    expect(oneWayDelays(175)).toEqual({ upstreamMs: 88, downstreamMs: 87 });
    expect(oneWayDelays(1)).toEqual({ upstreamMs: 1, downstreamMs: 0 });
    expect(oneWayDelays(0.3)).toEqual({ upstreamMs: 0, downstreamMs: 0 });
  });

  it("rejects a broken table with the file named", async () => {
    await expect(loadRttTable(join(TOPOLOGIES, "monolith.json"))).rejects.toThrow(/monolith\.json: an RTT table needs/);
  });

  it("plans one proxy per call-graph edge between groups and per browser link; none on one host", async () => {
    const table = await loadRttTable();
    expect(planEdges(await loadTopology("microservices", TOPOLOGIES), table)).toEqual([]);
    const edges = planEdges(await loadTopology("multiregion", TOPOLOGIES), table);
    const byName = Object.fromEntries(edges.map((e) => [e.name, e.rttMs]));
    expect(byName).toMatchObject({
      "initiator->worldgen": 175,
      "initiator->engine": 118,
      "engine->music": 27,
      "engine->score": 178,
      "browser->initiator": 64,
      "browser->engine:stream": 70,
      "browser->music:stream": 93,
      // The WebSocket link of the streams, at the engine's and music's RPC ports.
      "browser->engine": 70,
      "browser->music": 93,
    });
  });

  it("gives each engine shard its own links, from the initiator and from the browser", async () => {
    const table = await loadRttTable();
    const t = parseTopology({
      name: "t",
      groups: {
        a: { components: ["auth", "worldgen", "initiator", "score", "music"], region: "us-east-1", zone: "a", address: "h:1" },
        "engine-1": { components: ["engine"], region: "us-east-1", zone: "b", address: "h:2" },
        "engine-2": { components: ["engine"], region: "us-east-1", zone: "c", address: "h:3" },
      },
      browser: { region: "us-east-1", zone: "a" },
    });
    const names = planEdges(t, table).map((e) => e.name);
    for (const e of ["engine-1", "engine-2"]) {
      expect(names).toContain(`a->${e}`);
      expect(names).toContain(`${e}->a`);
      expect(names).toContain(`browser->${e}:stream`);
      expect(names).toContain(`browser->${e}`);
    }
  });

  it("follows the topology: moving music next to the engine removes that edge's latency", async () => {
    const table = await loadRttTable();
    const t = parseTopology({
      name: "t",
      groups: {
        a: { components: ["auth", "worldgen", "initiator", "score"], region: "us-east-1", zone: "a", address: "h:1" },
        e: { components: ["engine"], region: "eu-west-1", zone: "a", address: "h:2" },
        m: { components: ["music"], region: "eu-central-1", zone: "a", address: "h:3" },
      },
    });
    expect(planEdges(t, table).find((e) => e.name === "e->m")?.rttMs).toBe(27);
    const moved = parseTopology({
      name: "t",
      groups: {
        a: { components: ["auth", "worldgen", "initiator", "score"], region: "us-east-1", zone: "a", address: "h:1" },
        e: { components: ["engine", "music"], region: "eu-west-1", zone: "a", address: "h:2" },
      },
    });
    expect(planEdges(moved, table).some((e) => e.from === "e" && e.port === "connect" && e.to !== "a")).toBe(false);
    expect(all.length).toBe(6);
  });
});
