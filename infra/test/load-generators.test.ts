// Load generators in the cloud: off by default, N tasks per region when FLAPLAB_LOAD_TASKS asks,
// each playing `pnpm load` against the stage's own public URLs.
import { loadTopology } from "@flaplab/runtime";
import { beforeAll, describe, expect, it } from "vitest";
import { type DeploymentPlan, LOAD_ENTRY, LOAD_TASK_SIZE, parseLoadRequest, planDeployment, type PlanOptions, stageTopology } from "../src/index.js";
import { DOMAIN, loadConfig, ofType, run, unwrap } from "./sst-stand-ins.js";

async function plan(stage: string, load?: PlanOptions["load"]): Promise<DeploymentPlan> {
  return planDeployment(await loadTopology(stageTopology(stage)), { stage, domain: DOMAIN, ...(load ? { load } : {}) });
}

describe("parseLoadRequest", () => {
  const regions = ["eu-west-1", "us-east-1"];

  it("is off when nothing, empty or 0 is asked for", () => {
    for (const text of [undefined, "", " 0 "]) expect(parseLoadRequest(text, undefined, regions).tasks.size).toBe(0);
  });

  it("reads N as N tasks in every region, and region=N for the regions named", () => {
    expect([...parseLoadRequest("3", undefined, regions).tasks]).toEqual([
      ["eu-west-1", 3],
      ["us-east-1", 3],
    ]);
    expect([...parseLoadRequest("us-east-1=2, eu-west-1=0", "--players 50  --duration 5m", regions).tasks]).toEqual([
      ["us-east-1", 2],
      ["eu-west-1", 0],
    ]);
    expect(parseLoadRequest("1", "--players 50  --duration 5m", regions).args).toEqual(["--players", "50", "--duration", "5m"]);
  });

  it("refuses what it cannot read, with the reason", () => {
    const refused = (tasks: string, args?: string) => () => parseLoadRequest(tasks, args, regions);
    expect(refused("two")).toThrow(/"two" is not <region>=<tasks>/);
    expect(refused("us-east-1=x")).toThrow(/us-east-1 must be a whole number from 0 to 100, got "x"/);
    expect(refused("101")).toThrow(/must be a whole number from 0 to 100/);
    expect(refused("ap-south-1=1")).toThrow(/no cluster in ap-south-1; its regions are eu-west-1, us-east-1/);
    expect(refused("us-east-1=1,us-east-1=2")).toThrow(/us-east-1 is named twice/);
    expect(refused("1", "--players 5 --url http://elsewhere")).toThrow(/--url is set by the plan/);
    expect(refused("1", "--workers=4")).toThrow(/--workers is set by the plan/);
  });
});

describe("the plan's load generators", () => {
  it("are none unless asked for, in every stage", async () => {
    for (const stage of ["monolith", "microservices", "multiaz", "multiregion"]) expect((await plan(stage)).loadGenerators).toEqual([]);
  });

  it("play against the stage's public auth and initiator, one worker per 1-vCPU task", async () => {
    const p = await plan("microservices", { tasks: "2", args: "--players 40 --duration 10m" });
    expect(p.loadGenerators).toHaveLength(1);
    const [lg] = p.loadGenerators;
    expect(lg).toMatchObject({ name: "LoadUsEast1", region: "us-east-1", tasks: 2, size: LOAD_TASK_SIZE });
    expect(lg!.command).toEqual([
      "node",
      "--conditions=built",
      LOAD_ENTRY,
      "--url",
      p.web.config.authUrl,
      "--initiator-url",
      p.web.config.initiatorUrl,
      "--workers",
      "1",
      "--players",
      "40",
      "--duration",
      "10m",
    ]);
    // In microservices auth and the initiator have public URLs of their own.
    expect(p.web.config.authUrl).not.toBe(p.web.config.initiatorUrl);
  });

  it("follow the regions named, and skip a region asked for 0 tasks", async () => {
    const p = await plan("multiregion", { tasks: "us-east-1=2,eu-west-1=1,sa-east-1=0" });
    expect(p.loadGenerators.map((lg) => [lg.name, lg.region, lg.tasks])).toEqual([
      ["LoadEuWest1", "eu-west-1", 1],
      ["LoadUsEast1", "us-east-1", 2],
    ]);
  });
});

describe("sst.config.ts's load generators", () => {
  beforeAll(async () => {
    await loadConfig();
  });

  it("creates none without FLAPLAB_LOAD_TASKS", async () => {
    await run("multiregion");
    expect(ofType("sst.aws.Service").filter((c) => c.name.startsWith("Load"))).toEqual([]);
  });

  it("creates one service per region asked for: the plan's command and task count, no load balancer, a public address to reach the stage", async () => {
    await run("multiregion", { FLAPLAB_LOAD_TASKS: "us-east-1=2,eu-west-1=1", FLAPLAB_LOAD_ARGS: "--players 50 --duration 5m" });
    const p = await plan("multiregion", { tasks: "us-east-1=2,eu-west-1=1", args: "--players 50 --duration 5m" });
    const services = ofType("sst.aws.Service").filter((c) => c.name.startsWith("Load"));
    expect(services.map((c) => c.name).sort()).toEqual(["LoadEuWest1", "LoadUsEast1"]);
    for (const lg of p.loadGenerators) {
      const svc = services.find((c) => c.name === lg.name)!;
      const args = svc.args as {
        command: string[];
        scaling: { min: number; max: number };
        cpu: string;
        memory: string;
        loadBalancer?: unknown;
        transform: { service: (a: Record<string, unknown>) => void };
      };
      expect(svc.opts!.provider!.args.region).toBe(lg.region);
      expect(args.command).toEqual(lg.command);
      expect(args.scaling).toEqual({ min: lg.tasks, max: lg.tasks });
      expect([args.cpu, args.memory]).toEqual(["1 vCPU", "2 GB"]);
      expect(args.loadBalancer).toBeUndefined();
      const service: Record<string, unknown> = {};
      args.transform.service(service);
      expect(unwrap((service["networkConfiguration"] as { assignPublicIp: unknown }).assignPublicIp)).toBe(true);
    }
  });
});
