export { createRuntime, DEFAULT_CALL_TIMEOUT_MS, DEFAULT_READ_MAX_BYTES } from "./runtime.js";
export type { ClientOptions, Runtime, RuntimeOptions, MountedComponent, EdgePlan } from "./runtime.js";
export { loadTopology, parseTopology, parseAddress, groupOf, groupsOf, findGroup, networkFor, SHARDABLE_COMPONENTS, TopologyError } from "./topology.js";
export type { Topology, GroupSpec, NetworkSettings, InProcessMode } from "./topology.js";
export { CALLER_HEADER, codeName } from "./guard.js";
export type { TokenVerifier } from "@flaplab/identity";
export {
  callLogToFlappyGoCsv,
  createCallLogger,
  pinoCallLog,
  FLAPPYGO_CSV_HEADER,
} from "./call-log.js";
export type { CallLog, CallRecord, CallMode } from "./call-log.js";
export { closeConnections, openConnections, wireTransport } from "./clients.js";
export type { Connections, WireOptions } from "./clients.js";
export { jsonRegistryOf } from "./json-registry.js";
