import type { ComponentName } from "@flaplab/component";
import type { GroupSpec, Topology } from "@flaplab/runtime";
import { cloudRegion, pascalCase } from "./naming.js";
import { REGION_RE } from "./options.js";
import { SECRET_NAMES } from "./secrets.js";
import { PlanError } from "./types.js";

// Where each process group of a topology runs in the cloud: its service name, region and zone.

/** One process group, placed. */
export interface PlacedGroup {
  readonly spec: GroupSpec;
  /** Its service name (PascalCase of the group name). */
  readonly name: string;
  readonly region: string;
  readonly zone: string;
}

/** Every group of a topology, placed, in file order. */
export interface Placement {
  /** The topology's name. */
  readonly topology: string;
  readonly groups: readonly PlacedGroup[];
}

const ZONE_RE = /^[a-z]$/;
/** SST component names the plan uses for things other than services. */
const RESERVED_NAMES = new Set<string>(["Web", "ScoreDatabase", "ServerImage", "ServerImageRepository", ...SECRET_NAMES]);

/** Places every group (`"local"` → defaultRegion) and refuses bad regions, zones and service names. */
export function placeGroups(topology: Topology, defaultRegion: string): Placement {
  const groups: PlacedGroup[] = [];
  const names = new Set<string>();
  for (const spec of topology.groups) {
    const region = cloudRegion(spec, defaultRegion);
    if (!REGION_RE.test(region)) {
      throw new PlanError(`group "${spec.name}": region "${region}" is not an AWS region name (or "local")`);
    }
    if (!ZONE_RE.test(spec.zone)) throw new PlanError(`group "${spec.name}": zone "${spec.zone}" must be one letter (a, b, c, …)`);
    const name = pascalCase(spec.name);
    if (RESERVED_NAMES.has(name) || /^(Aws|Vpc|Cluster|Alb|Cert)[A-Z0-9]/.test(name)) throw new PlanError(`group "${spec.name}": its service name ${name} is reserved`);
    if (names.has(name)) throw new PlanError(`group "${spec.name}": service name ${name} is used by another group`);
    if (REGION_RE.test(spec.name)) {
      throw new PlanError(`group "${spec.name}": the name would clash with a load balancer's host name`);
    }
    names.add(name);
    groups.push({ spec, name, region, zone: spec.zone });
  }
  return { topology: topology.name, groups };
}

/** Every group that runs a component, in file order (several only for the engine's shards). */
export function placesOf(placement: Placement, component: ComponentName): PlacedGroup[] {
  const ps = placement.groups.filter((p) => p.spec.components.includes(component));
  if (ps.length === 0) throw new PlanError(`topology ${placement.topology} does not place ${component}`);
  return ps;
}

/** The first group that runs a component. */
export function placeOf(placement: Placement, component: ComponentName): PlacedGroup {
  return placesOf(placement, component)[0]!;
}

/** Whether the topology runs several engines (which then share a snapshot store). */
export function isSharded(placement: Placement): boolean {
  return placesOf(placement, "engine").length > 1;
}

/** Refuses several engines outside one region: they and the initiator share one snapshot store, reached inside its region's VPC only. */
export function checkEngineRegions(placement: Placement): void {
  const engines = placesOf(placement, "engine");
  if (engines.length <= 1) return;
  const initiator = placeOf(placement, "initiator");
  const regionsUsed = new Set([...engines, initiator].map((p) => p.region));
  if (regionsUsed.size > 1) {
    throw new PlanError(
      `topology ${placement.topology} runs ${engines.length} engines: they and the initiator share one snapshot store, so they must be in one region (found ${[...regionsUsed].join(", ")})`,
    );
  }
}

/** The regions used, in order of first appearance. */
export function regionNames(placement: Placement): string[] {
  return [...new Set(placement.groups.map((p) => p.region))];
}

/** The groups placed in one region, in file order. */
export function groupsIn(placement: Placement, region: string): PlacedGroup[] {
  return placement.groups.filter((p) => p.region === region);
}

/** A region's zone letters: those its groups use, padded to two (load balancers and RDS need two), sorted. */
export function regionZones(placement: Placement, region: string): string[] {
  const letters = [...new Set(groupsIn(placement, region).map((p) => p.zone))].sort();
  for (const pad of ["a", "b", "c"]) if (letters.length < 2 && !letters.includes(pad)) letters.push(pad);
  return letters.sort();
}
