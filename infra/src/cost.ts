import type { DeploymentPlan } from "./plan.js";

/** On-demand list prices in USD (us-east-1; Fargate on Linux/ARM, the tasks' architecture). Other regions cost more (sa-east-1 most). */
export interface PriceList {
  /** When and where the prices were read. */
  readonly source: string;
  readonly fargateVcpuHour: number;
  readonly fargateGbHour: number;
  /** Every public IPv4 address: one per task (public subnets, no NAT) and one per load-balancer zone. */
  readonly publicIpv4Hour: number;
  readonly albHour: number;
  readonly albLcuHour: number;
  readonly rdsPostgresT4gMicroHour: number;
  readonly rdsGp3GbMonth: number;
  /** ElastiCache for Valkey, cache.t4g.micro, on demand (Valkey is priced 20 % under Redis OSS). */
  readonly elasticacheValkeyT4gMicroHour: number;
}

export const PRICES_US_EAST_1: PriceList = {
  source:
    "us-east-1 list prices as published in 2026 (Fargate, ELB, RDS pricing pages, as quoted by vantage.sh, wring.co, infratally.com, usage.ai; public IPv4 from SST's Service docs; ElastiCache: SST's Redis docs give $0.016/h for cache.t4g.micro Redis OSS, Valkey 20 % less)",
  // Linux/ARM (Graviton): 20 % under Linux/x86's $0.04048 and $0.004445.
  fargateVcpuHour: 0.03238,
  fargateGbHour: 0.00356,
  publicIpv4Hour: 0.005,
  albHour: 0.0225,
  albLcuHour: 0.008,
  rdsPostgresT4gMicroHour: 0.016,
  rdsGp3GbMonth: 0.115,
  elasticacheValkeyT4gMicroHour: 0.0128,
};

export interface CostAssumptions {
  /** Load-balancer capacity units billed per hour per load balancer (a few test games: 1). */
  readonly lcusPerLoadBalancer: number;
  /** Running tasks per service. */
  readonly tasksPerService: number;
}

export const DEFAULT_COST_ASSUMPTIONS: CostAssumptions = { lcusPerLoadBalancer: 1, tasksPerService: 1 };

export interface CostLine {
  readonly item: string;
  readonly quantity: number;
  readonly unit: string;
  readonly usdPerHour: number;
}

export interface CostEstimate {
  readonly usdPerHour: number;
  readonly lines: readonly CostLine[];
}

const HOURS_PER_MONTH = 730;

/**
 * A rough hourly cost of a planned stage while it runs idle or nearly so. Leaves out data
 * transfer, CloudWatch logs, ECR storage, the Route 53 zone, S3 and CloudFront (cents per month at
 * test volumes).
 */
export function estimateHourlyCost(
  plan: DeploymentPlan,
  prices: PriceList = PRICES_US_EAST_1,
  assumptions: CostAssumptions = DEFAULT_COST_ASSUMPTIONS,
): CostEstimate {
  const lines: CostLine[] = [];
  const tasks = plan.services.length * assumptions.tasksPerService;
  let vcpu = 0;
  let gb = 0;
  for (const s of plan.services) {
    vcpu += parseFloat(s.size.cpu) * assumptions.tasksPerService;
    gb += parseFloat(s.size.memory) * assumptions.tasksPerService;
  }
  lines.push({ item: "Fargate vCPU", quantity: vcpu, unit: "vCPU", usdPerHour: vcpu * prices.fargateVcpuHour });
  lines.push({ item: "Fargate memory", quantity: gb, unit: "GB", usdPerHour: gb * prices.fargateGbHour });
  // Load generators, when the stage runs any: their own lines, so the servers' cost stays readable.
  let loadTasks = 0;
  let loadVcpu = 0;
  let loadGb = 0;
  for (const lg of plan.loadGenerators) {
    loadTasks += lg.tasks;
    loadVcpu += parseFloat(lg.size.cpu) * lg.tasks;
    loadGb += parseFloat(lg.size.memory) * lg.tasks;
  }
  if (loadTasks > 0) {
    lines.push({ item: "Fargate vCPU, load generators", quantity: loadVcpu, unit: "vCPU", usdPerHour: loadVcpu * prices.fargateVcpuHour });
    lines.push({ item: "Fargate memory, load generators", quantity: loadGb, unit: "GB", usdPerHour: loadGb * prices.fargateGbHour });
  }

  const albs = plan.regions.filter((r) => r.loadBalancer !== undefined);
  const albZones = albs.reduce((n, r) => n + r.availabilityZones.length, 0);
  const ips = tasks + loadTasks + albZones;
  lines.push({ item: "public IPv4 addresses", quantity: ips, unit: "address", usdPerHour: ips * prices.publicIpv4Hour });

  lines.push({ item: "application load balancers", quantity: albs.length, unit: "ALB", usdPerHour: albs.length * prices.albHour });
  const lcus = albs.length * assumptions.lcusPerLoadBalancer;
  lines.push({ item: "ALB capacity units", quantity: lcus, unit: "LCU", usdPerHour: lcus * prices.albLcuHour });

  for (const db of plan.databases) {
    const storage = parseFloat(db.storage);
    lines.push({ item: `RDS Postgres db.${db.instance}`, quantity: 1, unit: "instance", usdPerHour: prices.rdsPostgresT4gMicroHour });
    lines.push({
      item: "RDS gp3 storage",
      quantity: storage,
      unit: "GB",
      usdPerHour: (storage * prices.rdsGp3GbMonth) / HOURS_PER_MONTH,
    });
  }
  for (const store of plan.snapshotStores) {
    lines.push({ item: `ElastiCache Valkey cache.${store.instance}`, quantity: 1, unit: "node", usdPerHour: prices.elasticacheValkeyT4gMicroHour });
  }
  return { usdPerHour: lines.reduce((sum, l) => sum + l.usdPerHour, 0), lines };
}
