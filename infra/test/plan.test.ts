import { loadTopology, parseTopology, type Topology } from "@flaplab/runtime";
import { beforeAll, describe, expect, it } from "vitest";
import {
  ENV,
  IMAGE_BUILD_S,
  listenerRuleProblems,
  planDeployment,
  PlanError,
  stageTopology,
  type DeploymentPlan,
  type PlanOptions,
  type ServicePlan,
} from "../src/index.js";

const DOMAIN = "flaplab.example.org";
// The web client's own validator (a DOM-typed module, so loaded by path rather than type-checked here).
const WEB_CONFIG_MODULE = "../../apps/web/src/config.js";
type ParseConfig = (value: unknown) => { authUrl: string; initiatorUrl: string; scoreUrl: string; topology: string; http3: boolean };
const topologies: Record<string, Topology> = {};

beforeAll(async () => {
  for (const stage of ["monolith", "microservices", "multiaz", "multiregion", "microservices-sharded"]) {
    topologies[stage] = await loadTopology(stageTopology(stage));
  }
});

function plan(stage: string, extra: Partial<PlanOptions> = {}): DeploymentPlan {
  return planDeployment(topologies[stage]!, { stage, domain: DOMAIN, ...extra });
}

/** The URL `caller`'s server dials for `callee` (its FLAPLAB_TOPOLOGY_JSON, which the runtime reads). */
function callUrl(p: DeploymentPlan, caller: string, callee: string): string {
  const topology = JSON.parse(service(p, caller).environment[ENV.topologyJson]!) as { groups: Record<string, { callUrl: string }> };
  return topology.groups[callee]!.callUrl;
}

function service(p: DeploymentPlan, group: string): ServicePlan {
  const s = p.services.find((x) => x.group === group);
  if (!s) throw new Error(`no service for group ${group}`);
  return s;
}

describe("monolith", () => {
  it("is one service in the default region behind one load balancer", () => {
    const p = plan("monolith");
    expect(p.services).toHaveLength(1);
    expect(p.regions.map((r) => r.region)).toEqual(["us-east-1"]);
    const s = p.services[0]!;
    expect(s).toMatchObject({ name: "Monolith", region: "us-east-1", availabilityZone: "us-east-1a", subnetIndex: 0 });
    expect(p.edges).toEqual([]);
    // Browsers reach auth, initiator and score over Connect and both streams over the WebSocket mapping.
    const routes = p.regions[0]!.loadBalancer!.routes;
    expect(routes.map((r) => `${r.kind}:${r.component}`).sort()).toEqual(
      ["connect:auth", "connect:initiator", "connect:score", "stream:engine", "stream:music", "websocket:engine", "websocket:music"].sort(),
    );
    expect(routes.every((r) => r.reason === "browser" && r.service === "Monolith")).toBe(true);
    expect(s.streamUrl).toBe(`https://monolith.monolith.${DOMAIN}`);
  });

  it("maps the region \"local\" to the configured default region", () => {
    const p = plan("monolith", { defaultRegion: "eu-central-1" });
    expect(p.services[0]!.region).toBe("eu-central-1");
    expect(p.regions[0]!.availabilityZones).toEqual(["eu-central-1a", "eu-central-1b"]);
    expect(p.databases[0]!.region).toBe("eu-central-1");
  });
});

describe("microservices", () => {
  it("is six services in one region, calling each other at their Cloud Map names", () => {
    const p = plan("microservices");
    expect(p.services).toHaveLength(6);
    expect(new Set(p.services.map((s) => s.region))).toEqual(new Set(["us-east-1"]));
    expect(p.regions).toHaveLength(1);
    expect(p.edges.map((e) => `${e.caller}->${e.callee}`).sort()).toEqual(
      ["engine->music", "engine->score", "initiator->engine", "initiator->worldgen"],
    );
    for (const e of p.edges) {
      expect(e.crossRegion).toBe(false);
      expect(e.url).toMatch(/^http:\/\/[a-z]+\.microservices\.flaplab\.sst:8080$/);
    }
    expect(callUrl(p, "engine", "music")).toBe("http://music.microservices.flaplab.sst:8080");
    expect(callUrl(p, "initiator", "worldgen")).toBe("http://worldgen.microservices.flaplab.sst:8080");
    // No variable the server does not read.
    for (const s of p.services) expect(Object.keys(s.environment).filter((k) => /^FLAPLAB_[A-Z]+_URL$/.test(k))).toEqual([]);
  });

  it("makes public only what browsers use: worldgen gets no load-balancer route", () => {
    const p = plan("microservices");
    expect(service(p, "worldgen").albRoutes).toEqual([]);
    expect(service(p, "worldgen").publicUrl).toBeUndefined();
    expect(service(p, "engine").albRoutes.map((r) => r.kind)).toEqual(["stream", "websocket"]);
    expect(service(p, "auth").publicUrl).toBe(`https://auth.microservices.${DOMAIN}`);
    const priorities = p.regions[0]!.loadBalancer!.routes.map((r) => r.priority);
    expect(new Set(priorities).size).toBe(priorities.length);
  });
});

