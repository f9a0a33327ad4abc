import type { GroupSpec } from "@flaplab/runtime";
import { APP_NAME, CLOUD_MAP_NAMESPACE, CONNECT_PORT, DEFAULT_REGION } from "./constants.js";

// The names a stage's resources, hosts and log groups get.

/** What a stage's public host names are made of: `<label>.<stage>.<domain>`. */
export interface StageNames {
  readonly stage: string;
  readonly domain: string;
}

/** "us-east-1" → "UsEast1", "music-eu" → "MusicEu". */
export function pascalCase(name: string): string {
  return name
    .split("-")
    .filter((p) => p.length > 0)
    .map((p) => p[0]!.toUpperCase() + p.slice(1))
    .join("");
}

/** The AWS region a topology group runs in. */
export function cloudRegion(group: Pick<GroupSpec, "region">, defaultRegion = DEFAULT_REGION): string {
  return group.region === "local" ? defaultRegion : group.region;
}

/** A public host name of the stage, `<label>.<stage>.<domain>` (a group, a region's load balancer, the web site). */
export function publicHost(names: StageNames, label: string): string {
  return `${label}.${names.stage}.${names.domain}`;
}

/** `https://<group>.<stage>.<domain>`: a group's public endpoint on its region's load balancer. */
export function publicUrl(names: StageNames, group: string): string {
  return `https://${publicHost(names, group)}`;
}

/** A service's Cloud Map host name inside its region's VPC. */
export function privateHost(stage: string, service: string): string {
  return `${service}.${stage}.${APP_NAME}.${CLOUD_MAP_NAMESPACE}`.toLowerCase();
}

/** `http://<private host>:8080`, what callers in the same region dial. */
export function privateUrl(stage: string, service: string): string {
  return `http://${privateHost(stage, service)}:${CONNECT_PORT}`;
}

/** Name prefix of the CloudWatch log groups of a group's tasks; `logGroupPrefix(stage)` covers the whole stage. */
export function logGroupPrefix(stage: string, group?: string): string {
  return group === undefined ? `/flaplab/${stage}/` : `/flaplab/${stage}/${group}/`;
}
