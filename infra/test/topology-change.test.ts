import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadTopology } from "@flaplab/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENV, planDeployment, stageTopology, type DeploymentPlan } from "../src/index.js";

const OPTIONS = { stage: "multiregion", domain: "flaplab.example.org" };
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "flaplab-infra-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface TopologyFile {
  groups: Record<string, { region?: string; zone?: string; address: string }>;
}

/** Writes an edited copy of a stage's topology file, loads it like any topology, and plans it. */
async function planEdited(stage: string, edit: (t: TopologyFile) => void): Promise<DeploymentPlan> {
  const json = JSON.parse(await readFile(stageTopology(stage), "utf8")) as TopologyFile;
  edit(json);
  const path = join(dir, `${stage}-${Math.random().toString(36).slice(2)}.json`);
  await writeFile(path, JSON.stringify(json, null, 2));
  return planDeployment(await loadTopology(path), { ...OPTIONS, stage });
}

describe("the cloud plan follows the topology file", () => {
  it("moving music into the engine's region moves its service and turns the engine's MUSIC URL private", async () => {
    const before = await planEdited("multiregion", () => {});
    const after = await planEdited("multiregion", (t) => {
      t.groups["music"]!.region = "eu-west-1";
    });
    const musicBefore = before.services.find((s) => s.group === "music")!;
    const musicAfter = after.services.find((s) => s.group === "music")!;
    expect(musicBefore.region).toBe("eu-central-1");
    expect(musicAfter.region).toBe("eu-west-1");
    expect(before.regions.map((r) => r.region)).toContain("eu-central-1");
    expect(after.regions.map((r) => r.region)).not.toContain("eu-central-1");
    expect(after.regions.find((r) => r.region === "eu-west-1")!.services).toContain("Music");

    const musicCallUrl = (p: DeploymentPlan) => {
      const env = p.services.find((s) => s.group === "engine")!.environment;
      return (JSON.parse(env[ENV.topologyJson]!) as { groups: Record<string, { callUrl: string }> }).groups["music"]!.callUrl;
    };
    expect(musicCallUrl(before)).toBe("https://music.multiregion.flaplab.example.org");
    expect(musicCallUrl(after)).toBe("http://music.multiregion.flaplab.sst:8080");
    // Music is no longer called across regions, so its Connect route leaves the load balancer.
    expect(musicAfter.albRoutes.map((r) => r.kind)).toEqual(["stream", "websocket"]);
  });

  it("adding engine shards adds host names to the load balancer, never names to its certificate", async () => {
    const p = await planEdited("microservices-sharded", (t) => {
      for (let n = 4; n <= 12; n++) t.groups[`engine-${n}`] = { components: ["engine"], region: "local", zone: "a", address: `127.0.0.1:${7100 + n}` } as never;
    });
    const lb = p.regions[0]!.loadBalancer!;
    // 12 engines and the other public groups: more hosts than ACM's default 10 names per certificate.
    expect(lb.aliases.length + 1).toBeGreaterThan(10);
    expect(lb.certificate.domainName).toBe("*.microservices-sharded.flaplab.example.org");
  });

  it("moving a group to another zone moves its service to that zone's subnet", async () => {
    const before = await planEdited("multiaz", () => {});
    const after = await planEdited("multiaz", (t) => {
      t.groups["engine"]!.zone = "a";
    });
    const engine = (p: DeploymentPlan) => p.services.find((s) => s.group === "engine")!;
    expect(engine(before)).toMatchObject({ availabilityZone: "us-east-1c", subnetIndex: 2 });
    expect(engine(after)).toMatchObject({ availabilityZone: "us-east-1a", subnetIndex: 0 });
    expect(after.edges.find((e) => e.caller === "engine" && e.callee === "score")!.crossZone).toBe(true);
  });

  it("ignores the local loopback addresses", async () => {
    const before = await planEdited("multiregion", () => {});
    const after = await planEdited("multiregion", (t) => {
      for (const g of Object.values(t.groups)) g.address = g.address.replace("127.0.0.1:71", "127.0.0.1:91");
    });
    expect(after).toEqual(before);
  });
});

describe("one topology file drives both the local emulation and the cloud plan", () => {
  it("moving music to another region changes the emulated engine->music latency and the cloud services", async () => {
    const { loadRttTable, planEdges } = await import("@flaplab/netem");
    const table = await loadRttTable();
    const write = async (edit: (t: TopologyFile) => void) => {
      const json = JSON.parse(await readFile(stageTopology("multiregion"), "utf8")) as TopologyFile;
      edit(json);
      const path = join(dir, `both-${Math.random().toString(36).slice(2)}.json`);
      await writeFile(path, JSON.stringify(json, null, 2));
      return loadTopology(path);
    };
    const before = await write(() => {});
    const after = await write((t) => {
      t.groups["music"]!.region = "ap-southeast-1";
    });
    const rtt = (t: Awaited<ReturnType<typeof loadTopology>>) => planEdges(t, table).find((e) => e.name === "engine->music")?.rttMs;
    expect(rtt(before)).toBe(27); // eu-west-1 -> eu-central-1
    expect(rtt(after)).toBe(182); // eu-west-1 -> ap-southeast-1
    const musicRegion = (t: Awaited<ReturnType<typeof loadTopology>>) =>
      planDeployment(t, OPTIONS).services.find((s) => s.group === "music")?.region;
    expect(musicRegion(before)).toBe("eu-central-1");
    expect(musicRegion(after)).toBe("ap-southeast-1");
  });
});
