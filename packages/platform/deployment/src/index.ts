export { startDeployment, repositoryTopologyOnFreePorts, TOPOLOGIES_DIR, DEFAULT_READY_TIMEOUT_MS } from "./deployment.js";
export type { Deployment, DeploymentEvent, DeploymentOptions, GroupCpu, GroupEndpoint } from "./deployment.js";
export { processTreeCpuUs } from "./process-cpu.js";
export { topologyOnFreePorts, type TopologyCopy } from "@flaplab/ports";
export { RestartPolicy, DEFAULT_MAX_RESTARTS_PER_MINUTE } from "./restarts.js";
