import { COMPONENT_NAMES, type ComponentName } from "@flaplab/component";
import type { Layout, LayoutGroup, Location } from "./layout.js";

// Every placement of the six components over the given regions and zones, with the rules the
// system sets: each component in exactly one place (loadTopology); several engines only in the
// initiator's region, where their snapshot store is (infra's checkEngineRegions).

export type ProcessChoice = "split" | "merged" | "both";

export interface EnumerateOptions {
  readonly regions: readonly string[];
  readonly zones: readonly string[];
  /** One process per component, one process per place, or both. */
  readonly processes: ProcessChoice;
  /** Engines the placement must hold (from the capacity); above 1 the engine's region must be the initiator's. */
  readonly engines: number;
}

/** The rules applied, for the output. */
export const PLACEMENT_RULES = [
  "each component runs in exactly one process group (loadTopology); the engine's shards share its place",
  "several engines each run alone in their group (loadTopology)",
  "with several engines, the engines and the initiator are in one region, with their snapshot store (infra checkEngineRegions)",
  "regions are the RTT table's AWS regions; zones are one letter (infra placeGroups)",
];

/** Whether an assignment of places to components keeps the rules. */
export function keepsRules(places: Readonly<Record<ComponentName, Location>>, engines: number): boolean {
  return engines <= 1 || places.engine.region === places.initiator.region;
}

/** Every placement, in a fixed order. */
export function* enumerateLayouts(options: EnumerateOptions): Generator<Layout> {
  const locations: Location[] = options.regions.flatMap((region) => options.zones.map((zone) => ({ region, zone })));
  const n = COMPONENT_NAMES.length;
  const index = new Array<number>(n).fill(0);
  for (;;) {
    const places = Object.fromEntries(COMPONENT_NAMES.map((c, i) => [c, locations[index[i]!]!])) as Record<ComponentName, Location>;
    if (keepsRules(places, options.engines)) {
      const split = splitLayout(places);
      const merged = mergedLayout(places, options.engines > 1);
      if (options.processes !== "merged") yield split;
      if (options.processes === "merged" || (options.processes === "both" && merged.length < split.length)) yield merged;
    }
    let i = n - 1;
    while (i >= 0 && ++index[i]! === locations.length) index[i--] = 0;
    if (i < 0) return;
  }
}

/** One process per component. */
export function splitLayout(places: Readonly<Record<ComponentName, Location>>): Layout {
  return COMPONENT_NAMES.map((c) => ({ name: c, components: [c], ...places[c] }));
}

/** One process per place, holding every component placed there (direct calls between them). */
export function mergedLayout(places: Readonly<Record<ComponentName, Location>>, engineAlone = false): Layout {
  const groups = new Map<string, { components: ComponentName[]; location: Location }>();
  for (const c of COMPONENT_NAMES) {
    const key = `${places[c].region}/${places[c].zone}${engineAlone && c === "engine" ? "/engine" : ""}`;
    const g = groups.get(key) ?? { components: [], location: places[c] };
    g.components.push(c);
    groups.set(key, g);
  }
  return [...groups.values()].map(
    (g): LayoutGroup => ({ name: g.components.length === COMPONENT_NAMES.length ? "monolith" : g.components.join("-"), components: g.components, ...g.location }),
  );
}

/** A placement in one line: `engine+music@eu-west-1a, …`. */
export function describeLayout(layout: Layout): string {
  return layout.map((g) => `${g.components.join("+")}@${g.region}${g.zone}`).join(", ");
}
