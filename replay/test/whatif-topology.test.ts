import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, describe, expect, it } from "vitest";
import { loadTopology } from "@flaplab/runtime";
import { TOPOLOGIES_DIR } from "../src/whatif/cli.js";
import { mergedLayout, splitLayout } from "../src/whatif/placements.js";
import { topologyFile } from "../src/whatif/topology-file.js";

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const places = {
  auth: { region: "us-east-1", zone: "a" },
  worldgen: { region: "us-east-1", zone: "a" },
  engine: { region: "eu-west-1", zone: "b" },
  initiator: { region: "us-east-1", zone: "a" },
  music: { region: "eu-west-1", zone: "b" },
  score: { region: "ap-northeast-1", zone: "a" },
};

describe("written topologies", () => {
  it("load with loadTopology and pass topologies/topology.schema.json, split and merged", async () => {
    const dir = await mkdtemp(join(tmpdir(), "whatif-topology-"));
    dirs.push(dir);
    const schema = JSON.parse(await readFile(join(TOPOLOGIES_DIR, "topology.schema.json"), "utf8")) as object;
    const check = new Ajv2020({ strict: false }).compile(schema);
    for (const [name, layout] of [["split", splitLayout(places)], ["merged", mergedLayout(places)]] as const) {
      const file = topologyFile(layout, { name, description: "test", browser: { region: "us-east-1", zone: "a" }, basePort: 7200, schemaRef: relative(dir, join(TOPOLOGIES_DIR, "topology.schema.json")) });
      expect(check(file), JSON.stringify(check.errors)).toBe(true);
      const path = join(dir, `${name}.json`);
      await writeFile(path, JSON.stringify(file));
      const topology = await loadTopology(path);
      expect(topology.groups.length).toBe(layout.length);
      expect(topology.groups.find((g) => g.components.includes("engine"))).toMatchObject({ region: "eu-west-1", zone: "b" });
      expect(topology.browser).toEqual({ region: "us-east-1", zone: "a" });
      // Loopback addresses, streams at port + 1000 as in the repository's topologies.
      for (const g of topology.groups) expect(g.address).toMatch(/^127\.0\.0\.1:72\d\d$/);
    }
    const merged = await loadTopology(join(dir, "merged.json"));
    expect(merged.groups.map((g) => g.components)).toEqual([["auth", "worldgen", "initiator"], ["engine", "music"], ["score"]]);
    expect(merged.groups[0]!.inProcess).toBe("direct");
  });

  it("write engine shards as groups of their own", async () => {
    const dir = await mkdtemp(join(tmpdir(), "whatif-topology-"));
    dirs.push(dir);
    const file = topologyFile(splitLayout(places), { name: "shards", description: "test", browser: places.auth, basePort: 7300, schemaRef: "x", engines: 3 });
    await writeFile(join(dir, "shards.json"), JSON.stringify(file));
    const topology = await loadTopology(join(dir, "shards.json"));
    expect(topology.groups.filter((g) => g.components.includes("engine")).map((g) => g.name)).toEqual(["engine-1", "engine-2", "engine-3"]);
  });
});
