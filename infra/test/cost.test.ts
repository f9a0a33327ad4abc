import { loadTopology } from "@flaplab/runtime";
import { describe, expect, it } from "vitest";
import {
  estimateHourlyCost,
  planDeployment,
  PRICES_US_EAST_1,
  stageTopology,
  type DeploymentPlan,
  type PriceList,
} from "../src/index.js";

async function plan(stage: string): Promise<DeploymentPlan> {
  return planDeployment(await loadTopology(stageTopology(stage)), { stage, domain: "flaplab.example.org" });
}

const ZERO: PriceList = {
  source: "test",
  fargateVcpuHour: 0,
  fargateGbHour: 0,
  publicIpv4Hour: 0,
  albHour: 0,
  albLcuHour: 0,
  rdsPostgresT4gMicroHour: 0,
  rdsGp3GbMonth: 0,
  elasticacheValkeyT4gMicroHour: 0,
};

describe("hourly cost estimate", () => {
  it("counts each service's measured vCPU, one ALB per region with public routes and one database", async () => {
    const mono = await plan("monolith");
    const multi = await plan("multiregion");
    // The monolith 1 vCPU; auth, worldgen, engine and initiator 1 each, music and score 0.5 each.
    expect(estimateHourlyCost(mono, { ...ZERO, fargateVcpuHour: 1 }).usdPerHour).toBeCloseTo(1);
    expect(estimateHourlyCost(multi, { ...ZERO, fargateVcpuHour: 1 }).usdPerHour).toBeCloseTo(5);
    expect(estimateHourlyCost(multi, { ...ZERO, fargateGbHour: 1 }).usdPerHour).toBeCloseTo(10);
    expect(estimateHourlyCost(mono, { ...ZERO, albHour: 1 }).usdPerHour).toBe(1);
    expect(estimateHourlyCost(multi, { ...ZERO, albHour: 1 }).usdPerHour).toBe(multi.regions.length);
    expect(estimateHourlyCost(multi, { ...ZERO, rdsPostgresT4gMicroHour: 1 }).usdPerHour).toBe(1);
    // One address per task plus one per load-balancer zone (two zones per region here).
    expect(estimateHourlyCost(multi, { ...ZERO, publicIpv4Hour: 1 }).usdPerHour).toBe(6 + 2 * multi.regions.length);
  });

  it("prices microservices as the monolith plus five tasks (same load balancer, same database)", async () => {
    const mono = estimateHourlyCost(await plan("monolith"));
    const micro = estimateHourlyCost(await plan("microservices"));
    const task = (vcpu: number, gb: number) => vcpu * PRICES_US_EAST_1.fargateVcpuHour + gb * PRICES_US_EAST_1.fargateGbHour + PRICES_US_EAST_1.publicIpv4Hour;
    // The monolith's 1 vCPU task becomes four of 1 vCPU (auth, worldgen, engine, initiator) and two of 0.5 (music, score).
    expect(micro.usdPerHour - mono.usdPerHour).toBeCloseTo(3 * task(1, 2) + 2 * task(0.5, 1), 10);
  });

  it("prices load generators on lines of their own: 1 vCPU, 2 GB and a public address per task", async () => {
    const topology = await loadTopology(stageTopology("multiregion"));
    const without = planDeployment(topology, { stage: "multiregion", domain: "flaplab.example.org" });
    const withLoad = planDeployment(topology, { stage: "multiregion", domain: "flaplab.example.org", load: { tasks: "us-east-1=3,eu-west-1=1" } });
    const cost = estimateHourlyCost(withLoad);
    const lines = cost.lines.filter((l) => l.item.endsWith("load generators"));
    expect(lines.map((l) => [l.item, l.quantity])).toEqual([
      ["Fargate vCPU, load generators", 4],
      ["Fargate memory, load generators", 8],
    ]);
    expect(estimateHourlyCost(without).lines.some((l) => l.item.endsWith("load generators"))).toBe(false);
    const task = PRICES_US_EAST_1.fargateVcpuHour + 2 * PRICES_US_EAST_1.fargateGbHour + PRICES_US_EAST_1.publicIpv4Hour;
    expect(cost.usdPerHour - estimateHourlyCost(without).usdPerHour).toBeCloseTo(4 * task, 10);
  });

  it("orders the stages monolith < microservices < multiaz < multiregion", async () => {
    const costs = [];
    for (const stage of ["monolith", "microservices", "multiaz", "multiregion"]) {
      costs.push(estimateHourlyCost(await plan(stage)).usdPerHour);
    }
    expect([...costs].sort((a, b) => a - b)).toEqual(costs);
    expect(new Set(costs).size).toBe(4);
  });
});
