import type { ComponentName } from "@flaplab/component";
import type { Topology } from "@flaplab/runtime";
import { STREAM_PATHS } from "../calls.js";
import { collectorPlan } from "../tracing.js";
import { cloudTopology } from "./cloud-topology.js";
import { DEREGISTRATION_DELAY_S, ENV, FARGATE_TASK_START_S, SINGLE_COPY_COMPONENTS, TARGET_HEALTH } from "./constants.js";
import { serviceDeployEnvironment, serviceEnvironment } from "./environment.js";
import { logGroupPrefix, privateHost, privateUrl, publicHost, publicUrl } from "./naming.js";
import type { ResolvedOptions } from "./options.js";
import { type PlacedGroup, type Placement, regionZones } from "./placement.js";
import { groupTaskSize } from "./task-size.js";
import type { AlbRoute, DatabasePlan, ServicePlan, SnapshotStorePlan } from "./types.js";

// One ECS service per process group.

/** What a group's service uses besides the group itself. */
export interface ServiceInputs {
  readonly routesOf: ReadonlyMap<string, AlbRoute[]>;
  readonly databases: readonly DatabasePlan[];
  readonly snapshotStores: readonly SnapshotStorePlan[];
}

/** Every group's service, each with the cloud topology it runs by (FLAPLAB_TOPOLOGY_JSON). */
export function planServices(topology: Topology, placement: Placement, inputs: ServiceInputs, options: ResolvedOptions): ServicePlan[] {
  const bare = placement.groups.map((p) => planService(placement, p, inputs, options));
  // The process-local view each server needs: the same topology with cloud addresses.
  const hosts = { stage: options.stage, domain: options.domain };
  return bare.map((s) => ({
    ...s,
    environment: { ...s.environment, [ENV.topologyJson]: JSON.stringify(cloudTopology(topology, bare, s, hosts)) },
  }));
}

/** One group's service, without its cloud topology. */
function planService(placement: Placement, p: PlacedGroup, inputs: ServiceInputs, options: ResolvedOptions): ServicePlan {
  const { stage } = options;
  const albRoutes = inputs.routesOf.get(p.name) ?? [];
  const hasPublicConnect = albRoutes.some((r) => r.kind === "connect");
  const streamUrl = p.spec.components.some((c) => STREAM_PATHS[c] !== undefined) ? publicUrl(options, p.spec.name) : undefined;
  const size = groupTaskSize(options, p.spec.name, p.spec.components);
  const collector = options.tracing === "xray" ? collectorPlan(stage, p.spec.name, p.region) : undefined;
  const environment = serviceEnvironment({
    topologyName: options.topologyName,
    group: p.spec.name,
    components: p.spec.components,
    region: p.region,
    zone: p.zone,
    streams: streamUrl !== undefined,
    collector,
  });
  return {
    name: p.name,
    group: p.spec.name,
    components: p.spec.components,
    region: p.region,
    zone: p.zone,
    availabilityZone: `${p.region}${p.zone}`,
    subnetIndex: regionZones(placement, p.region).indexOf(p.zone),
    size,
    privateHost: privateHost(stage, p.name),
    privateUrl: privateUrl(stage, p.name),
    publicHost: publicHost(options, p.spec.name),
    ...(hasPublicConnect ? { publicUrl: publicUrl(options, p.spec.name) } : {}),
    ...(streamUrl === undefined ? {} : { streamUrl }),
    albRoutes,
    deployment: deploymentLimits(p.spec.components),
    logGroupPrefix: logGroupPrefix(stage, p.spec.name),
    environment,
    deployEnvironment: serviceDeployEnvironment(p.name, p.spec.components, inputs.databases, inputs.snapshotStores),
    ...(collector ? { collector } : {}),
  };
}

/** ECS deployment limits: engine and music never run two tasks at once (0 % / 100 %); others 100 % / 200 %. */
function deploymentLimits(components: readonly ComponentName[]): ServicePlan["deployment"] {
  return components.some((c) => SINGLE_COPY_COMPONENTS.includes(c))
    ? { minimumHealthyPercent: 0, maximumPercent: 100, deregistrationDelayS: DEREGISTRATION_DELAY_S, gapS: replacementGapS() }
    : { minimumHealthyPercent: 100, maximumPercent: 200, deregistrationDelayS: DEREGISTRATION_DELAY_S };
}

/**
 * Seconds without a task when ECS replaces a single-copy service: the old target's deregistration
 * delay, then the new task's start, then healthyThreshold checks intervalS apart.
 */
export function replacementGapS(): { min: number; max: number } {
  const after = DEREGISTRATION_DELAY_S + TARGET_HEALTH.healthyThreshold * TARGET_HEALTH.intervalS;
  return { min: after + FARGATE_TASK_START_S.min, max: after + FARGATE_TASK_START_S.max };
}
