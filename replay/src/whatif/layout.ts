import type { ComponentName } from "@flaplab/component";
import { edgeRtt, type RttTable } from "@flaplab/netem";
import type { Topology } from "@flaplab/runtime";

// Where each component runs, as the model sees a placement: process groups with a region and zone.

export interface Location {
  readonly region: string;
  readonly zone: string;
}

export interface LayoutGroup extends Location {
  readonly name: string;
  readonly components: readonly ComponentName[];
}

/** One process group per entry; a component is in exactly one (the first, for a sharded engine). */
export type Layout = readonly LayoutGroup[];

export function layoutOf(topology: Topology): Layout {
  return topology.groups.map((g) => ({ name: g.name, components: g.components, region: g.region, zone: g.zone }));
}

/** The group a component runs in; throws when the layout does not place it. */
export function groupOfComponent(layout: Layout, component: string): LayoutGroup {
  const g = layout.find((x) => (x.components as readonly string[]).includes(component));
  if (g === undefined) throw new Error(`the placement does not place ${component}`);
  return g;
}

/** Whether a call between two components goes over the network (they are in different processes). */
export function isNetworked(layout: Layout, caller: string, callee: string): boolean {
  return groupOfComponent(layout, caller) !== groupOfComponent(layout, callee);
}

/** The emulated RTT between two places (0 on one host, "local"). */
export function rttBetween(table: RttTable, a: Location, b: Location): number {
  return edgeRtt(table, a, b).rttMs;
}
