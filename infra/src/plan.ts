import type { Topology } from "@flaplab/runtime";
import { APP_NAME } from "./plan/constants.js";
import { planDatabases, planSnapshotStores } from "./plan/data-stores.js";
import { planEdges } from "./plan/edges.js";
import { planImage } from "./plan/image.js";
import { type PlanOptions, resolveOptions } from "./plan/options.js";
import { planLoadGenerators, parseLoadRequest } from "./plan/load-generators.js";
import { checkEngineRegions, placeGroups, regionNames } from "./plan/placement.js";
import { planRegions } from "./plan/regions.js";
import { planRoutes } from "./plan/routes.js";
import { planServices } from "./plan/services.js";
import type { DeploymentPlan } from "./plan/types.js";
import { planWeb } from "./plan/web.js";

export { cloudTopology } from "./plan/cloud-topology.js";
export {
  ALB_IDLE_TIMEOUT_S,
  APP_NAME,
  BEHIND_BALANCER_ENV,
  CALL_LOG_FILTER,
  CALLER_HEADER,
  CLOUD_MAP_NAMESPACE,
  CONNECT_PORT,
  DATA_DIR,
  DEFAULT_REGION,
  DEREGISTRATION_DELAY_S,
  ENV,
  FARGATE_TASK_START_S,
  SERVER_IDLE_TIMEOUT_MS,
  SINGLE_COPY_COMPONENTS,
  STREAM_IDLE_TIMEOUT_MS,
  STREAM_PORT,
  TARGET_HEALTH,
  WEBTRANSPORT_SUBPROTOCOL,
} from "./plan/constants.js";
export { IMAGE_BUILD_S, type ImageBuildPlan, type ImagePlan } from "./plan/image.js";
export { LOAD_ENTRY, LOAD_TASK_SIZE, MAX_LOAD_TASKS, parseLoadRequest, type LoadRequest } from "./plan/load-generators.js";
export { cloudRegion, logGroupPrefix, pascalCase } from "./plan/naming.js";
export type { PlanOptions } from "./plan/options.js";
export {
  COMPONENT_KEY_SECRETS,
  componentKeyEnv,
  componentKeysEnvironment,
  componentPublicKeyEnv,
  type DeployValue,
  SECRET_NAMES,
  type SecretName,
} from "./plan/secrets.js";
export { replacementGapS } from "./plan/services.js";
export {
  CPU_HEADROOM,
  DEFAULT_TASK_SIZE,
  FARGATE_SIZES,
  type FargateCpu,
  type FargateMemory,
  MEASURED_PEAK_WINDOW_MS,
  MEASURED_TASK_SIZES,
  TASK_ARCHITECTURE,
  type TaskSize,
  taskSizeFor,
} from "./plan/task-size.js";
export {
  type AlbRefusal,
  type AlbRoute,
  type CallEdgePlan,
  type ContainerPort,
  type DatabasePlan,
  type DeploymentPlan,
  type ListenerRulePlan,
  type LoadGeneratorPlan,
  type LoadBalancerPlan,
  PlanError,
  type RegionPlan,
  type ServicePlan,
  type SnapshotStorePlan,
  type WebConfig,
  type WebPlan,
} from "./plan/types.js";

/**
 * Maps a topology to what runs in the cloud: one ECS service per process group in the group's
 * region and zone, the shared load balancer per region, the call edges and their URLs, the
 * score database, the web client's configuration and, when asked for, load generators. Pure: no I/O, same input → same plan.
 */
export function planDeployment(topology: Topology, options: PlanOptions): DeploymentPlan {
  const resolved = resolveOptions(topology, options);
  const { stage, domain, homeRegion } = resolved;
  const names = { stage, domain };
  const placement = placeGroups(topology, resolved.defaultRegion);
  checkEngineRegions(placement);
  const { edges, warnings } = planEdges(topology, placement, names);
  const routesOf = planRoutes(placement, edges, names);
  const regions = planRegions(placement, routesOf, names);
  const databases = planDatabases(placement);
  const snapshotStores = planSnapshotStores(placement);
  const services = planServices(topology, placement, { routesOf, databases, snapshotStores }, resolved);
  return {
    app: APP_NAME,
    stage,
    topology: topology.name,
    domain,
    homeRegion,
    regions,
    services,
    edges,
    databases,
    snapshotStores,
    web: planWeb(services, topology.name, homeRegion, names),
    loadGenerators: planLoadGenerators(
      parseLoadRequest(resolved.load.tasks, resolved.load.args, regionNames(placement)),
      services,
    ),
    image: planImage(resolved.image, stage, homeRegion),
    warnings,
  };
}
