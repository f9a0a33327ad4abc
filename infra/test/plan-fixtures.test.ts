import { readFile } from "node:fs/promises";
import { parseTopology, type Topology } from "@flaplab/runtime";
import { beforeAll, describe, expect, it } from "vitest";
import { loadStageTopology, type PlanOptions, planDeployment, STAGES, stageTopology } from "../src/index.js";

// The whole plan of every stage, as `flaplab-plan <stage>` prints it (JSON, keys in the plan's own
// order), against fixtures under test/fixtures/plans: any change to a plan shows in a diff there.
// After an intended change, rewrite them with `pnpm exec vitest run test/plan-fixtures.test.ts -u`.

const DOMAIN = "flaplab.example.org";
/** Every option set at once: tracing, a prebuilt image, other regions, a renamed topology, sizes, load generators. */
const ALL_OPTIONS: Omit<PlanOptions, "stage"> = {
  domain: "cloud.example.net",
  defaultRegion: "eu-central-1",
  homeRegion: "us-west-2",
  topologyName: "renamed",
  tracing: "xray",
  image: "123456789012.dkr.ecr.us-east-1.amazonaws.com/flaplab-server:0123456789ab",
  size: { cpu: "2 vCPU", memory: "4 GB" },
  sizes: { engine: { cpu: "1 vCPU", memory: "3 GB" }, "engine-1": { cpu: "4 vCPU", memory: "8 GB" } },
  load: { tasks: "1", args: "--players 20 --duration 5m" },
};
const topologies = new Map<string, Topology>();

beforeAll(async () => {
  for (const stage of STAGES) topologies.set(stage, await loadStageTopology(stage));
});

function printed(stage: string, options: Omit<PlanOptions, "stage">): string {
  return `${JSON.stringify(planDeployment(topologies.get(stage)!, { stage, ...options }), null, 2)}\n`;
}

/** The message planDeployment throws for these inputs. */
function refusal(topology: Topology, options: PlanOptions): string {
  try {
    planDeployment(topology, options);
  } catch (e) {
    return `${(e as Error).name}: ${(e as Error).message}`;
  }
  throw new Error(`planned ${topology.name} without an error`);
}

const ALL_COMPONENTS = ["auth", "worldgen", "engine", "initiator", "music", "score"];

describe("the whole plan of every stage", () => {
  for (const stage of STAGES) {
    it(`${stage}, default options`, async () => {
      await expect(printed(stage, { domain: DOMAIN })).toMatchFileSnapshot(`fixtures/plans/${stage}.json`);
    });
    it(`${stage}, every option set`, async () => {
      await expect(printed(stage, ALL_OPTIONS)).toMatchFileSnapshot(`fixtures/plans/${stage}.all-options.json`);
    });
  }

  it("multiregion with gRPC on its cross-region edges, and the warnings it gets", async () => {
    const file = JSON.parse(await readFile(stageTopology("multiregion"), "utf8")) as Record<string, unknown>;
    const grpc = { protocol: "grpc", format: "binary", httpVersion: "2" };
    const topology = parseTopology({ ...file, edges: { "engine->music": grpc, "initiator->engine": grpc } });
    const plan = planDeployment(topology, { stage: "multiregion", domain: DOMAIN });
    expect(plan.warnings).toHaveLength(2);
    await expect(`${JSON.stringify(plan, null, 2)}\n`).toMatchFileSnapshot("fixtures/plans/multiregion.grpc-edges.json");
  });

  it("refuses bad input with the same messages", async () => {
    const one = (name: string, group: Record<string, unknown>): Topology =>
      parseTopology({ name, groups: { [name]: { components: ALL_COMPONENTS, address: "127.0.0.1:1", ...group } } });
    const monolith = topologies.get("monolith")!;
    const sharded = topologies.get("microservices-sharded")!;
    const cases: Array<[string, Topology, PlanOptions]> = [
      ["stage", monolith, { stage: "Prod", domain: DOMAIN }],
      ["domain", monolith, { stage: "monolith", domain: "not a domain" }],
      ["default region", monolith, { stage: "monolith", domain: DOMAIN, defaultRegion: "moon" }],
      ["home region", monolith, { stage: "monolith", domain: DOMAIN, homeRegion: "moon" }],
      ["image", monolith, { stage: "monolith", domain: DOMAIN, image: "flaplab-server" }],
      ["size", monolith, { stage: "monolith", domain: DOMAIN, size: { cpu: "0.25 vCPU", memory: "4 GB" } }],
      ["reserved name", one("web", {}), { stage: "named", domain: DOMAIN }],
      ["prefixed name", one("alb-x", {}), { stage: "named", domain: DOMAIN }],
      ["region-like name", one("eu-west-1", {}), { stage: "named", domain: DOMAIN }],
      ["zone", one("solo", { zone: "ab" }), { stage: "named", domain: DOMAIN }],
      ["listener host", sharded, { stage: "microservices-sharded", domain: `${"d".repeat(60)}.${"e".repeat(40)}.example.org` }],
      [
        "duplicate service name",
        parseTopology({
          name: "twice",
          groups: {
            "a-b": { components: ["auth", "worldgen", "engine"], address: "127.0.0.1:1" },
            "a--b": { components: ["initiator", "music", "score"], address: "127.0.0.1:2" },
          },
        }),
        { stage: "twice", domain: DOMAIN },
      ],
      [
        "engines in two regions",
        parseTopology({
          name: "spread",
          groups: {
            rest: { components: ["auth", "worldgen", "initiator", "music", "score"], address: "127.0.0.1:1", region: "us-east-1" },
            "engine-1": { components: ["engine"], address: "127.0.0.1:2", region: "us-east-1" },
            "engine-2": { components: ["engine"], address: "127.0.0.1:3", region: "eu-west-1" },
          },
        }),
        { stage: "spread", domain: DOMAIN },
      ],
    ];
    const messages = Object.fromEntries(cases.map(([what, topology, options]) => [what, refusal(topology, options)]));
    await expect(`${JSON.stringify(messages, null, 2)}\n`).toMatchFileSnapshot("fixtures/plans/refusals.json");
  });
});