describe("multiaz", () => {
  it("spreads the groups over zones a/b/c of one region like FlappyGo", () => {
    const p = plan("multiaz");
    expect(p.regions).toHaveLength(1);
    expect(p.regions[0]!.availabilityZones).toEqual(["us-east-1a", "us-east-1b", "us-east-1c"]);
    const az = Object.fromEntries(p.services.map((s) => [s.group, s.availabilityZone]));
    expect(az).toEqual({
      auth: "us-east-1a",
      worldgen: "us-east-1b",
      engine: "us-east-1c",
      initiator: "us-east-1a",
      music: "us-east-1b",
      score: "us-east-1c",
    });
    for (const s of p.services) expect(p.regions[0]!.availabilityZones[s.subnetIndex]).toBe(s.availabilityZone);
    // Only engine (c) → score (c) stays inside one zone.
    const crossZone = Object.fromEntries(p.edges.map((e) => [`${e.caller}->${e.callee}`, e.crossZone]));
    expect(crossZone).toEqual({
      "initiator->worldgen": true,
      "initiator->engine": true,
      "engine->music": true,
      "engine->score": false,
    });
  });
});

describe("multiregion", () => {
  it("places services in at least three regions with one provider per region", () => {
    const p = plan("multiregion");
    const regions = new Set(p.services.map((s) => s.region));
    expect(regions.size).toBeGreaterThanOrEqual(3);
    expect(p.regions.map((r) => r.region).sort()).toEqual([...regions].sort());
    expect(new Set(p.regions.map((r) => r.providerName)).size).toBe(p.regions.length);
    for (const r of p.regions) {
      expect(r.services.length).toBeGreaterThan(0);
      for (const name of r.services) expect(p.services.find((s) => s.name === name)!.region).toBe(r.region);
    }
  });

  it("gives cross-region callers the callee's public HTTPS URL, never a private name", () => {
    const p = plan("multiregion");
    const cross = p.edges.filter((e) => e.crossRegion);
    expect(cross.length).toBeGreaterThan(0);
    for (const e of cross) {
      expect(e.url).toMatch(/^https:\/\//);
      expect(e.url).not.toMatch(/\.sst(:|$)/);
      const caller = p.services.find((s) => s.name === e.from)!;
      const callee0 = p.services.find((s) => s.name === e.to)!;
      expect(callUrl(p, caller.group, callee0.group)).toBe(e.url);
      // ...and the callee's routes are on its region's load balancer.
      const callee = p.services.find((s) => s.name === e.to)!;
      expect(callee.publicUrl).toBe(e.url);
      const lb = p.regions.find((r) => r.region === callee.region)!.loadBalancer!;
      expect(lb.routes.some((r) => r.component === e.callee && r.kind === "connect")).toBe(true);
      expect(lb.aliases).toContain(new URL(e.url).host);
    }
    expect(callUrl(p, "engine", "music")).toBe(`https://music.multiregion.${DOMAIN}`);
    // worldgen is called only from another region, so its route is there for that reason.
    const worldgenRoute = service(p, "worldgen").albRoutes.find((r) => r.component === "worldgen")!;
    expect(worldgenRoute.reason).toBe("cross-region");
  });

  it("approximates FlappyGo's published multi-region RTTs (within 15 ms)", () => {
    const p = plan("multiregion");
    const published: Record<string, number> = {
      "engine->music": 31,
      "initiator->engine": 117,
      "engine->score": 164,
      "initiator->worldgen": 173,
    };
    for (const [edge, ms] of Object.entries(published)) {
      const e = p.edges.find((x) => `${x.caller}->${x.callee}` === edge)!;
      expect(e.rttMs, edge).toBeDefined();
      expect(Math.abs(e.rttMs! - ms), edge).toBeLessThanOrEqual(15);
    }
  });
});

describe("microservices-sharded", () => {
  it("runs each engine as its own service at its own URL, never two copies of one at once", () => {
    const p = plan("microservices-sharded");
    const engines = p.services.filter((x) => x.components.includes("engine"));
    expect(engines.map((e) => e.group)).toEqual(["engine-1", "engine-2", "engine-3"]);
    expect(new Set(engines.map((e) => e.streamUrl)).size).toBe(3);
    for (const e of engines) {
      expect(e.streamUrl).toBe(`https://${e.group}.microservices-sharded.${DOMAIN}`);
      expect(e.deployment).toMatchObject({ minimumHealthyPercent: 0, maximumPercent: 100 });
    }
  });

  it("routes each engine's stream path by its host name, at a priority of its own", () => {
    const p = plan("microservices-sharded");
    const lb = p.regions[0]!.loadBalancer!;
    const priorities = [...lb.routes.map((r) => r.priority), ...lb.refusals.map((r) => r.priority)];
    expect(new Set(priorities).size).toBe(priorities.length);
    const streams = lb.routes.filter((r) => r.component === "engine" && r.kind === "stream");
    expect(streams.map((r) => [r.service, r.host])).toEqual([
      ["Engine1", `engine-1.microservices-sharded.${DOMAIN}`],
      ["Engine2", `engine-2.microservices-sharded.${DOMAIN}`],
      ["Engine3", `engine-3.microservices-sharded.${DOMAIN}`],
    ]);
    // Every engine host is an alias on the region's certificate and balancer.
    for (const r of streams) expect(lb.aliases).toContain(r.host);
    // Music, a single group, keeps its path-only route.
    expect(lb.routes.find((r) => r.component === "music" && r.kind === "stream")?.host).toBeUndefined();
  });

  it("plans listener rules AWS accepts, and refuses a topology whose rules it would not", () => {
    for (const stage of ["monolith", "microservices", "multiaz", "multiregion", "microservices-sharded"]) {
      for (const region of plan(stage).regions) {
        const lb = region.loadBalancer;
        if (!lb) continue;
        expect(listenerRuleProblems(lb.rules), `${stage} ${region.region}`).toEqual([]);
        expect(lb.rules.map((r) => r.priority)).toEqual([...lb.refusals, ...lb.routes].map((r) => r.priority).sort((a, b) => a - b));
      }
    }
    // An engine shard's host condition over 128 characters.
    const domain = `${"d".repeat(60)}.${"e".repeat(40)}.example.org`;
    expect(() => plan("microservices-sharded", { domain })).toThrow(/listener rules would be refused: rule \d+: hostHeader value of 1\d\d characters/);
  });

  it("plans one snapshot store in the engines' region, named to every engine and the initiator only", () => {
    const p = plan("microservices-sharded");
    expect(p.snapshotStores).toEqual([
      { name: "SnapshotStore", region: "us-east-1", engine: "valkey", instance: "t4g.micro", services: ["Engine1", "Engine2", "Engine3", "Initiator"], env: ENV.snapshotStore },
    ]);
    for (const s of p.services) {
      const uses = s.components.includes("engine") || s.components.includes("initiator");
      expect(s.deployEnvironment[ENV.snapshotStore], s.group).toEqual(uses ? { from: "snapshot-store", name: "SnapshotStore", sensitive: true } : undefined);
    }
    expect(plan("microservices").snapshotStores).toEqual([]);
  });

  it("lets the initiator call every engine at its Cloud Map name", () => {
    const p = plan("microservices-sharded");
    for (const e of ["engine-1", "engine-2", "engine-3"]) {
      expect(callUrl(p, "initiator", e)).toBe(`http://${service(p, e).privateHost}:8080`);
      expect(p.edges.some((x) => x.caller === "initiator" && x.callee === "engine" && x.to === service(p, e).name)).toBe(true);
    }
  });

  it("refuses engines in several regions: they share one snapshot store", () => {
    const t = parseTopology({
      name: "spread",
      groups: {
        rest: { components: ["auth", "worldgen", "initiator", "music", "score"], address: "127.0.0.1:1", region: "us-east-1" },
        "engine-1": { components: ["engine"], address: "127.0.0.1:2", region: "us-east-1" },
        "engine-2": { components: ["engine"], address: "127.0.0.1:3", region: "eu-west-1" },
      },
    });
    expect(() => planDeployment(t, { stage: "spread", domain: DOMAIN })).toThrow(/runs 2 engines: .* must be in one region \(found us-east-1, eu-west-1\)/);
  });
});

describe("environment", () => {
  it("gives every service its topology, group, data dir and the players' public key; the players' private key only to auth", () => {
    for (const stage of ["monolith", "microservices", "multiaz", "multiregion", "microservices-sharded"]) {
      const p = plan(stage);
      for (const s of p.services) {
        expect(s.environment[ENV.topology]).toBe(stage);
        expect(s.environment[ENV.group]).toBe(s.group);
        expect(s.environment[ENV.dataDir]).toBe("/var/lib/flaplab");
        expect(s.deployEnvironment[ENV.jwtPublicKey]).toEqual({ from: "secret", name: "JwtPublicKey", sensitive: false });
        const runsAuth = s.components.includes("auth");
        expect(s.deployEnvironment[ENV.jwtPrivateKey] !== undefined, `${stage}/${s.group}`).toBe(runsAuth);
        const runsScore = s.components.includes("score");
        expect(s.deployEnvironment[ENV.scoreDatabaseUrl] !== undefined, `${stage}/${s.group}`).toBe(runsScore);
        expect(Object.keys(s.environment).some((k) => k.includes("PRIVATE"))).toBe(false);
      }
    }
  });

  it("starts the services hosting the engine with the engine's Node flags, and no other service", () => {
    for (const stage of ["monolith", "microservices", "multiregion", "microservices-sharded"]) {
      const p = plan(stage);
      const engines = p.services.filter((s) => s.components.includes("engine"));
      expect(engines.length, stage).toBeGreaterThan(0);
      for (const s of p.services) {
        const expected = s.components.includes("engine") ? "--max-semi-space-size=2" : undefined;
        expect(s.environment["NODE_OPTIONS"], `${stage}/${s.group}`).toBe(expected);
      }
    }
  });

  it("puts the score database in the score group's region", () => {
    const p = plan("multiregion");
    expect(p.databases).toEqual([
      expect.objectContaining({ engine: "postgres", component: "score", service: "Score", region: "sa-east-1" }),
    ]);
    expect(service(p, "score").deployEnvironment[ENV.scoreDatabaseUrl]).toEqual({
      from: "database",
      name: "ScoreDatabase",
      sensitive: true,
    });
  });

  it("hands each server a valid topology with cloud addresses for its own view", () => {
    for (const stage of ["monolith", "microservices", "multiaz", "multiregion", "microservices-sharded"]) {
      const p = plan(stage);
      for (const s of p.services) {
        const t = parseTopology(JSON.parse(s.environment[ENV.topologyJson]!));
        expect(t.name).toBe(topologies[stage]!.name);
        for (const g of t.groups) {
          const other = service(p, g.name);
          if (g.name === s.group) {
            expect(g.address).toBe("0.0.0.0:8080");
            expect(g.streamAddress).toBe("0.0.0.0:8443");
          } else if (other.region === s.region) {
            expect(g.address).toBe(`${other.privateHost}:8080`);
          } else {
            expect(g.address).toBe(`${other.publicHost}:443`);
          }
          expect(g.region).toBe(other.region);
          if (other.streamUrl) expect(g.streamPublicUrl).toBe(other.streamUrl);
        }
        // No loopback address of the local file survives.
        expect(s.environment[ENV.topologyJson]).not.toContain("127.0.0.1");
      }
    }
  });
});

describe("web client", () => {
  it("gets a /config.json the web client accepts, pointing at the public endpoints", async () => {
    const { parseConfig } = (await import(WEB_CONFIG_MODULE)) as { parseConfig: ParseConfig };
    for (const stage of ["monolith", "multiregion"]) {
      const p = plan(stage);
      const config = parseConfig(JSON.parse(JSON.stringify(p.web.config)));
      expect(config.authUrl).toBe(service(p, stage === "monolith" ? "monolith" : "auth").publicUrl);
      expect(config.topology).toBe(stage);
      expect(config.http3).toBe(false);
    }
    expect(plan("multiregion").web.config.initiatorUrl).toBe(`https://initiator.multiregion.${DOMAIN}`);
  });
});

describe("HTTP/3", () => {
  it("is not offered in the cloud: the load balancers carry the WebSocket links, the web config says so", () => {
    for (const stage of ["monolith", "microservices", "multiregion"]) {
      const p = plan(stage);
      expect(p.web.config.http3).toBe(false);
      expect(p.services.every((s) => s.streamUrl === undefined || s.streamUrl === `https://${s.publicHost}`)).toBe(true);
    }
  });
});

describe("options", () => {
  it("sizes tasks from the measured CPU peaks (0.5 vCPU when its share holds the peak with headroom, else 1) unless told otherwise, and checks Fargate combinations", () => {
    const sizes = Object.fromEntries(plan("microservices").services.map((s) => [s.group, `${s.size.cpu} / ${s.size.memory}`]));
    expect(sizes).toEqual({
      auth: "1 vCPU / 2 GB",
      engine: "1 vCPU / 2 GB",
      worldgen: "1 vCPU / 2 GB",
      initiator: "1 vCPU / 2 GB",
      music: "0.5 vCPU / 1 GB",
      score: "0.5 vCPU / 1 GB",
    });
    expect(service(plan("monolith"), "monolith").size).toEqual({ cpu: "1 vCPU", memory: "2 GB" });
    const p = plan("microservices", { sizes: { engine: { cpu: "1 vCPU", memory: "2 GB" } } });
    expect(service(p, "engine").size).toEqual({ cpu: "1 vCPU", memory: "2 GB" });
    expect(service(p, "music").size.cpu).toBe("0.5 vCPU");
    expect(() => plan("monolith", { size: { cpu: "0.25 vCPU", memory: "4 GB" } })).toThrow(/allows/);
  });

  it("rejects bad stage names, domains and regions", () => {
    expect(() => plan("monolith", { stage: "Prod" })).toThrow(PlanError);
    expect(() => plan("monolith", { domain: "not a domain" })).toThrow(PlanError);
    expect(() => plan("monolith", { defaultRegion: "moon" })).toThrow(PlanError);
  });

  it("builds the image once per deploy without a prebuilt one: into the stage's repository in the home region", () => {
    const p = plan("multiregion", { homeRegion: "eu-central-1" });
    expect(p.image).toEqual({
      platform: "linux/arm64",
      dockerfile: "apps/server/Dockerfile",
      build: {
        repositoryComponent: "ServerImageRepository",
        imageComponent: "ServerImage",
        repository: "flaplab-multiregion-server",
        region: "eu-central-1",
        tag: "server",
        cacheTag: "server-cache",
      },
      builds: 1,
      buildS: { ...IMAGE_BUILD_S },
    });
    // The home region follows the default region unless given.
    expect(plan("monolith", { defaultRegion: "ap-southeast-1" }).image.build?.region).toBe("ap-southeast-1");
    const prebuilt = plan("multiregion", { image: "123456789012.dkr.ecr.us-east-1.amazonaws.com/flaplab-server:0123456789ab" }).image;
    expect([prebuilt.build, prebuilt.builds, prebuilt.buildS]).toEqual([undefined, 0, { min: 0, max: 0 }]);
    // The image's component names are not service names.
    for (const group of ["server-image", "server-image-repository"]) {
      const t = parseTopology({ name: "named", groups: { [group]: { components: ["auth", "worldgen", "engine", "initiator", "music", "score"], address: "127.0.0.1:1" } } });
      expect(() => planDeployment(t, { stage: "named", domain: DOMAIN }), group).toThrow(/is reserved/);
    }
  });

  it("is deterministic", () => {
    expect(plan("multiregion")).toEqual(plan("multiregion"));
  });
});
