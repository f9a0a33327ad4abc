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
  nlbHour: 0,
  nlbLcuHour: 0,
  rdsPostgresT4gMicroHour: 0,
  rdsGp3GbMonth: 0,
  elasticacheValkeyT4gMicroHour: 0,
};

describe("hourly cost estimate", () => {
  it("counts 0.25 vCPU per service, one ALB per region with public routes and one database", async () => {
    const mono = await plan("monolith");
    const multi = await plan("multiregion");
    expect(estimateHourlyCost(mono, { ...ZERO, fargateVcpuHour: 1 }).usdPerHour).toBeCloseTo(0.25);
    expect(estimateHourlyCost(multi, { ...ZERO, fargateVcpuHour: 1 }).usdPerHour).toBeCloseTo(1.5);
    expect(estimateHourlyCost(mono, { ...ZERO, albHour: 1 }).usdPerHour).toBe(1);
    expect(estimateHourlyCost(multi, { ...ZERO, albHour: 1 }).usdPerHour).toBe(multi.regions.length);
    expect(estimateHourlyCost(multi, { ...ZERO, rdsPostgresT4gMicroHour: 1 }).usdPerHour).toBe(1);
    // One address per task plus one per load-balancer zone (two zones per region here).
    expect(estimateHourlyCost(multi, { ...ZERO, publicIpv4Hour: 1 }).usdPerHour).toBe(6 + 2 * multi.regions.length);
  });

  it("prices microservices as the monolith plus five tasks (same load balancer, same database)", async () => {
    const mono = estimateHourlyCost(await plan("monolith"));
    const micro = estimateHourlyCost(await plan("microservices"));
    const task = 0.25 * PRICES_US_EAST_1.fargateVcpuHour + 0.5 * PRICES_US_EAST_1.fargateGbHour + PRICES_US_EAST_1.publicIpv4Hour;
    expect(micro.usdPerHour - mono.usdPerHour).toBeCloseTo(5 * task, 10);
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
