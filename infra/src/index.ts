export {
  ALB_IDLE_TIMEOUT_S,
  APP_NAME,
  CALL_LOG_FILTER,
  CALLER_HEADER,
  CLOUD_MAP_NAMESPACE,
  COMPONENT_KEY_SECRETS,
  CONNECT_PORT,
  DATA_DIR,
  DEFAULT_REGION,
  DEFAULT_TASK_SIZE,
  DEREGISTRATION_DELAY_S,
  ENV,
  FARGATE_SIZES,
  FARGATE_TASK_START_S,
  IMAGE_BUILD_S,
  CPU_HEADROOM,
  MEASURED_PEAK_WINDOW_MS,
  MEASURED_TASK_SIZES,
  PlanError,
  SERVER_IDLE_TIMEOUT_MS,
  SINGLE_COPY_COMPONENTS,
  STREAM_IDLE_TIMEOUT_MS,
  STREAM_PORT,
  TARGET_HEALTH,
  TASK_ARCHITECTURE,
  WEBTRANSPORT_SUBPROTOCOL,
  cloudRegion,
  cloudTopology,
  componentKeyEnv,
  componentKeysEnvironment,
  componentPublicKeyEnv,
  logGroupPrefix,
  pascalCase,
  planDeployment,
  replacementGapS,
  SECRET_NAMES,
  taskSizeFor,
} from "./plan.js";
export type {
  AlbRefusal,
  AlbRoute,
  CallEdgePlan,
  ContainerPort,
  DatabasePlan,
  DeployValue,
  DeploymentPlan,
  FargateCpu,
  FargateMemory,
  ImageBuildPlan,
  ImagePlan,
  ListenerRulePlan,
  LoadBalancerPlan,
  PlanOptions,
  RegionPlan,
  SecretName,
  ServicePlan,
  TaskSize,
  WebConfig,
  WebPlan,
} from "./plan.js";
export { publicKeyPemOf } from "./keys.js";
export { ALB_LIMITS, listenerRuleProblems } from "./listener-limits.js";
export type { ListenerCondition } from "./listener-limits.js";
export { STAGES, TOPOLOGIES_DIR, isStage, loadStageTopology, stageTopology } from "./stages.js";
export type { Stage } from "./stages.js";
export {
  BROWSER_CONNECT,
  CALL_GRAPH,
  CONNECT_SERVICES,
  INTERNAL_METHODS,
  STREAM_PATHS,
  connectPathPattern,
  internalPaths,
  streamPathPattern,
} from "./calls.js";
export { REGION_RTT_MS, regionRttMs } from "./rtt.js";
export { DEFAULT_COST_ASSUMPTIONS, PRICES_US_EAST_1, estimateHourlyCost } from "./cost.js";
export type { CostAssumptions, CostEstimate, CostLine, PriceList } from "./cost.js";
export { ADOT_COLLECTOR_IMAGE, COLLECTOR_CONTAINER, OTLP_HTTP_PORT, collectorConfig, collectorPlan, parseTracing } from "./tracing.js";
export type { CollectorContainer, CollectorPlan, TracingBackend } from "./tracing.js";
