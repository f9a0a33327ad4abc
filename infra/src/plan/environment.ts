import { type ComponentName, nodeFlagsFor } from "@flaplab/component";
import type { CollectorPlan } from "../tracing.js";
import { BEHIND_BALANCER_ENV, DATA_DIR, ENV, SERVER_IDLE_TIMEOUT_MS, STREAM_IDLE_TIMEOUT_MS } from "./constants.js";
import { componentKeysEnvironment, type DeployValue } from "./secrets.js";
import type { DatabasePlan, SnapshotStorePlan } from "./types.js";

// A service's environment: the plain values, and those known only at deploy time.

/** What a service's plain environment depends on. */
export interface EnvironmentInputs {
  /** The name the servers load their topology by. */
  readonly topologyName: string;
  readonly group: string;
  readonly components: readonly ComponentName[];
  readonly region: string;
  readonly zone: string;
  /** Whether the group runs a stream server (engine or music). */
  readonly streams: boolean;
  readonly collector: CollectorPlan | undefined;
}

/** The plain environment of a service (all but its cloud topology, FLAPLAB_TOPOLOGY_JSON, added once every service is planned). */
export function serviceEnvironment(inputs: EnvironmentInputs): Record<string, string> {
  const environment: Record<string, string> = {
    [ENV.topology]: inputs.topologyName,
    [ENV.group]: inputs.group,
    [ENV.dataDir]: DATA_DIR,
    [ENV.region]: inputs.region,
    [ENV.zone]: `${inputs.region}${inputs.zone}`,
    [ENV.idleTimeout]: String(SERVER_IDLE_TIMEOUT_MS),
    ...BEHIND_BALANCER_ENV,
    // Only groups with a stream server (engine or music) read it.
    ...(inputs.streams ? { [ENV.streamIdleTimeout]: String(STREAM_IDLE_TIMEOUT_MS) } : {}),
  };
  // The engine's small young generation (the image's command has no flags of its own).
  const nodeFlags = nodeFlagsFor(inputs.components);
  if (nodeFlags.length > 0) environment["NODE_OPTIONS"] = nodeFlags.join(" ");
  if (inputs.collector) Object.assign(environment, inputs.collector.serverEnvironment);
  return environment;
}

/**
 * The environment a service gets at deploy time: the players' public key, its components' keys,
 * the players' private key where auth runs, and the URL of each store it uses.
 */
export function serviceDeployEnvironment(
  service: string,
  components: readonly ComponentName[],
  databases: readonly DatabasePlan[],
  snapshotStores: readonly SnapshotStorePlan[],
): Record<string, DeployValue> {
  const deployEnvironment: Record<string, DeployValue> = {
    [ENV.jwtPublicKey]: { from: "secret", name: "JwtPublicKey", sensitive: false },
    ...componentKeysEnvironment(components),
  };
  if (components.includes("auth")) {
    deployEnvironment[ENV.jwtPrivateKey] = { from: "secret", name: "JwtPrivateKey", sensitive: true };
  }
  for (const db of databases) {
    if (db.service === service) deployEnvironment[db.env] = { from: "database", name: db.name, sensitive: true };
  }
  for (const store of snapshotStores) {
    if (store.services.includes(service)) deployEnvironment[store.env] = { from: "snapshot-store", name: store.name, sensitive: true };
  }
  return deployEnvironment;
}
